//! From a solved walk to join instances: which relationship each step uses
//! (with ambiguity reports), when a revisited table is the same instance and
//! when it needs a second one, and the LEFT JOIN pattern branches.

use std::collections::{BTreeSet, HashMap};

use crate::graph::{RelId, SchemaGraph, TableId};
use crate::types::{Ambiguity, JoinKind};

pub use crate::types::Instance;

/// A join between two instances: `right` joins the view through `rel`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstJoin {
    pub left: usize,
    pub right: usize,
    pub rel: RelId,
    pub kind: JoinKind,
}

/// Instances in join order, joins, and ambiguity reports.
#[derive(Debug, Clone, Default)]
pub struct JoinTree {
    pub instances: Vec<Instance>,
    pub joins: Vec<InstJoin>,
    pub ambiguities: Vec<Ambiguity>,
}

/// Pick the relationship between consecutive tables `a` and `b` among the
/// allowed ones. Rule (deterministic, documented in docs/generate-view.md):
///
/// 1. the relationship an m:m pattern or a pattern tree declares for this pair;
/// 2. otherwise the first in dbModel order.
///
/// Every pair with more than one candidate is reported.
pub fn choose_relationship(
    graph: &SchemaGraph,
    a: TableId,
    b: TableId,
    forbidden: &BTreeSet<RelId>,
    amb: &mut Vec<Ambiguity>,
) -> Option<RelId> {
    let cands: Vec<RelId> = graph.relationships_between(a, b).into_iter().filter(|r| !forbidden.contains(r)).collect();
    let first = *cands.first()?;
    if cands.len() == 1 {
        return Some(first);
    }
    let mut declared = None;
    for j in graph.junctions() {
        for k in 0..2 {
            let pair = (j.junction, j.sides[k]);
            if (pair == (a, b) || pair == (b, a)) && cands.contains(&j.rels[k]) {
                declared =
                    Some((j.rels[k], format!("declared by the m:m pattern of junction {}", graph.name(j.junction))));
            }
        }
    }
    for (child, parent) in [(a, b), (b, a)] {
        if let Some(pos) = graph.inner_position(child) {
            if pos.parent == parent && cands.contains(&pos.rel) {
                declared = Some((pos.rel, format!("declared by the pattern tree rooted at {}", graph.name(pos.root))));
            }
        }
    }
    let (chosen, reason) = declared.unwrap_or((
        first,
        "no pattern declares one: the first in dbModel order is used; forbid the others in constraints.forbid_relationships (or name the one to use in a pattern) to choose".to_string(),
    ));
    let (l, r) = (graph.name(a).to_string(), graph.name(b).to_string());
    let already = amb.iter().any(|x| (x.left == l && x.right == r) || (x.left == r && x.right == l));
    if !already {
        amb.push(Ambiguity {
            left: l,
            right: r,
            candidates: cands.iter().map(|&c| graph.relationship(c).id()).collect(),
            chosen: graph.relationship(chosen).id(),
            reason,
        });
    }
    Some(chosen)
}

/// Whether join `j`'s left instance is its relationship's `from` end. For
/// a self-relationship the role instance is the `to` end (`EMPLOYEE@manager`
/// is the row `manager_id` points to).
pub fn left_is_from(graph: &SchemaGraph, jt: &JoinTree, j: &InstJoin) -> bool {
    let (from, to) = graph.endpoints(j.rel);
    let (l, r) = (&jt.instances[j.left], &jt.instances[j.right]);
    if from != to {
        return l.table == from;
    }
    !(l.role == Some(j.rel) && r.role != Some(j.rel))
}

