//! Oracle join accuracy: GenerateView given the gold SQL's tables.
//!
//! For one gold query: extract its tables, attributes and join pairs
//! (`sql::analyze`), ask GenerateView for a view over exactly those tables,
//! and compare the view's join pairs with the gold pairs. A mismatch is
//! classified so a reader can tell a solver problem from a model curation
//! gap or a gold query no single join view can express.
//!
//! The comparison is per table *instance* ([`super::instances`]): a table
//! the gold uses under several aliases in one SELECT is requested once per
//! role (`AIRPORTS@FLIGHTS.sourceairport`, `AIRPORTS@FLIGHTS.destairport`),
//! and join pairs are compared per pair of instances. Gold that uses each
//! table once gives exactly the request and pairs of a table-level oracle.

use std::collections::BTreeSet;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::instances::{gold_instances, instance_join_accuracy, multi_instance, view_instance_pairs, GoldInstances};
use super::metrics::JoinAccuracy;
use crate::graph::{SchemaGraph, TableId};
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
    /// The gold query uses one table more than once in a way no set of
    /// table instances expresses: the same role twice in one SELECT (two
    /// aliases attached the same way, told apart only by filters), a role
    /// anchored on another role instance, or a table equated with itself on
    /// different columns across scopes. (Aliases in distinct roles, and a
    /// table read again in a subquery, are instances: not this class.)
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
    /// Gold join and semi-join pairs, per pair of instances (a role
    /// instance's columns as `table@role.column`).
    pub gold_pairs: Vec<JoinPair>,
    /// The gold's role instances (`TABLE@role`), when it uses a table in
    /// several roles.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gold_roles: Vec<String>,
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
            gold_roles: Vec::new(),
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
/// attributes the model knows, in model spelling. A table the gold uses in
/// roles is requested once per role (`TABLE@role`, after the plain tables),
/// and plainly only when some alias of it is the plain instance.
pub fn oracle_request(graph: &SchemaGraph, refs: &QueryRefs, time_limit_s: f64) -> ViewRequest {
    request_for(graph, refs, &gold_instances(graph, refs), time_limit_s)
}

