//! Phase 1, MatchTables (Lucy, Algorithm 1 lines 1–12, Algorithm 2).
//!
//! Ask which core tables are relevant; where the model offers a relevant
//! table several ways in, ask which roles the question needs ([`roles`]);
//! explore each relevant pattern root breadth-first, asking which children
//! (and which of the node's attributes) are relevant, and, where a root's
//! exclusive children were chosen two or more, which subtype instances
//! (`ROOT@CHILD`) the question needs; ask for the relevant
//! attributes of every other relevant table (of each role instance). Every
//! question is asked `samples` times and the answers are voted ([`vote`]);
//! names are parsed robustly ([`parse`]) and mapped to the model
//! ([`names`]); nothing an LLM writes can crash the phase.

pub mod context;
pub mod describe;
pub mod hints;
pub mod kinds;
pub mod named;
pub mod names;
pub mod parse;
pub mod retrieve;
pub mod roles;
pub mod values;
pub mod vote;

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::graph::{RelId, SchemaGraph, TableId};
use crate::llm::{self, traced};
use crate::llm::{ChatModel, ChatRequest, Message};
use crate::prompts::Prompts;
use crate::types::trace::{ListStep, MatchTrace, Vote};
use crate::types::{ColumnRef, Relevance, RoleInstance};
use names::{Candidate, Mapped, Mapper};
use parse::ListShape;

/// Settings of MatchTables (`link.*` in `--set` and a project file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MatchOptions {
    /// Sampled answers per prompt (the paper uses 5).
    pub samples: usize,
    /// Sampling temperature (the paper uses 0.2).
    pub temperature: f64,
    /// Votes an item needs to be kept. The paper keeps every item any
    /// sample named (1), ranked by votes, up to `max_items`.
    pub min_votes: usize,
    /// At most this many tables (and, separately, attributes) per prompt (paper: 8).
    pub max_items: usize,
    /// Only these core tables are offered to the first prompt (a prefilter
    /// such as CRUSH); inner tables named here stand for their pattern root.
    pub restrict_core_tables: Option<Vec<String>>,
    /// Values of the database the question matched ([`values`], `--values
    /// on`), shown in the attribute prompts; empty: the prompts as without
    /// the value index. Per question, like `restrict_core_tables`.
    #[serde(skip)]
    pub values: Vec<values::ValueMatch>,
    /// At a pattern node, also keep the subtype children the question
    /// names (their name or a synonym, word for word: "premiums" →
    /// `Premium`) although no sample chose them ([`kinds::named`]). On by
    /// default since session 18 ([`kinds::DEFAULT_ON`]).
    pub kind_names: bool,
    /// A single chosen subtype child that holds nothing but its key (a
    /// marker such as `Premium(Policy_Amount_Identifier)`) makes the view
    /// hold only the root's rows of that kind: the instance `ROOT@CHILD`
    /// (INNER-joined) replaces the plain root ([`kinds::is_marker`]),
    /// instead of a LEFT JOIN branch QueryView would have to filter. On by
    /// default since session 18 ([`kinds::DEFAULT_ON`]).
    pub kind_instance: bool,
    /// Also keep the core tables the question names (their name or a
    /// synonym, word for word: "policies" → `Policy`) although no sample
    /// chose them ([`named::core_tables`]); they are then explored like
    /// the voted ones. On by default ([`named::DEFAULT_ON`]).
    pub table_names: bool,
    /// Keep only the relevant core tables that a majority of the samples
    /// named (more than half of the answers received), besides those the
    /// question names word for word ([`named::core_tables`]); when none has
    /// a majority, every voted table stays (`--core-votes majority`). Off by
    /// default ([`CORE_MAJORITY`]): any vote keeps a table (`min_votes`).
    pub core_majority: bool,
    /// Stop sampling a list prompt once its vote is decided
    /// ([`vote::decided`]; adaptive consistency): the first samples, then
    /// the rest only when they could change what the vote keeps. Used only
    /// where nothing but the kept list is read (a table's attribute, kind
    /// and role prompts, with no option that reads the vote counts), on a
    /// backend that decodes samples itself (the embedded model). On by
    /// default ([`ADAPTIVE_VOTES`]).
    pub adaptive: bool,
    /// Ask each relevant table's attribute prompt (the paper's last
    /// step). Its answer only chooses which columns a view of
    /// `view.columns=selected` shows: under `all` or `all-once` (the
    /// default) the view shows every column of its tables whatever the
    /// answer, so the pipeline turns the prompts off there
    /// ([`crate::types::ViewColumns::every_table`]). Not a setting: it
    /// follows `view.columns`. A pattern node's prompt (children and
    /// attributes together) is asked either way: it chooses tables.
    #[serde(skip)]
    pub attributes: bool,
}

