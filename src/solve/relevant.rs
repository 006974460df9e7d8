//! From a [`Relevance`] (or a `ViewRequest` of names, resolved here) and the
//! model's constraints block to the core walk
//! problem (the paper's decomposition): relevant core tables, pattern
//! branches for relevant inner tables, forbidden tables and relationships
//! removed.

use std::collections::BTreeSet;

use crate::error::{Error, Result};
use crate::graph::{ColumnId, RelId, SchemaGraph, TableId};
use crate::types::{Cardinality, Relevance, RoleInstance, ViewRequest};

use super::problem::{Bridge, CoreProblem, MmJunction};

/// Everything the solver and the view builder need about one request.
#[derive(Debug, Clone)]
pub struct Scope {
    /// Relevant tables as requested or pulled in (core and inner), model order.
    pub relevant: BTreeSet<TableId>,
    /// Relevant core tables (the walk must visit them).
    pub relevant_core: BTreeSet<TableId>,
    /// Relevant inner tables, reached by LEFT JOIN branches from their root.
    pub relevant_inner: Vec<TableId>,
    /// Relevant role instances, in request order: each is its own node of
    /// the walk, joined only to its anchor through its relationship.
    pub roles: Vec<RoleInstance>,
    /// Relevant tables that hang off an m:m junction (C3 case b,
    /// [`SchemaGraph::junction_child_of`]), with their relationship: the
    /// walk visits the junction in their place and the view joins them to it.
    pub junction_children: Vec<(TableId, RelId)>,
    /// Requested attributes, in request order.
    pub attributes: Vec<ColumnId>,
    /// Forbidden tables (constraints.forbid_tables).
    pub forbidden_tables: BTreeSet<TableId>,
    /// Forbidden relationships (constraints.forbid_relationships), and the
    /// shortcuts of [`Scope::bypassed`].
    pub forbidden_rels: BTreeSet<RelId>,
    /// Shortcut relationships (`Relationship::via`) left out because the
    /// table they short-cut is relevant: the view joins through it.
    pub bypassed: Vec<RelId>,
    /// Problems found while resolving (a relevant table forbidden, a branch
    /// through a forbidden relationship): the request is infeasible.
    pub blocked: Vec<String>,
}

/// A request's names resolved to ids (every unknown name reported at once,
/// each with the closest names).
pub fn resolve(graph: &SchemaGraph, req: &ViewRequest) -> Result<Relevance> {
    let mut unknown = Vec::new();
    let mut rel = Relevance::default();
    for t in &req.tables {
        match graph.instance_copy(t) {
            Ok((id, None, _)) => rel.add_table(id),
            Ok((table, Some(r), copy)) => rel.add_role(RoleInstance { table, rel: r, copy }),
            Err(e) => unknown.push(e.to_string()),
        }
    }
    for a in &req.attributes {
        match graph.require_table(a.table.trim()).and_then(|t| graph.require_column(t, a.column.trim())) {
            Ok(c) => rel.add_column(c),
            Err(e) => unknown.push(e.to_string()),
        }
    }
    if !unknown.is_empty() {
        return Err(Error::Input(unknown.join("; ")));
    }
    Ok(rel)
}

/// [`scope_of`] a request given by names.
pub fn scope(graph: &SchemaGraph, req: &ViewRequest) -> Result<Scope> {
    scope_of(graph, &resolve(graph, req)?)
}

