//! Oracle join accuracy: GenerateView given the gold SQL's tables.
//!
//! For one gold query: extract its tables, attributes and join pairs
//! (`sql::analyze`), ask GenerateView for a view over exactly those tables,
//! and compare the view's join pairs with the gold pairs. A mismatch is
//! classified so a reader can tell a solver problem from a model curation
//! gap or a gold query no single join view can express.

use std::collections::BTreeSet;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::metrics::{join_accuracy, view_join_pairs, JoinAccuracy};
use crate::graph::SchemaGraph;
use crate::sql::analyze::{analyze, JoinPair, QueryRefs};
use crate::types::{ColumnRef, Dialect, SolveStatus, ViewRequest, ViewResult};

/// Why the view's joins differ from the gold query's (first that applies,
/// in this order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MismatchClass {
    /// sqlparser cannot parse the gold SQL.
    GoldUnparseable,
    /// The gold query reads a table the dbModel does not have.
    ModelMissingTable,
    /// The gold query uses one table more than once (self join, or again in
    /// a subquery): one view over a set of tables cannot express it.
    MultipleUse,
    /// UNION / INTERSECT / EXCEPT: the branches are separate queries.
    SetOperation,
    /// The gold joins along a path the model forbids: through a lookup
    /// table between two different tables (C4), or a forbidden
    /// relationship/table.
    ModelForbids,
    /// The gold joins on a column pair the model declares no relationship
    /// for (model curation gap).
    ModelGap,
    /// The gold path is valid in the model, yet GenerateView found no view.
    Infeasible,
    /// GenerateView failed (time limit without a walk, bad input).
    SolverError,
    /// The gold query relates its tables without column equalities (e.g.
    /// comparisons or a cross join).
    NoGoldJoin,
    /// Two tables are joined by more than one relationship (e.g. a source
    /// and a destination airport) and the view used another one than the
    /// gold; GenerateView reports these as ambiguities.
    ParallelRelationship,
    /// The view holds m:m junction tables the gold does not use: with both
    /// sides of an m:m pattern in the view, C3 puts its junction between
    /// them (several junctions between the same sides force all of them).
    ForcedJunction,
    /// Both paths are valid in the model; the solver chose another one
    /// (e.g. through fewer tables).
    SolverChoice,
}

impl MismatchClass {
    pub fn as_str(self) -> &'static str {
        match self {
            MismatchClass::GoldUnparseable => "gold SQL unparseable",
            MismatchClass::ModelMissingTable => "model missing table",
            MismatchClass::MultipleUse => "multiple use of one table",
            MismatchClass::SetOperation => "set operation (UNION/INTERSECT/EXCEPT)",
            MismatchClass::ModelForbids => "gold path forbidden by the model",
            MismatchClass::ModelGap => "gold join not declared in the model (curation gap)",
            MismatchClass::Infeasible => "infeasible",
            MismatchClass::SolverError => "solver error",
            MismatchClass::NoGoldJoin => "gold has no join equality",
            MismatchClass::ParallelRelationship => "other relationship between the same tables (ambiguity)",
            MismatchClass::ForcedJunction => "m:m junction forced into the view (C3)",
            MismatchClass::SolverChoice => "solver choice (both valid, different path)",
        }
    }

    /// All classes, in classification order.
    pub const ALL: [MismatchClass; 12] = [
        MismatchClass::GoldUnparseable,
        MismatchClass::ModelMissingTable,
        MismatchClass::MultipleUse,
        MismatchClass::SetOperation,
        MismatchClass::ModelForbids,
        MismatchClass::ModelGap,
        MismatchClass::Infeasible,
        MismatchClass::SolverError,
        MismatchClass::NoGoldJoin,
        MismatchClass::ParallelRelationship,
        MismatchClass::ForcedJunction,
        MismatchClass::SolverChoice,
    ];
}