/// Whether list votes stop when decided, by default ([`MatchOptions::adaptive`]).
pub const ADAPTIVE_VOTES: bool = true;

/// Whether MatchTables keeps only the core tables a majority of its samples
/// (or the question) named, by default (`--core-votes majority`): off. In
/// session 21 it gained one ACME question (22 → 23: a premium question lost
/// the claim amounts one sample in five had added) and lost one held-out
/// ACME question (4 → 3: Person and Party, named by two samples, dropped);
/// DDO, the Spider sample and DDO's held-out unchanged
/// (benchmarks/results/embedded.md).
pub const CORE_MAJORITY: bool = false;

impl Default for MatchOptions {
    fn default() -> Self {
        MatchOptions {
            samples: 5,
            temperature: 0.2,
            min_votes: 1,
            max_items: 8,
            restrict_core_tables: None,
            values: Vec::new(),
            kind_names: kinds::DEFAULT_ON,
            kind_instance: kinds::DEFAULT_ON,
            table_names: named::DEFAULT_ON,
            core_majority: CORE_MAJORITY,
            adaptive: ADAPTIVE_VOTES,
            attributes: true,
        }
    }
}

impl MatchOptions {
    /// The keys of its settings (`link.KEY` in `--set` and a project file):
    /// every field but the per-question `restrict_core_tables` and `values`,
    /// and `attributes`, which follows `view.columns`.
    pub const SETTING_KEYS: &'static [&'static str] = &[
        "samples",
        "temperature",
        "min_votes",
        "max_items",
        "kind_names",
        "kind_instance",
        "table_names",
        "core_majority",
        "adaptive",
    ];

    /// Sampling and voting settings as a front end takes them (`lucy ask`,
    /// `POST /v1/ask`), every core table offered.
    pub fn sampled(samples: usize, temperature: f64, min_votes: usize, max_items: usize) -> Self {
        MatchOptions { samples, temperature, min_votes, max_items, ..MatchOptions::default() }
    }

    /// Reject settings that can never keep anything.
    pub fn check(&self) -> Result<()> {
        if self.samples == 0 {
            return Err(Error::Input("--samples must be at least 1".into()));
        }
        if self.min_votes > self.samples {
            return Err(Error::Input(format!(
                "--min-votes {} exceeds --samples {}: no item could ever be kept",
                self.min_votes, self.samples
            )));
        }
        if self.max_items == 0 {
            return Err(Error::Input("--max-items must be at least 1".into()));
        }
        Ok(())
    }
}

/// Run MatchTables and return the relevant tables and attributes. `trace`
/// records every prompt as it goes (so a failure keeps what was asked so
/// far) and, by name, what was found. An LLM error ends the phase with
/// `Err`; unusable answers only produce warnings, and an empty result means
/// nothing matched.
pub fn match_tables(
    graph: &SchemaGraph,
    question: &str,
    opts: &MatchOptions,
    llm: &dyn ChatModel,
    prompts: &Prompts,
    trace: &mut MatchTrace,
) -> Result<Relevance> {
    opts.check()?;
    let started = std::time::Instant::now();
    trace.source = "llm".into();
    let core = core_candidates(graph, opts, trace);
    trace.core_tables = core.iter().map(|&t| graph.name(t).to_string()).collect();
    let mut found = Relevance::default();
    let result = run(graph, question, opts, llm, prompts, &core, trace, &mut found);
    trace.cost.ms = started.elapsed().as_secs_f64() * 1000.0;
    if result.is_ok() && found.tables.is_empty() && found.roles.is_empty() {
        trace
            .warnings
            .push("MatchTables found no relevant table: every sample was empty or named no offered table".into());
    }
    result.map(|()| found)
}

