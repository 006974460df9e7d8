//! The schema graph: a dbModel loaded into petgraph.
//!
//! One node per table, one edge per relationship (parallel edges allowed:
//! two foreign keys to the same table are two edges). Pattern roles are
//! resolved once here so the solver and the prompts ask the same questions
//! of the same structure.

use std::collections::HashMap;

use petgraph::graph::{EdgeIndex, NodeIndex, UnGraph};
use petgraph::visit::EdgeRef;

use crate::error::{Error, ModelIssue, Result};
use crate::types::{Cardinality, DbModel, Pattern, PatternNode, Relationship, Table};

/// Index of a table in `DbModel::tables` (and of its node).
pub type TableId = usize;
/// Index of a relationship in `DbModel::relationships` (and of its edge).
pub type RelId = usize;

/// Which kind of tree pattern a table belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TreeKind {
    Star,
    Snowflake,
}

/// An m:m pattern resolved to ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Junction {
    pub junction: TableId,
    pub sides: [TableId; 2],
    /// Relationship junction–sides[0] and junction–sides[1].
    pub rels: [RelId; 2],
}

/// Position of an inner table in a star/snowflake tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InnerPosition {
    pub root: TableId,
    pub parent: TableId,
    pub kind: TreeKind,
    /// Relationship between the parent and this table.
    pub rel: RelId,
}

/// The dbModel as a graph with resolved pattern roles.
#[derive(Debug, Clone)]
pub struct SchemaGraph {
    model: DbModel,
    graph: UnGraph<TableId, RelId>,
    by_name: HashMap<String, TableId>,
    inner: HashMap<TableId, InnerPosition>,
    children: HashMap<TableId, Vec<TableId>>,
    roots: HashMap<TableId, TreeKind>,
    junctions: Vec<Junction>,
    lookups: Vec<TableId>,
}

impl SchemaGraph {
    /// Build the graph. Names are resolved case-insensitively; anything that
    /// does not resolve is reported as a `ModelIssue` (full validation lives
    /// in `model::validate`).
    pub fn new(model: DbModel) -> Result<Self> {
        let mut issues = Vec::new();
        let mut graph = UnGraph::with_capacity(model.tables.len(), model.relationships.len());
        let mut by_name = HashMap::new();
        for (i, t) in model.tables.iter().enumerate() {
            let n = graph.add_node(i);
            debug_assert_eq!(n.index(), i);
            by_name.insert(t.name.to_ascii_lowercase(), i);
        }
        let lookup = |name: &str| by_name.get(&name.to_ascii_lowercase()).copied();
        for (r, rel) in model.relationships.iter().enumerate() {
            match (lookup(&rel.from), lookup(&rel.to)) {
                (Some(a), Some(b)) => {
                    let e = graph.add_edge(NodeIndex::new(a), NodeIndex::new(b), r);
                    debug_assert_eq!(e.index(), r);
                }
                _ => issues.push(issue(
                    format!("$.relationships[{r}]"),
                    format!("relationship {} names an unknown table", rel.id()),
                    "use table names defined in $.tables",
                )),
            }
        }
        let mut sg = SchemaGraph {
            model,
            graph,
            by_name,
            inner: HashMap::new(),
            children: HashMap::new(),
            roots: HashMap::new(),
            junctions: Vec::new(),
            lookups: Vec::new(),
        };
        if issues.is_empty() {
            sg.resolve_patterns(&mut issues);
        }
        if issues.is_empty() {
            Ok(sg)
        } else {
            Err(Error::Model(issues))
        }
    }

