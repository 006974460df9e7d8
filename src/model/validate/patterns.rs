//! Resolve patterns to table and relationship ids: every name must resolve,
//! a junction must be connected to each side by one relationship, a
//! star/snowflake must be a tree whose parent–child pairs are joined by one
//! relationship. Conflicts *between* patterns are in `roles`.

use super::{issue, Index};
use crate::error::ModelIssue;
use crate::types::ids::{RelId, TableId};
use crate::types::resolved::{Junction, TreeKind};
use crate::types::{Pattern, PatternNode};

/// Patterns resolved to ids; each entry remembers where it was declared.
#[derive(Debug, Default)]
pub(crate) struct Resolved {
    /// Lookup tables: `(table, JSON path)`.
    pub lookups: Vec<(TableId, String)>,
    /// m:m patterns: `(junction, pattern index)`.
    pub junctions: Vec<(Junction, usize)>,
    pub trees: Vec<Tree>,
}

/// A star or snowflake.
#[derive(Debug)]
pub(crate) struct Tree {
    pub pattern: usize,
    pub root: TableId,
    pub kind: TreeKind,
    /// The root's children are exclusive subtypes (`Pattern::Star::exclusive`).
    pub exclusive: bool,
    /// Inner tables in pre-order (a parent before its children).
    pub nodes: Vec<TreeNode>,
}

/// An inner table of a tree.
#[derive(Debug)]
pub(crate) struct TreeNode {
    pub table: TableId,
    pub parent: TableId,
    pub rel: RelId,
    /// JSON path of the node's `table` field.
    pub path: String,
    /// Its children are exclusive subtypes (`PatternNode::exclusive`).
    pub exclusive: bool,
}

pub(super) fn resolve(ix: &Index, out: &mut Vec<ModelIssue>) -> Resolved {
    let mut res = Resolved::default();
    for (p, pat) in ix.model.patterns.iter().enumerate() {
        let base = format!("$.patterns[{p}]");
        match pat {
            Pattern::Lookup { tables, .. } => lookup(ix, &base, tables, &mut res, out),
            Pattern::ManyToMany { junction, sides, relationships, .. } => {
                if let Some(j) = many_to_many(ix, &base, junction, sides, relationships.as_ref(), out) {
                    res.junctions.push((j, p));
                }
            }
            Pattern::Star { root, children, exclusive, .. } => {
                tree(ix, p, TreeKind::Star, root, children, *exclusive, &mut res, out)
            }
            Pattern::Snowflake { root, children, exclusive, .. } => {
                tree(ix, p, TreeKind::Snowflake, root, children, *exclusive, &mut res, out)
            }
        }
    }
    res
}

fn lookup(ix: &Index, base: &str, tables: &[String], res: &mut Resolved, out: &mut Vec<ModelIssue>) {
    if tables.is_empty() {
        out.push(issue(
            format!("{base}.tables"),
            "lookup pattern lists no tables".into(),
            "list the look-up tables, or remove the pattern",
        ));
    }
    let mut mine: Vec<TableId> = Vec::new();
    for (k, t) in tables.iter().enumerate() {
        let path = format!("{base}.tables[{k}]");
        match ix.table(t) {
            None => out.push(ix.unknown_table(path, t)),
            Some(id) if mine.contains(&id) => out.push(issue(
                path,
                format!("table `{}` is listed twice in this lookup pattern", ix.name(id)),
                "list each table once",
            )),
            Some(id) => {
                mine.push(id);
                res.lookups.push((id, path));
            }
        }
    }
}