#[allow(clippy::too_many_arguments)]
fn run(
    graph: &SchemaGraph,
    question: &str,
    opts: &MatchOptions,
    llm: &dyn ChatModel,
    prompts: &Prompts,
    core: &[TableId],
    trace: &mut MatchTrace,
    found: &mut Relevance,
) -> Result<()> {
    if core.is_empty() {
        trace.warnings.push("no core table to offer".into());
        return Ok(());
    }
    // Algorithm 1, line 5: relevant core tables.
    let cands: Vec<Candidate> = core.iter().map(|&t| Candidate::Table(t)).collect();
    let schema_json = context::tables_json(graph, core, true);
    let vars = serde_json::json!({
        "question": question,
        "database": graph.model().name,
        "schema_json": schema_json,
        "elements": names_of(graph, &cands),
    });
    let prompt = prompts.render("match_tables", &vars)?;
    let step = ask_list(graph, "match_tables", None, &cands, prompt, opts, llm, trace)?;
    let relevant_core: Vec<TableId> = step
        .into_iter()
        .filter_map(|c| match c {
            Candidate::Table(t) => Some(t),
            Candidate::Column(_) | Candidate::Instance(..) => None,
        })
        .collect();
    let mut relevant_core =
        if opts.core_majority { majority(graph, question, core, relevant_core, trace) } else { relevant_core };
    // Named tables join a vote that kept something: when every sample was
    // empty or garbage, that is the failure to report, not a view to build
    // from the question's words alone.
    if opts.table_names && !relevant_core.is_empty() {
        let named = named::core_tables(graph, question, core, &relevant_core);
        if !named.is_empty() {
            let names: Vec<&str> = named.iter().map(|&t| graph.name(t)).collect();
            trace.warnings.push(format!("--table-names: the question names {}: kept", names.join(", ")));
            relevant_core.extend(named);
        }
    }
    // Lines 7–12, each preceded by the table's role question when the
    // model offers a choice. The explorations of different relevant tables
    // are independent, so they run concurrently (the LLM client bounds the
    // requests in flight); each fills its own trace, merged in table order
    // so that traces and results do not depend on timing.
    let relevant_core = &relevant_core;
    let parts: Vec<(Found, Result<()>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = relevant_core
            .iter()
            .map(|&t| {
                scope.spawn(move || {
                    let mut part = Found::default();
                    let r = explore(graph, question, t, relevant_core, opts, llm, prompts, &mut part);
                    (part, r)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    (Found::default(), Err(Error::llm("match_tables", "a MatchTables worker panicked")))
                })
            })
            .collect()
    });
    let mut first_err = None;
    for (part, r) in parts {
        merge(trace, part.trace);
        for &t in &part.rel.tables {
            found.add_table(t);
        }
        for &c in &part.rel.columns {
            found.add_column(c);
        }
        for &r in &part.rel.roles {
            found.add_role(r);
        }
        if let Err(e) = r {
            first_err.get_or_insert(e);
        }
    }
    first_err.map_or(Ok(()), Err)
}

/// `--core-votes majority`: of the core tables the vote kept (the last
/// step of `trace`, MatchTables' first prompt), those more than half of the
/// answers named, and those the question names word for word; all of them
/// when none has a majority. A dropped table is named in a warning.
fn majority(
    graph: &SchemaGraph,
    question: &str,
    core: &[TableId],
    relevant: Vec<TableId>,
    trace: &mut MatchTrace,
) -> Vec<TableId> {
    let Some(step) = trace.steps.last_mut() else { return relevant };
    let answers = step.samples.len();
    let named = named::core_tables(graph, question, core, &[]);
    let votes = |t: TableId| step.votes.iter().find(|v| v.item == graph.name(t)).map_or(0, |v| v.votes);
    let (kept, dropped): (Vec<TableId>, Vec<TableId>) =
        relevant.iter().partition(|&&t| 2 * votes(t) > answers || named.contains(&t));
    if kept.is_empty() || dropped.is_empty() {
        return relevant;
    }
    let what: Vec<String> = dropped.iter().map(|&t| format!("{} ({} of {answers})", graph.name(t), votes(t))).collect();
    step.warnings.push(format!(
        "--core-votes majority: dropped {}: named by no more than half of the answers, and not by the question",
        what.join(", ")
    ));
    kept
}

/// What one exploration found: as ids, and by name in its trace.
#[derive(Default)]
struct Found {
    trace: MatchTrace,
    rel: Relevance,
}

impl Found {
    fn table(&mut self, graph: &SchemaGraph, t: TableId) {
        self.rel.add_table(t);
        let name = graph.name(t).to_string();
        if !self.trace.tables.contains(&name) {
            self.trace.tables.push(name);
        }
    }

    /// Role instance `t@rel`.
    fn role(&mut self, graph: &SchemaGraph, t: TableId, rel: RelId) {
        self.rel.add_role(RoleInstance { table: t, rel, copy: 0 });
        let label = graph.instance_label(t, Some(rel));
        if !self.trace.tables.contains(&label) {
            self.trace.tables.push(label);
        }
    }