    fn resolve_patterns(&mut self, issues: &mut Vec<ModelIssue>) {
        let patterns = self.model.patterns.clone();
        for (p, pat) in patterns.iter().enumerate() {
            let base = format!("$.patterns[{p}]");
            match pat {
                Pattern::Lookup { tables, .. } => {
                    for (k, t) in tables.iter().enumerate() {
                        match self.table_id(t) {
                            Some(id) => self.lookups.push(id),
                            None => issues.push(unknown(format!("{base}.tables[{k}]"), t)),
                        }
                    }
                }
                Pattern::ManyToMany { junction, sides, relationships, .. } => {
                    let j = self.table_id(junction);
                    let s0 = self.table_id(&sides[0]);
                    let s1 = self.table_id(&sides[1]);
                    let (Some(j), Some(s0), Some(s1)) = (j, s0, s1) else {
                        for (path, name, id) in [
                            (format!("{base}.junction"), junction, j),
                            (format!("{base}.sides[0]"), &sides[0], s0),
                            (format!("{base}.sides[1]"), &sides[1], s1),
                        ] {
                            if id.is_none() {
                                issues.push(unknown(path, name));
                            }
                        }
                        continue;
                    };
                    let mut rels = [0; 2];
                    for (k, side) in [s0, s1].into_iter().enumerate() {
                        let found = match relationships {
                            Some(names) => self.relationship_by_ref(&names[k]).filter(|&r| {
                                let (a, b) = self.endpoints(r);
                                (a == j && b == side) || (a == side && b == j)
                            }),
                            None => {
                                let between = self.relationships_between(j, side);
                                if between.len() == 1 { Some(between[0]) } else { None }
                            }
                        };
                        match found {
                            Some(r) => rels[k] = r,
                            None => issues.push(issue(
                                format!("{base}.sides[{k}]"),
                                format!(
                                    "junction {} is not connected to side table {} by exactly one relationship",
                                    self.model.tables[j].name, self.model.tables[side].name
                                ),
                                "add a relationship between the junction and the side table, or name it in `relationships`",
                            )),
                        }
                    }
                    self.junctions.push(Junction { junction: j, sides: [s0, s1], rels });
                }
                Pattern::Star { root, children, .. } | Pattern::Snowflake { root, children, .. } => {
                    let kind = if matches!(pat, Pattern::Star { .. }) { TreeKind::Star } else { TreeKind::Snowflake };
                    let Some(r) = self.table_id(root) else {
                        issues.push(unknown(format!("{base}.root"), root));
                        continue;
                    };
                    self.roots.insert(r, kind);
                    self.resolve_tree(r, r, kind, children, &format!("{base}.children"), issues);
                }
            }
        }
    }

    fn resolve_tree(
        &mut self,
        root: TableId,
        parent: TableId,
        kind: TreeKind,
        nodes: &[PatternNode],
        path: &str,
        issues: &mut Vec<ModelIssue>,
    ) {
        for (k, node) in nodes.iter().enumerate() {
            let here = format!("{path}[{k}]");
            let Some(t) = self.table_id(&node.table) else {
                issues.push(unknown(format!("{here}.table"), &node.table));
                continue;
            };
            let rels = self.relationships_between(parent, t);
            let Some(&rel) = rels.first() else {
                issues.push(issue(
                    format!("{here}.table"),
                    format!(
                        "no relationship between {} and its pattern parent {}",
                        self.model.tables[t].name, self.model.tables[parent].name
                    ),
                    "add the relationship that joins the inner table to its parent",
                ));
                continue;
            };
            if self.inner.contains_key(&t) || t == root {
                issues.push(issue(
                    format!("{here}.table"),
                    format!("{} appears twice in pattern trees", self.model.tables[t].name),
                    "an inner table belongs to exactly one star/snowflake tree, once",
                ));
                continue;
            }
            self.inner.insert(t, InnerPosition { root, parent, kind, rel });
            self.children.entry(parent).or_default().push(t);
            self.resolve_tree(root, t, kind, &node.children, &format!("{here}.children"), issues);
        }
    }

    /// The underlying dbModel.
    pub fn model(&self) -> &DbModel {
        &self.model
    }

    /// The petgraph graph: node weights are `TableId`s, edge weights `RelId`s.
    pub fn petgraph(&self) -> &UnGraph<TableId, RelId> {
        &self.graph
    }

    /// Number of tables.
    pub fn len(&self) -> usize {
        self.model.tables.len()
    }

    pub fn is_empty(&self) -> bool {
        self.model.tables.is_empty()
    }

    /// A table id by name, case-insensitively.
    pub fn table_id(&self, name: &str) -> Option<TableId> {
        self.by_name.get(&name.to_ascii_lowercase()).copied()
    }

    /// A table id by name, or an `Error::Input` naming the unknown table and
    /// the closest known names.
    pub fn require_table(&self, name: &str) -> Result<TableId> {
        self.table_id(name).ok_or_else(|| {
            let mut close: Vec<(f64, &str)> = self
                .model
                .tables
                .iter()
                .map(|t| (strsim::jaro_winkler(&t.name.to_ascii_lowercase(), &name.to_ascii_lowercase()), t.name.as_str()))
                .filter(|(s, _)| *s > 0.8)
                .collect();
            close.sort_by(|a, b| b.0.total_cmp(&a.0));
            let hint = if close.is_empty() {
                String::new()
            } else {
                format!(" (did you mean {}?)", close.iter().take(3).map(|c| c.1).collect::<Vec<_>>().join(", "))
            };
            Error::Input(format!("unknown table `{name}` in model `{}`{hint}", self.model.name))
        })
    }