/// Build the instances and joins of a walk (INNER), of the children of its
/// subtype instances (INNER) and of the branches to the relevant inner
/// tables (LEFT). The walk's nodes are table instances:
/// a table and, for a role instance, the relationship it joins through
/// (always used for the steps to and from it; a plain step avoids the
/// relationships of the walk's role instances while another one is
/// allowed). A step that retraces a join already made (same instance, same
/// relationship) moves back to the existing instance; reaching a table
/// again through a different join creates a new instance, because the walk
/// then relates it to different rows.
pub fn build(
    graph: &SchemaGraph,
    walk: &[super::WalkNode],
    inner: &[TableId],
    forbidden: &BTreeSet<RelId>,
) -> Result<JoinTree, String> {
    let mut jt = JoinTree::default();
    let Some(&start) = walk.first() else { return Err("empty walk".into()) };
    let mut count: HashMap<TableId, usize> = HashMap::new();
    let mut used: BTreeSet<String> = BTreeSet::new();
    let mut new_inst = |jt: &mut JoinTree, (t, role, copy): super::WalkNode| -> usize {
        let alias = match role {
            None => {
                let c = count.entry(t).or_insert(0);
                *c += 1;
                if *c == 1 {
                    graph.name(t).to_string()
                } else {
                    format!("{}_{}", graph.name(t), c)
                }
            }
            Some(r) => {
                let base = super::alias::role_alias(graph, t, r);
                let mut cand = base.clone();
                let mut k = 2;
                while used.contains(&cand.to_lowercase()) || graph.table_id(&cand).is_some_and(|x| x != t) {
                    cand = format!("{base}_{k}");
                    k += 1;
                }
                cand
            }
        };
        used.insert(alias.to_lowercase());
        jt.instances.push(Instance { table: t, role, copy, alias });
        jt.instances.len() - 1
    };
    // A subtype instance (`ROOT@CHILD`) steps like its table's plain
    // instance; only other role instances follow their relationship.
    let step_role = |(t, r, _): super::WalkNode| r.filter(|&r| graph.subtype_child(t, r).is_none());
    let role_rels: BTreeSet<RelId> = walk.iter().filter_map(|&v| step_role(v)).collect();
    let plain_forbidden: BTreeSet<RelId> = forbidden.union(&role_rels).copied().collect();
    // (instance, relationship, other instance's node) -> that instance.
    let mut edge: HashMap<(usize, RelId, super::WalkNode), usize> = HashMap::new();
    let mut cur = new_inst(&mut jt, start);
    let mut cur_node = start;
    for &v in &walk[1..] {
        let u = jt.instances[cur].table;
        let rel = match (step_role(cur_node), step_role(v)) {
            (_, Some(r)) | (Some(r), None) => {
                let (a, b) = graph.endpoints(r);
                if !((a == u && b == v.0) || (a == v.0 && b == u)) || forbidden.contains(&r) {
                    return Err(format!(
                        "step {} -> {} does not follow the role's relationship {}",
                        graph.copy_label(u, cur_node.1, cur_node.2),
                        graph.copy_label(v.0, v.1, v.2),
                        graph.relationship(r).id()
                    ));
                }
                r
            }
            (None, None) => choose_relationship(graph, u, v.0, &plain_forbidden, &mut jt.ambiguities)
                .or_else(|| choose_relationship(graph, u, v.0, forbidden, &mut jt.ambiguities))
                .ok_or_else(|| format!("no allowed relationship between {} and {}", graph.name(u), graph.name(v.0)))?,
        };
        if let Some(&next) = edge.get(&(cur, rel, v)) {
            cur = next;
            cur_node = v;
            continue;
        }
        let next = new_inst(&mut jt, v);
        jt.joins.push(InstJoin { left: cur, right: next, rel, kind: JoinKind::Inner });
        edge.insert((cur, rel, v), next);
        edge.insert((next, rel, cur_node), cur);
        cur = next;
        cur_node = v;
    }
    // Each subtype instance brings its child along (INNER: the rows of
    // that kind).
    let mut subtype_child_inst: HashMap<(usize, TableId), usize> = HashMap::new();
    for i in 0..jt.instances.len() {
        let Instance { table, role, .. } = jt.instances[i].clone();
        if let Some((rel, child)) = role.and_then(|r| Some((r, graph.subtype_child(table, r)?))) {
            let right = new_inst(&mut jt, (child, None, 0));
            jt.joins.push(InstJoin { left: i, right, rel, kind: JoinKind::Inner });
            subtype_child_inst.insert((i, child), right);
        }
    }
    // Branches hang off the first instance of their pattern root; a branch
    // through a subtype instance's child continues from that child.
    let mut branch_inst: HashMap<TableId, usize> = HashMap::new();
    for &t in inner {
        for (parent, child, rel) in graph.branch_to(t) {
            if branch_inst.contains_key(&child) {
                continue;
            }
            if let Some(&c) = subtype_child_inst.iter().find(|((_, c), _)| *c == child).map(|(_, i)| i) {
                branch_inst.insert(child, c);
                continue;
            }
            let left = match branch_inst.get(&parent) {
                Some(&i) => i,
                None => jt
                    .instances
                    .iter()
                    .position(|x| x.table == parent && x.role.is_none())
                    .or_else(|| jt.instances.iter().position(|x| x.table == parent))
                    .ok_or_else(|| format!("pattern root {} is not in the walk", graph.name(parent)))?,
            };
            let cands: Vec<RelId> =
                graph.relationships_between(parent, child).into_iter().filter(|r| !forbidden.contains(r)).collect();
            if cands.len() > 1 {
                let (l, r) = (graph.name(parent).to_string(), graph.name(child).to_string());
                if !jt.ambiguities.iter().any(|x| x.left == l && x.right == r) {
                    jt.ambiguities.push(Ambiguity {
                        left: l,
                        right: r,
                        candidates: cands.iter().map(|&c| graph.relationship(c).id()).collect(),
                        chosen: graph.relationship(rel).id(),
                        reason: "the pattern tree's parent–child relationship (first in dbModel order)".into(),
                    });
                }
            }
            let right = new_inst(&mut jt, (child, None, 0));
            jt.joins.push(InstJoin { left, right, rel, kind: JoinKind::Left });
            branch_inst.insert(child, right);
        }
    }
    Ok(jt)
}