/// The oracle outcome of one question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OracleCase {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_id: Option<String>,
    /// Gold tables (lower-case).
    pub gold_tables: Vec<String>,
    /// Gold join and semi-join pairs.
    pub gold_pairs: Vec<JoinPair>,
    /// Single-table gold queries are not join questions: not counted.
    pub multi_table: bool,
    /// `None` when the view's joins match the gold; the class otherwise.
    pub mismatch: Option<MismatchClass>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<JoinAccuracy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view_status: Option<SolveStatus>,
    /// Tables of the view (model spelling), in join order.
    #[serde(default)]
    pub view_tables: Vec<String>,
    #[serde(default)]
    pub view_pairs: Vec<JoinPair>,
    pub solve_ms: f64,
    /// Human-readable reason (error text, offending pair or table).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    #[serde(skip)]
    pub view: Option<ViewResult>,
    #[serde(skip)]
    pub gold_refs: Option<QueryRefs>,
}

impl OracleCase {
    fn new(id: &str, db_id: Option<&str>) -> Self {
        OracleCase {
            id: id.to_string(),
            db_id: db_id.map(str::to_string),
            gold_tables: Vec::new(),
            gold_pairs: Vec::new(),
            multi_table: false,
            mismatch: None,
            accuracy: None,
            view_status: None,
            view_tables: Vec::new(),
            view_pairs: Vec::new(),
            solve_ms: 0.0,
            detail: String::new(),
            view: None,
            gold_refs: None,
        }
    }

    /// The view's joins matched the gold joins.
    pub fn matched(&self) -> bool {
        self.multi_table && self.mismatch.is_none()
    }
}

/// The ViewRequest the oracle sends: the gold tables and the gold
/// attributes the model knows, in model spelling.
pub fn oracle_request(graph: &SchemaGraph, refs: &QueryRefs, time_limit_s: f64) -> ViewRequest {
    let model = graph.model();
    let tables: Vec<String> = refs.tables.iter().filter_map(|t| model.table(t).map(|x| x.name.clone())).collect();
    let attributes: Vec<ColumnRef> = refs
        .columns
        .iter()
        .filter_map(|c| {
            let t = model.table(&c.table)?;
            let col = t.column(&c.column)?;
            Some(ColumnRef::new(t.name.clone(), col.name.clone()))
        })
        .collect();
    let mut req = ViewRequest::new(tables);
    req.attributes = attributes;
    req.time_limit_s = time_limit_s;
    req
}

/// Run the oracle on one gold query.
pub fn oracle_case(
    graph: &SchemaGraph,
    id: &str,
    db_id: Option<&str>,
    gold_sql: &str,
    dialect: Dialect,
    time_limit_s: f64,
) -> OracleCase {
    let mut case = OracleCase::new(id, db_id);
    let refs = match analyze(gold_sql, dialect, Some(graph.model())) {
        Ok(r) => r,
        Err(e) => {
            case.multi_table = true;
            case.mismatch = Some(MismatchClass::GoldUnparseable);
            case.detail = e.to_string();
            return case;
        }
    };
    case.gold_tables = refs.tables.iter().cloned().collect();
    case.gold_pairs = refs.all_pairs().into_iter().collect();
    case.multi_table = refs.tables.len() >= 2;
    case.gold_refs = Some(refs.clone());
    if !case.multi_table {
        return case;
    }
    let missing: Vec<&str> = refs.tables.iter().filter(|t| graph.table_id(t).is_none()).map(String::as_str).collect();
    if !missing.is_empty() {
        case.mismatch = Some(MismatchClass::ModelMissingTable);
        case.detail = format!("not in the model: {}", missing.join(", "));
        return case;
    }
    let req = oracle_request(graph, &refs, time_limit_s);
    let start = Instant::now();
    let result = crate::solve::generate_view(graph, &req);
    case.solve_ms = start.elapsed().as_secs_f64() * 1e3;
    let gold_pairs: BTreeSet<JoinPair> = refs.all_pairs();
    match result {
        Ok(view) => {
            case.view_status = Some(view.status);
            case.view_tables = view.tables.clone();
            let joins = view_join_pairs(&view, graph);
            case.view_pairs = joins.iter().flatten().cloned().collect::<BTreeSet<_>>().into_iter().collect();
            if view.status == SolveStatus::Infeasible {
                case.detail = view.explanation.clone().unwrap_or_default();
            } else {
                let acc = join_accuracy(&gold_pairs, &joins);
                let ok = acc.matched;
                case.accuracy = Some(acc);
                if ok {
                    case.view = Some(view);
                    return case;
                }
            }
            let infeasible = view.status == SolveStatus::Infeasible;
            case.view = Some(view);
            case.mismatch = Some(classify(graph, &refs, infeasible, case.accuracy.as_ref(), &mut case.detail));
        }
        Err(e) => {
            case.detail = e.to_string();
            let mut detail = String::new();
            let class = classify(graph, &refs, false, None, &mut detail);
            case.mismatch = Some(if class == MismatchClass::SolverChoice { MismatchClass::SolverError } else { class });
            if !detail.is_empty() {
                case.detail = format!("{detail}; solver: {}", case.detail);
            }
        }
    }
    case
}