fn many_to_many(
    ix: &Index,
    base: &str,
    junction: &str,
    sides: &[String; 2],
    names: Option<&[String; 2]>,
    out: &mut Vec<ModelIssue>,
) -> Option<Junction> {
    let j = ix.table(junction);
    let s = [ix.table(&sides[0]), ix.table(&sides[1])];
    if j.is_none() {
        out.push(ix.unknown_table(format!("{base}.junction"), junction));
    }
    for k in 0..2 {
        if s[k].is_none() {
            out.push(ix.unknown_table(format!("{base}.sides[{k}]"), &sides[k]));
        }
    }
    let (Some(j), Some(s0), Some(s1)) = (j, s[0], s[1]) else { return None };
    let mut ok = true;
    for (k, side) in [s0, s1].into_iter().enumerate() {
        if side == j {
            out.push(issue(
                format!("{base}.sides[{k}]"),
                format!("table `{}` is both the junction and a side of this m:m pattern", ix.name(j)),
                "the sides are the two tables the junction table connects",
            ));
            ok = false;
        }
    }
    if !ok {
        return None;
    }
    let mut rels = [0; 2];
    match names {
        Some(names) => {
            for (k, side) in [s0, s1].into_iter().enumerate() {
                let path = format!("{base}.relationships[{k}]");
                match ix.relationship(&names[k]) {
                    None => {
                        out.push(issue(
                            path,
                            format!("unknown relationship `{}`", names[k]),
                            "use a relationship `name` or its `FROM(cols)->TO(cols)` id",
                        ));
                        ok = false;
                    }
                    Some(r) if !connects(ix, r, j, side) => {
                        out.push(issue(
                            path,
                            format!(
                                "relationship `{}` does not connect junction `{}` and side `{}`",
                                ix.rel_label(r),
                                ix.name(j),
                                ix.name(side)
                            ),
                            "relationships[k] must join the junction table to sides[k]",
                        ));
                        ok = false;
                    }
                    Some(r) => rels[k] = r,
                }
            }
            if ok && rels[0] == rels[1] {
                out.push(issue(
                    format!("{base}.relationships[1]"),
                    "both junction relationships are the same".into(),
                    "name two different relationships",
                ));
                ok = false;
            }
        }
        None if s0 == s1 => {
            // A self m:m (e.g. person–friend–person) needs exactly two edges.
            match ix.between(j, s0) {
                [a, b] => rels = [*a, *b],
                found => {
                    out.push(issue(
                        format!("{base}.sides[1]"),
                        format!(
                            "junction `{}` of a self m:m on `{}` needs exactly two relationships to it, found {}",
                            ix.name(j),
                            ix.name(s0),
                            found.len()
                        ),
                        "name the two junction relationships in `relationships`",
                    ));
                    ok = false;
                }
            }
        }
        None => {
            for (k, side) in [s0, s1].into_iter().enumerate() {
                match ix.between(j, side) {
                    [r] => rels[k] = *r,
                    [] => {
                        out.push(issue(
                            format!("{base}.sides[{k}]"),
                            format!("junction `{}` has no relationship to side table `{}`", ix.name(j), ix.name(side)),
                            "add the relationship that joins the junction to this side, or fix the side",
                        ));
                        ok = false;
                    }
                    several => {
                        out.push(issue(
                            format!("{base}.sides[{k}]"),
                            format!(
                                "junction `{}` is joined to side `{}` by {} relationships ({}): ambiguous",
                                ix.name(j),
                                ix.name(side),
                                several.len(),
                                several.iter().map(|&r| ix.rel_label(r)).collect::<Vec<_>>().join(", ")
                            ),
                            "name the two junction relationships in `relationships`",
                        ));
                        ok = false;
                    }
                }
            }
        }
    }
    ok.then_some(Junction { junction: j, sides: [s0, s1], rels })
}

fn connects(ix: &Index, r: RelId, a: TableId, b: TableId) -> bool {
    matches!(ix.endpoints(r), Some((x, y)) if (x == a && y == b) || (x == b && y == a))
}

#[allow(clippy::too_many_arguments)]
fn tree(
    ix: &Index,
    p: usize,
    kind: TreeKind,
    root: &str,
    children: &[PatternNode],
    exclusive: bool,
    res: &mut Resolved,
    out: &mut Vec<ModelIssue>,
) {
    let base = format!("$.patterns[{p}]");
    let Some(r) = ix.table(root) else {
        out.push(ix.unknown_table(format!("{base}.root"), root));
        return;
    };
    if children.is_empty() {
        out.push(issue(
            format!("{base}.children"),
            format!("the {} rooted at `{}` has no inner tables", kind_name(kind), ix.name(r)),
            "list the inner tables in `children`, or remove the pattern",
        ));
    }
    if exclusive && children.len() < 2 {
        out.push(issue(
            format!("{base}.exclusive"),
            format!("`{}` marks its children exclusive but has {} child table(s)", ix.name(r), children.len()),
            "exclusive says each row is exactly one of several kinds: list at least two children, or remove \"exclusive\"",
        ));
    }
    let mut t = Tree { pattern: p, root: r, kind, exclusive, nodes: Vec::new() };
    let mut seen = vec![r];
    nodes(ix, &mut t, r, children, &format!("{base}.children"), &mut seen, out);
    res.trees.push(t);
}

