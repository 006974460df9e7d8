//! The schema graph: a dbModel loaded into petgraph.
//!
//! One node per table, one edge per relationship (parallel edges allowed:
//! two foreign keys to the same table are two edges). Pattern roles and the
//! constraints block are resolved once here so the solver and the prompts
//! ask the same questions of the same structure.
//!
//! Every name → id lookup after loading goes through the graph's
//! [`Names`] index (`model::resolve`): [`SchemaGraph::require_table`],
//! [`SchemaGraph::require_column`], [`SchemaGraph::column_ref`] for
//! `TABLE.column`, [`SchemaGraph::resolve_relationship_ref`]; a miss is a
//! [`NotFound`](crate::model::resolve::NotFound) naming the closest names.

pub mod fk;
pub mod render;
pub mod suggest;

use std::collections::HashMap;

use petgraph::graph::{EdgeIndex, NodeIndex, UnGraph};
use petgraph::visit::EdgeRef;

use crate::error::{Error, ModelIssue, Result};
use crate::model::resolve::Names;
use crate::types::{Cardinality, DbModel, Relationship, Table};

pub use crate::types::ids::{ColumnId, RelId, TableId};
pub use crate::types::resolved::{Junction, TreeKind};

/// Position of an inner table in a star/snowflake tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InnerPosition {
    pub root: TableId,
    pub parent: TableId,
    pub kind: TreeKind,
    /// Relationship between the parent and this table.
    pub rel: RelId,
}

/// Load a dbModel file (either form), validate it and build its schema graph.
pub fn load(path: impl AsRef<std::path::Path>) -> Result<SchemaGraph> {
    SchemaGraph::new(crate::model::load(path)?)
}

/// The dbModel as a graph with resolved pattern roles.
#[derive(Debug, Clone)]
pub struct SchemaGraph {
    model: DbModel,
    graph: UnGraph<TableId, RelId>,
    names: Names,
    /// The constraints block, resolved.
    forbidden_tables: Vec<TableId>,
    required_tables: Vec<TableId>,
    forbidden_rels: Vec<RelId>,
    inner: HashMap<TableId, InnerPosition>,
    children: HashMap<TableId, Vec<TableId>>,
    roots: HashMap<TableId, TreeKind>,
    junctions: Vec<Junction>,
    lookups: Vec<TableId>,
    /// Pattern roots and inner tables whose children are exclusive subtypes.
    exclusive: Vec<TableId>,
    /// Relationships that short-cut a table (`Relationship::via`), with it.
    shortcuts: Vec<(RelId, TableId)>,
}

