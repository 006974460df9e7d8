//! What the join-path picture shows, before any geometry: the tables of the
//! view (relevant or bridging), the joins (the solved walk and the LEFT JOIN
//! pattern branches), and the neighbourhood that explains the solver's
//! choice — lookups and junctions it refused to pass through, forbidden
//! tables and relationships, shortcuts it did not need.
//!
//! A [`Scene`] is built from a [`ViewResult`] alone (what a trace holds) or
//! with the [`SchemaGraph`] too, which adds pattern roles and the refused
//! neighbourhood. Two hooks are filled by later analyses: a node's instance
//! `role` and its `multiplied` columns (fan-out).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::graph::SchemaGraph;
use crate::types::trace::MatchTrace;
use crate::types::{JoinKind, SolveStatus, ViewResult};

/// At most this many neighbourhood tables are drawn (the nearest first):
/// a picture of a 1,000-table schema must stay readable.
pub const MAX_CONTEXT: usize = 12;

/// Why a table is in the picture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// Asked for (by MatchTables or `--tables`): the view keeps its columns.
    Relevant,
    /// Joined only to connect relevant tables (counted in the objective).
    Bridge,
    /// Next to the view, refused by a model rule (lookup, junction, forbid).
    Refused,
    /// Next to the view, allowed but not on the cheapest walk.
    Unused,
}

/// How two tables are connected in the picture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// An INNER JOIN of the solved walk; `step` numbers them in join order.
    Walk { step: usize },
    /// A LEFT JOIN down a star/snowflake branch.
    Branch,
    /// A relationship the solver may not use here (reason in `note`).
    Refused,
    /// A relationship the solver could use but did not need.
    Unused,
}

/// A table (or a second instance of one) in the picture.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SceneNode {
    /// Unique key: the instance alias in the view (`CLIENT`, `CLIENT_2`),
    /// or the table name for neighbourhood tables.
    pub key: String,
    /// Model table name.
    pub table: String,
    pub kind: NodeKind,
    /// Pattern role and other short facts (`m:m junction CLIENT ↔
    /// RESOURCEPOOL`, `lookup`, `snowflake root`, `votes 5/5`).
    pub badges: Vec<String>,
    /// Columns this instance contributes to the view.
    pub columns: Vec<String>,
    /// Hook for instance roles (e.g. `billing` / `shipping` address).
    pub role: Option<String>,
    /// Hook for fan-out analysis: columns whose values a join repeats.
    pub multiplied: Vec<String>,
    /// Why the table is refused or unused (tooltip and caption).
    pub note: Option<String>,
}

/// A connection in the picture.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SceneEdge {
    pub from: String,
    pub to: String,
    pub kind: EdgeKind,
    /// Short label drawn on the edge (join columns or the rule).
    pub label: String,
    /// Longer text for the tooltip.
    pub note: Option<String>,
}

/// Everything the picture shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scene {
    pub title: String,
    /// Lines under the picture: the walk, the cost, why it is infeasible.
    pub caption: Vec<String>,
    pub nodes: Vec<SceneNode>,
    pub edges: Vec<SceneEdge>,
}

impl Scene {
    /// The picture of a GenerateView result; `graph` (the model it was
    /// solved on) adds pattern roles and the refused neighbourhood.
    pub fn of_view(view: &ViewResult, graph: Option<&SchemaGraph>) -> Scene {
        let mut b = Builder { graph, nodes: Vec::new(), edges: Vec::new() };
        b.view_nodes(view);
        b.view_edges(view);
        // Fan-out: an instance whose rows the view repeats has its columns
        // multiplied (SUM/COUNT over them over-count).
        for n in &mut b.nodes {
            if let Some(ig) = view.grain.instance(&n.key) {
                if !ig.multiplied_by.is_empty() {
                    n.multiplied = n.columns.clone();
                    n.badges.push(format!("rows repeated by {}", ig.multiplied_by.join(", ")));
                }
            }
        }
        if let Some(g) = graph {
            b.neighbourhood(g);
        }
        let mut caption = Vec::new();
        if view.status != SolveStatus::Infeasible && !view.walk.is_empty() {
            caption.push(format!("walk: {}", view.walk.join(" → ")));
            caption.push(format!(
                "{} extra table(s) joined to connect the relevant ones, walk length {}, {} ({:.0} ms)",
                view.objective,
                view.path_length,
                view.status.as_str(),
                view.solve_ms
            ));
        }
        if let Some(e) = &view.explanation {
            let head = if view.status == SolveStatus::Infeasible { "infeasible: " } else { "note: " };
            caption.push(format!("{head}{e}"));
        }
        for n in b.nodes.iter().filter(|n| n.kind == NodeKind::Refused) {
            if let Some(why) = &n.note {
                caption.push(format!("refused {}: {why}", n.table));
            }
        }
        let relevant = if view.relevant.is_empty() { view.tables.clone() } else { view.relevant.clone() };
        let title = match view.status {
            SolveStatus::Infeasible => format!("GenerateView: no join path for {}", relevant.join(", ")),
            s => format!("GenerateView ({}): join path for {}", s.as_str(), relevant.join(", ")),
        };
        Scene { title, caption, nodes: b.nodes, edges: b.edges }
    }

