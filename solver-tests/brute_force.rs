//! Brute-force oracle for the walk problem (C1–C5): on hundreds of random
//! small graphs, enumerate every walk up to length N, keep those a checker
//! written here from the paper's definitions accepts, and compare with the
//! MILP (plain and preprocessed), the layered DP and the unbounded exact
//! search. Seeded, so failures reproduce.

use lucy::solve::exact::{solve_exact, ExactLimits, ExactOutcome};
use lucy::solve::milp::{solve_milp, MilpStatus};
use lucy::solve::preprocess::prune;
use lucy::solve::problem::{Bridge, CoreProblem, MmJunction};
use lucy::solve::{solve_core, CoreOptions};
use lucy::types::SolveStatus;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Walk-length horizon of the enumeration.
const N: usize = 7;

/// A random instance, described independently of CoreProblem.
#[derive(Debug, Clone)]
pub struct Inst {
    pub n: usize,
    pub edges: Vec<(usize, usize)>,
    pub relevant: Vec<usize>,
    pub lookups: Vec<usize>,
    /// (junction, side, side)
    pub mm: Vec<(usize, usize, usize)>,
    /// (bridge, side, side): a table that references both sides of an m:m
    /// pattern (C3 case c); the generators only list tables adjacent to
    /// both that are neither sides, junctions nor lookups.
    pub bridges: Vec<(usize, usize, usize)>,
}

impl Inst {
    pub fn adjacent(&self, a: usize, b: usize) -> bool {
        a != b && self.edges.iter().any(|&(x, y)| (x, y) == (a, b) || (x, y) == (b, a))
    }

    /// C1–C4 checked straight from the definitions in Lucy §3.3 (with the
    /// documented readings: interior positions only for C3/C4, conditional
    /// C3 "once between them", settled also by another junction between
    /// the same sides or by a bridge between them).
    pub fn valid(&self, w: &[usize]) -> bool {
        if w.is_empty() {
            return false;
        }
        // C1: consecutive tables joined by a relationship.
        if w.windows(2).any(|p| !self.adjacent(p[0], p[1])) {
            return false;
        }
        // C2: every relevant table occurs.
        if self.relevant.iter().any(|t| !w.contains(t)) {
            return false;
        }
        let interior = 1..w.len().saturating_sub(1);
        // C4: a lookup's predecessor equals its successor.
        for p in interior.clone() {
            if self.lookups.contains(&w[p]) && w[p - 1] != w[p + 1] {
                return false;
            }
        }
        // C3: a junction in the middle sits between its two sides; both
        // sides present => the junction occurs exactly once, between them.
        for &(k, i, j) in &self.mm {
            for p in interior.clone() {
                if w[p] == k && !((w[p - 1] == i && w[p + 1] == j) || (w[p - 1] == j && w[p + 1] == i)) {
                    return false;
                }
            }
            // Several junctions between the same two sides: the walk needs
            // one of them (docs/generate-view.md), and any that occurs
            // occurs once, between them.
            if w.contains(&i) && w.contains(&j) {
                let occ: Vec<usize> = (0..w.len()).filter(|&p| w[p] == k).collect();
                let same_sides =
                    |&(k2, i2, j2): &(usize, usize, usize)| k2 != k && ((i2, j2) == (i, j) || (i2, j2) == (j, i));
                let stand_in = self.mm.iter().any(|m| same_sides(m) && w.contains(&m.0));
                // C3 case c: some bridge of these sides sits between them
                // (side, bridge, other side at positions p-1, p, p+1).
                let pair = |a: usize, b: usize| (a, b) == (i, j) || (a, b) == (j, i);
                let bridged = interior
                    .clone()
                    .any(|p| self.bridges.iter().any(|&(t, a, b)| w[p] == t && pair(a, b) && pair(w[p - 1], w[p + 1])));
                if occ.is_empty() && (stand_in || bridged) {
                    continue;
                }
                if occ.len() != 1 || !interior.contains(&occ[0]) {
                    return false;
                }
            }
        }
        true
    }

    /// (cost, length): occurrences outside T (C5), then walk length.
    pub fn objective(&self, w: &[usize]) -> (usize, usize) {
        (w.iter().filter(|x| !self.relevant.contains(x)).count(), w.len())
    }

    /// Best (cost, length) over all valid walks of at most `max` tables.
    pub fn brute(&self, max: usize) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize)> = None;
        let mut w = Vec::new();
        for s in 0..self.n {
            w.push(s);
            self.dfs(&mut w, max, &mut best);
            w.pop();
        }
        best
    }

    fn dfs(&self, w: &mut Vec<usize>, max: usize, best: &mut Option<(usize, usize)>) {
        if self.valid(w) {
            let o = self.objective(w);
            if best.is_none_or(|b| o < b) {
                *best = Some(o);
            }
        }
        if w.len() == max {
            return;
        }
        let last = *w.last().unwrap();
        for v in 0..self.n {
            if self.adjacent(last, v) {
                w.push(v);
                self.dfs(w, max, best);
                w.pop();
            }
        }
    }

    pub fn problem(&self) -> CoreProblem {
        let mut p = CoreProblem::new(self.n, &self.edges);
        for &t in &self.relevant {
            p.relevant[t] = true;
        }
        for &l in &self.lookups {
            p.lookup[l] = true;
        }
        for &(k, i, j) in &self.mm {
            p.junctions.push(MmJunction { k, sides: [i, j] });
        }
        for &(t, i, j) in &self.bridges {
            p.bridges.push(Bridge { t, sides: [i, j] });
        }
        p
    }
}

pub fn random_inst(rng: &mut ChaCha8Rng) -> Inst {
    let n = rng.random_range(2..=7);
    let density = rng.random_range(0.25..0.6);
    let mut edges = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            if rng.random_bool(density) {
                edges.push((a, b));
            }
        }
    }
    // Parallel edges and self loops must not change anything.
    if !edges.is_empty() && rng.random_bool(0.3) {
        let e = edges[rng.random_range(0..edges.len())];
        edges.push((e.1, e.0));
    }
    if rng.random_bool(0.2) {
        let a = rng.random_range(0..n);
        edges.push((a, a));
    }
    let mut mm = Vec::new();
    if n >= 3 {
        for _ in 0..rng.random_range(0..=2) {
            let k = rng.random_range(0..n);
            let i = rng.random_range(0..n);
            let j = rng.random_range(0..n);
            if k != i && k != j && i != j {
                for s in [i, j] {
                    if !edges.contains(&(k, s)) && !edges.contains(&(s, k)) {
                        edges.push((k, s));
                    }
                }
                mm.push((k, i, j));
            }
        }
    }
    let lookups: Vec<usize> = (0..n).filter(|_| rng.random_bool(0.2)).collect();
    let mut relevant: Vec<usize> = (0..n).filter(|_| rng.random_bool(0.35)).collect();
    if relevant.is_empty() {
        relevant.push(rng.random_range(0..n));
    }
    Inst { n, edges, relevant, lookups, mm, bridges: Vec::new() }
}

/// The view is created and queried on an empty SQLite database with the
/// model's tables.
fn view_runs_on_its_schema(model: &lucy::types::DbModel, view_sql: &str, ctx: &str) {
    let db = rusqlite::Connection::open_in_memory().unwrap();
    for t in &model.tables {
        let cols: Vec<String> = t.columns.iter().map(|c| format!("{} {}", c.name, c.sql_type)).collect();
        db.execute_batch(&format!("CREATE TABLE {} ({});", t.name, cols.join(", "))).unwrap();
    }
    db.execute_batch(view_sql).unwrap_or_else(|e| panic!("{e}: {ctx}"));
    db.prepare("SELECT * FROM lucy_view").unwrap();
}

fn limits() -> ExactLimits {
    ExactLimits::new(1_000_000, None)
}

/// Every solver on `inst` against the brute force over walks of at most
/// `N` tables: the layered DP, the MILP (plain and preprocessed), the
/// production path (warm, cold, exact proof) and the unbounded exact
/// search. Returns whether `inst` is feasible.
fn all_solvers_match_brute_force(inst: &Inst, ctx: &str) -> bool {
    let p = inst.problem();
    let bf = inst.brute(N);
    // Layered DP at the same horizon.
    match solve_exact(&p, Some(N), limits()) {
        ExactOutcome::Optimal { walk, cost, len } => {
            assert!(inst.valid(&walk), "DP walk invalid {walk:?} {ctx}");
            assert_eq!(inst.objective(&walk), (cost, len));
            assert_eq!(Some((cost, len)), bf, "DP vs brute force {ctx}");
        }
        ExactOutcome::Infeasible => assert_eq!(bf, None, "DP infeasible {ctx}"),
        other => panic!("DP gave up: {other:?} {ctx}"),
    }
    // MILP at the same horizon, plain and with the exact reductions.
    for pre in [false, true] {
        let pr = prune(&p, N);
        if pre && pr.infeasible {
            assert_eq!(bf, None, "pruning claims infeasible {ctx}");
            continue;
        }
        let allowed = if pre { Some(pr.allowed.as_slice()) } else { None };
        let out = solve_milp(&p, N, allowed, 30.0).expect("HiGHS");
        match out.status {
            MilpStatus::Optimal => {
                assert!(inst.valid(&out.walk), "MILP walk invalid (pre={pre}) {:?} {ctx}", out.walk);
                assert_eq!(Some(inst.objective(&out.walk)), bf, "MILP (pre={pre}) vs brute force {ctx}");
            }
            MilpStatus::Infeasible => assert_eq!(bf, None, "MILP (pre={pre}) infeasible {ctx}"),
            s => panic!("unexpected MILP status {s:?} {ctx}"),
        }
    }
    // The production path (unbounded exact search settles n).
    let sol =
        solve_core(&p, 30.0, CoreOptions { milp_when_proven: true, ..CoreOptions::default() }).expect("solve_core");
    // Same without the MIP start: the MILP must find the optimum itself.
    let cold =
        solve_core(&p, 30.0, CoreOptions { warm_start: false, milp_when_proven: true, ..CoreOptions::default() })
            .expect("solve_core");
    // The default: the exact search's proof, no MILP.
    let fast = solve_core(&p, 30.0, CoreOptions::default()).expect("solve_core");
    assert_eq!(fast.status, sol.status, "{ctx}");
    if !fast.walk.is_empty() {
        assert!(inst.valid(&fast.walk), "{ctx}");
        assert_eq!(inst.objective(&fast.walk), inst.objective(&sol.walk), "exact proof vs MILP {ctx}");
    }
    assert_eq!(cold.status, sol.status, "{ctx}");
    if !cold.walk.is_empty() {
        assert!(inst.valid(&cold.walk), "{ctx}");
        assert_eq!(inst.objective(&cold.walk), inst.objective(&sol.walk), "cold MILP {ctx}");
        assert!(cold.note.is_none(), "{:?}", cold.note);
    }
    let unbounded = match solve_exact(&p, None, limits()) {
        ExactOutcome::Optimal { cost, len, walk } => {
            assert!(inst.valid(&walk));
            Some((cost, len))
        }
        ExactOutcome::Infeasible => None,
        other => panic!("{other:?}"),
    };
    match unbounded {
        Some(o) => {
            assert!(bf.is_none_or(|b| o <= b), "unbounded worse than bounded {ctx}");
            if o.1 <= N {
                assert_eq!(Some(o), bf, "unbounded optimum within horizon must match {ctx}");
            }
            assert_eq!(sol.status, SolveStatus::Optimal, "{ctx}");
            assert!(inst.valid(&sol.walk), "{ctx}");
            assert_eq!(inst.objective(&sol.walk), o, "production vs exact {ctx}");
            assert!(sol.note.is_none(), "{:?}", sol.note);
            true
        }
        None => {
            assert_eq!(bf, None, "{ctx}");
            assert_eq!(sol.status, SolveStatus::Infeasible, "{ctx}");
            false
        }
    }
}