/// Pull in pattern roots, attribute tables and required tables; collect
/// forbids.
pub fn scope_of(graph: &SchemaGraph, rel: &Relevance) -> Result<Scope> {
    let mut relevant: BTreeSet<TableId> = rel.all_tables().into_iter().collect();
    let mut attributes: Vec<ColumnId> = Vec::new();
    for &c in &rel.columns {
        if !attributes.contains(&c) {
            attributes.push(c);
        }
    }
    // The constraints block, resolved once by the graph.
    let forbidden_tables: BTreeSet<TableId> = graph.forbidden_tables().into_iter().collect();
    relevant.extend(graph.required_tables());
    let mut forbidden_rels: BTreeSet<RelId> = graph.forbidden_relationships().into_iter().collect();
    if relevant.is_empty() && rel.roles.is_empty() {
        return Err(Error::Input("no tables requested: give at least one table (--tables A,B)".into()));
    }
    let mut blocked = Vec::new();
    let mut relevant_core = BTreeSet::new();
    let mut roles: Vec<RoleInstance> = Vec::new();
    for &r in &rel.roles {
        if roles.contains(&r) {
            continue;
        }
        let label = graph.copy_label(r.table, Some(r.rel), r.copy);
        if let Some(child) = graph.subtype_child(r.table, r.rel) {
            // A subtype instance joins the walk as its table does, and its
            // child joins it: both must be allowed.
            for (t, what) in [(r.table, "it"), (child, "its kind")] {
                if forbidden_tables.contains(&t) {
                    blocked.push(format!(
                        "{label} cannot attach: {what} ({}) is forbidden by constraints.forbid_tables",
                        graph.name(t)
                    ));
                }
            }
            if forbidden_rels.contains(&r.rel) {
                blocked.push(format!(
                    "{label} cannot attach: its relationship {} is forbidden by constraints.forbid_relationships",
                    graph.relationship(r.rel).id()
                ));
            }
            roles.push(r);
            continue;
        }
        let (a, b) = graph.endpoints(r.rel);
        if a != r.table && b != r.table {
            return Err(Error::Input(format!(
                "{label}: relationship {} does not join {}",
                graph.relationship(r.rel).id(),
                graph.name(r.table)
            )));
        }
        let anchor = graph.anchor(r.table, r.rel);
        for t in [r.table, anchor] {
            if let Some(pos) = graph.inner_position(t) {
                return Err(Error::Input(format!(
                    "{label}: a role instance joins the walk of core tables, but {} is an inner table of the pattern rooted at {}; request {} itself (it joins along its pattern branch)",
                    graph.name(t),
                    graph.name(pos.root),
                    graph.name(r.table)
                )));
            }
        }
        if forbidden_tables.contains(&r.table) {
            blocked.push(format!(
                "{label} cannot attach: {} is forbidden by constraints.forbid_tables",
                graph.name(r.table)
            ));
        } else if forbidden_tables.contains(&anchor) {
            blocked.push(format!(
                "{label} cannot attach: it joins only through {}, which is forbidden by constraints.forbid_tables",
                graph.name(anchor)
            ));
        }
        if forbidden_rels.contains(&r.rel) {
            blocked.push(format!(
                "{label} cannot attach: its relationship {} is forbidden by constraints.forbid_relationships",
                graph.relationship(r.rel).id()
            ));
        }
        // The instance joins the view through its anchor, so the anchor's
        // plain instance is in every walk (relevant for C2 and C5).
        if graph.is_core(anchor) {
            relevant_core.insert(anchor);
        }
        roles.push(r);
    }
    let mut relevant_inner = Vec::new();
    for &t in &relevant {
        if forbidden_tables.contains(&t) {
            blocked.push(format!("{} is requested but forbidden by constraints.forbid_tables", graph.name(t)));
        }
        if graph.is_core(t) {
            relevant_core.insert(t);
        } else {
            relevant_inner.push(t);
            // The branch hangs off the root, unless a subtype instance of
            // the root through the branch's first step brings it along.
            let by_subtype = graph.branch_to(t).first().is_some_and(|&(root, _, rel)| {
                roles.iter().any(|r| r.table == root && r.rel == rel && graph.subtype_child(root, rel).is_some())
            });
            if let Some(pos) = graph.inner_position(t).filter(|_| !by_subtype) {
                relevant_core.insert(pos.root);
            }
            for (parent, child, rel) in graph.branch_to(t) {
                if forbidden_tables.contains(&parent) && !relevant.contains(&parent) {
                    blocked.push(format!(
                        "{} can only be reached through {} (its pattern branch), which is forbidden",
                        graph.name(t),
                        graph.name(parent)
                    ));
                }
                if forbidden_rels.contains(&rel) {
                    blocked.push(format!(
                        "{} can only be reached from {} through relationship {}, which is forbidden",
                        graph.name(child),
                        graph.name(parent),
                        graph.relationship(rel).id()
                    ));
                }
            }
        }
    }
    // A shortcut (`Relationship::via`) agrees with the path through its
    // table; while that table is relevant the view joins through it (the
    // question reads it anyway), so the shortcut is left out. A role
    // instance or a pattern branch that joins through the shortcut keeps it.
    let mut bypassed = Vec::new();
    for &(r, v) in graph.shortcuts() {
        let in_role = roles.iter().any(|x| x.rel == r);
        let in_branch = relevant_inner.iter().any(|&t| graph.branch_to(t).iter().any(|step| step.2 == r));
        if relevant.contains(&v) && !forbidden_tables.contains(&v) && !in_role && !in_branch && forbidden_rels.insert(r)
        {
            bypassed.push(r);
        }
    }
    // C3 case b: a relevant table that hangs off a junction (card off disp)
    // could join a walk only as its end next to the junction, which C3 lets
    // no walk pass from a side; the walk visits the junction instead and the
    // view joins the table to it. (Alone, or with only its junction, it stays.)
    let mut junction_children = Vec::new();
    let requested_core = relevant_core.clone();
    for &c in &requested_core {
        let Some((k, rel)) = graph.junction_child_of(c) else { continue };
        let anchors = roles.iter().any(|r| r.table == c || graph.anchor(r.table, r.rel) == c);
        let others = requested_core.iter().any(|&t| t != c && t != k) || !roles.is_empty();
        let allowed =
            !forbidden_tables.contains(&k) && !forbidden_tables.contains(&c) && !forbidden_rels.contains(&rel);
        if others && allowed && !anchors {
            relevant_core.remove(&c);
            relevant_core.insert(k);
            junction_children.push((c, rel));
        }
    }
    blocked.dedup();
    Ok(Scope {
        relevant,
        relevant_core,
        relevant_inner,
        roles,
        junction_children,
        attributes,
        forbidden_tables,
        forbidden_rels,
        bypassed,
        blocked,
    })
}