    /// Add MatchTables' votes (`votes 4/5`) to the tables they chose.
    pub fn with_votes(mut self, mt: &MatchTrace) -> Scene {
        let mut votes: BTreeMap<String, String> = BTreeMap::new();
        for step in &mt.steps {
            if step.prompt == "attributes" {
                continue;
            }
            let n = step.samples.len().max(step.call.n);
            for v in &step.votes {
                votes.entry(v.item.to_ascii_lowercase()).or_insert_with(|| format!("votes {}/{n}", v.votes));
            }
        }
        for node in &mut self.nodes {
            if let Some(v) = votes.get(&node.table.to_ascii_lowercase()) {
                node.badges.push(v.clone());
            }
        }
        self
    }

    /// A node by key.
    pub fn node(&self, key: &str) -> Option<&SceneNode> {
        self.nodes.iter().find(|n| n.key == key)
    }
}

struct Builder<'a> {
    graph: Option<&'a SchemaGraph>,
    nodes: Vec<SceneNode>,
    edges: Vec<SceneEdge>,
}

/// The table of an instance alias: the alias itself, or `TABLE` for
/// `TABLE_2` (the view's naming of second instances).
fn table_of_alias(alias: &str, graph: Option<&SchemaGraph>, known: &BTreeSet<String>) -> String {
    let exists = |t: &str| match graph {
        Some(g) => g.table_id(t).is_some(),
        None => known.contains(&t.to_ascii_lowercase()),
    };
    if exists(alias) {
        return graph
            .and_then(|g| g.table_id(alias).map(|id| g.name(id).to_string()))
            .unwrap_or_else(|| alias.to_string());
    }
    if let Some((head, tail)) = alias.rsplit_once('_') {
        if !tail.is_empty() && tail.chars().all(|c| c.is_ascii_digit()) && exists(head) {
            return graph
                .and_then(|g| g.table_id(head).map(|id| g.name(id).to_string()))
                .unwrap_or_else(|| head.to_string());
        }
    }
    alias.to_string()
}