#[test]
fn milp_dp_and_exact_match_brute_force() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x10c1_2026);
    let (mut feasible, mut infeasible, mut with_mm, mut with_lookup) = (0, 0, 0, 0);
    for case in 0..600 {
        let inst = random_inst(&mut rng);
        let ctx = format!("case {case}: {inst:?}");
        if all_solvers_match_brute_force(&inst, &ctx) {
            feasible += 1;
        } else {
            infeasible += 1;
        }
        with_mm += (!inst.mm.is_empty()) as usize;
        with_lookup += (!inst.lookups.is_empty()) as usize;
    }
    // The generator must exercise every case.
    assert!(feasible > 200 && infeasible > 30, "feasible {feasible}, infeasible {infeasible}");
    assert!(with_mm > 150 && with_lookup > 200, "mm {with_mm}, lookup {with_lookup}");
}

#[test]
fn pruning_never_removes_a_node_of_an_optimal_walk() {
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    for case in 0..400 {
        let inst = random_inst(&mut rng);
        let p = inst.problem();
        if let ExactOutcome::Optimal { walk, len, cost } = solve_exact(&p, Some(N), limits()) {
            for n in len..=N {
                let mut pr = prune(&p, n);
                // The cost reduction keeps every table of every walk of cost ≤ c*.
                lucy::solve::preprocess::prune_by_cost(&p, cost, &mut pr.allowed);
                assert!(!pr.infeasible, "case {case} n={n}");
                for (r, &v) in walk.iter().enumerate() {
                    assert!(pr.allowed[v][r], "case {case}: node {v} at step {} pruned (n={n}) {inst:?}", r + 1);
                }
            }
        }
    }
}

#[test]
fn checker_agrees_with_problem_violation() {
    // The production verifier (CoreProblem::violation) and this file's
    // checker must agree on every enumerated walk.
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for _ in 0..150 {
        let inst = random_inst(&mut rng);
        checker_agrees_on_every_walk(&inst, 5);
    }
}

/// [`Inst::valid`] and [`CoreProblem::violation`] agree on every walk of
/// `inst` of at most `max` tables; returns how many walks C3 case c's
/// bridges make valid (valid here, invalid with `inst`'s bridges left out).
fn checker_agrees_on_every_walk(inst: &Inst, max: usize) -> usize {
    fn all(inst: &Inst, plain: &Inst, p: &CoreProblem, w: &mut Vec<usize>, max: usize, bridged: &mut usize) {
        if !w.is_empty() {
            let valid = inst.valid(w);
            assert_eq!(valid, p.violation(w).is_none(), "{w:?} {inst:?}");
            *bridged += (valid && !plain.valid(w)) as usize;
        }
        if w.len() == max {
            return;
        }
        for v in 0..inst.n {
            if w.last().is_none_or(|&l| inst.adjacent(l, v)) {
                w.push(v);
                all(inst, plain, p, w, max, bridged);
                w.pop();
            }
        }
    }
    let plain = Inst { bridges: Vec::new(), ..inst.clone() };
    let mut bridged = 0;
    all(inst, &plain, &inst.problem(), &mut Vec::new(), max, &mut bridged);
    bridged
}

/// Tables `T0` … `T{n-1}` with an integer `id` key and nothing else: the
/// random-model tests add their foreign-key columns.
fn id_tables(n: usize) -> Vec<lucy::types::Table> {
    use lucy::types::{Column, Table};
    (0..n)
        .map(|i| Table {
            name: format!("T{i}"),
            description: None,
            primary_key: vec!["id".into()],
            columns: vec![Column {
                name: "id".into(),
                sql_type: "INTEGER".into(),
                nullable: false,
                ..Column::default()
            }],
            synonyms: Vec::new(),
            origin: None,
            relation: Vec::new(),
        })
        .collect()
}

/// C3 case c's bridges on a random model, read off its allowed
/// relationships `refs` (`from → to`, M:1: `from` holds the key)
/// independently of the solver: per m:m pattern, each table other than its
/// sides, not a junction and not a lookup, that references both sides.
fn model_bridges(
    refs: &[(usize, usize)],
    mm: &[(usize, usize, usize)],
    lookups: &[usize],
) -> Vec<(usize, usize, usize)> {
    let mut out: Vec<(usize, usize, usize)> = Vec::new();
    let mut from: Vec<usize> = refs.iter().map(|r| r.0).collect();
    from.sort_unstable();
    from.dedup();
    for &(_, i, j) in mm {
        for &t in &from {
            let eligible = t != i && t != j && !mm.iter().any(|m| m.0 == t) && !lookups.contains(&t);
            let known = out.iter().any(|&(t2, a, b)| t2 == t && ((a, b) == (i, j) || (a, b) == (j, i)));
            if eligible && !known && refs.contains(&(t, i)) && refs.contains(&(t, j)) {
                out.push((t, i, j));
            }
        }
    }
    out
}

/// End to end on random dbModels: parallel relationships, user forbids and
/// required tables, through `generate_view`, against the brute force above
/// applied to the model's meaning (forbidden tables and relationships gone,
/// required tables relevant).
#[test]
fn generate_view_matches_brute_force_on_random_models() {
    use lucy::graph::SchemaGraph;
    use lucy::types::{Column, DbModel, Pattern, Relationship, ViewRequest};
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let (mut checked, mut infeasible, mut ambiguous) = (0, 0, 0);
    for case in 0..250 {
        let n = rng.random_range(2..=6);
        let name = |i: usize| format!("T{i}");
        let mut tables = id_tables(n);
        let mut rels: Vec<Relationship> = Vec::new();
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        for a in 0..n {
            for b in 0..n {
                if a != b && rng.random_bool(0.25) {
                    let copies = if rng.random_bool(0.25) { 2 } else { 1 };
                    for c in 0..copies {
                        let col = format!("fk{b}_{c}");
                        tables[a].columns.push(Column {
                            name: col.clone(),
                            sql_type: "INTEGER".into(),
                            nullable: true,
                            description: None,
                            synonyms: Vec::new(),
                            origin: None,
                        });
                        rels.push(crate::gen::many_to_one(Some(format!("r{}", rels.len())), &name(a), &name(b), col));
                        pairs.push((a, b));
                    }
                }
            }
        }
        let between = |x: usize, y: usize| pairs.iter().filter(|&&(a, b)| (a, b) == (x, y) || (a, b) == (y, x)).count();
        let mut patterns = Vec::new();
        let mut mm = Vec::new();
        if n >= 3 && rng.random_bool(0.5) {
            let (k, i, j) = (rng.random_range(0..n), rng.random_range(0..n), rng.random_range(0..n));
            if k != i && k != j && i != j && between(k, i) == 1 && between(k, j) == 1 {
                patterns.push(Pattern::ManyToMany {
                    junction: name(k),
                    sides: [name(i), name(j)],
                    relationships: None,
                    description: None,
                });
                mm.push((k, i, j));
            }
        }
        let lookups: Vec<usize> = (0..n).filter(|&i| rng.random_bool(0.2) && !mm.iter().any(|m| m.0 == i)).collect();
        if !lookups.is_empty() {
            patterns.push(Pattern::Lookup { tables: lookups.iter().map(|&i| name(i)).collect(), description: None });
        }
        let forbid_t: Vec<usize> = (0..n).filter(|_| rng.random_bool(0.12)).collect();
        let forbid_r: Vec<usize> = (0..rels.len()).filter(|_| rng.random_bool(0.12)).collect();
        let require: Vec<usize> = (0..n).filter(|i| rng.random_bool(0.1) && !forbid_t.contains(i)).collect();
        let mut requested: Vec<usize> = (0..n).filter(|_| rng.random_bool(0.4)).collect();
        if requested.is_empty() {
            requested.push(rng.random_range(0..n));
        }
        let mut model =
            DbModel { name: format!("rnd{case}"), tables, relationships: rels.clone(), patterns, ..Default::default() };
        model.constraints.forbid_tables = forbid_t.iter().map(|&i| name(i)).collect();
        model.constraints.forbid_relationships = forbid_r.iter().map(|&r| format!("r{r}")).collect();
        model.constraints.require_tables = require.iter().map(|&i| name(i)).collect();
        let g = SchemaGraph::new(model.clone()).unwrap_or_else(|e| panic!("case {case}: {e}"));
        let req = ViewRequest::new(requested.iter().map(|&i| name(i)).collect());
        let res = lucy::solve::generate_view(&g, &req).expect("generate_view");

        // The model's meaning as a plain instance.
        let mut relevant: Vec<usize> = requested.clone();
        relevant.extend(&require);
        relevant.sort();
        relevant.dedup();
        let allowed_rel = |r: usize| {
            let (a, b) = pairs[r];
            !forbid_r.contains(&r) && !forbid_t.contains(&a) && !forbid_t.contains(&b)
        };
        let edges: Vec<(usize, usize)> = (0..rels.len()).filter(|&r| allowed_rel(r)).map(|r| pairs[r]).collect();
        let bridges = model_bridges(&edges, &mm, &lookups);
        let inst = Inst { n, edges, relevant: relevant.clone(), lookups: lookups.clone(), mm: mm.clone(), bridges };
        let bf = if relevant.iter().any(|t| forbid_t.contains(t)) { None } else { inst.brute(N) };
        let ctx = format!("case {case}: {model:?} requested {requested:?} -> {res:?}");
        match res.status {
            SolveStatus::Infeasible => {
                assert_eq!(bf, None, "{ctx}");
                assert!(res.explanation.as_deref().is_some_and(|e| !e.is_empty()), "{ctx}");
                infeasible += 1;
            }
            _ => {
                assert_eq!(res.status, SolveStatus::Optimal, "{ctx}");
                let walk: Vec<usize> = res.walk.iter().map(|t| t[1..].parse().unwrap()).collect();
                assert!(inst.valid(&walk), "invalid walk {ctx}");
                let got = inst.objective(&walk);
                assert_eq!((res.objective as usize, res.path_length), got, "{ctx}");
                match bf {
                    Some(b) => {
                        assert!(got <= b, "{ctx}");
                        if got.1 <= N {
                            assert_eq!(got, b, "{ctx}");
                        }
                    }
                    None => assert!(got.1 > N, "brute force found nothing within {N} {ctx}"),
                }
                // Joins only along allowed relationships; parallel ones reported.
                for j in &res.joins {
                    let r: usize = j.relationship[1..].parse().unwrap();
                    assert!(allowed_rel(r), "{ctx}");
                }
                for w in walk.windows(2) {
                    let cands = (0..rels.len())
                        .filter(|&r| allowed_rel(r) && (pairs[r] == (w[0], w[1]) || pairs[r] == (w[1], w[0])))
                        .count();
                    if cands > 1 {
                        assert!(
                            res.ambiguities.iter().any(|a| [&a.left, &a.right].contains(&&name(w[0]))
                                && [&a.left, &a.right].contains(&&name(w[1]))),
                            "unreported ambiguity {ctx}"
                        );
                        ambiguous += 1;
                    }
                }
                // The view runs on an empty database with this schema.
                view_runs_on_its_schema(&model, &res.view_sql, &ctx);
                checked += 1;
            }
        }
    }
    assert!(
        checked > 100 && infeasible > 20 && ambiguous > 10,
        "checked {checked}, infeasible {infeasible}, ambiguous {ambiguous}"
    );
}

