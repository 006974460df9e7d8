//! `lucy model suggest`: propose patterns from keys alone.
//!
//! The Lucy paper leaves pattern discovery to the user (§3.1, "in the
//! future ... partially automated"). These heuristics read only the
//! relationships, reading each as child (the side holding the foreign key:
//! `from` for `M:1` and `1:1`, `to` for `1:M`) → parent:
//!
//! - **m:m**: a table with exactly two foreign keys, referenced by no table,
//!   whose primary key is those foreign-key columns (with at most 3 other
//!   columns) or a single surrogate column (with at most 2 other columns);
//! - **lookup**: a table that references no table, is referenced by at
//!   least two other tables and is not a side of an m:m;
//! - **star / snowflake**: a *dependent* table has exactly one foreign key,
//!   and every table referencing it is itself one of its dependents; a
//!   non-dependent table with dependents roots a 1:M tree of them. Trees
//!   deeper than two levels are split at the first level (a first-level
//!   table with its own dependents roots its own tree and stays core),
//!   because a deep first level usually holds facts in their own right
//!   (the paper's PAYMENT under CLIENT). Depth 1 is proposed as a star,
//!   deeper as a snowflake (the solver treats both alike).
//!
//! Tables that already hold a pattern role are left alone. Proposals are
//! RFC 6902 `add` operations on `/patterns/-`, each with a `reason`.
//!
//! **Roles** ([`suggest_roles`]): a relationship whose table plays several
//! roles (a self-relationship, or several relationships between the same two
//! tables) and that names none gets one from its foreign-key columns without
//! `id` (`ship_address_id` → `ship_address`, `manager_id` → `manager`), as an
//! `add` on `/relationships/<i>/role`.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use crate::graph::{RelId, SchemaGraph, TableId};
use crate::types::{Cardinality, DbModel, Pattern, PatternNode};

/// One proposed pattern, as a JSON-patch operation with a reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Proposal {
    /// Always `"add"`.
    pub op: String,
    /// Always `"/patterns/-"` (append).
    pub path: String,
    pub value: Pattern,
    /// Why the keys suggest this pattern.
    pub reason: String,
}

/// Propose patterns for tables of `g` that hold no pattern role yet.
pub fn suggest(g: &SchemaGraph) -> Vec<Proposal> {
    let k = Keys::new(g);
    let mut out = Vec::new();
    let (junctions, sides) = k.junctions(&mut out);
    let lookups = k.lookups(&junctions, &sides, &mut out);
    k.trees(&junctions, &lookups, &mut out);
    out
}

/// Apply proposals to a model (append their patterns).
pub fn apply(model: &mut DbModel, proposals: &[Proposal]) {
    model.patterns.extend(proposals.iter().map(|p| p.value.clone()));
}

/// One proposed role name for a relationship, as a JSON-patch operation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoleProposal {
    /// Always `"add"`.
    pub op: String,
    /// `/relationships/<i>/role`.
    pub path: String,
    /// The role name.
    pub value: String,
    /// Why the relationship needs a role.
    pub reason: String,
    /// The relationship (not serialized).
    #[serde(skip)]
    pub rel: RelId,
}