    /// Drop the plain instance of `t` (its role instances stand for it).
    fn drop_plain(&mut self, graph: &SchemaGraph, t: TableId) {
        self.rel.tables.retain(|&x| x != t);
        let name = graph.name(t);
        self.trace.tables.retain(|x| x != name);
    }

    /// Column `col` of table `t`, named as the prompt offered it (the
    /// model's spelling).
    fn attribute(&mut self, graph: &SchemaGraph, t: TableId, col: &str) {
        if let Some(c) = graph.names().column(t, col) {
            self.rel.add_column(c);
        }
        let c = ColumnRef::new(graph.name(t), col);
        if !self.trace.attributes.contains(&c) {
            self.trace.attributes.push(c);
        }
    }
}

/// Append one exploration's trace to the phase trace.
fn merge(trace: &mut MatchTrace, part: MatchTrace) {
    trace.steps.extend(part.steps);
    for t in part.tables {
        if !trace.tables.contains(&t) {
            trace.tables.push(t);
        }
    }
    for a in part.attributes {
        if !trace.attributes.contains(&a) {
            trace.attributes.push(a);
        }
    }
    trace.warnings.extend(part.warnings);
    trace.cost.add_calls_of(&part.cost);
}

/// One relevant core table: its role question when the model offers a
/// choice ([`roles::ways_in`]), then Algorithm 2 for a pattern root or the
/// attribute prompt (once per kept instance).
#[allow(clippy::too_many_arguments)]
fn explore(
    graph: &SchemaGraph,
    question: &str,
    t: TableId,
    relevant_core: &[TableId],
    opts: &MatchOptions,
    llm: &dyn ChatModel,
    prompts: &Prompts,
    found: &mut Found,
) -> Result<()> {
    let ways = roles::ways_in(graph, t, relevant_core);
    if roles::is_choice(graph, t, &ways) {
        let kept = ask_roles(graph, question, t, &ways, opts, llm, prompts, found)?;
        let kept_roles: Vec<roles::Way> = ways.iter().copied().filter(|w| kept.contains(&Some(w.rel))).collect();
        if !kept_roles.is_empty() {
            // A self-relationship's instance joins the plain one (its anchor).
            let plain = kept.contains(&None) || kept_roles.iter().any(|w| w.anchor == t);
            if plain {
                found.table(graph, t);
                ask_attributes(graph, question, t, None, opts, llm, prompts, found)?;
            }
            for w in kept_roles {
                found.role(graph, t, w.rel);
                let text = format!("{}, {}", graph.instance_label(t, Some(w.rel)), roles::describe(graph, t, w));
                ask_attributes(graph, question, t, Some((w.rel, text)), opts, llm, prompts, found)?;
            }
            return Ok(());
        }
    }
    found.table(graph, t);
    if graph.pattern_root_kind(t).is_some() {
        iterative_prompting(graph, question, t, opts, llm, prompts, found)
    } else {
        ask_attributes(graph, question, t, None, opts, llm, prompts, found)
    }
}

/// The role question of table `t` (prompt `match_roles`): which of its
/// ways in the question needs, voted like every list. Returns the kept
/// instances (`None`: the plain instance, offered only beside a
/// self-relationship); empty when no sample named a role.
#[allow(clippy::too_many_arguments)]
fn ask_roles(
    graph: &SchemaGraph,
    question: &str,
    t: TableId,
    ways: &[roles::Way],
    opts: &MatchOptions,
    llm: &dyn ChatModel,
    prompts: &Prompts,
    found: &mut Found,
) -> Result<Vec<Option<RelId>>> {
    let mut cands: Vec<Candidate> = Vec::new();
    let mut lines = Vec::new();
    if ways.iter().any(|w| w.anchor == t) {
        cands.push(Candidate::Instance(t, None));
        lines.push(serde_json::json!({"label": graph.name(t), "text": format!("{} itself, without the row it points to", graph.name(t))}));
    }
    for &w in ways {
        cands.push(Candidate::Instance(t, Some(w.rel)));
        lines.push(
            serde_json::json!({"label": graph.instance_label(t, Some(w.rel)), "text": roles::describe(graph, t, w)}),
        );
    }
    let kept = ask_instances(graph, question, t, &cands, lines, false, opts, llm, prompts, found)?;
    if !kept.iter().any(Option::is_some) {
        if let Some(step) = found.trace.steps.last_mut() {
            step.warnings
                .push(format!("no role of {} kept: the plain instance joins as the solver chooses", graph.name(t)));
        }
    }
    Ok(kept)
}