/// When the exact search gives up (budget of one state here), the MILP
/// deepens n from the lower bound: its answer is the optimum among walks of
/// at most the first feasible n, and it says so in `n_bound`.
#[test]
fn deepening_fallback_is_optimal_for_its_n() {
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let mut used = 0;
    for case in 0..150 {
        let inst = random_inst(&mut rng);
        let p = inst.problem();
        let opts = CoreOptions { exact_states: 1, ..CoreOptions::default() };
        let sol = solve_core(&p, 30.0, opts).expect("solve_core");
        let ctx = format!("case {case}: {inst:?} {sol:?}");
        if sol.walk.is_empty() {
            // Only the lower bound / reductions can prove infeasibility here.
            assert_eq!(inst.brute(N), None, "{ctx}");
            continue;
        }
        assert_eq!(sol.status, SolveStatus::Optimal, "{ctx}");
        assert!(inst.valid(&sol.walk), "{ctx}");
        if sol.n <= N && sol.lower > 1 {
            assert_eq!(Some(inst.objective(&sol.walk)), inst.brute(sol.n), "{ctx}");
            // No shorter horizon is feasible.
            assert_eq!(inst.brute(sol.n - 1), None, "{ctx}");
            used += 1;
        }
        assert!(sol.n_bound.contains("smallest feasible n") || sol.lower == 1, "{ctx}");
    }
    assert!(used > 40, "{used}");
}

/// Role instances (`TABLE@role`) on random dbModels with parallel
/// relationships, self-relationships, lookups, m:m patterns and forbids,
/// through `generate_view`, against the brute force above applied to the
/// instance semantics: each role instance is one more relevant node joined
/// only to its anchor (the other end of its relationship, or the table
/// itself for a self-relationship). Also checks that each role instance is
/// in the view once per walk visit, joined through its own relationship
/// with the key on the right side, and that the view runs on SQLite.
#[test]
fn role_instances_match_brute_force_on_random_models() {
    use lucy::graph::SchemaGraph;
    use lucy::types::{Column, DbModel, Pattern, Relationship, ViewRequest};
    let mut rng = ChaCha8Rng::seed_from_u64(1717);
    let (mut checked, mut infeasible, mut selfs, mut copies) = (0, 0, 0, 0);
    for case in 0..250 {
        let n = rng.random_range(2..=5);
        let name = |i: usize| format!("T{i}");
        let mut tables = id_tables(n);
        let mut rels: Vec<Relationship> = Vec::new();
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        for a in 0..n {
            for b in 0..n {
                let p = if a == b { 0.2 } else { 0.3 };
                if rng.random_bool(p) {
                    let copies = if rng.random_bool(0.3) { 2 } else { 1 };
                    for c in 0..copies {
                        let col = format!("fk{b}_{c}");
                        tables[a].columns.push(Column {
                            name: col.clone(),
                            sql_type: "INTEGER".into(),
                            nullable: true,
                            description: None,
                            synonyms: Vec::new(),
                            origin: None,
                        });
                        let r = rels.len();
                        rels.push(Relationship {
                            role: rng.random_bool(0.5).then(|| format!("role{r}")),
                            ..crate::gen::many_to_one(Some(format!("r{r}")), &name(a), &name(b), col)
                        });
                        pairs.push((a, b));
                    }
                }
            }
        }
        if rels.is_empty() {
            continue;
        }
        let between = |x: usize, y: usize| pairs.iter().filter(|&&(a, b)| (a, b) == (x, y) || (a, b) == (y, x)).count();
        let mut patterns = Vec::new();
        let mut mm = Vec::new();
        if n >= 3 && rng.random_bool(0.3) {
            let (k, i, j) = (rng.random_range(0..n), rng.random_range(0..n), rng.random_range(0..n));
            if k != i && k != j && i != j && between(k, i) == 1 && between(k, j) == 1 {
                patterns.push(Pattern::ManyToMany {
                    junction: name(k),
                    sides: [name(i), name(j)],
                    relationships: None,
                    description: None,
                });
                mm.push((k, i, j));
            }
        }
        let lookups: Vec<usize> = (0..n).filter(|&i| rng.random_bool(0.2) && !mm.iter().any(|m| m.0 == i)).collect();
        if !lookups.is_empty() {
            patterns.push(Pattern::Lookup { tables: lookups.iter().map(|&i| name(i)).collect(), description: None });
        }
        let forbid_t: Vec<usize> = (0..n).filter(|_| rng.random_bool(0.08)).collect();
        let forbid_r: Vec<usize> = (0..rels.len()).filter(|_| rng.random_bool(0.08)).collect();
        let requested: Vec<usize> = (0..n).filter(|_| rng.random_bool(0.35)).collect();
        // One to three role instances: (table, relationship, copy), written
        // by role name, relationship name or OTHER.column; a second copy of
        // the same role (`#2`, the same role twice) now and then.
        let mut roles: Vec<(usize, usize, u8)> = Vec::new();
        for _ in 0..rng.random_range(1..=3) {
            let r = rng.random_range(0..rels.len());
            let (a, b) = pairs[r];
            let t = if rng.random_bool(0.7) { b } else { a };
            if !roles.contains(&(t, r, 0)) {
                roles.push((t, r, 0));
            }
        }
        if rng.random_bool(0.3) {
            let (t, r, _) = roles[0];
            roles.push((t, r, 1));
        }
        let spelled: Vec<String> = roles
            .iter()
            .map(|&(t, r, c)| {
                let copy = if c > 0 { format!("#{}", c + 1) } else { String::new() };
                let base = match (&rels[r].role, rng.random_range(0..3)) {
                    (Some(role), 0) => format!("{}@{role}", name(t)),
                    (_, 1) => format!("{}@r{r}", name(t)),
                    _ => {
                        // OTHER.column: the other end's join column (the `from` column of a self-relationship).
                        let (a, b) = pairs[r];
                        let (other, col) =
                            if a == b || t == b { (a, &rels[r].on[0][0]) } else { (b, &rels[r].on[0][1]) };
                        format!("{}@{}.{col}", name(t), name(other))
                    }
                };
                base + &copy
            })
            .collect();
        let mut model = DbModel {
            name: format!("roles{case}"),
            tables,
            relationships: rels.clone(),
            patterns,
            ..Default::default()
        };
        model.constraints.forbid_tables = forbid_t.iter().map(|&i| name(i)).collect();
        model.constraints.forbid_relationships = forbid_r.iter().map(|&r| format!("r{r}")).collect();
        let g = SchemaGraph::new(model.clone()).unwrap_or_else(|e| panic!("case {case}: {e}"));
        let mut names: Vec<String> = requested.iter().map(|&i| name(i)).collect();
        names.extend(spelled.iter().cloned());
        let req = ViewRequest::new(names.clone());
        let res = match lucy::solve::generate_view(&g, &req) {
            Ok(r) => r,
            // `Ta@Tb.id` names every parallel relationship from Ta to Tb:
            // the error must say it is ambiguous.
            Err(e) => {
                assert!(e.to_string().contains("ambiguous"), "case {case}: {names:?}: {e}");
                continue;
            }
        };

        // The instance semantics as a plain walk problem: tables, then one node per role.
        let allowed_rel = |r: usize| {
            let (a, b) = pairs[r];
            !forbid_r.contains(&r) && !forbid_t.contains(&a) && !forbid_t.contains(&b)
        };
        let mut edges: Vec<(usize, usize)> =
            (0..rels.len()).filter(|&r| allowed_rel(r) && pairs[r].0 != pairs[r].1).map(|r| pairs[r]).collect();
        let bridges = model_bridges(&edges, &mm, &lookups);
        let mut relevant: Vec<usize> = requested.clone();
        for (k, &(t, r, _)) in roles.iter().enumerate() {
            let (a, b) = pairs[r];
            let anchor = if a == t { b } else { a };
            if allowed_rel(r) {
                edges.push((anchor, n + k));
            }
            // The anchor is always in the view.
            relevant.push(n + k);
            relevant.push(anchor);
        }
        let inst = Inst {
            n: n + roles.len(),
            edges,
            relevant: relevant.clone(),
            lookups: lookups.clone(),
            mm: mm.clone(),
            bridges,
        };
        relevant.sort_unstable();
        relevant.dedup();
        let blocked = relevant.iter().any(|&t| t < n && forbid_t.contains(&t));
        let bf = if blocked { None } else { inst.brute(N) };
        let ctx = format!("case {case}: {model:?} requested {names:?} -> {res:?}");
        match res.status {
            SolveStatus::Infeasible => {
                assert_eq!(bf, None, "{ctx}");
                assert!(res.explanation.as_deref().is_some_and(|e| !e.is_empty()), "{ctx}");
                infeasible += 1;
            }
            _ => {
                assert_eq!(res.status, SolveStatus::Optimal, "{ctx}");
                // Walk labels back to nodes: `Ti` or `Ti@…` (the k-th role's label).
                let labels: Vec<String> = roles.iter().map(|&(t, r, c)| g.copy_label(t, Some(r), c)).collect();
                let walk: Vec<usize> = res
                    .walk
                    .iter()
                    .map(|w| match labels.iter().position(|l| l == w) {
                        Some(k) => n + k,
                        None => w[1..].parse().unwrap_or_else(|_| panic!("walk label {w} {ctx}")),
                    })
                    .collect();
                assert!(inst.valid(&walk), "invalid walk {walk:?} {ctx}");
                let got = inst.objective(&walk);
                assert_eq!((res.objective as usize, res.path_length), got, "{ctx}");
                match bf {
                    Some(b) => {
                        assert!(got <= b, "{ctx}");
                        if got.1 <= N {
                            assert_eq!(got, b, "{ctx}");
                        }
                    }
                    None => assert!(got.1 > N, "brute force found nothing within {N} {ctx}"),
                }
                // Every role instance is in the view, joined through its relationship,
                // the key on its own side.
                for &(t, r, c) in &roles {
                    let i = res
                        .instances
                        .iter()
                        .position(|x| x.table == t && x.role == Some(r) && x.copy == c)
                        .unwrap_or_else(|| panic!("role ({t}, r{r}, copy {c}) missing {ctx}"));
                    copies += usize::from(c > 0);
                    let alias = &res.instances[i].alias;
                    let j = res
                        .joins
                        .iter()
                        .find(|j| (&j.left == alias || &j.right == alias) && j.rel == Some(r))
                        .unwrap_or_else(|| panic!("no join for {alias} {ctx}"));
                    let (a, b) = pairs[r];
                    // The instance is the `to` end (holds `id`) unless it is the `from` end of a non-self relationship.
                    let own_col = if a != b && t == a { rels[r].on[0][0].clone() } else { "id".to_string() };
                    let side = if &j.left == alias { 0 } else { 1 };
                    assert_eq!(j.on[0][side], format!("{alias}.{own_col}"), "{ctx}");
                    if a == b {
                        selfs += 1;
                    }
                }
                for j in &res.joins {
                    assert!(allowed_rel(j.rel.unwrap()), "{ctx}");
                }
                view_runs_on_its_schema(&model, &res.view_sql, &ctx);
                checked += 1;
            }
        }
    }
    assert!(
        checked > 80 && infeasible > 10 && selfs > 10 && copies > 10,
        "checked {checked}, infeasible {infeasible}, self-relationship roles {selfs}, second copies {copies}"
    );
}