impl SchemaGraph {
    /// Build the graph. The model must pass every rule of
    /// `model::validate` (names resolve case-insensitively); otherwise the
    /// error lists every `ModelIssue`, as `lucy model check` would.
    pub fn new(model: DbModel) -> Result<Self> {
        let (resolved, issues) = crate::model::validate::analyze(&model);
        if !issues.is_empty() {
            return Err(Error::Model(issues));
        }
        let mut graph = UnGraph::with_capacity(model.tables.len(), model.relationships.len());
        let names = Names::new(&model);
        for i in 0..model.tables.len() {
            let n = graph.add_node(i);
            debug_assert_eq!(n.index(), i);
        }
        for (r, rel) in model.relationships.iter().enumerate() {
            // Validation guarantees both ends resolve; keep edge index == RelId regardless.
            let Some((a, b)) = names.endpoints(r) else {
                return Err(Error::Model(vec![issue(
                    format!("$.relationships[{r}]"),
                    format!("relationship {} names an unknown table", rel.id()),
                    "use table names defined in $.tables",
                )]));
            };
            let e = graph.add_edge(NodeIndex::new(a), NodeIndex::new(b), r);
            debug_assert_eq!(e.index(), r);
        }
        // Validation guarantees every constraint entry resolves.
        let c = &model.constraints;
        let forbidden_tables = c.forbid_tables.iter().filter_map(|t| names.table(t)).collect();
        let required_tables = c.require_tables.iter().filter_map(|t| names.table(t)).collect();
        let mut forbidden_rels: Vec<RelId> =
            c.forbid_relationships.iter().filter_map(|r| names.relationship_ref(r)).flat_map(|r| r.rels()).collect();
        forbidden_rels.sort_unstable();
        forbidden_rels.dedup();
        // Validation guarantees every `via` resolves.
        let shortcuts = model
            .relationships
            .iter()
            .enumerate()
            .filter_map(|(r, rel)| rel.via.as_deref().and_then(|v| names.table(v)).map(|v| (r, v)))
            .collect();
        let mut sg = SchemaGraph {
            model,
            graph,
            names,
            forbidden_tables,
            required_tables,
            forbidden_rels,
            inner: HashMap::new(),
            children: HashMap::new(),
            roots: HashMap::new(),
            junctions: resolved.junctions.into_iter().map(|(j, _)| j).collect(),
            lookups: Vec::new(),
            exclusive: Vec::new(),
            shortcuts,
        };
        for (t, _) in resolved.lookups {
            if !sg.lookups.contains(&t) {
                sg.lookups.push(t);
            }
        }
        for tree in resolved.trees {
            sg.roots.insert(tree.root, tree.kind);
            if tree.exclusive {
                sg.exclusive.push(tree.root);
            }
            for n in tree.nodes {
                if n.exclusive {
                    sg.exclusive.push(n.table);
                }
                sg.inner
                    .insert(n.table, InnerPosition { root: tree.root, parent: n.parent, kind: tree.kind, rel: n.rel });
                sg.children.entry(n.parent).or_default().push(n.table);
            }
        }
        Ok(sg)
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

    /// The name index: every name → id lookup goes through it.
    pub fn names(&self) -> &Names {
        &self.names
    }

    /// A table id by name, case-insensitively.
    pub fn table_id(&self, name: &str) -> Option<TableId> {
        self.names.table(name)
    }

    /// A table id by name, or an `Error::Input` naming the unknown table and
    /// the closest known names.
    pub fn require_table(&self, name: &str) -> Result<TableId> {
        Ok(self.names.require_table(name)?)
    }

    /// A column of table `t` by name, or an `Error::Input` naming the
    /// unknown column, the closest names and the table's columns.
    pub fn require_column(&self, t: TableId, name: &str) -> Result<ColumnId> {
        Ok(self.names.require_column(t, name)?)
    }

    /// A table instance, `TABLE` or `TABLE@role` (see [`Names::instance`]):
    /// the table and, for a role instance, the relationship it joins through.
    pub fn instance(&self, s: &str) -> Result<(TableId, Option<RelId>)> {
        self.names.instance(s)
    }

    /// How a table instance is written back, in a form [`Self::instance`]
    /// reads: `TABLE`, or `TABLE@role` with the relationship's declared
    /// role, else its name, else `OTHER.column` (its join column on the
    /// other end) when that names it alone, else its id.
    pub fn instance_label(&self, t: TableId, role: Option<RelId>) -> String {
        let Some(r) = role else { return self.name(t).to_string() };
        let rel = self.relationship(r);
        let word = match (&rel.role, &rel.name) {
            (Some(role), _) => role.clone(),
            (None, Some(name)) => name.clone(),
            (None, None) => {
                let (from, to) = self.endpoints(r);
                let other = self.anchor(t, r);
                let side = if from == to || other == from { 0 } else { 1 };
                let short = format!("{}.{}", self.name(other), rel.on[0][side]);
                match self.names.instance(&format!("{}@{short}", self.name(t))) {
                    Ok((x, Some(y))) if (x, y) == (t, r) => short,
                    _ => rel.id(),
                }
            }
        };
        format!("{}@{word}", self.name(t))
    }

    /// [`Self::instance_label`] of copy `copy` of a role instance
    /// (`RoleInstance::copy`): `TABLE@role` for copy 0, `TABLE@role#2` for
    /// copy 1, and so on.
    pub fn copy_label(&self, t: TableId, role: Option<RelId>, copy: u8) -> String {
        let l = self.instance_label(t, role);
        if copy == 0 || role.is_none() {
            l
        } else {
            format!("{l}#{}", u16::from(copy) + 1)
        }
    }

    /// A table instance with its copy: [`Self::instance`], or
    /// `TABLE@role#N` (N ≥ 2) for the N-th instance through the same
    /// relationship (copy N − 1). A name that resolves as written wins, so
    /// a table or role containing `#` still works.
    pub fn instance_copy(&self, s: &str) -> Result<(TableId, Option<RelId>, u8)> {
        let first = match self.instance(s) {
            Ok((t, r)) => return Ok((t, r, 0)),
            Err(e) => e,
        };
        // Without a `#N` suffix, the error of the name as written.
        let s = s.trim();
        let Some((head, n)) = s.rsplit_once('#') else { return Err(first) };
        let Ok(n) = n.trim().parse::<u16>() else { return Err(first) };
        match self.instance(head) {
            Ok((t, Some(r))) if (2..=256).contains(&n) => Ok((t, Some(r), (n - 1) as u8)),
            Ok((_, Some(_))) => {
                Err(Error::Input(format!("`{s}`: the copy number of {} must be 2 to 256", head.trim())))
            }
            Ok((t, None)) => Err(Error::Input(format!(
                "`{s}`: #{n} counts instances through one relationship: write {}@ROLE#{n}",
                self.name(t)
            ))),
            // `TABLE@role#N` whose `TABLE@role` fails says why (ambiguous, unknown).
            Err(e) => Err(e),
        }
    }

    /// The child a *subtype instance* of `t` through `rel` stands for:
    /// when `rel` joins pattern root `t` to one of its own children, the
    /// instance `T@CHILD` is the rows of `t` that are of that kind
    /// (`Claim_Amount@Loss_Payment`: the claim amounts that are loss
    /// payments). It joins the walk as `t` does and brings its child along
    /// by INNER JOIN. `None` for a role through any other relationship.
    pub fn subtype_child(&self, t: TableId, rel: RelId) -> Option<TableId> {
        let (a, b) = self.endpoints(rel);
        let c = if a == t {
            b
        } else if b == t {
            a
        } else {
            return None;
        };
        let pos = self.inner_position(c)?;
        (c != t && pos.parent == t && pos.rel == rel && self.is_core(t)).then_some(c)
    }

    /// The table a role instance of `t` through `rel` joins: the other end
    /// of `rel` (for a self-relationship, `t` itself).
    pub fn anchor(&self, t: TableId, rel: RelId) -> TableId {
        let (a, b) = self.endpoints(rel);
        if a == t {
            b
        } else {
            a
        }
    }

    /// A `TABLE.column` reference (see [`Names::column_ref`]: table and
    /// column names may contain dots).
    pub fn column_ref(&self, s: &str) -> Result<ColumnId> {
        self.names.column_ref(s)
    }

    /// `(table name, column name)` of a column id, in the model's spelling.
    pub fn column_names(&self, c: ColumnId) -> (&str, &str) {
        let t = &self.model.tables[c.table];
        (&t.name, &t.columns[c.column].name)
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
    ///
    /// # Panics
    /// If `rel` is not a relationship index of this graph's model.
    pub fn endpoints(&self, rel: RelId) -> (TableId, TableId) {
        let (a, b) = self.graph.edge_endpoints(EdgeIndex::new(rel)).expect("edge per relationship");
        (self.graph[a], self.graph[b])
    }

    /// Cardinality of `rel` read from table `from`.
    pub fn cardinality_from(&self, rel: RelId, from: TableId) -> Cardinality {
        let (a, _) = self.endpoints(rel);
        let c = self.model.relationships[rel].cardinality;
        if a == from {
            c
        } else {
            c.reversed()
        }
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
        let mut v: Vec<RelId> =
            self.graph.edges_connecting(NodeIndex::new(a), NodeIndex::new(b)).map(|e| *e.weight()).collect();
        if a != b {
            v.extend(self.graph.edges_connecting(NodeIndex::new(b), NodeIndex::new(a)).map(|e| *e.weight()));
        }
        v.sort_unstable();
        v.dedup();
        v
    }

    /// A relationship by name or id (`FROM(cols)->TO(cols)`), case-insensitively.
    pub fn relationship_by_ref(&self, r: &str) -> Option<RelId> {
        self.names.relationship(r)
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

    /// Whether the pattern children of `id` are exclusive subtypes (each
    /// row of `id` is exactly one kind; `PatternNode::exclusive`).
    pub fn exclusive_children(&self, id: TableId) -> bool {
        self.exclusive.contains(&id)
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

    /// The m:m junction that core table `c` hangs off, with the one
    /// relationship joining them, when that relationship is all `c` has
    /// (BIRD financial's card, which only references the client–account
    /// junction disp): C3 case b, docs/generate-view.md. Sides, junctions,
    /// lookups and pattern roots never hang off a junction.
    pub fn junction_child_of(&self, c: TableId) -> Option<(TableId, RelId)> {
        if !self.is_core(c)
            || self.is_lookup(c)
            || !self.pattern_children(c).is_empty()
            || self.junction_of(c).is_some()
        {
            return None;
        }
        if self.junctions.iter().any(|j| j.sides.contains(&c)) {
            return None;
        }
        let mut rels = self.neighbors(c);
        let (k, r) = rels.next()?;
        if rels.next().is_some() || k == c {
            return None;
        }
        self.junction_of(k).map(|_| (k, r))
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

impl SchemaGraph {
    /// Roots of stars and snowflakes, in table order.
    pub fn pattern_roots(&self) -> Vec<(TableId, TreeKind)> {
        let mut v: Vec<_> = self.roots.iter().map(|(&t, &k)| (t, k)).collect();
        v.sort_unstable_by_key(|&(t, _)| t);
        v
    }

    /// Every inner table of the tree rooted at `root`, parents before
    /// children (breadth-first, the order IterativePrompting explores).
    pub fn tree_tables(&self, root: TableId) -> Vec<TableId> {
        let mut out = Vec::new();
        let mut queue: std::collections::VecDeque<TableId> = self.pattern_children(root).iter().copied().collect();
        while let Some(t) = queue.pop_front() {
            out.push(t);
            queue.extend(self.pattern_children(t).iter().copied());
        }
        out
    }

    /// The relationships a `forbid_relationships` entry refers to: one for
    /// a name or `FROM(cols)->TO(cols)` id, every relationship between A and
    /// B for `"A-B"` (table names may contain `-`). `None` when it matches
    /// nothing.
    pub fn resolve_relationship_ref(&self, r: &str) -> Option<Vec<RelId>> {
        self.names.relationship_ref(r).map(|r| r.rels())
    }

    /// Tables the user forbade (`constraints.forbid_tables`).
    pub fn forbidden_tables(&self) -> Vec<TableId> {
        self.forbidden_tables.clone()
    }

    /// Tables every view must include (`constraints.require_tables`).
    pub fn required_tables(&self) -> Vec<TableId> {
        self.required_tables.clone()
    }

    /// Relationships the user forbade (`constraints.forbid_relationships`),
    /// sorted, without duplicates.
    pub fn forbidden_relationships(&self) -> Vec<RelId> {
        self.forbidden_rels.clone()
    }

    /// Relationships that short-cut a table (`Relationship::via`), each
    /// with that table, in model order.
    pub fn shortcuts(&self) -> &[(RelId, TableId)] {
        &self.shortcuts
    }
}

fn issue(path: String, message: String, hint: &str) -> ModelIssue {
    ModelIssue { file: None, path, message, hint: hint.to_string() }
}

/// The bundled curated models as graphs, for the crate's tests.
#[cfg(test)]
pub mod fixtures {
    use super::SchemaGraph;

    /// dbmodels/ddo.json, the paper's DDO.
    pub fn ddo() -> SchemaGraph {
        bundled("ddo.json")
    }

    /// dbmodels/acme.json, the curated ACME insurance model.
    pub fn acme() -> SchemaGraph {
        bundled("acme.json")
    }

    fn bundled(name: &str) -> SchemaGraph {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("dbmodels").join(name);
        super::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(json: serde_json::Value) -> DbModel {
        crate::model::parse(&json.to_string(), None).expect("test model parses")
    }

    /// PERSON with a self m:m through FRIEND, and ORDERS with two FKs to PERSON.
    fn people() -> SchemaGraph {
        SchemaGraph::new(model(serde_json::json!({
            "name": "people",
            "tables": [
                {"name": "PERSON", "primary_key": ["id"], "columns": [{"name": "id"}]},
                {"name": "FRIEND", "primary_key": ["a", "b"], "columns": [{"name": "a"}, {"name": "b"}]},
                {"name": "ORDERS", "primary_key": ["id"], "columns": [{"name": "id"}, {"name": "buyer"}, {"name": "seller"}]}
            ],
            "relationships": [
                {"from": "FRIEND", "to": "PERSON", "cardinality": "M:1", "on": [["a", "id"]]},
                {"from": "FRIEND", "to": "PERSON", "cardinality": "M:1", "on": [["b", "id"]]},
                {"name": "bought", "from": "ORDERS", "to": "PERSON", "cardinality": "M:1", "on": [["buyer", "id"]]},
                {"name": "sold", "from": "PERSON", "to": "ORDERS", "cardinality": "1:M", "on": [["id", "seller"]]}
            ],
            "patterns": [{"kind": "many_to_many", "junction": "FRIEND", "sides": ["PERSON", "PERSON"]}],
            "constraints": {"forbid_relationships": ["sold"]}
        })))
        .expect("valid")
    }

    #[test]
    fn parallel_edges_and_cardinality_both_ways() {
        let g = people();
        let (p, o) = (g.table_id("person").unwrap(), g.table_id("Orders").unwrap());
        assert_eq!(g.relationships_between(p, o), vec![2, 3]);
        assert_eq!(g.relationships_between(o, p), vec![2, 3]);
        assert_eq!(g.cardinality_from(2, o), Cardinality::ManyToOne);
        assert_eq!(g.cardinality_from(2, p), Cardinality::OneToMany);
        assert_eq!(g.cardinality_from(3, o), Cardinality::ManyToOne);
        assert_eq!(g.neighbors(p).count(), 4);
    }

    #[test]
    fn self_many_to_many_uses_both_edges() {
        let g = people();
        let j = g.junction_of(g.table_id("FRIEND").unwrap()).unwrap();
        assert_eq!(j.sides, [0, 0]);
        assert_eq!(j.rels, [0, 1]);
        assert_eq!(g.core_tables(), vec![0, 1, 2]);
    }

    #[test]
    fn relationship_references() {
        let g = people();
        assert_eq!(g.resolve_relationship_ref("BOUGHT"), Some(vec![2]));
        assert_eq!(g.resolve_relationship_ref("FRIEND(a)->PERSON(id)"), Some(vec![0]));
        assert_eq!(g.resolve_relationship_ref("orders-person"), Some(vec![2, 3]));
        assert_eq!(g.resolve_relationship_ref("nothing"), None);
        assert_eq!(g.forbidden_relationships(), vec![3]);
    }

    #[test]
    fn unknown_table_error_suggests_close_names() {
        let e = people().require_table("PERSONS").unwrap_err().to_string();
        assert!(e.contains("did you mean PERSON"), "{e}");
    }
}