fn request_for(graph: &SchemaGraph, refs: &QueryRefs, gi: &GoldInstances, time_limit_s: f64) -> ViewRequest {
    let model = graph.model();
    // Plain instances in the table-level order (so that one-instance gold
    // gives the very request it always gave), then the role instances.
    let plain = |t: TableId| !gi.has_roles() || gi.instances.contains(&(t, None, 0));
    let tables: Vec<String> = refs
        .tables
        .iter()
        .filter(|t| graph.table_id(t).is_none_or(plain))
        .filter_map(|t| model.table(t).map(|x| x.name.clone()))
        .chain(gi.instances.iter().filter(|(_, r, _)| r.is_some()).map(|&(t, r, c)| graph.copy_label(t, r, c)))
        .collect();
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
    // A self join is a join question even over one table.
    case.multi_table = refs.tables.len() >= 2 || multi_instance(&refs);
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
    let gi = gold_instances(graph, &refs);
    case.gold_pairs = gi.pairs.iter().cloned().collect();
    case.gold_roles =
        gi.instances.iter().filter(|(_, r, _)| r.is_some()).map(|&(t, r, c)| graph.copy_label(t, r, c)).collect();
    let req = request_for(graph, &refs, &gi, time_limit_s);
    let start = Instant::now();
    let result = crate::solve::generate_view(graph, &req);
    case.solve_ms = start.elapsed().as_secs_f64() * 1e3;
    match result {
        Ok(view) => {
            case.view_status = Some(view.status);
            case.view_tables = view.tables.clone();
            let joins = view_instance_pairs(&view, graph);
            case.view_pairs = joins.iter().flatten().cloned().collect::<BTreeSet<_>>().into_iter().collect();
            if view.status == SolveStatus::Infeasible {
                case.detail = view.explanation.clone().unwrap_or_default();
            } else {
                // Uses of a table no set of instances expresses fail even
                // when the pairs agree.
                let acc = instance_join_accuracy(graph, &gi, &view);
                let ok = acc.matched;
                case.accuracy = Some(acc);
                if ok {
                    case.view = Some(view);
                    return case;
                }
            }
            let infeasible = view.status == SolveStatus::Infeasible;
            case.view = Some(view);
            case.mismatch = Some(classify(graph, &refs, &gi, infeasible, case.accuracy.as_ref(), &mut case.detail));
        }
        Err(e) => {
            case.detail = e.to_string();
            let mut detail = String::new();
            let class = classify(graph, &refs, &gi, false, None, &mut detail);
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
    gi: &GoldInstances,
    infeasible: bool,
    acc: Option<&JoinAccuracy>,
    detail: &mut String,
) -> MismatchClass {
    if !gi.problems.is_empty() {
        *detail = gi.problems.join("; ");
        return MismatchClass::MultipleUse;
    }
    if refs.set_operation {
        return MismatchClass::SetOperation;
    }
    let pairs = gi.base_pairs.clone();
    if let Some(why) = forbidden(graph, &pairs) {
        *detail = why;
        return MismatchClass::ModelForbids;
    }
    let undeclared: Vec<String> =
        pairs.iter().filter(|p| declared(graph, p).is_none()).map(|p| p.to_string()).collect();
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
        let extra_tables: BTreeSet<&str> = a
            .extra
            .iter()
            .flat_map(|p| [p.left.table.as_str(), p.right.table.as_str()])
            .filter(|t| !refs.tables.contains(*t))
            .collect();
        let forced: Vec<&str> = graph
            .junctions()
            .iter()
            .map(|j| graph.name(j.junction))
            .filter(|n| {
                extra_tables.iter().any(|t| {
                    t.eq_ignore_ascii_case(n)
                        || t.to_ascii_lowercase().starts_with(&format!("{}_", n.to_ascii_lowercase()))
                })
            })
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
    // while a side is in the gold too. A table that hangs off the junction
    // (card off disp: C3 case b) is no such table.
    for j in graph.junctions() {
        let name = graph.name(j.junction).to_ascii_lowercase();
        let sides: Vec<String> = j.sides.iter().map(|&t| graph.name(t).to_ascii_lowercase()).collect();
        let neighbours = joined_to(pairs, &name);
        let child =
            |n: &str| graph.table_id(n).and_then(|t| graph.junction_child_of(t)).is_some_and(|(k, _)| k == j.junction);
        let other = neighbours.iter().find(|n| !sides.iter().any(|s| s == *n) && !child(n));
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
            // (A pair within one table is two instances of it here: the
            // gold's identities were left out with its instances.)
            if key_side(&p.left) && key_side(&p.right) && declared(graph, p).is_none() {
                return Some(format!(
                    "{p} relates two tables through their keys to lookup table {} (C4)",
                    graph.name(l)
                ));
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
        if self.multi_table == 0 {
            0.0
        } else {
            self.matched as f64 / self.multi_table as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::metrics::join_accuracy;

    use crate::graph::fixtures::ddo;

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
        let c =
            case("SELECT c.name FROM CLIENT c JOIN LOCATION l ON c.loc_id = l.id JOIN DATACENTER d ON d.loc_id = l.id");
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
        // Two clients related by their shared lookup key: the C4 case, now
        // that the two aliases are two instances.
        let c =
            case("SELECT 1 FROM CLIENT a JOIN CLIENT b ON a.loc_id = b.loc_id JOIN PAYMENT p ON p.client_id = a.id");
        assert_eq!(c.mismatch, Some(MismatchClass::ModelForbids), "{c:?}");
        assert!(c.detail.contains("lookup table LOCATION (C4)"), "{}", c.detail);
        // Two aliases attached the same way: one instance cannot stand for them.
        let c = case("SELECT 1 FROM CLIENT a JOIN CLIENT b ON a.loc_id = b.loc_id");
        assert_eq!(c.mismatch, Some(MismatchClass::MultipleUse), "{c:?}");
        assert!(c.detail.contains("CLIENT used 2 times in one SELECT as CLIENT (a, b)"), "{}", c.detail);
        // Used twice, but along the same to-one join from the same row: the
        // same row, one instance.
        let c = case(
            "SELECT 1 FROM CLIENT a JOIN RSPOOL2CLIENT j ON j.client_id = a.id JOIN CLIENT b ON b.id = j.client_id",
        );
        assert!(c.matched(), "{c:?}");
        // The same role twice from the "one" side: two rows each, which one
        // instance cannot stand for, but two copies of the role can.
        let c =
            case("SELECT 1 FROM CLIENT c JOIN PAYMENT p ON p.client_id = c.id JOIN PAYMENT q ON q.client_id = c.id");
        assert!(c.matched(), "{c:?}");
        assert_eq!(c.gold_roles, ["PAYMENT@CLIENT.id", "PAYMENT@CLIENT.id#2"]);
        let c = case("SELECT name FROM CLIENT UNION SELECT name FROM DATACENTER");
        assert_eq!(c.mismatch, Some(MismatchClass::SetOperation));
        let c = case("SELECT 1 FROM CLIENT c JOIN NOPE n ON n.id = c.id");
        assert_eq!(c.mismatch, Some(MismatchClass::ModelMissingTable));
        assert!(c.detail.contains("nope"));
        let c = case("SELEC 1 FROM");
        assert_eq!(c.mismatch, Some(MismatchClass::GoldUnparseable));
    }

    /// ddo-20's question written with two LOCATION aliases: each is a role
    /// instance, requested as such and compared per instance.
    const TWO_LOCATIONS: &str = "SELECT c.name, d.name FROM DATACENTER d JOIN COMPUTE k ON k.dc_id = d.id \
        JOIN RESOURCEPOOL p ON p.compute_id = k.id JOIN RSPOOL2CLIENT j ON j.rspool_id = p.id \
        JOIN CLIENT c ON c.id = j.client_id JOIN LOCATION lc ON c.loc_id = lc.id JOIN LOCATION ld ON d.loc_id = ld.id \
        WHERE lc.city = ld.city";

    #[test]
    fn two_aliases_of_one_table_are_two_instances() {
        let g = ddo();
        let c = case(TWO_LOCATIONS);
        assert!(c.matched(), "{c:?}");
        assert_eq!(c.gold_roles, ["LOCATION@CLIENT.loc_id", "LOCATION@DATACENTER.loc_id"]);
        assert!(
            c.gold_pairs.iter().any(|p| p.to_string() == "client.loc_id = location@client.loc_id.id"),
            "{:?}",
            c.gold_pairs
        );
        // `lc.city = ld.city` compares two instances: a condition, not a join.
        assert!(!c.gold_pairs.iter().any(|p| p.left.column == "city"), "{:?}", c.gold_pairs);
        let refs = c.gold_refs.as_ref().unwrap();
        let req = oracle_request(&g, refs, 5.0);
        assert!(
            req.tables.ends_with(&["LOCATION@CLIENT.loc_id".to_string(), "LOCATION@DATACENTER.loc_id".to_string()]),
            "{:?}",
            req.tables
        );
        assert!(!req.tables.iter().any(|t| t == "LOCATION"), "no plain LOCATION: {:?}", req.tables);
        let view = c.view.as_ref().unwrap();
        assert!(
            view.tables.contains(&"LOCATION_CLIENT".to_string())
                && view.tables.contains(&"LOCATION_DATACENTER".to_string())
        );
        // A view with one LOCATION does not match the two-alias gold, although
        // its table-level pairs are the gold's.
        let mut one = ViewRequest::new(
            ["DATACENTER", "COMPUTE", "RESOURCEPOOL", "RSPOOL2CLIENT", "CLIENT", "LOCATION"].map(String::from).to_vec(),
        );
        one.time_limit_s = 5.0;
        let v1 = crate::solve::generate_view(&g, &one).unwrap();
        let gi = gold_instances(&g, refs);
        assert!(!join_accuracy(&gi.pairs, &view_instance_pairs(&v1, &g)).matched);
    }

    /// A staff model: EMPLOYEE managed by an EMPLOYEE (role `manager`), a
    /// home address (role) and a work address (no role).
    fn staff() -> SchemaGraph {
        let m: crate::types::DbModel = serde_json::from_value(serde_json::json!({
            "name": "staff",
            "tables": [
                {"name": "EMPLOYEE", "primary_key": ["id"], "columns": [
                    {"name": "id", "type": "INTEGER"}, {"name": "name", "type": "TEXT"}, {"name": "manager_id", "type": "INTEGER"},
                    {"name": "home_address_id", "type": "INTEGER"}, {"name": "work_address_id", "type": "INTEGER"}]},
                {"name": "ADDRESS", "primary_key": ["id"], "columns": [{"name": "id", "type": "INTEGER"}, {"name": "city", "type": "TEXT"}]}
            ],
            "relationships": [
                {"from": "EMPLOYEE", "to": "EMPLOYEE", "cardinality": "M:1", "on": [["manager_id", "id"]], "role": "manager"},
                {"from": "EMPLOYEE", "to": "ADDRESS", "cardinality": "M:1", "on": [["home_address_id", "id"]], "role": "home_address"},
                {"from": "EMPLOYEE", "to": "ADDRESS", "cardinality": "M:1", "on": [["work_address_id", "id"]]}
            ]
        }))
        .unwrap();
        SchemaGraph::new(m).unwrap()
    }

    #[test]
    fn self_join_and_role_aliases() {
        let g = staff();
        let c = oracle_case(
            &g,
            "t",
            None,
            "SELECT e.name, m.name FROM EMPLOYEE e JOIN EMPLOYEE m ON e.manager_id = m.id",
            Dialect::Sqlite,
            5.0,
        );
        assert!(c.multi_table, "a self join is a join question");
        assert!(c.matched(), "{c:?}");
        assert_eq!(c.gold_roles, ["EMPLOYEE@manager"]);
        assert_eq!(
            c.gold_pairs.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
            ["employee.manager_id = employee@manager.id"]
        );
        // Written the other way round: the alias on the key side is the manager.
        let c = oracle_case(
            &g,
            "t",
            None,
            "SELECT m.name FROM EMPLOYEE m JOIN EMPLOYEE e ON m.id = e.manager_id",
            Dialect::Sqlite,
            5.0,
        );
        assert!(c.matched(), "{c:?}");
        let c = oracle_case(
            &g,
            "t",
            None,
            "SELECT h.city, w.city FROM EMPLOYEE e JOIN ADDRESS h ON e.home_address_id = h.id JOIN ADDRESS w ON w.id = e.work_address_id",
            Dialect::Sqlite,
            5.0,
        );
        assert!(c.matched(), "{c:?}");
        assert_eq!(c.gold_roles, ["ADDRESS@home_address", "ADDRESS@EMPLOYEE.work_address_id"]);
        // One address alias: the plain instance, as the table-level oracle
        // had it (and, as there, the view takes the first of the two
        // relationships).
        let c = oracle_case(
            &g,
            "t",
            None,
            "SELECT a.city FROM EMPLOYEE e JOIN ADDRESS a ON e.work_address_id = a.id",
            Dialect::Sqlite,
            5.0,
        );
        assert_eq!(c.mismatch, Some(MismatchClass::ParallelRelationship), "{c:?}");
        assert!(c.gold_roles.is_empty());
        let refs = c.gold_refs.as_ref().unwrap();
        assert_eq!(oracle_request(&g, refs, 5.0).tables, ["ADDRESS", "EMPLOYEE"]);
        // A one-instance view does not match two address roles.
        let c = oracle_case(&g, "t", None, "SELECT h.city FROM EMPLOYEE e JOIN ADDRESS h ON e.home_address_id = h.id JOIN ADDRESS w ON w.id = e.home_address_id", Dialect::Sqlite, 5.0);
        assert!(c.matched(), "both aliases are the same home address row: {c:?}");
    }

    /// ACME: claim amounts of two kinds side by side, one alias per kind.
    /// Each alias is a subtype instance of the star's root; a view with one
    /// Claim_Amount (the table-level oracle's request) no longer matches.
    #[test]
    fn acme_claim_amount_aliases_are_subtype_instances() {
        let g = crate::graph::fixtures::acme();
        let sql = "SELECT company_claim_number, (ca_lp.claim_amount + ca_lr.claim_amount) FROM Claim \
            JOIN claim_amount ca_lp ON claim.claim_identifier = ca_lp.claim_identifier \
            JOIN loss_payment ON ca_lp.claim_amount_identifier = loss_payment.claim_amount_identifier \
            JOIN claim_amount ca_lr ON claim.claim_identifier = ca_lr.claim_identifier \
            JOIN loss_reserve ON ca_lr.claim_amount_identifier = loss_reserve.claim_amount_identifier";
        let c = oracle_case(&g, "t", None, sql, Dialect::Sqlite, 5.0);
        assert!(c.matched(), "{c:?}");
        assert_eq!(c.gold_roles.len(), 2, "{:?}", c.gold_roles);
        assert!(c.gold_roles.iter().all(|r| r.starts_with("Claim_Amount@Loss_")), "{:?}", c.gold_roles);
        assert_eq!(
            c.view_tables,
            ["Claim_Amount_Loss_Payment", "Claim", "Claim_Amount_Loss_Reserve", "Loss_Payment", "Loss_Reserve"]
        );
        let mut one =
            ViewRequest::new(["Claim", "Claim_Amount", "Loss_Payment", "Loss_Reserve"].map(String::from).to_vec());
        one.time_limit_s = 5.0;
        let v1 = crate::solve::generate_view(&g, &one).unwrap();
        let gi = gold_instances(&g, c.gold_refs.as_ref().unwrap());
        assert!(!instance_join_accuracy(&g, &gi, &v1).matched);
        // The table-level comparison the oracle used to make matched it.
        let refs = c.gold_refs.as_ref().unwrap();
        assert!(join_accuracy(&refs.all_pairs(), &crate::sql::analyze::view_pairs(&v1, Some(&g))).matched);
    }

    #[test]
    fn acme_a_root_used_once_with_a_marker_kind_is_that_kinds_instance() {
        // policy_amount INNER JOIN premium: the premium rows, the instance
        // `--kind-instance` builds; the plain Policy_Amount with Premium as
        // a LEFT JOIN branch holds every amount and does not match.
        let g = crate::graph::fixtures::acme();
        let sql = "SELECT policy_number, SUM(policy_amount) FROM policy \
            JOIN policy_amount ON policy.policy_identifier = policy_amount.policy_identifier \
            JOIN premium ON premium.policy_amount_identifier = policy_amount.policy_amount_identifier \
            GROUP BY policy_number";
        let c = oracle_case(&g, "t", None, sql, Dialect::Sqlite, 5.0);
        assert!(c.matched(), "{c:?}");
        assert_eq!(c.gold_roles, ["Policy_Amount@Premium.Policy_Amount_Identifier"]);
        let gi = gold_instances(&g, c.gold_refs.as_ref().unwrap());
        let mut plain = ViewRequest::new(["Policy", "Policy_Amount", "Premium"].map(String::from).to_vec());
        plain.time_limit_s = 5.0;
        let v = crate::solve::generate_view(&g, &plain).unwrap();
        assert!(!instance_join_accuracy(&g, &gi, &v).matched);
        let mut inst = ViewRequest::new(["Policy", "Policy_Amount@Premium", "Premium"].map(String::from).to_vec());
        inst.time_limit_s = 5.0;
        let v = crate::solve::generate_view(&g, &inst).unwrap();
        assert!(instance_join_accuracy(&g, &gi, &v).matched);
        // A child with data of its own (DDO's BONUS) is not a marker: plain.
        let d = crate::graph::fixtures::ddo();
        let sql = "SELECT SUM(bonus.amount) FROM retention JOIN bonus ON bonus.retention_id = retention.id";
        let c = oracle_case(&d, "t", None, sql, Dialect::Sqlite, 5.0);
        assert!(c.gold_roles.is_empty(), "{:?}", c.gold_roles);
    }

    #[test]
    fn acme_the_same_role_twice_is_two_copies_of_one_role_instance() {
        // apr1/apr2: a policy holder and an agent of one policy, two rows
        // attached by the same relationship and told apart by a filter.
        let g = crate::graph::fixtures::acme();
        let sql = "SELECT apr2.party_identifier, apr1.party_identifier, policy_number FROM policy \
            JOIN agreement_party_role apr1 ON apr1.agreement_identifier = policy.policy_identifier \
            JOIN agreement_party_role apr2 ON apr2.agreement_identifier = policy.policy_identifier \
            WHERE apr1.party_role_code = 'PH' AND apr2.party_role_code = 'AG'";
        let c = oracle_case(&g, "t", None, sql, Dialect::Sqlite, 5.0);
        assert!(c.matched(), "{c:?}");
        assert_eq!(
            c.gold_roles,
            ["Agreement_Party_Role@Policy.Policy_Identifier", "Agreement_Party_Role@Policy.Policy_Identifier#2"]
        );
        assert!(
            c.view_tables.contains(&"Agreement_Party_Role_Policy".to_string())
                && c.view_tables.contains(&"Agreement_Party_Role_Policy_2".to_string()),
            "{:?}",
            c.view_tables
        );
        // One copy does not stand for two rows.
        let mut one = ViewRequest::new(["Policy", "Agreement_Party_Role@Policy"].map(String::from).to_vec());
        one.time_limit_s = 5.0;
        let v1 = crate::solve::generate_view(&g, &one).unwrap();
        let gi = gold_instances(&g, c.gold_refs.as_ref().unwrap());
        assert!(!instance_join_accuracy(&g, &gi, &v1).matched);
        // `#N` at the edges.
        let apr = g.table_id("Agreement_Party_Role").unwrap();
        let (t, r, copy) = g.instance_copy("Agreement_Party_Role@Policy#2").unwrap();
        assert_eq!((t, copy), (apr, 1));
        assert_eq!(g.copy_label(t, r, copy), "Agreement_Party_Role@Policy.Policy_Identifier#2");
        assert_eq!(g.instance_copy("Agreement_Party_Role@Policy.Policy_Identifier#2").unwrap(), (t, r, 1));
        let e = g.instance_copy("Policy#2").unwrap_err().to_string();
        assert!(e.contains("Policy@ROLE#2"), "{e}");
        let e = g.instance_copy("Agreement_Party_Role@Policy#1").unwrap_err().to_string();
        assert!(e.contains("must be 2 to 256"), "{e}");
    }

    #[test]
    fn acme_policy_amount_joins_its_policy_through_the_coverage_detail_when_relevant() {
        // Policy_Amount → Policy is declared `via` Policy_Coverage_Detail.
        let g = crate::graph::fixtures::acme();
        let sql = "SELECT policy_number, policy_amount FROM claim_coverage \
            JOIN policy_coverage_detail ON claim_coverage.policy_coverage_detail_identifier = policy_coverage_detail.policy_coverage_detail_identifier \
            JOIN policy ON policy.policy_identifier = policy_coverage_detail.policy_identifier \
            JOIN policy_amount ON policy_coverage_detail.policy_coverage_detail_identifier = policy_amount.policy_coverage_detail_identifier";
        let c = oracle_case(&g, "t", None, sql, Dialect::Sqlite, 5.0);
        assert!(c.matched(), "{c:?}");
        // Without the coverage detail the shortcut is the join.
        let sql = "SELECT policy_number, policy_amount FROM policy JOIN policy_amount ON policy.policy_identifier = policy_amount.policy_identifier";
        let c = oracle_case(&g, "t", None, sql, Dialect::Sqlite, 5.0);
        assert!(c.matched(), "{c:?}");
        // The explanation of a request names the shortcut it left out.
        let mut req =
            ViewRequest::new(["Policy", "Policy_Amount", "Policy_Coverage_Detail"].map(String::from).to_vec());
        req.time_limit_s = 5.0;
        let sc = crate::solve::relevant::scope(&g, &req).unwrap();
        assert_eq!(
            sc.bypassed.iter().map(|&r| g.relationship(r).id()).collect::<Vec<_>>(),
            ["Policy_Amount(Policy_Identifier)->Policy(Policy_Identifier)"]
        );
    }

    #[test]
    fn a_table_read_again_in_a_subquery_is_the_same_instance() {
        let c = case(
            "SELECT name FROM CLIENT WHERE id NOT IN (SELECT c.id FROM CLIENT c JOIN PAYMENT p ON p.client_id = c.id)",
        );
        assert!(c.matched(), "{c:?}");
        assert!(c.gold_roles.is_empty());
        assert_eq!(c.gold_pairs.iter().map(|p| p.to_string()).collect::<Vec<_>>(), ["client.id = payment.client_id"]);
        // A table equated with itself on other columns across scopes.
        let c = case(
            "SELECT name FROM CLIENT WHERE loc_id IN (SELECT c.id FROM CLIENT c JOIN PAYMENT p ON p.client_id = c.id)",
        );
        assert_eq!(c.mismatch, Some(MismatchClass::MultipleUse), "{c:?}");
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