/// C3 with several junctions between the same two sides (BIRD formula1's
/// m:m patterns): a walk with both sides needs one junction between them,
/// not all. Random instances with two (sometimes three) junctions between
/// sides 0 and 1, solved by the production path (warm and cold MILP) and the
/// exact search, against the brute force.
#[test]
fn several_junctions_between_the_same_sides_need_one() {
    let mut rng = ChaCha8Rng::seed_from_u64(3131);
    let (mut checked, mut one_junction) = (0, 0);
    for case in 0..200 {
        let n = rng.random_range(4..=7);
        let junctions: Vec<usize> = if n >= 5 && rng.random_bool(0.3) { vec![2, 3, 4] } else { vec![2, 3] };
        let mut edges = Vec::new();
        let mut mm = Vec::new();
        for &k in &junctions {
            edges.push((k, 0));
            edges.push((k, 1));
            mm.push((k, 0, 1));
        }
        for a in 0..n {
            for b in a + 1..n {
                let both_j = junctions.contains(&a) || junctions.contains(&b);
                if !both_j && rng.random_bool(0.35) && !edges.contains(&(a, b)) {
                    edges.push((a, b));
                }
            }
        }
        let lookups: Vec<usize> = (junctions.len() + 2..n).filter(|_| rng.random_bool(0.2)).collect();
        let mut relevant = vec![0, 1];
        relevant.extend((2..n).filter(|_| rng.random_bool(0.25)));
        let inst = Inst { n, edges, relevant, lookups, mm, bridges: Vec::new() };
        let p = inst.problem();
        let bf = inst.brute(N);
        let ctx = format!("case {case}: {inst:?}");
        for warm_start in [true, false] {
            let sol =
                solve_core(&p, 30.0, CoreOptions { warm_start, milp_when_proven: true, ..CoreOptions::default() })
                    .expect("solve_core");
            match bf {
                None => assert!(sol.walk.is_empty() || sol.walk.len() > N, "{ctx} {sol:?}"),
                Some(b) => {
                    assert_eq!(sol.status, SolveStatus::Optimal, "{ctx}");
                    assert!(inst.valid(&sol.walk), "{ctx} {sol:?}");
                    assert_eq!(p.violation(&sol.walk), None, "{ctx}");
                    assert_eq!(inst.objective(&sol.walk), b, "{ctx} {sol:?}");
                    let used = junctions.iter().filter(|k| sol.walk.contains(k)).count();
                    if used == 1 {
                        one_junction += 1;
                    }
                    checked += 1;
                }
            }
        }
        if let (ExactOutcome::Optimal { walk, .. }, Some(b)) = (solve_exact(&p, None, limits()), bf) {
            assert_eq!(inst.objective(&walk), b, "{ctx}");
        }
    }
    assert!(checked > 200 && one_junction > 100, "checked {checked}, walks through one junction {one_junction}");
}

/// `random_inst`'s instance with C3 case c's bridges: an m:m pattern
/// added when it has none, then per pattern one or two tries at a bridge (a
/// table that is not a side, a junction or a lookup, joined to both sides);
/// half the time both sides of the first pattern are relevant, where the
/// rule acts. `None` below 4 tables.
fn random_bridged_inst(rng: &mut ChaCha8Rng) -> Option<Inst> {
    let mut inst = random_inst(rng);
    let n = inst.n;
    if n < 4 {
        return None;
    }
    let link = |inst: &mut Inst, a: usize, b: usize| {
        if !inst.adjacent(a, b) {
            inst.edges.push((a, b));
        }
    };
    if inst.mm.is_empty() {
        let order = shuffled(rng, n);
        let (k, i, j) = (order[0], order[1], order[2]);
        link(&mut inst, k, i);
        link(&mut inst, k, j);
        inst.mm.push((k, i, j));
    }
    for (_, i, j) in inst.mm.clone() {
        for _ in 0..rng.random_range(1..=2) {
            let t = rng.random_range(0..n);
            let pair = |a: usize, b: usize| (a, b) == (i, j) || (a, b) == (j, i);
            let eligible = t != i
                && t != j
                && !inst.mm.iter().any(|m| m.0 == t)
                && !inst.lookups.contains(&t)
                && !inst.bridges.iter().any(|&(t2, a, b)| t2 == t && pair(a, b));
            if eligible {
                link(&mut inst, t, i);
                link(&mut inst, t, j);
                inst.bridges.push((t, i, j));
            }
        }
    }
    if rng.random_bool(0.5) {
        let (_, i, j) = inst.mm[0];
        for s in [i, j] {
            if !inst.relevant.contains(&s) {
                inst.relevant.push(s);
            }
        }
    }
    Some(inst)
}

/// C3 case c (bridges: BIRD formula1's results between races and drivers):
/// random instances with bridges, every solver against the brute force,
/// and the production verifier against this file's checker on every walk.
/// Counts the instances whose optimum (or feasibility) the rule changes and
/// the walks it makes valid, so the test cannot pass without the rule
/// acting.
#[test]
fn bridges_between_the_sides_match_brute_force() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xb1d9e);
    let (mut checked, mut feasible, mut changed, mut rescued, mut walks) = (0, 0, 0, 0, 0);
    for case in 0..1000 {
        let Some(inst) = random_bridged_inst(&mut rng) else { continue };
        if inst.bridges.is_empty() {
            continue;
        }
        let ctx = format!("case {case}: {inst:?}");
        feasible += all_solvers_match_brute_force(&inst, &ctx) as usize;
        let plain = Inst { bridges: Vec::new(), ..inst.clone() };
        let (with, without) = (inst.brute(N), plain.brute(N));
        assert!(
            without.is_none() || with.is_some_and(|w| without.is_some_and(|o| w <= o)),
            "bridges only add walks {ctx}"
        );
        changed += (with != without) as usize;
        rescued += (with.is_some() && without.is_none()) as usize;
        if case % 4 == 0 {
            walks += checker_agrees_on_every_walk(&inst, 5);
        }
        checked += 1;
    }
    assert!(
        checked > 250 && feasible > 200 && changed > 40 && rescued > 15 && walks > 300,
        "checked {checked}, feasible {feasible}, optimum changed by bridges {changed}, feasible only with bridges {rescued}, walks valid only with bridges {walks}"
    );
}