/// The `match_roles` prompt of table `t` over the instances `cands`, each
/// described by the matching entry of `ways` (`subtypes`: the wording for
/// the kinds of an exclusive pattern root, else for ways in), voted like
/// every list. Returns the kept instances (`None`: the plain instance).
#[allow(clippy::too_many_arguments)]
fn ask_instances(
    graph: &SchemaGraph,
    question: &str,
    t: TableId,
    cands: &[Candidate],
    ways: Vec<serde_json::Value>,
    subtypes: bool,
    opts: &MatchOptions,
    llm: &dyn ChatModel,
    prompts: &Prompts,
    found: &mut Found,
) -> Result<Vec<Option<RelId>>> {
    let vars = serde_json::json!({
        "question": question,
        "table": graph.name(t),
        "summary": context::table_summary(graph, t, false),
        "ways": ways,
        "elements": names_of(graph, cands),
        "subtypes": subtypes,
    });
    let prompt = prompts.render("match_roles", &vars)?;
    let chosen = ask_list(graph, "match_roles", Some(t), cands, prompt, opts, llm, &mut found.trace)?;
    Ok(chosen
        .into_iter()
        .filter_map(|c| match c {
            Candidate::Instance(_, r) => Some(r),
            _ => None,
        })
        .collect())
}

/// Algorithm 2, breadth-first as the paper's text describes: a node with
/// children gets one prompt for its relevant children and its own
/// attributes; a leaf gets the attribute prompt.
fn iterative_prompting(
    graph: &SchemaGraph,
    question: &str,
    root: TableId,
    opts: &MatchOptions,
    llm: &dyn ChatModel,
    prompts: &Prompts,
    found: &mut Found,
) -> Result<()> {
    let mut queue = VecDeque::from([root]);
    while let Some(r) = queue.pop_front() {
        found.table(graph, r);
        let children = graph.pattern_children(r);
        if children.is_empty() {
            ask_attributes(graph, question, r, None, opts, llm, prompts, found)?;
            continue;
        }
        let mut cands: Vec<Candidate> = children.iter().map(|&c| Candidate::Table(c)).collect();
        cands.extend(graph.table(r).columns.iter().map(|c| Candidate::Column(c.name.clone())));
        let kind = match graph.pattern_root_kind(r).or_else(|| graph.inner_position(r).map(|p| p.kind)) {
            Some(crate::graph::TreeKind::Star) => "star",
            _ => "snowflake",
        };
        let vars = serde_json::json!({
            "question": question,
            "table": graph.name(r),
            "kind": kind,
            "schema_json": context::node_json(graph, r),
            "elements": names_of(graph, &cands),
        });
        let prompt = prompts.render("pattern_children", &vars)?;
        let chosen = ask_list(graph, "pattern_children", Some(r), &cands, prompt, opts, llm, &mut found.trace)?;
        let mut kids = Vec::new();
        for c in chosen {
            match c {
                Candidate::Table(child) => kids.push(child),
                Candidate::Column(col) => found.attribute(graph, r, &col),
                Candidate::Instance(..) => {}
            }
        }
        if opts.kind_names {
            let named: Vec<TableId> =
                kinds::named(graph, question, r).into_iter().filter(|c| !kids.contains(c)).collect();
            if !named.is_empty() {
                let names: Vec<&str> = named.iter().map(|&c| graph.name(c)).collect();
                if let Some(step) = found.trace.steps.last_mut() {
                    step.warnings.push(format!("--kind-names: the question names {}: kept", names.join(", ")));
                }
                kids.extend(named);
            }
        }
        let subtypes = subtype_ways(graph, r, &kids);
        if subtypes.len() >= 2 {
            ask_subtypes(graph, question, r, &subtypes, opts, llm, prompts, found)?;
        } else if opts.kind_instance {
            if let Some((child, rel)) = kinds::single_marker(graph, r, &kids) {
                found.role(graph, r, rel);
                found.drop_plain(graph, r);
                if let Some(step) = found.trace.steps.last_mut() {
                    step.warnings.push(format!(
                        "--kind-instance: {} holds only {}'s key: the view keeps the {} rows that are {} ({})",
                        graph.name(child),
                        graph.name(r),
                        graph.name(r),
                        graph.name(child),
                        graph.instance_label(r, Some(rel))
                    ));
                }
            }
        }
        queue.extend(kids);
    }
    Ok(())
}