/// Propose role names for the relationships of tables that play several
/// roles and name none (see the module docs). Only relationships read from
/// the foreign key (`M:1`, `1:1`) are named, since a role names the `to`
/// table; names already used at either table are skipped.
pub fn suggest_roles(g: &SchemaGraph) -> Vec<RoleProposal> {
    let m = g.model();
    let mut taken: HashSet<(TableId, String)> = HashSet::new();
    for (r, rel) in m.relationships.iter().enumerate() {
        if let Some(role) = &rel.role {
            let (a, b) = g.endpoints(r);
            taken.insert((a, role.to_lowercase()));
            taken.insert((b, role.to_lowercase()));
        }
    }
    let mut out = Vec::new();
    for (r, rel) in m.relationships.iter().enumerate() {
        if rel.role.is_some() || rel.cardinality == Cardinality::OneToMany {
            continue;
        }
        let (a, b) = g.endpoints(r);
        let between = g.relationships_between(a, b).len();
        if a != b && between < 2 {
            continue;
        }
        let role = rel
            .on
            .iter()
            .map(|p| {
                let c = p[0].as_str();
                let lower = c.to_lowercase();
                let cut = if lower.ends_with("_id") {
                    c.len() - 3
                } else if lower.ends_with("id") && c.len() > 2 {
                    c.len() - 2
                } else {
                    c.len()
                };
                c[..cut].trim_end_matches('_').to_string()
            })
            .filter(|c| !c.is_empty())
            .collect::<Vec<_>>()
            .join("_");
        if !crate::model::validate::valid_role_name(&role)
            || taken.contains(&(a, role.to_lowercase()))
            || taken.contains(&(b, role.to_lowercase()))
        {
            continue;
        }
        taken.insert((a, role.to_lowercase()));
        taken.insert((b, role.to_lowercase()));
        let why = if a == b {
            format!("{} references itself: a self join needs a second instance ({}@{role})", g.name(a), g.name(b))
        } else {
            format!(
                "{} reaches {} through {between} relationships: name each role ({}@{role})",
                g.name(a),
                g.name(b),
                g.name(b)
            )
        };
        out.push(RoleProposal {
            op: "add".into(),
            path: format!("/relationships/{r}/role"),
            value: role,
            reason: why,
            rel: r,
        });
    }
    out
}

/// Apply role proposals to a model.
pub fn apply_roles(model: &mut DbModel, proposals: &[RoleProposal]) {
    for p in proposals {
        if let Some(rel) = model.relationships.get_mut(p.rel) {
            rel.role = Some(p.value.clone());
        }
    }
}

/// Foreign-key structure of the graph.
struct Keys<'a> {
    g: &'a SchemaGraph,
    /// Per table: relationships where it is the child (holds the FK).
    out: Vec<Vec<(RelId, TableId)>>,
    /// Per table: relationships where it is the parent (is referenced).
    inc: Vec<Vec<(RelId, TableId)>>,
    /// Tables that already hold a pattern role (sides excluded).
    taken: HashSet<TableId>,
}

impl<'a> Keys<'a> {
    fn new(g: &'a SchemaGraph) -> Self {
        let n = g.len();
        let (mut out, mut inc) = (vec![Vec::new(); n], vec![Vec::new(); n]);
        for r in 0..g.model().relationships.len() {
            let (from, to) = g.endpoints(r);
            let (child, parent) = match g.relationship(r).cardinality {
                Cardinality::ManyToOne | Cardinality::OneToOne => (from, to),
                Cardinality::OneToMany => (to, from),
            };
            out[child].push((r, parent));
            inc[parent].push((r, child));
        }
        let mut taken: HashSet<TableId> = g.lookup_tables().iter().copied().collect();
        for j in g.junctions() {
            taken.insert(j.junction);
        }
        for t in 0..n {
            if !g.is_core(t) || g.pattern_root_kind(t).is_some() {
                taken.insert(t);
            }
        }
        Keys { g, out, inc, taken }
    }

    fn name(&self, t: TableId) -> String {
        self.g.name(t).to_string()
    }