impl Builder<'_> {
    fn push_node(&mut self, key: &str, table: &str, kind: NodeKind) -> usize {
        if let Some(i) = self.nodes.iter().position(|n| n.key == key) {
            return i;
        }
        let mut node = SceneNode {
            key: key.to_string(),
            table: table.to_string(),
            kind,
            badges: Vec::new(),
            columns: Vec::new(),
            role: None,
            multiplied: Vec::new(),
            note: None,
        };
        if let Some(g) = self.graph {
            node.badges.extend(pattern_badges(g, table));
        }
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    fn view_nodes(&mut self, view: &ViewResult) {
        let relevant: BTreeSet<String> = view.relevant.iter().map(|t| t.to_ascii_lowercase()).collect();
        let mut known: BTreeSet<String> = view.columns.iter().map(|c| c.table.to_ascii_lowercase()).collect();
        known.extend(view.walk.iter().map(|t| t.to_ascii_lowercase()));
        known.extend(relevant.iter().cloned());
        let instances: Vec<String> = if view.tables.is_empty() { view.relevant.clone() } else { view.tables.clone() };
        for alias in &instances {
            // The grain names each instance's table (role aliases such as
            // `LOCATION_CLIENT` included); older views fall back on the alias.
            let table = match view.grain.instance(alias) {
                Some(i) => i.table.clone(),
                None => table_of_alias(alias, self.graph, &known),
            };
            // A role instance (ids of a view built in this process): its
            // `TABLE@role` label, relevant under that name.
            let label = self.graph.and_then(|g| {
                let i = view.instances.iter().find(|i| &i.alias == alias)?;
                i.role.map(|r| g.copy_label(i.table, Some(r), i.copy))
            });
            let is_relevant = |n: &str| relevant.contains(&n.to_ascii_lowercase());
            let kind = if relevant.is_empty() || is_relevant(&table) || label.as_deref().is_some_and(is_relevant) {
                NodeKind::Relevant
            } else {
                NodeKind::Bridge
            };
            let k = self.push_node(alias, &table, kind);
            if let Some(l) = label {
                self.nodes[k].role = l.split_once('@').map(|(_, r)| r.to_string());
            }
        }
        // Columns: each view column belongs to the instance whose alias is
        // the longest prefix of the column alias (`CLIENT_2_name`).
        for c in &view.columns {
            let owner = self
                .nodes
                .iter()
                .enumerate()
                .filter(|(_, n)| n.table.eq_ignore_ascii_case(&c.table))
                .filter(|(_, n)| c.alias.len() > n.key.len() && c.alias[..n.key.len()].eq_ignore_ascii_case(&n.key))
                .max_by_key(|(_, n)| n.key.len())
                .map(|(i, _)| i)
                .or_else(|| self.nodes.iter().position(|n| n.table.eq_ignore_ascii_case(&c.table)));
            if let Some(i) = owner {
                self.nodes[i].columns.push(c.column.clone());
            }
        }
    }

    fn view_edges(&mut self, view: &ViewResult) {
        let mut step = 0;
        for j in &view.joins {
            let cols: Vec<String> = j
                .on
                .iter()
                .map(|[a, b]| format!("{} = {}", a.rsplit('.').next().unwrap_or(a), b.rsplit('.').next().unwrap_or(b)))
                .collect();
            let (kind, label) = match j.kind {
                JoinKind::Inner => {
                    step += 1;
                    (EdgeKind::Walk { step }, format!("{step}. {}", cols.join(", ")))
                }
                JoinKind::Left => (EdgeKind::Branch, format!("LEFT JOIN {}", cols.join(", "))),
            };
            let on: Vec<String> = j.on.iter().map(|[a, b]| format!("{a} = {b}")).collect();
            self.edges.push(SceneEdge {
                from: j.left.clone(),
                to: j.right.clone(),
                kind,
                label,
                note: Some(format!(
                    "{} {} ON {} ({})",
                    if j.kind == JoinKind::Inner { "INNER JOIN" } else { "LEFT JOIN" },
                    j.right,
                    on.join(" AND "),
                    j.relationship
                )),
            });
        }
    }

    /// Tables next to the view that explain the walk: lookups and junctions
    /// that would be shortcuts but break C4/C3, forbidden tables and
    /// relationships, and allowed shortcuts the optimum did not need.
    fn neighbourhood(&mut self, g: &SchemaGraph) {
        let in_view: Vec<String> = self.nodes.iter().map(|n| n.table.clone()).collect();
        let view_ids: BTreeSet<_> = in_view.iter().filter_map(|t| g.table_id(t)).collect();
        let forbidden_tables = g.forbidden_tables();
        let forbidden_rels = g.forbidden_relationships();
        // Candidates: tables outside the view adjacent to it.
        let mut cands: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for &t in &view_ids {
            for (n, _) in g.neighbors(t) {
                if !view_ids.contains(&n) {
                    cands.entry(g.name(n).to_string()).or_default().insert(g.name(t).to_string());
                }
            }
        }
        let mut picked: Vec<(u8, String, BTreeSet<String>, NodeKind, String, String)> = Vec::new();
        for (name, touches) in cands {
            let Some(id) = g.table_id(&name) else { continue };
            let (prio, kind, label, why) = if forbidden_tables.contains(&id) {
                (
                    0,
                    NodeKind::Refused,
                    "forbidden".to_string(),
                    "forbidden by the model's constraints.forbid_tables".to_string(),
                )
            } else if g.is_lookup(id) && touches.len() >= 2 {
                let ts: Vec<&str> = touches.iter().map(String::as_str).collect();
                (
                    1,
                    NodeKind::Refused,
                    "C4: lookup".to_string(),
                    format!(
                        "lookup table: a walk may enter and leave it only from the same table (C4), so {} cannot be joined through it",
                        ts.join(" and ")
                    ),
                )
            } else if let Some(j) = g.junction_of(id) {
                let sides = [g.name(j.sides[0]).to_string(), g.name(j.sides[1]).to_string()];
                let both = sides.iter().all(|s| touches.contains(s));
                if touches.len() < 2 {
                    continue;
                }
                if both {
                    (
                        3,
                        NodeKind::Unused,
                        String::new(),
                        format!("m:m junction of {} and {}: allowed, not on the cheapest walk", sides[0], sides[1]),
                    )
                } else {
                    (
                        1,
                        NodeKind::Refused,
                        "C3: junction".to_string(),
                        format!("m:m junction that relates only {} and {} (C3): a walk may not pass through it between other tables", sides[0], sides[1]),
                    )
                }
            } else if touches.len() >= 2 && g.is_core(id) {
                (4, NodeKind::Unused, String::new(), "allowed, not on the cheapest walk".to_string())
            } else {
                continue;
            };
            picked.push((prio, name, touches, kind, label, why));
        }
        picked
            .sort_by(|a, b| (a.0, std::cmp::Reverse(a.2.len()), &a.1).cmp(&(b.0, std::cmp::Reverse(b.2.len()), &b.1)));
        picked.truncate(MAX_CONTEXT);
        for (_, name, touches, kind, label, why) in picked {
            let i = self.push_node(&name, &name, kind);
            self.nodes[i].note = Some(why.clone());
            for t in touches {
                let key = self
                    .nodes
                    .iter()
                    .find(|n| n.table == t && n.kind != NodeKind::Refused && n.kind != NodeKind::Unused)
                    .map(|n| n.key.clone());
                if let Some(k) = key {
                    self.edges.push(SceneEdge {
                        from: k,
                        to: name.clone(),
                        kind: if kind == NodeKind::Refused { EdgeKind::Refused } else { EdgeKind::Unused },
                        label: label.clone(),
                        note: Some(why.clone()),
                    });
                }
            }
        }
        // Forbidden relationships between two tables of the view that are
        // not joined directly.
        for &r in &forbidden_rels {
            let (a, b) = g.endpoints(r);
            if view_ids.contains(&a) && view_ids.contains(&b) && a != b {
                let (na, nb) = (g.name(a).to_string(), g.name(b).to_string());
                let table_of = |key: &str| self.nodes.iter().find(|n| n.key == key).map(|n| n.table.as_str());
                let joined = self.edges.iter().any(|e| {
                    let ends = (table_of(&e.from), table_of(&e.to));
                    matches!(e.kind, EdgeKind::Walk { .. } | EdgeKind::Branch)
                        && (ends == (Some(na.as_str()), Some(nb.as_str()))
                            || ends == (Some(nb.as_str()), Some(na.as_str())))
                });
                let key = |t: &str| self.nodes.iter().find(|n| n.table == t).map(|n| n.key.clone());
                if let (false, Some(ka), Some(kb)) = (joined, key(&na), key(&nb)) {
                    self.edges.push(SceneEdge {
                        from: ka,
                        to: kb,
                        kind: EdgeKind::Refused,
                        label: "forbidden".into(),
                        note: Some(format!(
                            "{} is forbidden by the model's constraints.forbid_relationships",
                            g.relationship(r).id()
                        )),
                    });
                }
            }
        }
    }
}

/// Pattern facts about a table: junction, lookup, star/snowflake root or inner.
fn pattern_badges(g: &SchemaGraph, table: &str) -> Vec<String> {
    let Some(id) = g.table_id(table) else { return Vec::new() };
    let mut v = Vec::new();
    if let Some(j) = g.junction_of(id) {
        v.push(format!("m:m junction {} ↔ {}", g.name(j.sides[0]), g.name(j.sides[1])));
    }
    if g.is_lookup(id) {
        v.push("lookup (C4: dead end)".into());
    }
    if let Some(k) = g.pattern_root_kind(id) {
        v.push(format!("{} root", tree_kind(k)));
    }
    if let Some(p) = g.inner_position(id) {
        v.push(format!("{} of {} (inner)", tree_kind(p.kind), g.name(p.root)));
    }
    v
}

fn tree_kind(k: crate::graph::TreeKind) -> &'static str {
    match k {
        crate::graph::TreeKind::Star => "star",
        crate::graph::TreeKind::Snowflake => "snowflake",
    }
}
