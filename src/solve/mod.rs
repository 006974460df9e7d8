//! GenerateView (Lucy §3.3): find the join walk over core tables with the
//! layered MILP (HiGHS), add LEFT JOIN pattern branches, and build the view.
//!
//! Pipeline of [`generate`] (and [`generate_view`], which resolves a request
//! of names first):
//! 1. [`relevant`]: pull in pattern roots / attribute tables / required
//!    tables, apply user forbids, build the core [`problem`];
//! 2. [`preprocess`]: C3/C4-aware distances, the lower bound on n;
//! 3. [`exact`]: the combinatorial search proves how long an optimal walk
//!    is (or that none exists), which settles n;
//! 4. [`milp`]: the production model at that n, with the exact reductions;
//!    its walk is verified against C1–C4 and cross-checked with step 3;
//! 5. [`crate::view`]: joins, aliases, `CREATE VIEW`;
//! 6. [`explain`]: when infeasible, why.

pub mod distance;
pub mod exact;
pub mod explain;
mod heuristic;
pub mod incumbent;
pub mod milp;
pub mod preprocess;
pub mod problem;
pub mod relevant;

use std::time::Instant;

use crate::error::{Error, Result};
use crate::graph::{SchemaGraph, TableId};
use crate::types::{limits, ModelSize, Relevance, SolveStatus, ViewOptions, ViewRequest, ViewResult};

use exact::{solve_exact, ExactLimits, ExactOutcome};
use milp::{solve_milp_full, MilpStatus};
use preprocess::{Bounds, INF};
use problem::CoreProblem;
use relevant::{core_problem, scope_of, Relax};

/// The core walk as solved, before the view is built.
#[derive(Debug, Clone)]
pub struct CoreSolution {
    pub status: SolveStatus,
    /// Local node indices of the walk (empty when infeasible).
    pub walk: Vec<usize>,
    /// The n the MILP was solved with (0 if none).
    pub n: usize,
    pub n_bound: String,
    pub model_size: ModelSize,
    /// Lower bound on n.
    pub lower: usize,
    /// A note for the result (e.g. a cross-check disagreement).
    pub note: Option<String>,
    /// Milliseconds spent in the exact search, the reductions and the MILP.
    pub exact_ms: f64,
    pub prune_ms: f64,
    pub milp_ms: f64,
    /// Tables kept by the reductions at the final n.
    pub kept: usize,
}

/// Options of [`solve_core`]; the defaults are the production path.
#[derive(Debug, Clone, Copy)]
pub struct CoreOptions {
    /// Apply the exact reductions before the MILP.
    pub preprocess: bool,
    /// State budget of the exact search that settles n.
    pub exact_states: usize,
    /// Give the exact search's walk to HiGHS as a MIP start and its proven
    /// objective as a valid lower-bound row. Off: the MILP solves cold (the
    /// brute-force suite checks both).
    pub warm_start: bool,
    /// Run the MILP even when the exact search has already proved a walk
    /// optimal (as a cross-check; the brute-force suite turns it on). Off,
    /// the default: a proof by the exact search is the answer, and the MILP
    /// runs only where the exact search gave up (its state budget or the
    /// deadline) — on the curated models those MILP runs were the whole
    /// GenerateView tail (p95 22–48 ms against a median under 6 ms).
    pub milp_when_proven: bool,
}

impl Default for CoreOptions {
    fn default() -> Self {
        CoreOptions { preprocess: true, exact_states: 1_000_000, warm_start: true, milp_when_proven: false }
    }
}

/// A conservative rate at which a layered MILP is built and solved, in
/// variables per second (measured here, unoptimised dev build under load:
/// ~27,000/s for models of a few hundred variables, far less for models of
/// tens of thousands, which overran a 5 s limit by 5 s at 20,000/s).
const MILP_VARS_PER_SECOND: f64 = 5_000.0;

/// Solve the core walk problem within `time_limit_s` seconds from now.
pub fn solve_core(p: &CoreProblem, time_limit_s: f64, opts: CoreOptions) -> Result<CoreSolution> {
    solve_core_until(p, limits::deadline(Instant::now(), time_limit_s.max(0.001)), opts)
}