/// Classify a mismatch (see [`MismatchClass`] for the order).
fn classify(
    graph: &SchemaGraph,
    refs: &QueryRefs,
    infeasible: bool,
    acc: Option<&JoinAccuracy>,
    detail: &mut String,
) -> MismatchClass {
    let multi = refs.multi_use_tables();
    if !multi.is_empty() {
        *detail = format!("used more than once: {}", multi.join(", "));
        return MismatchClass::MultipleUse;
    }
    if refs.set_operation {
        return MismatchClass::SetOperation;
    }
    let pairs = refs.all_pairs();
    if let Some(why) = forbidden(graph, &pairs) {
        *detail = why;
        return MismatchClass::ModelForbids;
    }
    let undeclared: Vec<String> = pairs.iter().filter(|p| declared(graph, p).is_none()).map(|p| p.to_string()).collect();
    if !undeclared.is_empty() {
        *detail = format!("no relationship for {}", undeclared.join(", "));
        return MismatchClass::ModelGap;
    }
    if infeasible {
        return MismatchClass::Infeasible;
    }
    if pairs.is_empty() {
        return MismatchClass::NoGoldJoin;
    }
    if let Some(a) = acc {
        let same_tables = |p: &JoinPair| a.extra.iter().any(|x| x.tables() == p.tables());
        if !a.missing.is_empty() && a.missing.iter().all(same_tables) {
            return MismatchClass::ParallelRelationship;
        }
        let extra_tables: BTreeSet<&str> =
            a.extra.iter().flat_map(|p| [p.left.table.as_str(), p.right.table.as_str()]).filter(|t| !refs.tables.contains(*t)).collect();
        let forced: Vec<&str> = graph
            .junctions()
            .iter()
            .map(|j| graph.name(j.junction))
            .filter(|n| extra_tables.iter().any(|t| t.eq_ignore_ascii_case(n) || t.to_ascii_lowercase().starts_with(&format!("{}_", n.to_ascii_lowercase()))))
            .collect();
        if !forced.is_empty() {
            *detail = format!("junctions in the view but not in the gold: {}", forced.join(", "));
            return MismatchClass::ForcedJunction;
        }
    }
    MismatchClass::SolverChoice
}

/// The relationship of the model that joins on exactly this column pair
/// (as one of its `on` pairs), in either direction.
fn declared(graph: &SchemaGraph, p: &JoinPair) -> Option<usize> {
    let m = graph.model();
    m.relationships.iter().position(|r| {
        let f = r.from.to_ascii_lowercase();
        let t = r.to.to_ascii_lowercase();
        r.on.iter().any(|[a, b]| {
            let a = ColumnRef::new(f.clone(), a.to_ascii_lowercase());
            let b = ColumnRef::new(t.clone(), b.to_ascii_lowercase());
            JoinPair::new(&a, &b) == *p
        })
    })
}

/// Why the gold pairs use a path the model forbids, if they do.
/// The other tables that `pairs` join directly to `table` (lower-case names).
fn joined_to<'a>(pairs: &'a BTreeSet<JoinPair>, table: &str) -> BTreeSet<&'a str> {
    pairs
        .iter()
        .filter_map(|p| {
            if p.left.table == table && p.right.table != table {
                Some(p.right.table.as_str())
            } else if p.right.table == table && p.left.table != table {
                Some(p.left.table.as_str())
            } else {
                None
            }
        })
        .collect()
}