/// The subtype instances worth a question at pattern node `r`: when `r`'s
/// children are exclusive (`exclusive_children`) and it can have subtype
/// instances (a pattern root, [`SchemaGraph::subtype_child`]), each chosen
/// child with the relationship joining it to `r`, in the order chosen.
/// Empty otherwise (an inner exclusive node: GenerateView has no subtype
/// instances of inner tables).
fn subtype_ways(graph: &SchemaGraph, r: TableId, kids: &[TableId]) -> Vec<(TableId, RelId)> {
    if !graph.exclusive_children(r) {
        return Vec::new();
    }
    kids.iter().filter_map(|&c| kinds::child_rel(graph, r, c).map(|rel| (c, rel))).collect()
}

/// One line of the subtype prompt: what instance `r@child` is, in the
/// model's words ("PAYAMOUNT as a TAX row: Marks a payment amount as a
/// tax.").
fn describe_subtype(graph: &SchemaGraph, r: TableId, child: TableId) -> String {
    let head = format!("{} as a {} row", graph.name(r), graph.name(child));
    match graph.table(child).description.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
        Some(d) => format!("{head}: {d}"),
        None => head,
    }
}

/// The subtype question of pattern root `r` whose exclusive children
/// `subtypes` (two or more) the pattern-children answer chose (prompt
/// `match_roles` with `subtypes`): one instance per kind (`ROOT@CHILD`)
/// or the plain instance (all kinds together), voted like every list.
/// Each kept subtype instance becomes a role instance and gets its own
/// attribute prompt; its child then hangs off it in the view. The plain
/// instance leaves the relevant tables unless it was kept. No subtype
/// instance kept: the plain instance, as without the question.
#[allow(clippy::too_many_arguments)]
fn ask_subtypes(
    graph: &SchemaGraph,
    question: &str,
    r: TableId,
    subtypes: &[(TableId, RelId)],
    opts: &MatchOptions,
    llm: &dyn ChatModel,
    prompts: &Prompts,
    found: &mut Found,
) -> Result<()> {
    let mut cands: Vec<Candidate> = Vec::new();
    let mut lines = Vec::new();
    for &(child, rel) in subtypes {
        cands.push(Candidate::Instance(r, Some(rel)));
        lines.push(
            serde_json::json!({"label": graph.instance_label(r, Some(rel)), "text": describe_subtype(graph, r, child)}),
        );
    }
    cands.push(Candidate::Instance(r, None));
    lines.push(
        serde_json::json!({"label": graph.name(r), "text": format!("every {} row, all kinds together", graph.name(r))}),
    );
    let kept = ask_instances(graph, question, r, &cands, lines, true, opts, llm, prompts, found)?;
    if !kept.iter().any(Option::is_some) {
        if let Some(step) = found.trace.steps.last_mut() {
            if !kept.contains(&None) {
                step.warnings
                    .push(format!("no instance of {} kept: the plain instance, all kinds together", graph.name(r)));
            }
        }
        return Ok(());
    }
    if !kept.contains(&None) {
        found.drop_plain(graph, r);
    }
    for &(child, rel) in subtypes.iter().filter(|(_, rel)| kept.contains(&Some(*rel))) {
        found.role(graph, r, rel);
        let text = format!("{}, {}", graph.instance_label(r, Some(rel)), describe_subtype(graph, r, child));
        ask_attributes(graph, question, r, Some((rel, text)), opts, llm, prompts, found)?;
    }
    Ok(())
}

/// The attribute prompt of table `t`, or of one role instance of it
/// (`role`: the relationship and the role's words for the prompt). A role
/// instance's columns are the table's: the view gives every instance of a
/// table each requested column of it (`Relevance::columns`).
#[allow(clippy::too_many_arguments)]
fn ask_attributes(
    graph: &SchemaGraph,
    question: &str,
    t: TableId,
    role: Option<(RelId, String)>,
    opts: &MatchOptions,
    llm: &dyn ChatModel,
    prompts: &Prompts,
    found: &mut Found,
) -> Result<()> {
    if !opts.attributes {
        return Ok(());
    }
    let cands: Vec<Candidate> = graph.table(t).columns.iter().map(|c| Candidate::Column(c.name.clone())).collect();
    if cands.is_empty() {
        return Ok(());
    }
    let vars = serde_json::json!({
        "question": question,
        "table": graph.name(t),
        "schema_json": context::attributes_json(graph, t),
        "elements": names_of(graph, &cands),
        "role": role.as_ref().map(|(_, text)| text.as_str()).unwrap_or(""),
        "values": values::table_notes(graph, &opts.values, t),
    });
    let prompt = prompts.render("attributes", &vars)?;
    let chosen = ask_list(graph, "attributes", Some(t), &cands, prompt, opts, llm, &mut found.trace);
    if let (Some((rel, _)), Some(step)) = (&role, found.trace.steps.last_mut()) {
        // The step is about the instance.
        step.subject = Some(graph.instance_label(t, Some(*rel)));
    }
    for c in chosen? {
        if let Candidate::Column(col) = c {
            found.attribute(graph, t, &col);
        }
    }
    Ok(())
}