/// C3 case c's bridges of every bundled model, as the solver derives them:
/// BIRD formula1's three-way facts results and qualifying bridge races with
/// drivers and with constructors; no other model has one (DDO: no table
/// references both CLIENT and RESOURCEPOOL; BIRD financial: none both
/// client and account), so their views are unchanged by the rule.
#[test]
fn bundled_models_bridges() {
    use lucy::graph::SchemaGraph;
    use lucy::solve::relevant::{core_problem, scope, Relax};
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir("dbmodels")
        .unwrap()
        .chain(std::fs::read_dir("dbmodels/spider").unwrap())
        .map(|e| e.unwrap().path())
        .collect();
    files.retain(|f| f.extension().is_some_and(|e| e == "json"));
    files.sort();
    assert!(files.len() >= 20, "{files:?}");
    let mut found: Vec<String> = Vec::new();
    for f in &files {
        let g = SchemaGraph::new(lucy::model::load(f).unwrap()).unwrap();
        let first = g.name(g.core_tables()[0]).to_string();
        let sc = scope(&g, &lucy::types::ViewRequest::new(vec![first])).unwrap();
        let p = core_problem(&g, &sc, Relax::NONE).problem;
        for b in &p.bridges {
            found.push(format!(
                "{}: {} between {} and {}",
                f.file_stem().unwrap().to_string_lossy(),
                p.names[b.t],
                p.names[b.sides[0]],
                p.names[b.sides[1]]
            ));
        }
    }
    found.sort();
    assert_eq!(
        found,
        [
            "bird_formula1: qualifying between races and constructors",
            "bird_formula1: qualifying between races and drivers",
            "bird_formula1: results between races and constructors",
            "bird_formula1: results between races and drivers",
        ]
    );
}

/// The same on a dbModel: PERSON and MOVIE joined by ACTED and by DIRECTED
/// (two m:m patterns). The view of PERSON and MOVIE joins one junction, not
/// both; asking for DIRECTED picks that one.
#[test]
fn generate_view_joins_one_of_two_junctions() {
    use lucy::graph::SchemaGraph;
    let m = lucy::model::parse(
        &serde_json::json!({
            "name": "films",
            "tables": [
                {"name": "PERSON", "primary_key": ["id"], "columns": [{"name": "id"}]},
                {"name": "MOVIE", "primary_key": ["id"], "columns": [{"name": "id"}]},
                {"name": "ACTED", "primary_key": ["p", "m"], "columns": [{"name": "p"}, {"name": "m"}]},
                {"name": "DIRECTED", "primary_key": ["p", "m"], "columns": [{"name": "p"}, {"name": "m"}]}
            ],
            "relationships": [
                {"from": "ACTED", "to": "PERSON", "cardinality": "M:1", "on": [["p", "id"]]},
                {"from": "ACTED", "to": "MOVIE", "cardinality": "M:1", "on": [["m", "id"]]},
                {"from": "DIRECTED", "to": "PERSON", "cardinality": "M:1", "on": [["p", "id"]]},
                {"from": "DIRECTED", "to": "MOVIE", "cardinality": "M:1", "on": [["m", "id"]]}
            ],
            "patterns": [
                {"kind": "many_to_many", "junction": "ACTED", "sides": ["PERSON", "MOVIE"]},
                {"kind": "many_to_many", "junction": "DIRECTED", "sides": ["PERSON", "MOVIE"]}
            ]
        })
        .to_string(),
        None,
    )
    .unwrap();
    let g = SchemaGraph::new(m).unwrap();
    let req = |t: &[&str]| lucy::types::ViewRequest::new(t.iter().map(|s| s.to_string()).collect());
    let v = lucy::solve::generate_view(&g, &req(&["PERSON", "MOVIE"])).unwrap();
    assert_eq!(v.status, SolveStatus::Optimal);
    assert_eq!((v.objective, v.path_length), (1.0, 3), "{v:?}");
    assert_eq!(v.tables.len(), 3, "one junction, not both: {:?}", v.tables);
    let v = lucy::solve::generate_view(&g, &req(&["PERSON", "MOVIE", "DIRECTED"])).unwrap();
    assert_eq!((v.objective, v.path_length), (0.0, 3), "{v:?}");
    assert!(v.tables.contains(&"DIRECTED".to_string()) && !v.tables.contains(&"ACTED".to_string()), "{:?}", v.tables);
    // Both asked for: both joined, each once between the sides.
    let v = lucy::solve::generate_view(&g, &req(&["PERSON", "MOVIE", "DIRECTED", "ACTED"])).unwrap();
    assert_eq!(v.status, SolveStatus::Optimal);
    assert!(v.tables.contains(&"DIRECTED".to_string()) && v.tables.contains(&"ACTED".to_string()), "{:?}", v.tables);
}

/// Subtype instances (`ROOT@CHILD`: the rows of a star's root that are of
/// one child's kind, ACME's four claim amounts) on random dbModels with
/// lookups, m:m patterns and forbids, through `generate_view`, against the
/// brute force above applied to their semantics: each subtype instance is
/// one more relevant node adjacent to every core table the root's plain
/// node is adjacent to (through allowed relationships; C3 and C4 read the
/// plain nodes). Also
/// checks that each subtype instance is in the view with its child joined
/// to it (INNER, through the child's relationship) and that the view runs
/// on SQLite.
#[test]
fn subtype_instances_match_brute_force_on_random_models() {
    use lucy::graph::SchemaGraph;
    use lucy::types::{Cardinality, Column, DbModel, JoinKind, Pattern, PatternNode, Relationship, Table, ViewRequest};
    let mut rng = ChaCha8Rng::seed_from_u64(4242);
    let (mut checked, mut infeasible, mut multi) = (0, 0, 0);
    let col = |name: &str| Column {
        name: name.into(),
        sql_type: "INTEGER".into(),
        nullable: true,
        description: None,
        synonyms: Vec::new(),
        origin: None,
    };
    for case in 0..250 {
        let n = rng.random_range(2..=5);
        let name = |i: usize| format!("T{i}");
        let mut tables: Vec<Table> = (0..n)
            .map(|i| Table {
                name: name(i),
                description: None,
                primary_key: vec!["id".into()],
                columns: vec![col("id")],
                synonyms: Vec::new(),
                origin: None,
                relation: Vec::new(),
            })
            .collect();
        let mut rels: Vec<Relationship> = Vec::new();
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        for a in 0..n {
            for b in 0..n {
                if a != b && rng.random_bool(0.35) {
                    let c = format!("fk{b}_{}", rels.len());
                    tables[a].columns.push(col(&c));
                    rels.push(crate::gen::many_to_one(Some(format!("r{}", rels.len())), &name(a), &name(b), c));
                    pairs.push((a, b));
                }
            }
        }
        if rels.is_empty() {
            continue;
        }
        let core_rels = rels.len();
        // A star rooted at `root` with two or three children C0.., each
        // joined to the root by its own relationship.
        let root = rng.random_range(0..n);
        let kids = rng.random_range(2..=3);
        let mut children = Vec::new();
        for k in 0..kids {
            tables.push(Table {
                name: format!("C{k}"),
                description: None,
                primary_key: vec!["id".into()],
                columns: vec![col("id"), col("root_id")],
                synonyms: Vec::new(),
                origin: None,
                relation: Vec::new(),
            });
            rels.push(Relationship {
                name: Some(format!("c{k}")),
                from: format!("C{k}"),
                to: name(root),
                cardinality: if rng.random_bool(0.5) { Cardinality::OneToOne } else { Cardinality::ManyToOne },
                on: vec![["root_id".into(), "id".into()]],
                description: None,
                role: None,
                role_description: None,
                role_synonyms: Vec::new(),
                via: None,
                origin: None,
            });
            children.push(PatternNode::leaf(format!("C{k}")));
        }
        let between = |x: usize, y: usize| pairs.iter().filter(|&&(a, b)| (a, b) == (x, y) || (a, b) == (y, x)).count();
        let mut patterns = vec![Pattern::Star { root: name(root), children, description: None, exclusive: false }];
        let mut mm = Vec::new();
        if n >= 3 && rng.random_bool(0.3) {
            let (k, i, j) = (rng.random_range(0..n), rng.random_range(0..n), rng.random_range(0..n));
            if k != i && k != j && i != j && k != root && between(k, i) == 1 && between(k, j) == 1 {
                patterns.push(Pattern::ManyToMany {
                    junction: name(k),
                    sides: [name(i), name(j)],
                    relationships: None,
                    description: None,
                });
                mm.push((k, i, j));
            }
        }
        // (A star's root is never a lookup: the model forbids both roles.)
        let lookups: Vec<usize> =
            (0..n).filter(|&i| i != root && rng.random_bool(0.2) && !mm.iter().any(|m| m.0 == i)).collect();
        if !lookups.is_empty() {
            patterns.push(Pattern::Lookup { tables: lookups.iter().map(|&i| name(i)).collect(), description: None });
        }
        let forbid_t: Vec<usize> = (0..n).filter(|_| rng.random_bool(0.08)).collect();
        let forbid_r: Vec<usize> = (0..core_rels).filter(|_| rng.random_bool(0.08)).collect();
        let requested: Vec<usize> = (0..n).filter(|_| rng.random_bool(0.35)).collect();
        // One to three subtype instances, by the child's name.
        let mut kinds: Vec<usize> = (0..kids).filter(|_| rng.random_bool(0.6)).collect();
        if kinds.is_empty() {
            kinds.push(rng.random_range(0..kids));
        }
        let mut model = DbModel {
            name: format!("subtypes{case}"),
            tables,
            relationships: rels.clone(),
            patterns,
            ..Default::default()
        };
        model.constraints.forbid_tables = forbid_t.iter().map(|&i| name(i)).collect();
        model.constraints.forbid_relationships = forbid_r.iter().map(|&r| format!("r{r}")).collect();
        let g = SchemaGraph::new(model.clone()).unwrap_or_else(|e| panic!("case {case}: {e}"));
        let mut names: Vec<String> = requested.iter().map(|&i| name(i)).collect();
        names.extend(kinds.iter().map(|&k| format!("{}@C{k}", name(root))));
        let res = lucy::solve::generate_view(&g, &ViewRequest::new(names.clone()))
            .unwrap_or_else(|e| panic!("case {case}: {names:?}: {e}"));

        // The semantics as a plain walk problem: tables, then one node per subtype instance.
        let allowed_rel = |r: usize| {
            let (a, b) = pairs[r];
            !forbid_r.contains(&r) && !forbid_t.contains(&a) && !forbid_t.contains(&b)
        };
        let mut edges: Vec<(usize, usize)> = (0..core_rels).filter(|&r| allowed_rel(r)).map(|r| pairs[r]).collect();
        let bridges = model_bridges(&edges, &mm, &lookups);
        let mut relevant: Vec<usize> = requested.clone();
        for k in 0..kinds.len() {
            let copies: Vec<usize> = edges
                .iter()
                .filter_map(|&(a, b)| {
                    if a == root {
                        Some(b)
                    } else if b == root {
                        Some(a)
                    } else {
                        None
                    }
                })
                .collect();
            if !forbid_t.contains(&root) {
                edges.extend(copies.into_iter().map(|o| (o, n + k)));
            }
            relevant.push(n + k);
        }
        let inst = Inst {
            n: n + kinds.len(),
            edges,
            relevant: relevant.clone(),
            lookups: lookups.clone(),
            mm: mm.clone(),
            bridges,
        };
        let blocked = relevant.iter().any(|&t| t < n && forbid_t.contains(&t)) || forbid_t.contains(&root);
        let bf = if blocked { None } else { inst.brute(N) };
        let ctx = format!("case {case}: {model:?} requested {names:?} -> {res:?}");
        match res.status {
            SolveStatus::Infeasible => {
                assert_eq!(bf, None, "{ctx}");
                assert!(res.explanation.as_deref().is_some_and(|e| !e.is_empty()), "{ctx}");
                infeasible += 1;
            }
            _ => {
                assert_eq!(res.status, SolveStatus::Optimal, "{ctx}");
                let labels: Vec<String> = kinds.iter().map(|&k| g.instance_label(root, Some(core_rels + k))).collect();
                let walk: Vec<usize> = res
                    .walk
                    .iter()
                    .map(|w| match labels.iter().position(|l| l == w) {
                        Some(k) => n + k,
                        None => w[1..].parse().unwrap_or_else(|_| panic!("walk label {w} {ctx}")),
                    })
                    .collect();
                assert!(inst.valid(&walk), "invalid walk {walk:?} {ctx}");
                let got = inst.objective(&walk);
                assert_eq!((res.objective as usize, res.path_length), got, "{ctx}");
                match bf {
                    Some(b) => {
                        assert!(got <= b, "{ctx}");
                        if got.1 <= N {
                            assert_eq!(got, b, "{ctx}");
                        }
                    }
                    None => assert!(got.1 > N, "brute force found nothing within {N} {ctx}"),
                }
                // Each subtype instance once, its child INNER-joined to it.
                for &k in &kinds {
                    let rel = core_rels + k;
                    let here: Vec<usize> = (0..res.instances.len())
                        .filter(|&i| res.instances[i].table == root && res.instances[i].role == Some(rel))
                        .collect();
                    assert_eq!(here.len(), 1, "{ctx}");
                    let alias = &res.instances[here[0]].alias;
                    let j = res
                        .joins
                        .iter()
                        .find(|j| &j.left == alias && j.rel == Some(rel))
                        .unwrap_or_else(|| panic!("no child join for {alias} {ctx}"));
                    assert_eq!(j.kind, JoinKind::Inner, "{ctx}");
                    assert_eq!(j.on[0], [format!("{alias}.id"), format!("{}.root_id", j.right)], "{ctx}");
                }
                if kinds.len() > 1 {
                    multi += 1;
                }
                for j in &res.joins {
                    let r = j.rel.unwrap();
                    assert!(r >= core_rels || allowed_rel(r), "{ctx}");
                }
                view_runs_on_its_schema(&model, &res.view_sql, &ctx);
                checked += 1;
            }
        }
    }
    assert!(
        checked > 80 && infeasible > 10 && multi > 30,
        "checked {checked}, infeasible {infeasible}, several subtypes {multi}"
    );
}