fn forbidden(graph: &SchemaGraph, pairs: &BTreeSet<JoinPair>) -> Option<String> {
    let c = &graph.model().constraints;
    for p in pairs {
        for t in [&p.left.table, &p.right.table] {
            if c.forbid_tables.iter().any(|f| f.eq_ignore_ascii_case(t)) {
                return Some(format!("table {t} is forbidden"));
            }
        }
        if let Some(r) = declared(graph, p) {
            let rel = graph.relationship(r);
            let id = rel.id();
            let ab = format!("{}-{}", rel.from, rel.to);
            let ba = format!("{}-{}", rel.to, rel.from);
            if c.forbid_relationships.iter().any(|f| {
                f.eq_ignore_ascii_case(&id)
                    || rel.name.as_deref().is_some_and(|n| n.eq_ignore_ascii_case(f))
                    || f.eq_ignore_ascii_case(&ab)
                    || f.eq_ignore_ascii_case(&ba)
            }) {
                return Some(format!("relationship {id} is forbidden"));
            }
        }
    }
    // C4: a lookup table that connects two different tables.
    for &l in graph.lookup_tables() {
        let name = graph.name(l).to_ascii_lowercase();
        let others = joined_to(pairs, &name);
        if others.len() >= 2 {
            let v: Vec<&str> = others.into_iter().collect();
            return Some(format!("joins {} through lookup table {} (C4)", v.join(" and "), graph.name(l)));
        }
    }
    // C3: a junction joined to a table that is not one of its two sides,
    // while a side is in the gold too (e.g. card–disp–client).
    for j in graph.junctions() {
        let name = graph.name(j.junction).to_ascii_lowercase();
        let sides: Vec<String> = j.sides.iter().map(|&t| graph.name(t).to_ascii_lowercase()).collect();
        let neighbours = joined_to(pairs, &name);
        let other = neighbours.iter().find(|n| !sides.iter().any(|s| s == *n));
        let side = neighbours.iter().find(|n| sides.iter().any(|s| s == *n));
        if let (Some(o), Some(sd)) = (other, side) {
            return Some(format!(
                "joins {o} to {sd} through m:m junction {} whose sides are {} (C3)",
                graph.name(j.junction),
                sides.join(" and ")
            ));
        }
    }
    // Two tables both joined on the same lookup-key column, without the
    // lookup table itself (e.g. client.district_id = account.district_id).
    for p in pairs {
        for &l in graph.lookup_tables() {
            // `c` is the foreign key of its table towards the lookup.
            let key_side = |c: &ColumnRef| {
                graph.neighbors(l).any(|(t, r)| {
                    let rel = graph.relationship(r);
                    graph.name(t).eq_ignore_ascii_case(&c.table)
                        && t != l
                        && rel.on.iter().any(|[a, b]| {
                            let mine = if rel.from.eq_ignore_ascii_case(&c.table) { a } else { b };
                            mine.eq_ignore_ascii_case(&c.column)
                        })
                })
            };
            if p.left.table != p.right.table && key_side(&p.left) && key_side(&p.right) && declared(graph, p).is_none() {
                return Some(format!("{p} relates two tables through their keys to lookup table {} (C4)", graph.name(l)));
            }
        }
    }
    None
}

/// Match rate and class counts over many cases.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OracleSummary {
    pub questions: usize,
    pub multi_table: usize,
    pub matched: usize,
    pub exact: usize,
    pub infeasible: usize,
    pub by_class: Vec<(MismatchClass, usize)>,
    pub solve_ms_median: f64,
    pub solve_ms_p95: f64,
    pub solve_ms_max: f64,
}

impl OracleSummary {
    pub fn of(cases: &[OracleCase]) -> Self {
        let multi: Vec<&OracleCase> = cases.iter().filter(|c| c.multi_table).collect();
        let mut times: Vec<f64> = multi.iter().filter(|c| c.view_status.is_some()).map(|c| c.solve_ms).collect();
        times.sort_by(f64::total_cmp);
        let pct = |p: f64| if times.is_empty() { 0.0 } else { times[((times.len() - 1) as f64 * p).round() as usize] };
        OracleSummary {
            questions: cases.len(),
            multi_table: multi.len(),
            matched: multi.iter().filter(|c| c.matched()).count(),
            exact: multi.iter().filter(|c| c.accuracy.as_ref().is_some_and(|a| a.exact)).count(),
            infeasible: multi.iter().filter(|c| c.view_status == Some(SolveStatus::Infeasible)).count(),
            by_class: MismatchClass::ALL
                .iter()
                .map(|&k| (k, multi.iter().filter(|c| c.mismatch == Some(k)).count()))
                .filter(|(_, n)| *n > 0)
                .collect(),
            solve_ms_median: pct(0.5),
            solve_ms_p95: pct(0.95),
            solve_ms_max: times.last().copied().unwrap_or(0.0),
        }
    }