/// Ask one list question `samples` times, parse, map, vote; record a
/// [`ListStep`]; return the kept candidates in rank order.
#[allow(clippy::too_many_arguments)]
/// Ask one list prompt and vote: one call for every sample
/// (`opts.samples`).
fn ask_list(
    graph: &SchemaGraph,
    prompt_name: &str,
    subject: Option<TableId>,
    cands: &[Candidate],
    prompt: String,
    opts: &MatchOptions,
    llm: &dyn ChatModel,
    trace: &mut MatchTrace,
) -> Result<Vec<Candidate>> {
    let elements = names_of(graph, cands);
    let mut step = ListStep {
        prompt: prompt_name.to_string(),
        subject: subject.map(|s| graph.name(s).to_string()),
        candidates: elements.clone(),
        min_votes: opts.min_votes,
        ..ListStep::default()
    };
    let mut choices: Vec<String> = Vec::new();
    let mut skipped = 0usize;
    let mapper = Mapper::new(graph, subject, cands, subject.is_none());
    // Adaptive consistency: the first samples that could decide the vote,
    // then the rest only when they do not.
    let first = adaptive_first(opts, subject, cands.len());
    let decide = |answers: &[String]| {
        let samples: Vec<Vec<usize>> = answers.iter().map(|a| map_answer(&mapper, a)).collect();
        vote::decided(
            &samples,
            opts.samples.saturating_sub(samples.len()),
            cands.len(),
            opts.min_votes,
            opts.max_items,
            |i| usize::from(matches!(cands[i], Candidate::Column(_))),
        )
    };
    let decider = first.map(|first| llm::Decider { first, decided: &decide });
    let req = ChatRequest {
        phase: prompt_name.to_string(),
        messages: vec![Message::user(prompt)],
        temperature: opts.temperature,
        n: opts.samples,
        response_schema: Some(serde_json::json!({
            "type": "array",
            "items": {"type": "string", "enum": elements},
        })),
        grammar: None,
        max_tokens: None,
    };
    let (call, result) = traced::call_until(llm, &req, decider.as_ref());
    trace.cost.add_call(&call);
    step.call = call;
    match result {
        Ok(r) => {
            skipped += r.skipped as usize;
            choices.extend(r.choices);
        }
        Err(e) => {
            trace.steps.push(step);
            return Err(e);
        }
    }
    if choices.len() + skipped < opts.samples {
        step.warnings.push(format!("asked for {} samples, got {}", opts.samples, choices.len()));
    }
    let cut = step.call.truncation_note();
    if !cut.is_empty() && !step.warnings.contains(&cut) {
        step.warnings.push(cut);
    }
    let mut samples: Vec<Vec<usize>> = Vec::new();
    let mut unusable: Vec<(String, Vec<usize>)> = Vec::new();
    for (k, answer) in choices.iter().enumerate() {
        let (items, shape) = parse::parse_list(answer);
        let exact_only = shape == ListShape::Scan;
        let mut mapped = Vec::new();
        for raw in &items {
            match mapper.map(raw, exact_only) {
                Mapped::Hit(i, remap) => {
                    if let Some(r) = remap {
                        if !step.remaps.contains(&r) {
                            step.remaps.push(r);
                        }
                    }
                    mapped.push(i);
                }
                // Prose words are expected not to match: no warning per word.
                Mapped::Dropped(_) if exact_only => {}
                Mapped::Dropped(w) => {
                    if !step.warnings.contains(&w) {
                        step.warnings.push(w);
                    }
                }
            }
        }
        if mapped.is_empty() {
            let what = if answer.trim().is_empty() {
                "was empty"
            } else if items.is_empty() && shape == ListShape::Bracketed {
                "was an empty list"
            } else if items.is_empty() {
                "held no list"
            } else {
                "named no offered element"
            };
            let key = format!("{what}: {}", snippet(answer));
            match unusable.iter_mut().find(|(k, _)| *k == key) {
                Some((_, ks)) => ks.push(k + 1),
                None => unusable.push((key, vec![k + 1])),
            }
        }
        samples.push(mapped);
    }
    // Identical unusable samples are reported once, with their numbers.
    for (key, ks) in unusable {
        let which: Vec<String> = ks.iter().map(|k| k.to_string()).collect();
        let label = if ks.len() == 1 { "sample" } else { "samples" };
        step.warnings.push(format!("{label} {} {key}", which.join(", ")));
    }
    let ranked =
        vote::rank(&samples, opts.min_votes, opts.max_items, |i| usize::from(matches!(cands[i], Candidate::Column(_))));
    step.samples = samples.iter().map(|s| s.iter().map(|&i| mapper.name(i)).collect()).collect();
    step.votes = ranked.iter().map(|r| Vote { item: mapper.name(r.item), votes: r.votes, kept: r.kept }).collect();
    let dropped_by_cap: Vec<String> =
        ranked.iter().filter(|r| !r.kept && r.votes >= opts.min_votes).map(|r| mapper.name(r.item)).collect();
    if !dropped_by_cap.is_empty() {
        step.warnings.push(format!(
            "kept at most {} per prompt; also named: {}",
            opts.max_items,
            dropped_by_cap.join(", ")
        ));
    }
    let kept: Vec<Candidate> = ranked.iter().filter(|r| r.kept).map(|r| cands[r.item].clone()).collect();
    for c in &kept {
        match c {
            Candidate::Table(t) => step.tables.push(graph.name(*t).to_string()),
            Candidate::Instance(t, r) => step.tables.push(graph.instance_label(*t, *r)),
            Candidate::Column(col) => {
                if let Some(s) = subject {
                    step.attributes.push(ColumnRef::new(graph.name(s), col.clone()));
                }
            }
        }
    }
    trace.steps.push(step);
    Ok(kept)
}