/// Solve the core walk problem by `deadline`. Every step checks it: the
/// exact search, the reductions (which keep what they proved so far), and
/// the MILP (HiGHS gets what is left). When it passes, the answer is the
/// best walk at hand: `Optimal` only when proved (by HiGHS closing its gap,
/// or by the exact search), `Feasible` otherwise, or a time-limit error when
/// there is no walk at all.
pub fn solve_core_until(p: &CoreProblem, deadline: Instant, opts: CoreOptions) -> Result<CoreSolution> {
    let start = Instant::now();
    let time_limit_s = deadline.saturating_duration_since(start).as_secs_f64();
    let remaining = || deadline.saturating_duration_since(Instant::now()).as_secs_f64();
    let mut sol = CoreSolution {
        status: SolveStatus::Infeasible,
        walk: Vec::new(),
        n: 0,
        n_bound: String::new(),
        model_size: ModelSize::default(),
        lower: 0,
        note: None,
        exact_ms: 0.0,
        prune_ms: 0.0,
        milp_ms: 0.0,
        kept: p.len(),
    };
    let bounds = Bounds::new(p);
    if bounds.lower_nodes >= INF {
        sol.n_bound = "no n: two relevant tables are not connected under C3/C4 pass-through rules".into();
        return Ok(sol);
    }
    let lower = bounds.lower_nodes as usize;
    sol.lower = lower;
    let t = Instant::now();
    let exact = solve_exact(p, None, ExactLimits::new(opts.exact_states, Some(deadline)));
    sol.exact_ms = t.elapsed().as_secs_f64() * 1e3;
    let (n_try, proven): (Vec<usize>, Option<(usize, usize, Vec<usize>)>) = match &exact {
        ExactOutcome::Infeasible => {
            sol.n_bound = format!(
                "no n: the exhaustive state search finds no valid walk of any length (lower bound was {lower})"
            );
            return Ok(sol);
        }
        ExactOutcome::Optimal { walk, cost, len } => (vec![*len], Some((*cost, *len, walk.clone()))),
        ExactOutcome::GaveUp(_) => {
            let cap = lower.max(2 * p.len()).max(1);
            ((lower..=cap).collect(), None)
        }
        // A valid walk the search could not prove optimal: the MILP may
        // improve on it among walks as long, after pruning by its cost.
        ExactOutcome::Incumbent { len, .. } => (vec![*len], None),
    };
    let incumbent: Option<(usize, usize, Vec<usize>, String)> = match &exact {
        ExactOutcome::Incumbent { walk, cost, len, reason } => Some((*cost, *len, walk.clone(), reason.clone())),
        _ => None,
    };
    if let (Some((cost, len, walk)), false) = (&proven, opts.milp_when_proven) {
        sol.walk = walk.clone();
        sol.status = SolveStatus::Optimal;
        sol.n = *len;
        sol.n_bound = format!(
            "n={len}: proven by the exhaustive state search (cost {cost}; no walk of any length is cheaper; lower bound was {lower}); no MILP needed"
        );
        return Ok(sol);
    }
    // Set when the loop stops for lack of time rather than because every n
    // was ruled out: "no walk" is then a time-limit error, not infeasibility.
    let mut out_of_time: Option<String> = None;
    for n in n_try {
        if remaining() <= 0.0 {
            out_of_time = Some("the time limit was reached".into());
            break;
        }
        let t = Instant::now();
        let mut pruned = match opts.preprocess {
            true => match preprocess::prune_until(p, n, Some(deadline)) {
                Some(pr) => Some(pr),
                None => {
                    // Out of time before the reductions had anything: a
                    // MILP over the whole schema could not run either.
                    sol.prune_ms += t.elapsed().as_secs_f64() * 1e3;
                    out_of_time = Some("the time limit was reached during the reductions".into());
                    break;
                }
            },
            false => None,
        };
        let cost_cap = proven.as_ref().map(|x| x.0).or(incumbent.as_ref().map(|x| x.0));
        if let (Some(pr), Some(c)) = (pruned.as_mut(), cost_cap) {
            if !pr.infeasible {
                pr.kept -= preprocess::prune_by_cost_until(p, c, &mut pr.allowed, Some(deadline));
            }
        }
        sol.prune_ms += t.elapsed().as_secs_f64() * 1e3;
        // Building the MILP cannot be interrupted: do not start one that
        // cannot be built and solved in the time left (reductions cut short
        // by the deadline can leave tens of thousands of variables).
        let vars: usize = match &pruned {
            Some(pr) => pr.allowed.iter().map(|a| a.iter().filter(|&&x| x).count()).sum(),
            None => p.len() * n,
        };
        if remaining() <= 0.0 || vars as f64 > remaining() * MILP_VARS_PER_SECOND {
            out_of_time = Some(format!(
                "at n = {n} the MILP left after the reductions has {vars} variables, more than fit in the {:.2} s left",
                remaining()
            ));
            break;
        }
        if pruned.as_ref().is_some_and(|x| x.infeasible) {
            continue;
        }
        sol.kept = pruned.as_ref().map_or(p.len(), |x| x.kept);
        let start = if opts.warm_start {
            proven.as_ref().map(|x| x.2.as_slice()).or(incumbent.as_ref().map(|x| x.2.as_slice()))
        } else {
            None
        };
        let bound = if opts.warm_start { proven.as_ref().map(|x| (x.0, x.1)) } else { None };
        let out = solve_milp_full(p, n, pruned.as_ref().map(|x| x.allowed.as_slice()), start, bound, remaining())
            .map_err(Error::Solver)?;
        sol.milp_ms += out.ms;
        sol.model_size = ModelSize { variables: out.variables, constraints: out.constraints };
        sol.n = n;
        match out.status {
            MilpStatus::Infeasible => continue,
            MilpStatus::NoSolution => {
                out_of_time = Some("HiGHS reached the time limit without a walk".into());
                break;
            }
            MilpStatus::Optimal | MilpStatus::Feasible => {
                if let Some(v) = p.violation(&out.walk) {
                    return Err(Error::Solver(format!("MILP walk is invalid ({v}); please report this")));
                }
                sol.walk = out.walk;
                sol.status =
                    if out.status == MilpStatus::Optimal { SolveStatus::Optimal } else { SolveStatus::Feasible };
                break;
            }
        }
    }
    if let Some((cost, len, walk, reason)) = &incumbent {
        let milp = (!sol.walk.is_empty()).then(|| p.objective(&sol.walk));
        if milp.is_none_or(|m| m > (*cost, *len)) {
            // No better walk from the MILP: the quick walk is the answer,
            // valid (checked) but not proven optimal.
            sol.walk = walk.clone();
            sol.status = SolveStatus::Feasible;
            sol.n = *len;
            sol.n_bound =
                format!("n={len}: a valid walk not proven optimal: the exhaustive state search stopped ({reason})");
            sol.note = Some(format!(
                "not proven optimal: the exact search stopped ({reason}); this is the quick nearest-first walk (cost {cost}, length {len}){}",
                out_of_time.as_ref().map(|w| format!(", and the MILP could not improve on it ({w})")).unwrap_or_default()
            ));
            return Ok(sol);
        }
    }
    match (&proven, sol.walk.is_empty()) {
        (Some((cost, len, walk)), true) => {
            // The MILP ran out of time without an incumbent; the exact search
            // already proved this walk optimal.
            sol.walk = walk.clone();
            sol.status = SolveStatus::Optimal;
            sol.n = *len;
            sol.note =
                Some(format!("the MILP gave no walk within the time limit; walk (cost {cost}) from the exact search"));
            sol.n_bound = format!("n={len}: proven by the exhaustive state search (no walk of any length is cheaper)");
        }
        (Some((cost, len, _)), false) => {
            let got = p.objective(&sol.walk);
            if sol.status == SolveStatus::Feasible && got == (*cost, *len) {
                // HiGHS stopped at the time limit before closing its gap, but
                // its walk has the value the exact search proved optimal.
                sol.status = SolveStatus::Optimal;
                sol.note = Some(
                    "the MILP hit the time limit; its walk has the optimal value proved by the exact search".into(),
                );
            }
            if sol.status == SolveStatus::Optimal && got != (*cost, *len) {
                sol.note = Some(format!(
                    "cross-check: MILP (cost {}, length {}) differs from the exact search (cost {cost}, length {len})",
                    got.0, got.1
                ));
            }
            sol.n_bound = format!(
                "n={}: lower bound {lower} from shortest C3/C4-respecting distances between relevant tables; no longer walk is cheaper (exhaustive state search)",
                sol.n
            );
        }
        (None, false) => {
            sol.n_bound = format!(
                "n={}: smallest feasible n, deepened from lower bound {lower}; optimal among walks of at most n tables (the exact search gave up, so longer walks were not ruled out)",
                sol.n
            );
        }
        (None, true) => {
            sol.status = SolveStatus::Infeasible;
            sol.n_bound = format!("no walk found for n = {lower}..={} within the time limit", sol.n.max(lower));
            if out_of_time.is_some() || remaining() <= 0.0 {
                let why = out_of_time.unwrap_or_else(|| "the time limit was reached".into());
                return Err(Error::Solver(format!(
                    "no walk found within the time limit ({:.3} s for the solve): {why}; raise --time-limit",
                    time_limit_s
                )));
            }
        }
    }
    Ok(sol)
}