/// C3 case b: a table that hangs off an m:m junction (BIRD financial's card,
/// whose one relationship is to the client–account junction disp). Under
/// the paper's C3 no walk passes the junction between a side and it, so
/// "cards of a client" was infeasible; lucy's reading: the walk visits the
/// junction in its place and the view INNER-joins it to the junction. On
/// random models with an m:m pattern, one or two such tables, lookups and
/// forbids, `generate_view` is compared with the brute force on that
/// semantics (each requested hanging table replaced by its junction, when
/// anything else is requested), and each hanging table must be joined to
/// the junction's instance; the view runs on SQLite. Cases the paper's
/// semantics leaves infeasible and this one solves are counted.
#[test]
fn tables_hanging_off_a_junction_match_brute_force() {
    use lucy::graph::SchemaGraph;
    use lucy::types::{Column, DbModel, JoinKind, Pattern, Relationship, Table, ViewRequest};
    let mut rng = ChaCha8Rng::seed_from_u64(3303);
    let (mut checked, mut infeasible, mut rescued) = (0, 0, 0);
    let col = |name: &str| Column {
        name: name.into(),
        sql_type: "INTEGER".into(),
        nullable: true,
        description: None,
        synonyms: Vec::new(),
        origin: None,
    };
    for case in 0..300 {
        // T0, T1: the sides; T2: the junction; T3..: other tables; then the
        // hanging tables H0.. (one relationship each, to T2).
        let n = rng.random_range(3..=6);
        let h = rng.random_range(1..=2);
        let name = |i: usize| if i < n { format!("T{i}") } else { format!("H{}", i - n) };
        let mut tables: Vec<Table> = (0..n + h)
            .map(|i| Table {
                name: name(i),
                description: None,
                primary_key: vec!["id".into()],
                columns: vec![col("id")],
                synonyms: Vec::new(),
                origin: None,
                relation: Vec::new(),
            })
            .collect();
        let mut rels: Vec<Relationship> = Vec::new();
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        let mut add = |tables: &mut Vec<Table>, a: usize, b: usize| {
            let c = format!("fk{b}_{}", rels.len());
            tables[a].columns.push(col(&c));
            rels.push(crate::gen::many_to_one(Some(format!("r{}", rels.len())), &name(a), &name(b), c));
            pairs.push((a, b));
        };
        add(&mut tables, 2, 0);
        add(&mut tables, 2, 1);
        for a in 0..n {
            for b in 0..n {
                if a != b && a != 2 && b != 2 && rng.random_bool(0.3) {
                    add(&mut tables, a, b);
                }
            }
        }
        for c in n..n + h {
            add(&mut tables, c, 2);
        }
        let mut patterns = vec![Pattern::ManyToMany {
            junction: name(2),
            sides: [name(0), name(1)],
            relationships: None,
            description: None,
        }];
        let lookups: Vec<usize> = (3..n).filter(|_| rng.random_bool(0.2)).collect();
        if !lookups.is_empty() {
            patterns.push(Pattern::Lookup { tables: lookups.iter().map(|&i| name(i)).collect(), description: None });
        }
        let forbid_t: Vec<usize> = (0..n + h).filter(|_| rng.random_bool(0.05)).collect();
        let forbid_r: Vec<usize> = (0..rels.len()).filter(|_| rng.random_bool(0.05)).collect();
        let mut requested: Vec<usize> = (0..n).filter(|_| rng.random_bool(0.35)).collect();
        requested.extend((n..n + h).filter(|_| rng.random_bool(0.7)));
        if requested.is_empty() {
            requested.push(n);
        }
        let mut model = DbModel {
            name: format!("hang{case}"),
            tables,
            relationships: rels.clone(),
            patterns,
            ..Default::default()
        };
        model.constraints.forbid_tables = forbid_t.iter().map(|&i| name(i)).collect();
        model.constraints.forbid_relationships = forbid_r.iter().map(|&r| format!("r{r}")).collect();
        let g = SchemaGraph::new(model.clone()).unwrap_or_else(|e| panic!("case {case}: {e}"));
        let names: Vec<String> = requested.iter().map(|&i| name(i)).collect();
        let res = lucy::solve::generate_view(&g, &ViewRequest::new(names.clone()))
            .unwrap_or_else(|e| panic!("case {case}: {names:?}: {e}"));

        let allowed_rel = |r: usize| {
            let (a, b) = pairs[r];
            !forbid_r.contains(&r) && !forbid_t.contains(&a) && !forbid_t.contains(&b)
        };
        let edges: Vec<(usize, usize)> = (0..rels.len()).filter(|&r| allowed_rel(r)).map(|r| pairs[r]).collect();
        let bridges = model_bridges(&edges, &[(2, 0, 1)], &lookups);
        let inst = |relevant: Vec<usize>| Inst {
            n: n + h,
            edges: edges.clone(),
            relevant,
            lookups: lookups.clone(),
            mm: vec![(2, 0, 1)],
            bridges: bridges.clone(),
        };
        // Each requested hanging table moves to its junction when anything
        // else is requested and neither it, the junction nor the link is forbidden.
        let rel_of = |c: usize| pairs.iter().position(|&(a, _)| a == c).unwrap();
        let movable = |c: usize| {
            c >= n
                && requested.iter().any(|&t| t != c && t != 2)
                && !forbid_t.contains(&c)
                && !forbid_t.contains(&2)
                && !forbid_r.contains(&rel_of(c))
        };
        let moved: Vec<usize> = requested.iter().copied().filter(|&c| movable(c)).collect();
        let mut relevant: Vec<usize> = requested.iter().copied().filter(|c| !moved.contains(c)).collect();
        if !moved.is_empty() && !relevant.contains(&2) {
            relevant.push(2);
        }
        let blocked = requested.iter().any(|t| forbid_t.contains(t));
        let bf = if blocked { None } else { inst(relevant.clone()).brute(N) };
        let paper = if blocked { None } else { inst(requested.clone()).brute(N) };
        let ctx = format!("case {case}: {model:?} requested {names:?} -> {res:?}");
        match res.status {
            SolveStatus::Infeasible => {
                assert_eq!(bf, None, "{ctx}");
                infeasible += 1;
            }
            _ => {
                assert_eq!(res.status, SolveStatus::Optimal, "{ctx}");
                let walk: Vec<usize> = res
                    .walk
                    .iter()
                    .map(|w| {
                        if let Some(x) = w.strip_prefix('T') {
                            x.parse().unwrap()
                        } else {
                            n + w[1..].parse::<usize>().unwrap()
                        }
                    })
                    .collect();
                let p = inst(relevant.clone());
                assert!(p.valid(&walk), "invalid walk {walk:?} {ctx}");
                let got = p.objective(&walk);
                assert_eq!((res.objective as usize, res.path_length), got, "{ctx}");
                match bf {
                    Some(b) => {
                        assert!(got <= b, "{ctx}");
                        if got.1 <= N {
                            assert_eq!(got, b, "{ctx}");
                        }
                    }
                    None => assert!(got.1 > N, "brute force found nothing within {N} {ctx}"),
                }
                for &c in &moved {
                    let j = res
                        .joins
                        .iter()
                        .find(|j| j.right == name(c))
                        .unwrap_or_else(|| panic!("{} not joined {ctx}", name(c)));
                    assert_eq!(
                        (j.left.as_str(), j.kind, j.rel),
                        (name(2).as_str(), JoinKind::Inner, Some(rel_of(c))),
                        "{ctx}"
                    );
                }
                if paper.is_none() {
                    rescued += 1;
                }
                view_runs_on_its_schema(&model, &res.view_sql, &ctx);
                checked += 1;
            }
        }
    }
    assert!(
        checked > 100 && infeasible > 5 && rescued > 30,
        "checked {checked}, infeasible {infeasible}, feasible only with case b {rescued}"
    );
}