    /// Proposed junctions, and the sides of every m:m (declared or proposed).
    fn junctions(&self, out: &mut Vec<Proposal>) -> (HashSet<TableId>, HashSet<TableId>) {
        let mut found = HashSet::new();
        let mut sides: HashSet<TableId> = self.g.junctions().iter().flat_map(|j| j.sides).collect();
        for j in 0..self.g.len() {
            let [(r0, a), (r1, b)] = self.out[j][..] else { continue };
            if self.taken.contains(&j) || !self.inc[j].is_empty() || a == j || b == j {
                continue;
            }
            let t = self.g.table(j);
            let fk_cols: HashSet<String> = [r0, r1]
                .iter()
                .flat_map(|&r| {
                    let rel = self.g.relationship(r);
                    let (from, _) = self.g.endpoints(r);
                    let side = usize::from(from != j);
                    rel.on.iter().map(move |p| p[side].to_lowercase())
                })
                .collect();
            let pk: HashSet<String> = t.primary_key.iter().map(|c| c.to_lowercase()).collect();
            let others = t
                .columns
                .iter()
                .filter(|c| !pk.contains(&c.name.to_lowercase()) && !fk_cols.contains(&c.name.to_lowercase()))
                .count();
            let key_reason = if !pk.is_empty() && pk == fk_cols && others <= 3 {
                "its primary key is made of its two foreign keys".to_string()
            } else if pk.len() == 1 && pk.is_disjoint(&fk_cols) && others <= 2 {
                format!("it has a surrogate primary key ({}) besides its two foreign keys", t.primary_key.join(", "))
            } else {
                continue;
            };
            found.insert(j);
            sides.extend([a, b]);
            let (na, nb) = (self.name(a), self.name(b));
            out.push(Proposal {
                op: "add".into(),
                path: "/patterns/-".into(),
                value: Pattern::ManyToMany {
                    junction: self.name(j),
                    sides: [na.clone(), nb.clone()],
                    relationships: Some([self.g.relationship(r0).id(), self.g.relationship(r1).id()]),
                    description: Some(format!("{na} and {nb} relate many-to-many through {}.", t.name)),
                },
                reason: format!(
                    "{} has exactly two foreign keys (to {na} and {nb}), no table references it, {key_reason}, and it has {others} other column(s)",
                    t.name
                ),
            });
        }
        (found, sides)
    }

    /// Lookup candidates. A side of an m:m is an entity in its own right,
    /// not reference data, so it is never proposed.
    fn lookups(
        &self,
        junctions: &HashSet<TableId>,
        sides: &HashSet<TableId>,
        out: &mut Vec<Proposal>,
    ) -> HashSet<TableId> {
        let mut found = HashSet::new();
        for t in 0..self.g.len() {
            if self.taken.contains(&t)
                || junctions.contains(&t)
                || sides.contains(&t)
                || self.out[t].iter().any(|&(_, p)| p != t)
            {
                continue;
            }
            let mut users: Vec<TableId> = self.inc[t].iter().map(|&(_, c)| c).filter(|&c| c != t).collect();
            users.sort_unstable();
            users.dedup();
            if users.len() < 2 {
                continue;
            }
            found.insert(t);
            let names: Vec<String> = users.iter().map(|&u| self.name(u)).collect();
            out.push(Proposal {
                op: "add".into(),
                path: "/patterns/-".into(),
                value: Pattern::Lookup {
                    tables: vec![self.name(t)],
                    description: Some(format!("{} is shared reference data.", self.name(t))),
                },
                reason: format!(
                    "{} references no table and is referenced by {} tables ({}): a path should not pass through it from one of them to another",
                    self.name(t),
                    users.len(),
                    names.join(", ")
                ),
            });
        }
        found
    }

    fn trees(&self, junctions: &HashSet<TableId>, lookups: &HashSet<TableId>, out: &mut Vec<Proposal>) {
        let blocked = |t: TableId| self.taken.contains(&t) || junctions.contains(&t) || lookups.contains(&t);
        // parent of each dependent candidate
        let mut parent: BTreeMap<TableId, TableId> = BTreeMap::new();
        for t in 0..self.g.len() {
            if let [(_, p)] = self.out[t][..] {
                if p != t && !blocked(t) && !blocked(p) {
                    parent.insert(t, p);
                }
            }
        }
        // Drop candidates referenced by anything but their own dependents.
        loop {
            let drop: Vec<TableId> = parent
                .keys()
                .copied()
                .filter(|&t| self.inc[t].iter().any(|&(_, c)| parent.get(&c) != Some(&t)))
                .collect();
            if drop.is_empty() {
                break;
            }
            for t in drop {
                parent.remove(&t);
            }
        }
        let mut kids: BTreeMap<TableId, Vec<TableId>> = BTreeMap::new();
        for (&c, &p) in &parent {
            kids.entry(p).or_default().push(c);
        }
        for (&root, _) in kids.iter().filter(|(r, _)| !parent.contains_key(*r)) {
            self.emit(root, &kids, out);
        }
    }