/// GenerateView for a request given by names (`lucy view`, traces): the
/// names are resolved once ([`relevant::resolve`]), then [`generate`].
///
/// Unknown tables or attributes give `Err(Error::Input)` naming the closest
/// names; an infeasible request gives `Ok` with `status: Infeasible` and an
/// explanation.
pub fn generate_view(graph: &SchemaGraph, req: &ViewRequest) -> Result<ViewResult> {
    check_time_limit(req.time_limit_s)?;
    generate(graph, &relevant::resolve(graph, req)?, &req.options())
}

fn check_time_limit(t: f64) -> Result<()> {
    if t.is_nan() || t <= 0.0 {
        return Err(Error::Input(format!("time limit must be positive, got {t}")));
    }
    Ok(())
}

/// GenerateView: the optimal join walk for the relevant tables and columns
/// and its `CREATE VIEW`. An infeasible request gives `Ok` with `status:
/// Infeasible` and an explanation.
pub fn generate(graph: &SchemaGraph, rel: &Relevance, opts: &ViewOptions) -> Result<ViewResult> {
    let start = Instant::now();
    check_time_limit(opts.time_limit_s)?;
    // One deadline from the start of the request: scoping, the core
    // problem, the solve and the explanation all count against it.
    let deadline = limits::deadline(start, opts.time_limit_s);
    let keep = match &opts.keep {
        Some(k) => Some(graph.require_table(k.trim()).map_err(|e| Error::Input(format!("--keep: {e}")))?),
        None => None,
    };
    let inner_branches = opts
        .inner_branches
        .iter()
        .map(|t| graph.require_table(t.trim()).map_err(|e| Error::Input(format!("inner_branches: {e}"))))
        .collect::<Result<Vec<TableId>>>()?;
    let mut filters = Vec::new();
    for f in &opts.filters {
        let c = graph.column_ref(&f.column.to_string()).map_err(|e| Error::Input(format!("filters: {e}")))?;
        if f.condition("x").is_none() {
            return Err(Error::Input(format!("filters: {}: give one or more strings or numbers", f.column)));
        }
        filters.push((c, f.clone()));
    }
    let mut rel = rel.clone();
    if let Some(k) = keep {
        rel.add_table(k);
    }
    let sc = scope_of(graph, &rel)?;
    let mut res = ViewResult {
        status: SolveStatus::Infeasible,
        tables: Vec::new(),
        joins: Vec::new(),
        objective: 0.0,
        path_length: 0,
        solve_ms: 0.0,
        view_name: opts.view_name.clone(),
        view_sql: String::new(),
        columns: Vec::new(),
        merged: Vec::new(),
        walk: Vec::new(),
        ambiguities: Vec::new(),
        explanation: None,
        n_bound: String::new(),
        model_size: ModelSize::default(),
        relevant: sc
            .relevant
            .iter()
            .map(|&t| graph.name(t).to_string())
            .chain(sc.roles.iter().map(|r| graph.copy_label(r.table, Some(r.rel), r.copy)))
            .collect(),
        grain: Default::default(),
        instances: Vec::new(),
        body: None,
    };
    if !sc.blocked.is_empty() {
        res.explanation = Some(sc.blocked.join("; "));
        res.solve_ms = start.elapsed().as_secs_f64() * 1e3;
        return Ok(res);
    }
    let cm = core_problem(graph, &sc, Relax::NONE);
    let core = solve_core_until(&cm.problem, deadline, CoreOptions::default())?;
    res.n_bound = core.n_bound.clone();
    res.model_size = core.model_size.clone();
    if core.status == SolveStatus::Infeasible {
        res.explanation = Some(explain::explain(graph, &sc, deadline));
        res.solve_ms = start.elapsed().as_secs_f64() * 1e3;
        return Ok(res);
    }
    // A walk read backwards is as valid and costs the same: start the view
    // from a plain instance when only the other end is a role instance.
    let mut local_walk = core.walk.clone();
    if local_walk.first().is_some_and(|&l| cm.roles[l].is_some())
        && local_walk.last().is_some_and(|&l| cm.roles[l].is_none())
    {
        local_walk.reverse();
    }
    let walk: Vec<crate::view::WalkNode> =
        local_walk.iter().map(|&l| (cm.tables[l], cm.roles[l], cm.copies[l])).collect();
    let (cost, len) = cm.problem.objective(&core.walk);
    let spec = crate::view::ViewSpec {
        relevant: &sc.relevant,
        roles: &sc.roles,
        inner: &sc.relevant_inner,
        junction_children: &sc.junction_children,
        attributes: &sc.attributes,
        forbidden_rels: &sc.forbidden_rels,
        dialect: opts.dialect,
        name: &opts.view_name,
        keep,
        inner_branches: &inner_branches,
        filters: &filters,
        all_columns: opts.columns.every_table(),
        merge_equal: opts.columns == crate::types::ViewColumns::AllOnce,
    };
    let built = crate::view::build_instances(graph, &walk, &spec).map_err(Error::Solver)?;
    res.status = core.status;
    res.tables = built.tables;
    res.instances = built.instances;
    res.body = Some(built.body);
    res.joins = built.joins;
    res.ambiguities = built.ambiguities;
    res.columns = built.columns;
    res.merged = built.merged;
    res.grain = built.grain;
    res.view_sql = built.sql;
    res.objective = cost as f64;
    res.path_length = len;
    res.walk = walk.iter().map(|&(t, r, c)| graph.copy_label(t, r, c)).collect();
    res.explanation = core.note;
    res.solve_ms = start.elapsed().as_secs_f64() * 1e3;
    Ok(res)
}