/// Relevant sets above the Held–Karp size (13–16 tables, the enterprise
/// requests' range), with lookups and m:m patterns: the exact search with
/// its large-set bounds (Held–Karp over a part, MST, C3/C4-respecting
/// distances, the lookup spur bound, C3's pending junctions)
/// must reach the optimum of the same search without any bound (Dijkstra
/// over walk states), and its walk must pass the independent checker here.
#[test]
fn large_relevant_sets_match_the_unbounded_search() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x16_2026);
    let (mut tally, mut with_mm, mut with_lookup) = (Tally::default(), 0, 0);
    for case in 0..40 {
        let n = rng.random_range(15..=19);
        let k = rng.random_range(13..=n.min(16));
        let edges = tree_plus_edges(&mut rng, n, 2..=n);
        let tries = rng.random_range(0..=3);
        let mm = random_mm(&mut rng, n, &edges, tries);
        let order = shuffled(&mut rng, n);
        let relevant: Vec<usize> = order[..k].to_vec();
        let lookups: Vec<usize> = (0..n).filter(|_| rng.random_bool(0.08)).collect();
        with_mm += (!mm.is_empty()) as usize;
        with_lookup += (!lookups.is_empty()) as usize;
        let inst = Inst { n, edges, relevant, lookups, mm, bridges: Vec::new() };
        tally.check(&inst, &format!("case {case}"));
    }
    let Tally { checked, infeasible, skipped } = tally;
    assert!(
        checked >= 20 && skipped <= 5 && with_mm >= 10 && with_lookup >= 10,
        "checked {checked}, infeasible {infeasible}, referee gave up {skipped}, with m:m {with_mm}, with lookups {with_lookup}"
    );
}

/// A connected random graph on `n` nodes: a random spanning tree plus a
/// count drawn from `extra` of random further edges (self loops skipped),
/// so a few cycles (`benchmarks/gen.rs`, as the benchmarks' random schemas).
fn tree_plus_edges(rng: &mut ChaCha8Rng, n: usize, extra: std::ops::RangeInclusive<usize>) -> Vec<(usize, usize)> {
    let mut edges = crate::gen::random_tree(rng, n);
    let count = rng.random_range(extra);
    crate::gen::add_random_edges(rng, n, &mut edges, count, false);
    edges
}

/// Up to `tries` m:m patterns over existing paths side – junction – side,
/// one per junction.
fn random_mm(rng: &mut ChaCha8Rng, n: usize, edges: &[(usize, usize)], tries: usize) -> Vec<(usize, usize, usize)> {
    let mut mm: Vec<(usize, usize, usize)> = Vec::new();
    for _ in 0..tries {
        let j = rng.random_range(0..n);
        let nb: Vec<usize> = edges
            .iter()
            .filter_map(|&(a, b)| {
                if a == j {
                    Some(b)
                } else if b == j {
                    Some(a)
                } else {
                    None
                }
            })
            .collect();
        if nb.len() >= 2 && !mm.iter().any(|m| m.0 == j) {
            let (s0, s1) = (nb[rng.random_range(0..nb.len())], nb[rng.random_range(0..nb.len())]);
            if s0 != s1 {
                mm.push((j, s0, s1));
            }
        }
    }
    mm
}

/// 0..n in a random order.
fn shuffled(rng: &mut ChaCha8Rng, n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    for i in 0..n {
        let j = rng.random_range(i..n);
        order.swap(i, j);
    }
    order
}

/// Counts of [`Tally::check`]: the exact search against the same search
/// without bounds (the referee where brute force is out of reach).
#[derive(Default)]
struct Tally {
    checked: usize,
    infeasible: usize,
    skipped: usize,
}

impl Tally {
    /// Solve `inst` both ways; the answers must agree and the walk be valid.
    fn check(&mut self, inst: &Inst, case: &str) {
        use lucy::solve::exact::solve_exact_blind;
        let p = inst.problem();
        let ctx = format!("{case}: {inst:?}");
        let big = ExactLimits::new(3_000_000, None);
        // The weighted pass (and the stop once every state left is bounded
        // above the incumbent) runs only on searches past 20,000 states:
        // run it at once too, and the answer must be the same optimum.
        let eager = solve_exact(&p, None, ExactLimits { weighted_after: 1, ..big });
        match (solve_exact_blind(&p, None, big), solve_exact(&p, None, big)) {
            (ExactOutcome::GaveUp(_), _) => self.skipped += 1,
            (ExactOutcome::Infeasible, got) => {
                assert_eq!(got, ExactOutcome::Infeasible, "{ctx}");
                assert_eq!(eager, ExactOutcome::Infeasible, "eager weighted pass {ctx}");
                self.infeasible += 1;
            }
            (ExactOutcome::Optimal { cost, len, .. }, ExactOutcome::Optimal { walk, cost: c, len: l }) => {
                assert!(inst.valid(&walk), "invalid walk {walk:?} {ctx}");
                assert_eq!(p.violation(&walk), None, "{ctx}");
                assert_eq!(inst.objective(&walk), (c, l), "{ctx}");
                assert_eq!((c, l), (cost, len), "bounded search vs unbounded {ctx}");
                let ExactOutcome::Optimal { walk, cost: ce, len: le } = eager else {
                    panic!("eager weighted pass: {eager:?} {ctx}")
                };
                assert!(inst.valid(&walk), "invalid walk {walk:?} (eager weighted pass) {ctx}");
                assert_eq!((ce, le), (cost, len), "eager weighted pass vs unbounded {ctx}");
                self.checked += 1;
            }
            (r, got) => panic!("referee {r:?}, bounded search {got:?} {ctx}"),
        }
    }
}

/// The large-request search's enterprise-shaped cuts against the unbounded
/// search: sparse graphs (a random tree plus a few edges, so most tables
/// outside T sit in dangling branches, which the search never enters),
/// 13 relevant tables (so the large-request bounds apply) of which up to 3
/// are lookups (the spur bound), and m:m patterns, some with both sides
/// relevant (C3's pending-junction bound and its dead states).
#[test]
fn sparse_large_requests_with_lookups_match_the_unbounded_search() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x16_2027);
    let (mut tally, mut with_mm, mut with_lookup, mut pending) = (Tally::default(), 0, 0, 0);
    for case in 0..30 {
        let n = rng.random_range(24..=32);
        let edges = tree_plus_edges(&mut rng, n, 1..=4);
        let tries = rng.random_range(1..=4);
        let mm = random_mm(&mut rng, n, &edges, tries);
        let order = shuffled(&mut rng, n);
        let relevant: Vec<usize> = order[..13].to_vec();
        // Lookups among the leaves (a lookup elsewhere mostly cuts the
        // graph): up to 3 relevant ones, and a few others.
        let degree = |v: usize| edges.iter().filter(|&&(a, b)| a == v || b == v).count();
        let mut lookups: Vec<usize> = relevant.iter().copied().filter(|&v| degree(v) == 1).take(3).collect();
        lookups.extend(order[13..].iter().copied().filter(|&v| degree(v) == 1 && rng.random_bool(0.3)));
        with_lookup += lookups.iter().any(|l| relevant.contains(l)) as usize;
        with_mm += (!mm.is_empty()) as usize;
        pending += mm.iter().any(|m| relevant.contains(&m.1) && relevant.contains(&m.2)) as usize;
        tally.check(&Inst { n, edges, relevant, lookups, mm, bridges: Vec::new() }, &format!("case {case}"));
    }
    let Tally { checked, infeasible, skipped } = tally;
    assert!(
        checked >= 15 && skipped <= 5 && with_mm >= 15 && with_lookup >= 15 && pending >= 3,
        "checked {checked}, infeasible {infeasible}, referee gave up {skipped}, with m:m {with_mm}, with a relevant lookup {with_lookup}, with both sides relevant {pending}"
    );
}