/// Which user forbids to apply when building the core problem.
#[derive(Debug, Clone, Copy)]
pub struct Relax {
    pub c3: bool,
    pub c4: bool,
    pub forbids: bool,
}

impl Relax {
    pub const NONE: Relax = Relax { c3: true, c4: true, forbids: true };
}

/// The core walk problem and the map from its local nodes to table
/// instances: the core tables first (in model order), then one node per
/// role instance of the scope (in its order).
#[derive(Debug, Clone)]
pub struct CoreMap {
    pub problem: CoreProblem,
    /// The table of each local node.
    pub tables: Vec<TableId>,
    /// The relationship a role node joins through (`None` for a table's
    /// plain node).
    pub roles: Vec<Option<RelId>>,
    /// The copy of each role node (`RoleInstance::copy`; 0 for plain nodes).
    pub copies: Vec<u8>,
}

impl CoreMap {
    /// The local node of table `t`'s plain instance.
    pub fn local(&self, t: TableId) -> Option<usize> {
        self.tables.iter().position(|&x| x == t)
    }
}

/// Build the core problem. `keep` says which constraint groups apply (all of
/// them in production; explanations switch groups off).
///
/// Instance expansion: each role instance of the scope is one more node,
/// relevant, adjacent only to its anchor's plain node (so a
/// self-relationship becomes an ordinary step between `EMPLOYEE` and
/// `EMPLOYEE@manager`); a subtype instance (`ROOT@CHILD`, see
/// [`SchemaGraph::subtype_child`]) is adjacent to every node its table's
/// plain node is adjacent to. Without role instances the problem is
/// exactly the one over core tables.
pub fn core_problem(graph: &SchemaGraph, scope: &Scope, keep: Relax) -> CoreMap {
    // A forbidden table stays a node (so an m:m pattern through it still
    // forbids walks with both its sides) but loses every edge.
    let tables: Vec<TableId> = graph.core_tables();
    // Table id → local index, built once: a scan per lookup made this
    // quadratic (0.85 s on 10,000 tables, before any deadline is checked).
    let mut local_of: Vec<Option<usize>> = vec![None; graph.len()];
    for (l, &t) in tables.iter().enumerate() {
        local_of[t] = Some(l);
    }
    let local = |t: TableId| local_of.get(t).copied().flatten();
    let mut edges = Vec::new();
    for (r, _) in graph.model().relationships.iter().enumerate() {
        if keep.forbids && scope.forbidden_rels.contains(&r) {
            continue;
        }
        let (a, b) = graph.endpoints(r);
        if keep.forbids && (scope.forbidden_tables.contains(&a) || scope.forbidden_tables.contains(&b)) {
            continue;
        }
        if let (Some(la), Some(lb)) = (local(a), local(b)) {
            edges.push((la, lb));
        }
    }
    let base = tables.len();
    let mut tables = tables;
    let mut roles: Vec<Option<RelId>> = vec![None; base];
    let mut copies: Vec<u8> = vec![0; base];
    let plain_edges = edges.len();
    for (k, r) in scope.roles.iter().enumerate() {
        tables.push(r.table);
        roles.push(Some(r.rel));
        copies.push(r.copy);
        if let Some(child) = graph.subtype_child(r.table, r.rel) {
            // A subtype instance: adjacent to whatever its table's plain
            // node is adjacent to.
            let blocked = keep.forbids
                && (scope.forbidden_rels.contains(&r.rel)
                    || scope.forbidden_tables.contains(&r.table)
                    || scope.forbidden_tables.contains(&child));
            if let (false, Some(lt)) = (blocked, local(r.table)) {
                let copies: Vec<usize> = edges[..plain_edges]
                    .iter()
                    .filter_map(|&(a, b)| match (a == lt, b == lt) {
                        (true, false) => Some(b),
                        (false, true) => Some(a),
                        _ => None,
                    })
                    .collect();
                edges.extend(copies.into_iter().map(|o| (o, base + k)));
            }
            continue;
        }
        let anchor = graph.anchor(r.table, r.rel);
        let blocked = keep.forbids
            && (scope.forbidden_rels.contains(&r.rel)
                || scope.forbidden_tables.contains(&r.table)
                || scope.forbidden_tables.contains(&anchor));
        if let (false, Some(la)) = (blocked, local(anchor)) {
            edges.push((la, base + k));
        }
    }
    let mut p = CoreProblem::new(tables.len(), &edges);
    p.names = (0..tables.len()).map(|l| graph.copy_label(tables[l], roles[l], copies[l])).collect();
    for (l, &t) in tables.iter().enumerate() {
        p.relevant[l] = if l < base { scope.relevant_core.contains(&t) } else { true };
        p.lookup[l] = graph.is_lookup(t);
    }
    for j in graph.junctions() {
        if let (Some(k), Some(s0), Some(s1)) = (local(j.junction), local(j.sides[0]), local(j.sides[1])) {
            p.junctions.push(MmJunction { k, sides: [s0, s1] });
        }
    }
    p.bridges = bridges(graph, scope, keep, &p.junctions, local);
    p.c3 = keep.c3;
    p.c4 = keep.c4;
    CoreMap { problem: p, tables, roles, copies }
}