/// Join each table that hangs off an m:m junction of the walk (C3 case b:
/// `(table, relationship)`) to the junction's first plain instance, INNER.
pub fn attach_junction_children(
    graph: &SchemaGraph,
    jt: &mut JoinTree,
    children: &[(TableId, RelId)],
) -> Result<(), String> {
    for &(c, rel) in children {
        let k = graph.anchor(c, rel);
        let left = jt
            .instances
            .iter()
            .position(|x| x.table == k && x.role.is_none())
            .or_else(|| jt.instances.iter().position(|x| x.table == k))
            .ok_or_else(|| format!("junction {} of {} is not in the walk", graph.name(k), graph.name(c)))?;
        let mut alias = graph.name(c).to_string();
        let mut n = 2;
        while jt.instances.iter().any(|i| i.alias.eq_ignore_ascii_case(&alias)) {
            alias = format!("{}_{n}", graph.name(c));
            n += 1;
        }
        jt.instances.push(Instance { table: c, role: None, copy: 0, alias });
        jt.joins.push(InstJoin { left, right: jt.instances.len() - 1, rel, kind: JoinKind::Inner });
    }
    Ok(())
}

/// Join pattern branch `t` (its first plain instance) by INNER JOIN, and
/// every LEFT-joined branch on the way to it from the walk: the view then
/// holds only the rows that have a `t` (`--inner-branches`). A table the
/// view already INNER-joins is left as it is; `false` when the view has no
/// plain instance of `t`.
pub fn inner_branch(jt: &mut JoinTree, t: TableId) -> bool {
    let Some(mut i) = jt.instances.iter().position(|x| x.table == t && x.role.is_none()) else {
        return false;
    };
    while let Some(j) = jt.joins.iter_mut().find(|j| j.right == i && j.kind == JoinKind::Left) {
        j.kind = JoinKind::Inner;
        i = j.left;
    }
    true
}