#[allow(clippy::too_many_arguments)]
fn nodes(
    ix: &Index,
    t: &mut Tree,
    parent: TableId,
    children: &[PatternNode],
    path: &str,
    seen: &mut Vec<TableId>,
    out: &mut Vec<ModelIssue>,
) {
    for (k, node) in children.iter().enumerate() {
        let here = format!("{path}[{k}]");
        let Some(c) = ix.table(&node.table) else {
            out.push(ix.unknown_table(format!("{here}.table"), &node.table));
            continue;
        };
        if seen.contains(&c) {
            let what = if c == t.root { "its own root (a cycle)" } else { "a second time" };
            out.push(issue(
                format!("{here}.table"),
                format!(
                    "not a tree: `{}` appears in the {} rooted at `{}` as {what}",
                    ix.name(c),
                    kind_name(t.kind),
                    ix.name(t.root)
                ),
                "each table appears once in a star/snowflake; remove the repeated entry",
            ));
            continue;
        }
        seen.push(c);
        if node.exclusive && node.children.len() < 2 {
            out.push(issue(
                format!("{here}.exclusive"),
                format!("`{}` marks its children exclusive but has {} child table(s)", ix.name(c), node.children.len()),
                "exclusive says each row is exactly one of several kinds: list at least two children, or remove \"exclusive\"",
            ));
        }
        if let Some(rel) = parent_rel(ix, parent, c, node, &here, out) {
            t.nodes.push(TreeNode { table: c, parent, rel, path: format!("{here}.table"), exclusive: node.exclusive });
        }
        nodes(ix, t, c, &node.children, &format!("{here}.children"), seen, out);
    }
}

/// The relationship joining an inner table to its parent.
fn parent_rel(
    ix: &Index,
    parent: TableId,
    child: TableId,
    node: &PatternNode,
    here: &str,
    out: &mut Vec<ModelIssue>,
) -> Option<RelId> {
    if let Some(name) = &node.relationship {
        let path = format!("{here}.relationship");
        return match ix.relationship(name) {
            None => {
                out.push(issue(
                    path,
                    format!("unknown relationship `{name}`"),
                    "use a relationship `name` or its `FROM(cols)->TO(cols)` id",
                ));
                None
            }
            Some(r) if !connects(ix, r, parent, child) => {
                out.push(issue(
                    path,
                    format!(
                        "relationship `{}` does not join `{}` to its parent `{}`",
                        ix.rel_label(r),
                        ix.name(child),
                        ix.name(parent)
                    ),
                    "name a relationship between this table and its parent in the tree",
                ));
                None
            }
            Some(r) => Some(r),
        };
    }
    match ix.between(parent, child) {
        [r] => Some(*r),
        [] => {
            out.push(issue(
                format!("{here}.table"),
                format!("no relationship between `{}` and its parent `{}` in the pattern tree", ix.name(child), ix.name(parent)),
                "add the relationship that joins the inner table to its parent, or move the table under the right parent",
            ));
            None
        }
        several => {
            out.push(issue(
                format!("{here}.table"),
                format!(
                    "`{}` is joined to its parent `{}` by {} relationships ({}): ambiguous",
                    ix.name(child),
                    ix.name(parent),
                    several.len(),
                    several.iter().map(|&r| ix.rel_label(r)).collect::<Vec<_>>().join(", ")
                ),
                "say which one in the node's `relationship` field",
            ));
            None
        }
    }
}

pub(crate) fn kind_name(k: TreeKind) -> &'static str {
    match k {
        TreeKind::Star => "star",
        TreeKind::Snowflake => "snowflake",
    }
}