/// The bridges of the m:m patterns' side pairs (C3 case c, docs/generate-view.md):
/// each core table that is not a side of the pair, not a junction of any
/// pattern and not a lookup, and that references both sides through
/// relationships the request allows (it holds their foreign keys: BIRD formula1's
/// `results.raceId → races`, `results.driverId → drivers`). Read off the
/// model's directed relationships here, since [`CoreProblem`] is undirected.
fn bridges(
    graph: &SchemaGraph,
    scope: &Scope,
    keep: Relax,
    junctions: &[MmJunction],
    local: impl Fn(TableId) -> Option<usize>,
) -> Vec<Bridge> {
    // The side pairs in pattern order, each once (in its first pattern's order).
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for j in junctions.iter().filter(|j| j.sides[0] != j.sides[1]) {
        let (a, b) = (j.sides[0], j.sides[1]);
        if !pairs.contains(&(a, b)) && !pairs.contains(&(b, a)) {
            pairs.push((a, b));
        }
    }
    if pairs.is_empty() {
        return Vec::new();
    }
    let junction_tables: BTreeSet<usize> = junctions.iter().map(|j| j.k).collect();
    // Per local table: the local tables it references.
    let mut refs: std::collections::BTreeMap<usize, BTreeSet<usize>> = std::collections::BTreeMap::new();
    for r in 0..graph.model().relationships.len() {
        if keep.forbids && scope.forbidden_rels.contains(&r) {
            continue;
        }
        let (a, b) = graph.endpoints(r);
        if keep.forbids && (scope.forbidden_tables.contains(&a) || scope.forbidden_tables.contains(&b)) {
            continue;
        }
        // The referencing end holds the foreign key: `to` of a 1:M, else `from`.
        let (from, to) = match graph.model().relationships[r].cardinality {
            Cardinality::OneToMany => (b, a),
            Cardinality::ManyToOne | Cardinality::OneToOne => (a, b),
        };
        if graph.is_lookup(from) {
            continue;
        }
        if let (Some(a), Some(b)) = (local(from), local(to)) {
            if a != b && !junction_tables.contains(&a) {
                refs.entry(a).or_default().insert(b);
            }
        }
    }
    let mut out = Vec::new();
    for (&t, to) in &refs {
        for &(a, b) in &pairs {
            if t != a && t != b && to.contains(&a) && to.contains(&b) {
                out.push(Bridge { t, sides: [a, b] });
            }
        }
    }
    out
}