/// Start the view from instance `root` and reach every other instance by
/// LEFT JOIN along the same join tree, so every row of `root`'s table is
/// kept (with NULLs where a table has no matching row). Instances are
/// renumbered in the new join order (breadth first from `root`).
pub fn reroot(jt: &mut JoinTree, root: usize) {
    let n = jt.instances.len();
    if root >= n {
        return;
    }
    let mut order = vec![root];
    let mut seen = vec![false; n];
    seen[root] = true;
    let mut joins: Vec<(usize, usize, RelId)> = Vec::new();
    let mut k = 0;
    while k < order.len() {
        let u = order[k];
        for j in &jt.joins {
            let v = if j.left == u {
                j.right
            } else if j.right == u {
                j.left
            } else {
                continue;
            };
            if !seen[v] {
                seen[v] = true;
                order.push(v);
                joins.push((u, v, j.rel));
            }
        }
        k += 1;
    }
    let mut new_index = vec![usize::MAX; n];
    for (i, &old) in order.iter().enumerate() {
        new_index[old] = i;
    }
    jt.instances = order.iter().map(|&i| jt.instances[i].clone()).collect();
    jt.joins = joins
        .into_iter()
        .map(|(l, r, rel)| InstJoin { left: new_index[l], right: new_index[r], rel, kind: JoinKind::Left })
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Dialect, RoleInstance};

    /// EMPLOYEE with a self-relationship to its manager.
    fn staff() -> SchemaGraph {
        let m = crate::model::parse(
            &serde_json::json!({
                "name": "staff",
                "tables": [{"name": "EMPLOYEE", "primary_key": ["id"], "columns": [{"name": "id"}, {"name": "manager_id"}]}],
                "relationships": [{"from": "EMPLOYEE", "to": "EMPLOYEE", "cardinality": "M:1", "on": [["manager_id", "id"]], "role": "manager"}]
            })
            .to_string(),
            None,
        )
        .unwrap();
        SchemaGraph::new(m).unwrap()
    }

    #[test]
    fn self_relationship_is_oriented_by_the_role_whichever_end_comes_first() {
        let g = staff();
        let relevant: BTreeSet<TableId> = [0].into();
        let roles = [RoleInstance { table: 0, rel: 0, copy: 0 }];
        let spec = crate::view::ViewSpec {
            junction_children: &[],
            relevant: &relevant,
            roles: &roles,
            inner: &[],
            attributes: &[],
            forbidden_rels: &BTreeSet::new(),
            dialect: Dialect::Sqlite,
            name: "v",
            keep: None,
            inner_branches: &[],
            filters: &[],
            all_columns: false,
            merge_equal: false,
        };
        for (walk, cond) in [
            (vec![(0, None, 0), (0, Some(0), 0)], "EMPLOYEE.manager_id = EMPLOYEE_manager.id"),
            (vec![(0, Some(0), 0), (0, None, 0)], "EMPLOYEE_manager.id = EMPLOYEE.manager_id"),
        ] {
            let jt = build(&g, &walk, &[], &BTreeSet::new()).unwrap();
            assert_eq!(jt.joins.len(), 1);
            assert_eq!(left_is_from(&g, &jt, &jt.joins[0]), walk[0].1.is_none());
            let v = crate::view::build_instances(&g, &walk, &spec).unwrap();
            assert!(v.sql.contains(cond), "{}", v.sql);
            // The manager side is the "one" side: the employee's rows stay once.
            let link = &v.grain.links[0];
            let expect = if walk[0].1.is_none() {
                crate::types::Cardinality::ManyToOne
            } else {
                crate::types::Cardinality::OneToMany
            };
            assert_eq!(link.cardinality, expect, "{link:?}");
        }
    }
}