    /// The table with this id.
    pub fn table(&self, id: TableId) -> &Table {
        &self.model.tables[id]
    }

    /// Name of the table with this id.
    pub fn name(&self, id: TableId) -> &str {
        &self.model.tables[id].name
    }

    /// The relationship with this id.
    pub fn relationship(&self, id: RelId) -> &Relationship {
        &self.model.relationships[id]
    }

    /// `(from, to)` table ids of a relationship.
    pub fn endpoints(&self, rel: RelId) -> (TableId, TableId) {
        let (a, b) = self.graph.edge_endpoints(EdgeIndex::new(rel)).expect("edge per relationship");
        (self.graph[a], self.graph[b])
    }

    /// Cardinality of `rel` read from table `from`.
    pub fn cardinality_from(&self, rel: RelId, from: TableId) -> Cardinality {
        let (a, _) = self.endpoints(rel);
        let c = self.model.relationships[rel].cardinality;
        if a == from { c } else { c.reversed() }
    }

    /// Neighbouring tables with the relationship that connects them (one
    /// entry per relationship, so a neighbour may repeat).
    pub fn neighbors(&self, id: TableId) -> impl Iterator<Item = (TableId, RelId)> + '_ {
        self.graph.edges(NodeIndex::new(id)).map(move |e| {
            let other = if e.source().index() == id { e.target().index() } else { e.source().index() };
            (other, *e.weight())
        })
    }

    /// Every relationship between `a` and `b` (either direction), in model order.
    pub fn relationships_between(&self, a: TableId, b: TableId) -> Vec<RelId> {
        let mut v: Vec<RelId> = self
            .graph
            .edges_connecting(NodeIndex::new(a), NodeIndex::new(b))
            .map(|e| *e.weight())
            .collect();
        if a != b {
            v.extend(self.graph.edges_connecting(NodeIndex::new(b), NodeIndex::new(a)).map(|e| *e.weight()));
        }
        v.sort_unstable();
        v.dedup();
        v
    }

    /// A relationship by name or id (`FROM(cols)->TO(cols)`), case-insensitively.
    pub fn relationship_by_ref(&self, r: &str) -> Option<RelId> {
        self.model
            .relationships
            .iter()
            .position(|rel| rel.id().eq_ignore_ascii_case(r) || rel.name.as_deref().is_some_and(|n| n.eq_ignore_ascii_case(r)))
    }

    /// True for tables that are not inner tables of a star or snowflake.
    pub fn is_core(&self, id: TableId) -> bool {
        !self.inner.contains_key(&id)
    }

    /// Core tables (Algorithm 1, line 3), in model order.
    pub fn core_tables(&self) -> Vec<TableId> {
        (0..self.len()).filter(|&t| self.is_core(t)).collect()
    }

    /// Whether `id` is the root of a star or snowflake, and which.
    pub fn pattern_root_kind(&self, id: TableId) -> Option<TreeKind> {
        self.roots.get(&id).copied()
    }

    /// Children of `id` in its pattern tree (empty for leaves and non-pattern tables).
    pub fn pattern_children(&self, id: TableId) -> &[TableId] {
        self.children.get(&id).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Where an inner table sits in its pattern tree.
    pub fn inner_position(&self, id: TableId) -> Option<&InnerPosition> {
        self.inner.get(&id)
    }

    /// The branch from the pattern root down to inner table `id`, as
    /// `(parent, child, relationship)` steps, root first. Empty for core tables.
    pub fn branch_to(&self, id: TableId) -> Vec<(TableId, TableId, RelId)> {
        let mut steps = Vec::new();
        let mut cur = id;
        while let Some(pos) = self.inner.get(&cur) {
            steps.push((pos.parent, cur, pos.rel));
            cur = pos.parent;
        }
        steps.reverse();
        steps
    }

    /// m:m patterns.
    pub fn junctions(&self) -> &[Junction] {
        &self.junctions
    }

    /// The m:m pattern whose junction is `id`, if any.
    pub fn junction_of(&self, id: TableId) -> Option<&Junction> {
        self.junctions.iter().find(|j| j.junction == id)
    }

    /// True for lookup tables.
    pub fn is_lookup(&self, id: TableId) -> bool {
        self.lookups.contains(&id)
    }

    /// Lookup tables.
    pub fn lookup_tables(&self) -> &[TableId] {
        &self.lookups
    }
}

fn issue(path: String, message: String, hint: &str) -> ModelIssue {
    ModelIssue { file: None, path, message, hint: hint.to_string() }
}

fn unknown(path: String, name: &str) -> ModelIssue {
    issue(path, format!("unknown table `{name}`"), "use a table name defined in $.tables")
}
