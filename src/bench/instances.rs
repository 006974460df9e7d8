//! The gold query's table instances, for the oracle (issue 17, item 6).
//!
//! Gold SQL that uses one table under several aliases asks for several
//! instances of it: `FLIGHTS f JOIN AIRPORTS a ON f.source = a.code JOIN
//! AIRPORTS b ON f.dest = b.code` is AIRPORTS in two roles. Each alias of a
//! table used more than once *in one SELECT* is given the role of the join
//! condition that attaches it, read against the model's relationships:
//!
//! - the `to` end of a self-relationship (`e.manager_id = m.id`: `m` is
//!   `EMPLOYEE@manager`, `e` the plain instance);
//! - a pattern root joined to one of its own children (`ca.id = lp.id` with
//!   LOSS_PAYMENT a child of CLAIM_AMOUNT): the root's subtype instance
//!   `CLAIM_AMOUNT@LOSS_PAYMENT`; also a root used once, when the child is a
//!   marker kind (a table holding only its key: `policy_amount JOIN
//!   premium` reads the premium rows, `POLICY_AMOUNT@PREMIUM`, the instance
//!   `--kind-instance` builds);
//! - otherwise, an alias attached through exactly one relationship to one
//!   other alias: that relationship (`AIRPORTS@FLIGHTS.source`); an alias
//!   with several attachments (a connector) stays the plain instance.
//!
//! Several aliases in the same role of one SELECT that are different rows
//! (the anchor reaches many: ACME's `apr1`/`apr2`, a policy holder and an
//! agent of one policy, told apart only by `party_role_code`) are copies of
//! that role instance, `TABLE@role` and `TABLE@role#2`
//! (`RoleInstance::copy`), in alias order.
//!
//! Across SELECTs (a subquery, a set-operation branch) an alias is the same
//! instance as the outer alias with the same table and role: a table read
//! again in `x IN (SELECT …)` is not a second copy of the join view, and an
//! equality between the two (`student.stuid = student.stuid`) is identity,
//! not a join. Gold join pairs are then written per pair of instances, each
//! instance named by [`instance_key`], exactly as the view's pairs are
//! ([`view_instance_pairs`]), so a view with one CLAIM_AMOUNT no longer
//! matches gold that joins four.

use std::collections::{BTreeMap, BTreeSet};

use crate::graph::{RelId, SchemaGraph, TableId};
use crate::sql::analyze::{JoinPair, QueryRefs};
use crate::types::{Cardinality, ColumnRef, ViewResult};

/// The name of a table instance in instance-level join pairs: the table
/// (lower-cased) for a plain instance, its `TABLE@role` label
/// ([`SchemaGraph::copy_label`], lower-cased; `TABLE@role#2` for a second
/// copy) for a role instance.
pub fn instance_key(graph: &SchemaGraph, t: TableId, role: Option<RelId>, copy: u8) -> String {
    graph.copy_label(t, role, copy).to_ascii_lowercase()
}

/// The gold query's instances and its join pairs between them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GoldInstances {
    /// Instances in first-occurrence order: table, role and copy.
    pub instances: Vec<(TableId, Option<RelId>, u8)>,
    /// Join and semi-join pairs between two instances, each column's table
    /// written as its instance's [`instance_key`]; identity equalities
    /// (an instance equated with itself across scopes) are left out.
    pub pairs: BTreeSet<JoinPair>,
    /// The same pairs on base tables (what the model's relationships are
    /// checked against).
    pub base_pairs: BTreeSet<JoinPair>,
    /// Uses of one table that no set of instances expresses (the same role
    /// twice in one SELECT, a role anchored on another role instance, a
    /// table equated with itself on different columns across scopes).
    pub problems: Vec<String>,
}

impl GoldInstances {
    /// Whether some table is used in more than one instance.
    pub fn has_roles(&self) -> bool {
        self.instances.iter().any(|(_, r, _)| r.is_some())
    }
}