    /// Propose the tree under `root`, split at the first level when deeper than two.
    fn emit(&self, root: TableId, kids: &BTreeMap<TableId, Vec<TableId>>, out: &mut Vec<Proposal>) {
        let children = kids.get(&root).cloned().unwrap_or_default();
        if depth(root, kids, 0) <= 2 {
            self.propose_tree(root, &children, kids, out);
            return;
        }
        let (deep, leaves): (Vec<TableId>, Vec<TableId>) = children.into_iter().partition(|c| kids.contains_key(c));
        if !leaves.is_empty() {
            self.propose_tree(root, &leaves, kids, out);
        }
        for c in deep {
            self.emit(c, kids, out);
        }
    }

    fn propose_tree(
        &self,
        root: TableId,
        children: &[TableId],
        kids: &BTreeMap<TableId, Vec<TableId>>,
        out: &mut Vec<Proposal>,
    ) {
        let nodes: Vec<PatternNode> = children.iter().map(|&c| self.node(c, kids, 0)).collect();
        let d = children.iter().map(|&c| depth(c, kids, 0) + 1).max().unwrap_or(0);
        let mut inner = Vec::new();
        collect(children, kids, &mut inner, 0);
        let inner: Vec<String> = inner.iter().map(|&t| self.name(t)).collect();
        let r = self.name(root);
        let description = Some(format!("{r} and the detail tables that hang off it."));
        let value = if d <= 1 {
            Pattern::Star { root: r.clone(), children: nodes, description, exclusive: false }
        } else {
            Pattern::Snowflake { root: r.clone(), children: nodes, description, exclusive: false }
        };
        out.push(Proposal {
            op: "add".into(),
            path: "/patterns/-".into(),
            value,
            reason: format!(
                "{} hang(s) off {r} in a 1:M tree of depth {d}: each has a single foreign key to its parent and is referenced only by its own children",
                inner.join(", ")
            ),
        });
    }

    fn node(&self, t: TableId, kids: &BTreeMap<TableId, Vec<TableId>>, level: usize) -> PatternNode {
        let children = match kids.get(&t) {
            Some(cs) if level < MAX_DEPTH => cs.iter().map(|&c| self.node(c, kids, level + 1)).collect(),
            _ => Vec::new(),
        };
        PatternNode::with_children(self.name(t), children)
    }
}

/// Guards recursion on pathological inputs (the dependents relation is a
/// forest, so this is never reached on real schemas).
const MAX_DEPTH: usize = 64;

fn depth(t: TableId, kids: &BTreeMap<TableId, Vec<TableId>>, level: usize) -> usize {
    match kids.get(&t) {
        Some(cs) if level < MAX_DEPTH => 1 + cs.iter().map(|&c| depth(c, kids, level + 1)).max().unwrap_or(0),
        _ => 0,
    }
}