/// C3 case c on large requests (13–16 relevant tables: the large-request
/// bounds, the pending-junction bound that a bridge may settle, the
/// dangling-branch cut): sparse random graphs with m:m patterns and one or
/// two bridges per pattern, the exact search against the unbounded one,
/// walks checked here. Counts the requests whose optimum the bridges change.
#[test]
fn large_requests_with_bridges_match_the_unbounded_search() {
    use lucy::solve::exact::solve_exact_blind;
    let mut rng = ChaCha8Rng::seed_from_u64(0x0b1d_9e16);
    let (mut tally, mut changed, mut pending) = (Tally::default(), 0, 0);
    for case in 0..90 {
        let n = rng.random_range(16..=22);
        let mut edges = tree_plus_edges(&mut rng, n, 2..=n / 2);
        let tries = rng.random_range(1..=3);
        let mm = random_mm(&mut rng, n, &edges, tries);
        let order = shuffled(&mut rng, n);
        let k = rng.random_range(13..=16);
        let mut relevant: Vec<usize> = order[..k].to_vec();
        // Lookups among the leaves (elsewhere a lookup mostly cuts the graph).
        let degree = |v: usize| edges.iter().filter(|&&(a, b)| a == v || b == v).count();
        let lookups: Vec<usize> = order.iter().copied().filter(|&v| degree(v) == 1 && rng.random_bool(0.3)).collect();
        let mut bridges = Vec::new();
        for &(_, i, j) in &mm {
            for _ in 0..rng.random_range(1..=2) {
                let t = rng.random_range(0..n);
                if t != i
                    && t != j
                    && !mm.iter().any(|m| m.0 == t)
                    && !lookups.contains(&t)
                    && !bridges.contains(&(t, i, j))
                {
                    for s in [i, j] {
                        if !edges.contains(&(t, s)) && !edges.contains(&(s, t)) {
                            edges.push((t, s));
                        }
                    }
                    bridges.push((t, i, j));
                }
            }
            for s in [i, j] {
                if !relevant.contains(&s) && rng.random_bool(0.5) {
                    relevant.push(s);
                }
            }
        }
        if bridges.is_empty() || relevant.len() > 16 {
            continue;
        }
        pending += mm.iter().any(|m| relevant.contains(&m.1) && relevant.contains(&m.2)) as usize;
        let inst = Inst { n, edges, relevant, lookups, mm, bridges };
        tally.check(&inst, &format!("case {case}"));
        let big = ExactLimits::new(3_000_000, None);
        let plain = Inst { bridges: Vec::new(), ..inst.clone() };
        let objective = |o: ExactOutcome| match o {
            ExactOutcome::Optimal { cost, len, .. } => Some((cost, len)),
            _ => None,
        };
        changed += (objective(solve_exact_blind(&inst.problem(), None, big))
            != objective(solve_exact_blind(&plain.problem(), None, big))) as usize;
    }
    let Tally { checked, infeasible, skipped } = tally;
    assert!(
        checked >= 25 && skipped <= 5 && pending >= 30 && changed >= 5,
        "checked {checked}, infeasible {infeasible}, referee gave up {skipped}, with both sides relevant {pending}, optimum changed by bridges {changed}"
    );
}

/// More m:m patterns than the exact search's C3 bookkeeping once held (it
/// gave up above 32; enterprise schemas have hundreds): small random graphs
/// with 33–45 patterns, many sharing a junction (a junction of three or
/// more tables), against the brute force.
#[test]
fn many_mm_patterns_match_brute_force() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x33_2026);
    let (mut feasible, mut infeasible) = (0, 0);
    for case in 0..400 {
        let mut inst = random_inst(&mut rng);
        if inst.n < 5 {
            continue;
        }
        let n = inst.n;
        let want = rng.random_range(33..=45);
        let mut tries = 0;
        while inst.mm.len() < want && tries < 10_000 {
            tries += 1;
            let (k, i, j) = (rng.random_range(0..n), rng.random_range(0..n), rng.random_range(0..n));
            if k == i || k == j || i == j || inst.mm.contains(&(k, i, j)) || inst.mm.contains(&(k, j, i)) {
                continue;
            }
            for s in [i, j] {
                if !inst.edges.contains(&(k, s)) && !inst.edges.contains(&(s, k)) {
                    inst.edges.push((k, s));
                }
            }
            inst.mm.push((k, i, j));
        }
        if inst.mm.len() <= 32 {
            continue;
        }
        let p = inst.problem();
        let bf = inst.brute(N);
        let ctx = format!("case {case}: {inst:?}");
        match solve_exact(&p, Some(N), limits()) {
            ExactOutcome::Optimal { walk, cost, len } => {
                assert!(inst.valid(&walk), "walk invalid {walk:?} {ctx}");
                assert_eq!(Some((cost, len)), bf, "{ctx}");
                feasible += 1;
            }
            ExactOutcome::Infeasible => {
                assert_eq!(bf, None, "{ctx}");
                infeasible += 1;
            }
            other => panic!("gave up: {other:?} {ctx}"),
        }
    }
    assert!(feasible >= 30 && infeasible >= 30, "feasible {feasible}, infeasible {infeasible}");
}

/// Shortcuts (`Relationship::via`, docs/dbmodel.md): on random models where
/// some relationships A→B say they agree with the path through a third
/// table C, GenerateView's walk is the brute-force optimum over the
/// relationships a request may use — a shortcut only while C is not
/// relevant — and its joins never use a shortcut whose C is relevant.
#[test]
fn shortcuts_are_left_out_while_their_table_is_relevant() {
    use lucy::graph::SchemaGraph;
    use lucy::types::{Column, DbModel, Pattern, Relationship, ViewRequest};
    let mut rng = ChaCha8Rng::seed_from_u64(1717);
    let (mut checked, mut bypassed, mut used) = (0, 0, 0);
    for case in 0..250 {
        let n = rng.random_range(3..=6);
        let name = |i: usize| format!("T{i}");
        let mut tables = id_tables(n);
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        for a in 0..n {
            for b in 0..n {
                if a != b && rng.random_bool(0.35) && !pairs.contains(&(b, a)) {
                    pairs.push((a, b));
                }
            }
        }
        let joined = |x: usize, y: usize, not: usize| {
            (0..pairs.len()).any(|o| o != not && (pairs[o] == (x, y) || pairs[o] == (y, x)))
        };
        let via: Vec<Option<usize>> = (0..pairs.len())
            .map(|r| {
                let (a, b) = pairs[r];
                let cs: Vec<usize> =
                    (0..n).filter(|&c| c != a && c != b && joined(a, c, r) && joined(c, b, r)).collect();
                (!cs.is_empty() && rng.random_bool(0.6)).then(|| cs[rng.random_range(0..cs.len())])
            })
            .collect();
        let rels: Vec<Relationship> = pairs
            .iter()
            .enumerate()
            .map(|(r, &(a, b))| {
                let col = format!("fk{r}");
                tables[a].columns.push(Column {
                    name: col.clone(),
                    sql_type: "INTEGER".into(),
                    nullable: true,
                    description: None,
                    synonyms: Vec::new(),
                    origin: None,
                });
                Relationship {
                    via: via[r].map(name),
                    ..crate::gen::many_to_one(Some(format!("r{r}")), &name(a), &name(b), col)
                }
            })
            .collect();
        let lookups: Vec<usize> = (0..n).filter(|_| rng.random_bool(0.15)).collect();
        let mut patterns = Vec::new();
        if !lookups.is_empty() {
            patterns.push(Pattern::Lookup { tables: lookups.iter().map(|&i| name(i)).collect(), description: None });
        }
        let mut requested: Vec<usize> = (0..n).filter(|_| rng.random_bool(0.45)).collect();
        if requested.is_empty() {
            requested.push(rng.random_range(0..n));
        }
        let model = DbModel { name: format!("via{case}"), tables, relationships: rels, patterns, ..Default::default() };
        let g = SchemaGraph::new(model.clone()).unwrap_or_else(|e| panic!("case {case}: {e}"));
        let res = lucy::solve::generate_view(&g, &ViewRequest::new(requested.iter().map(|&i| name(i)).collect()))
            .expect("generate_view");
        let allowed = |r: usize| via[r].is_none_or(|c| !requested.contains(&c));
        bypassed += (0..pairs.len()).filter(|&r| !allowed(r)).count();
        let edges: Vec<(usize, usize)> = (0..pairs.len()).filter(|&r| allowed(r)).map(|r| pairs[r]).collect();
        let inst = Inst {
            n,
            edges,
            relevant: requested.clone(),
            lookups: lookups.clone(),
            mm: Vec::new(),
            bridges: Vec::new(),
        };
        let bf = inst.brute(N);
        let ctx = format!("case {case}: {model:?} requested {requested:?} -> {res:?}");
        match res.status {
            SolveStatus::Infeasible => assert_eq!(bf, None, "{ctx}"),
            _ => {
                assert_eq!(res.status, SolveStatus::Optimal, "{ctx}");
                let walk: Vec<usize> = res.walk.iter().map(|t| t[1..].parse().unwrap()).collect();
                assert!(inst.valid(&walk), "invalid walk {ctx}");
                let got = inst.objective(&walk);
                assert_eq!((res.objective as usize, res.path_length), got, "{ctx}");
                if let Some(b) = bf {
                    if got.1 <= N {
                        assert_eq!(got, b, "{ctx}");
                    }
                }
                for j in &res.joins {
                    let r: usize = j.relationship[1..].parse().unwrap();
                    assert!(allowed(r), "a shortcut whose table is relevant was joined: {ctx}");
                    used += usize::from(via[r].is_some());
                }
                view_runs_on_its_schema(&model, &res.view_sql, &ctx);
                checked += 1;
            }
        }
    }
    assert!(
        checked > 150 && bypassed > 50 && used > 10,
        "checked {checked}, bypassed {bypassed}, shortcuts used {used}"
    );
}