/// How one occurrence attaches to another of its SELECT, read against the
/// model: the relationship, and whether this occurrence is its self-relationship's `to` end.
fn attachments(graph: &SchemaGraph, t: TableId, col: &str, other: TableId, other_col: &str) -> Vec<(RelId, bool)> {
    let mut v = Vec::new();
    for r in graph.relationships_between(t, other) {
        let rel = graph.relationship(r);
        let (from, to) = graph.endpoints(r);
        for [a, b] in &rel.on {
            let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
            if from == to {
                if a == other_col && b == col {
                    v.push((r, true));
                } else if a == col && b == other_col {
                    v.push((r, false));
                }
            } else if (from == t && a == col && b == other_col) || (to == t && b == col && a == other_col) {
                v.push((r, false));
            }
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// The subtype instance a single occurrence of core table `t` stands for
/// when it is joined to one of its pattern children that is a marker kind
/// (`policy_amount JOIN premium ON … = premium.policy_amount_identifier`:
/// the policy amounts that are premiums, `POLICY_AMOUNT@PREMIUM`, as the
/// view's `--kind-instance` holds them); `partners` are the occurrence's
/// equalities (the other table, this column, the other column).
fn marker_kind<'a>(
    graph: &SchemaGraph,
    t: TableId,
    partners: impl Iterator<Item = (TableId, &'a str, &'a str)>,
) -> Option<RelId> {
    if !graph.is_core(t) {
        return None;
    }
    for (u, col, other_col) in partners {
        let Some(pos) = graph.inner_position(u).filter(|p| p.parent == t) else { continue };
        let joined = attachments(graph, t, col, u, other_col).iter().any(|&(r, _)| r == pos.rel);
        if joined && crate::link::kinds::is_marker(graph, pos.rel, u) {
            return Some(pos.rel);
        }
    }
    None
}

/// Derive the gold query's instances (see the module documentation).
/// Occurrences of tables the model lacks are left out (the oracle reports
/// those tables before it gets here).
pub fn gold_instances(graph: &SchemaGraph, refs: &QueryRefs) -> GoldInstances {
    let occ = &refs.occurrences;
    let ids: Vec<Option<TableId>> = occ.iter().map(|o| graph.table_id(&o.table)).collect();
    let mut role: Vec<Option<RelId>> = vec![None; occ.len()];
    let mut copy: Vec<u8> = vec![0; occ.len()];
    let mut out = GoldInstances::default();
    // Occurrences per (SELECT, table).
    let mut groups: BTreeMap<(usize, TableId), Vec<usize>> = BTreeMap::new();
    for (i, o) in occ.iter().enumerate() {
        if let Some(t) = ids[i] {
            groups.entry((o.select, t)).or_default().push(i);
        }
    }
    let same_select = |a: usize, b: usize| occ[a].select == occ[b].select;
    // Equalities of occurrence `i` with other occurrences of its SELECT.
    let partners = |i: usize| {
        refs.occurrence_pairs.iter().filter_map(move |p| {
            if p.a == i && same_select(p.a, p.b) {
                Some((p.b, p.left.column.as_str(), p.right.column.as_str()))
            } else if p.b == i && same_select(p.a, p.b) {
                Some((p.a, p.right.column.as_str(), p.left.column.as_str()))
            } else {
                None
            }
        })
    };
    // Role occurrence → the occurrence it attaches to.
    let mut anchored: Vec<(usize, usize)> = Vec::new();
    for (&(_, t), members) in &groups {
        if let &[i] = members.as_slice() {
            role[i] = marker_kind(graph, t, partners(i).filter_map(|(j, c, oc)| Some((ids[j]?, c, oc))));
            continue;
        }
        for &i in members {
            let mut subtype = None;
            let mut self_to = None;
            let mut attached: BTreeSet<(usize, RelId)> = BTreeSet::new();
            for (j, col, other_col) in partners(i) {
                let Some(u) = ids[j] else { continue };
                if let Some(pos) = graph.inner_position(u).filter(|p| p.parent == t && graph.is_core(t)) {
                    if attachments(graph, t, col, u, other_col).iter().any(|&(r, _)| r == pos.rel) {
                        subtype = Some(pos.rel);
                        continue;
                    }
                }
                for (r, to_end) in attachments(graph, t, col, u, other_col) {
                    if to_end {
                        self_to = Some((j, r));
                    } else if u != t {
                        attached.insert((j, r));
                    }
                }
            }
            role[i] = if let Some(r) = subtype {
                Some(r)
            } else if let Some((j, r)) = self_to {
                anchored.push((i, j));
                Some(r)
            } else if attached.len() == 1 {
                let &(j, r) = attached.iter().next().expect("one");
                anchored.push((i, j));
                Some(r)
            } else {
                None
            };
        }
        // The same instance twice in one SELECT. Two aliases that reach a
        // table through the same to-one relationship from the same row
        // (`j.client_id = a.id AND j.client_id = b.id`) are the same row:
        // one instance stands for both.
        let mut seen: BTreeMap<Option<RelId>, Vec<usize>> = BTreeMap::new();
        for &i in members {
            seen.entry(role[i]).or_default().push(i);
        }
        let anchor = |i: usize| anchored.iter().find(|&&(x, _)| x == i).map(|&(_, j)| j);
        for (r, same) in seen.into_iter().filter(|(_, a)| a.len() > 1) {
            let one_row = r.is_some_and(|r| {
                let j = anchor(same[0]);
                j.is_some_and(|j| {
                    same.iter().all(|&i| anchor(i) == Some(j))
                        && ids[j].is_some_and(|u| {
                            matches!(graph.cardinality_from(r, u), Cardinality::ManyToOne | Cardinality::OneToOne)
                        })
                })
            });
            if one_row {
                continue;
            }
            // Different rows in one role: copies of the role instance.
            if r.is_some() && same.len() <= 256 {
                for (k, &i) in same.iter().enumerate() {
                    copy[i] = k as u8;
                }
                continue;
            }
            let aliases: Vec<&str> = same.iter().map(|&i| occ[i].alias.as_str()).collect();
            out.problems.push(format!(
                "{} used {} times in one SELECT as {} ({}): one instance of the view cannot stand for them",
                graph.name(t),
                aliases.len(),
                graph.instance_label(t, r),
                aliases.join(", ")
            ));
        }
    }
    // A role instance joins through the plain instance of its anchor.
    for (i, j) in anchored {
        if role[j].is_some() && ids[j] != ids[i] {
            out.problems.push(format!(
                "{} ({}) attaches to {} ({}), itself a role instance: a role instance joins a plain instance",
                occ[i].alias,
                graph.copy_label(ids[i].expect("resolved"), role[i], copy[i]),
                occ[j].alias,
                graph.copy_label(ids[j].expect("resolved"), role[j], copy[j]),
            ));
        }
    }
    // Instances by (table, role), across SELECTs.
    let mut inst_of: Vec<Option<usize>> = vec![None; occ.len()];
    for i in 0..occ.len() {
        let Some(t) = ids[i] else { continue };
        let key = (t, role[i], copy[i]);
        let k = match out.instances.iter().position(|x| *x == key) {
            Some(k) => k,
            None => {
                out.instances.push(key);
                out.instances.len() - 1
            }
        };
        inst_of[i] = Some(k);
    }
    // Pairs per pair of instances; pairs the occurrences do not explain
    // (columns through a derived table or CTE) stay on base tables.
    let all = refs.all_pairs();
    let mut explained: BTreeSet<JoinPair> = BTreeSet::new();
    let key = |k: usize| instance_key(graph, out.instances[k].0, out.instances[k].1, out.instances[k].2);
    let mut pairs = BTreeSet::new();
    let mut base_pairs = BTreeSet::new();
    let mut comparisons = Vec::new();
    for p in &refs.occurrence_pairs {
        let base = JoinPair::new(&p.left, &p.right);
        explained.insert(base.clone());
        let (Some(a), Some(b)) = (inst_of[p.a], inst_of[p.b]) else {
            continue;
        };
        if a == b {
            if p.left.column != p.right.column && !same_select(p.a, p.b) {
                out.problems.push(format!(
                    "{} is equated with itself on different columns across scopes ({base})",
                    graph.name(out.instances[a].0)
                ));
            }
            continue;
        }
        let labelled = JoinPair::new(&ColumnRef::new(key(a), &p.left.column), &ColumnRef::new(key(b), &p.right.column));
        if out.instances[a].0 == out.instances[b].0
            && p.left.column == p.right.column
            && attachments(graph, out.instances[a].0, &p.left.column, out.instances[b].0, &p.right.column).is_empty()
        {
            comparisons.push((a, b, labelled, base));
            continue;
        }
        pairs.insert(labelled);
        base_pairs.insert(base);
    }
    // Two instances of one table compared on the same column without a
    // relationship that says so (`lc.city = ld.city`), each joined to the
    // rest otherwise: a condition over the view's instances, not a join.
    // When it is an instance's only link, it is the join that relates it.
    let linked = |k: usize, pairs: &BTreeSet<JoinPair>| {
        let name = key(k);
        pairs.iter().any(|p| p.left.table == name || p.right.table == name)
    };
    for (a, b, labelled, base) in comparisons {
        if !(linked(a, &pairs) && linked(b, &pairs)) {
            pairs.insert(labelled);
            base_pairs.insert(base);
        }
    }
    for p in all.difference(&explained) {
        pairs.insert(p.clone());
        base_pairs.insert(p.clone());
    }
    out.problems.dedup();
    out.pairs = pairs;
    out.base_pairs = base_pairs;
    out
}

/// Whether some table occurs twice in one SELECT (a self join or one table
/// in two roles): a join question even over a single table.
pub fn multi_instance(refs: &QueryRefs) -> bool {
    let mut seen = BTreeSet::new();
    refs.occurrences.iter().any(|o| !seen.insert((o.select, o.table.as_str())))
}

/// The join pairs of a view built in this process, one list per join, each
/// column's table written as its instance's [`instance_key`]: plain
/// instances (and revisits `TABLE_2`) by their table, role instances by
/// `table@role`. A view read back from JSON carries no ids: its pairs are
/// read on base tables ([`crate::sql::analyze::view_pairs`]).
pub fn view_instance_pairs(view: &ViewResult, graph: &SchemaGraph) -> Vec<Vec<JoinPair>> {
    let complete = !view.instances.is_empty()
        && view.joins.iter().all(|j| j.pairs.len() == j.on.len())
        && view.joins.iter().flat_map(|j| &j.pairs).flatten().all(|c| c.instance < view.instances.len());
    if !complete {
        return crate::sql::analyze::view_pairs(view, Some(graph));
    }
    let col = |c: &crate::types::InstanceColumn| {
        let inst = &view.instances[c.instance];
        let (_, name) = graph.column_names(c.column);
        ColumnRef::new(instance_key(graph, inst.table, inst.role, inst.copy), name.to_ascii_lowercase())
    };
    view.joins.iter().map(|j| j.pairs.iter().map(|[l, r]| JoinPair::new(&col(l), &col(r))).collect()).collect()
}

/// Join accuracy of a view against gold SQL, per pair of instances: the
/// gold's instances and pairs ([`gold_instances`]) against the view's
/// ([`view_instance_pairs`]). A gold query that uses a table in a way no
/// set of instances expresses ([`GoldInstances::problems`]) never matches.
pub fn instance_join_accuracy(
    graph: &SchemaGraph,
    gold: &GoldInstances,
    view: &ViewResult,
) -> super::metrics::JoinAccuracy {
    let mut acc = super::metrics::join_accuracy(&gold.pairs, &view_instance_pairs(view, graph));
    acc.matched &= gold.problems.is_empty();
    acc
}

/// Gold instances beyond one per table: the role instances of tables the
/// gold uses in several roles (0 for gold that uses each table once).
pub fn extra_instances(graph: &SchemaGraph, refs: &QueryRefs) -> usize {
    let gi = gold_instances(graph, refs);
    let tables: BTreeSet<TableId> = gi.instances.iter().map(|&(t, _, _)| t).collect();
    gi.instances.len() - tables.len()
}