fn collect(ts: &[TableId], kids: &BTreeMap<TableId, Vec<TableId>>, acc: &mut Vec<TableId>, level: usize) {
    for &t in ts {
        acc.push(t);
        if let (Some(cs), true) = (kids.get(&t), level < MAX_DEPTH) {
            collect(cs, kids, acc, level + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ddo_without_patterns() -> DbModel {
        let text = include_str!("../../dbmodels/ddo.json");
        let mut m = crate::model::parse(text, None).expect("ddo.json parses");
        m.patterns.clear();
        m
    }

    #[test]
    fn ddo_proposals_match_the_paper() {
        let g = SchemaGraph::new(ddo_without_patterns()).expect("valid");
        let p = suggest(&g);
        let summary: Vec<String> = p
            .iter()
            .map(|p| match &p.value {
                Pattern::ManyToMany { junction, sides, .. } => format!("m:m {junction} {} {}", sides[0], sides[1]),
                Pattern::Lookup { tables, .. } => format!("lookup {}", tables.join(",")),
                Pattern::Star { root, .. } => format!("star {root}"),
                Pattern::Snowflake { root, .. } => format!("snowflake {root}"),
            })
            .collect();
        assert_eq!(
            summary,
            [
                "m:m RSPOOL2CLIENT RESOURCEPOOL CLIENT",
                "lookup LOCATION",
                // CLIENT's tree is three levels deep: split into PAYMENT's and RETENTION's.
                "snowflake PAYMENT",
                "star RETENTION",
                "snowflake RESOURCEPOOL"
            ]
        );
    }

    #[test]
    fn applied_proposals_validate_and_give_the_paper_core_tables() {
        let mut m = ddo_without_patterns();
        let p = suggest(&SchemaGraph::new(m.clone()).expect("valid"));
        apply(&mut m, &p);
        let g = SchemaGraph::new(m).expect("proposals validate");
        let core: Vec<&str> = g.core_tables().into_iter().map(|t| g.name(t)).collect();
        assert_eq!(
            core,
            ["LOCATION", "CLIENT", "DATACENTER", "COMPUTE", "RESOURCEPOOL", "RSPOOL2CLIENT", "PAYMENT", "RETENTION"]
        );
    }

    #[test]
    fn roles_are_proposed_for_parallel_and_self_relationships_only() {
        let m = crate::model::parse(
            &serde_json::json!({
                "name": "shop",
                "tables": [
                    {"name": "ORDERS", "columns": [{"name": "id"}, {"name": "ship_address_id"}, {"name": "bill_address_id"}, {"name": "store_id"}]},
                    {"name": "ADDRESS", "columns": [{"name": "id"}]},
                    {"name": "STORE", "columns": [{"name": "id"}]},
                    {"name": "EMPLOYEE", "columns": [{"name": "id"}, {"name": "ManagerID"}]}
                ],
                "relationships": [
                    {"from": "ORDERS", "to": "ADDRESS", "cardinality": "M:1", "on": [["ship_address_id", "id"]]},
                    {"from": "ORDERS", "to": "ADDRESS", "cardinality": "M:1", "on": [["bill_address_id", "id"]], "role": "billing"},
                    {"from": "ORDERS", "to": "STORE", "cardinality": "M:1", "on": [["store_id", "id"]]},
                    {"from": "EMPLOYEE", "to": "EMPLOYEE", "cardinality": "M:1", "on": [["ManagerID", "id"]]}
                ]
            })
            .to_string(),
            None,
        )
        .unwrap();
        let g = SchemaGraph::new(m.clone()).unwrap();
        let p = suggest_roles(&g);
        let got: Vec<(&str, &str)> = p.iter().map(|x| (x.path.as_str(), x.value.as_str())).collect();
        assert_eq!(got, [("/relationships/0/role", "ship_address"), ("/relationships/3/role", "Manager")]);
        let mut m = m;
        apply_roles(&mut m, &p);
        let g = SchemaGraph::new(m).expect("proposals validate");
        assert_eq!(g.instance("ADDRESS@ship_address").unwrap(), (1, Some(0)));
        assert!(suggest_roles(&g).is_empty(), "nothing left to name");
        // DDO plays no table in several roles by relationships alone.
        let ddo = crate::model::parse(include_str!("../../dbmodels/ddo.json"), None).unwrap();
        assert!(suggest_roles(&SchemaGraph::new(ddo).unwrap()).is_empty());
    }

    #[test]
    fn nothing_new_on_the_curated_model() {
        let m = crate::model::parse(include_str!("../../dbmodels/ddo.json"), None).expect("parses");
        assert!(suggest(&SchemaGraph::new(m).expect("valid")).is_empty());
    }
}