/// The first batch of samples after which a list vote may be decided
/// ([`vote::decided`]), when it is worth asking: adaptive votes on, a
/// subject table (the first prompt's vote counts are read again:
/// the runner-up view, the top-voted table), and no option that reads the
/// counts. A vote can be decided after `k` of `n` samples only when every
/// candidate is settled: with one candidate, once `min_votes` samples named
/// it; with more, only when the `n - k` left cannot lift an unnamed one to
/// `min_votes` (`k > n - min_votes`) and `min_votes` samples named the
/// kept one (at most one can be kept in a fixed order by `k` samples).
fn adaptive_first(opts: &MatchOptions, subject: Option<TableId>, candidates: usize) -> Option<usize> {
    if !opts.adaptive || subject.is_none() || opts.core_majority || opts.samples < 2 {
        return None;
    }
    let min = opts.min_votes.max(1);
    let first = if candidates == 1 { min } else { min.max(opts.samples + 1 - min.min(opts.samples)) };
    (first < opts.samples).then_some(first)
}

/// The candidates one answer names (as the vote reads them; no warnings).
fn map_answer(mapper: &Mapper<'_>, answer: &str) -> Vec<usize> {
    let (items, shape) = parse::parse_list(answer);
    let exact_only = shape == ListShape::Scan;
    items
        .iter()
        .filter_map(|raw| match mapper.map(raw, exact_only) {
            Mapped::Hit(i, _) => Some(i),
            Mapped::Dropped(_) => None,
        })
        .collect()
}

fn core_candidates(graph: &SchemaGraph, opts: &MatchOptions, trace: &mut MatchTrace) -> Vec<TableId> {
    let core = graph.core_tables();
    let Some(only) = &opts.restrict_core_tables else { return core };
    let mut keep: Vec<TableId> = Vec::new();
    for name in only {
        match graph.table_id(name) {
            None => trace.warnings.push(format!("prefilter named unknown table `{name}`; ignored")),
            Some(t) => {
                let t = graph.inner_position(t).map(|p| p.root).unwrap_or(t);
                if !keep.contains(&t) {
                    keep.push(t);
                }
            }
        }
    }
    trace.restricted_to = Some(only.clone());
    core.into_iter().filter(|t| keep.contains(t)).collect()
}

fn names_of(graph: &SchemaGraph, cands: &[Candidate]) -> Vec<String> {
    cands
        .iter()
        .map(|c| match c {
            Candidate::Table(t) => graph.name(*t).to_string(),
            Candidate::Instance(t, r) => graph.instance_label(*t, *r),
            Candidate::Column(col) => col.clone(),
        })
        .collect()
}

fn snippet(s: &str) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 80 {
        format!("{:?}…", one_line.chars().take(80).collect::<String>())
    } else {
        format!("{one_line:?}")
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