    /// matched / multi-table questions.
    pub fn match_rate(&self) -> f64 {
        if self.multi_table == 0 { 0.0 } else { self.matched as f64 / self.multi_table as f64 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ddo() -> SchemaGraph {
        let m = crate::model::load(concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json")).unwrap();
        SchemaGraph::new(m).unwrap()
    }

    fn case(sql: &str) -> OracleCase {
        oracle_case(&ddo(), "t", None, sql, Dialect::Sqlite, 5.0)
    }

    #[test]
    fn q1_gold_matches() {
        let c = case(
            "SELECT c.name, d.name FROM DATACENTER d JOIN COMPUTE k ON k.dc_id = d.id JOIN RESOURCEPOOL p ON p.compute_id = k.id \
             JOIN RSPOOL2CLIENT j ON j.rspool_id = p.id JOIN CLIENT c ON c.id = j.client_id",
        );
        assert!(c.matched(), "{c:?}");
        assert!(c.accuracy.unwrap().exact);
        let single = case("SELECT name FROM CLIENT");
        assert!(!single.multi_table && !single.matched() && single.mismatch.is_none());
    }

    #[test]
    fn mismatch_classes() {
        let c = case("SELECT c.name FROM CLIENT c JOIN LOCATION l ON c.loc_id = l.id JOIN DATACENTER d ON d.loc_id = l.id");
        assert_eq!(c.mismatch, Some(MismatchClass::ModelForbids));
        assert!(c.detail.contains("LOCATION (C4)"), "{}", c.detail);
        let c = case("SELECT c.name FROM CLIENT c JOIN DATACENTER d ON c.loc_id = d.loc_id");
        assert_eq!(c.mismatch, Some(MismatchClass::ModelForbids), "shared lookup key without the lookup");
        let c = case("SELECT 1 FROM CLIENT c JOIN RSPOOL2CLIENT j ON j.client_id = c.id JOIN PAYMENT p ON p.client_id = j.client_id");
        assert_eq!(c.mismatch, Some(MismatchClass::ModelForbids));
        assert!(c.detail.contains("(C3)"), "{}", c.detail);
        let c = case("SELECT 1 FROM CLIENT c JOIN DATACENTER d ON c.id = d.id");
        assert_eq!(c.mismatch, Some(MismatchClass::ModelGap));
        assert!(c.detail.contains("client.id = datacenter.id"), "{}", c.detail);
        let c = case("SELECT 1 FROM CLIENT a JOIN CLIENT b ON a.loc_id = b.loc_id JOIN PAYMENT p ON p.client_id = a.id");
        assert_eq!(c.mismatch, Some(MismatchClass::MultipleUse));
        // Used twice, but along the same pair: the view expresses it.
        let c = case("SELECT 1 FROM CLIENT a JOIN RSPOOL2CLIENT j ON j.client_id = a.id JOIN CLIENT b ON b.id = j.client_id");
        assert!(c.matched());
        let c = case("SELECT name FROM CLIENT UNION SELECT name FROM DATACENTER");
        assert_eq!(c.mismatch, Some(MismatchClass::SetOperation));
        let c = case("SELECT 1 FROM CLIENT c JOIN NOPE n ON n.id = c.id");
        assert_eq!(c.mismatch, Some(MismatchClass::ModelMissingTable));
        assert!(c.detail.contains("nope"));
        let c = case("SELEC 1 FROM");
        assert_eq!(c.mismatch, Some(MismatchClass::GoldUnparseable));
    }

    #[test]
    fn summary_counts() {
        let cases = vec![
            case("SELECT c.name FROM CLIENT c JOIN PAYMENT p ON p.client_id = c.id"),
            case("SELECT 1 FROM CLIENT c JOIN DATACENTER d ON c.id = d.id"),
            case("SELECT name FROM CLIENT"),
        ];
        let s = OracleSummary::of(&cases);
        assert_eq!((s.questions, s.multi_table, s.matched), (3, 2, 1));
        assert_eq!(s.match_rate(), 0.5);
        assert_eq!(s.by_class, vec![(MismatchClass::ModelGap, 1)]);
    }
}
