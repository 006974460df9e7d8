//! Conflicting pattern roles. The solver gives each role a meaning (Lucy
//! §3.3): a junction must sit between its two sides in a path (C3), a lookup
//! is a dead end (C4), an inner table is reached only along its tree branch
//! from the root and is not a core table. A table may therefore hold at most
//! one of these roles:
//!
//! - an inner table belongs to one tree, once;
//! - a table is the root of at most one tree, and a root is not an inner
//!   table of another tree (merge the trees instead);
//! - a lookup table is not a junction, a tree root or an inner table, and is
//!   listed once;
//! - a junction belongs to one m:m pattern, is not a side of another, and is
//!   not a tree root or an inner table;
//! - an m:m side is not an inner table (the junction is a core table and the
//!   solver joins inner tables only from their root).
//!
//! Allowed: a lookup, a core table or a tree root as an m:m side; a tree
//! root as a side of several m:m patterns.

use std::collections::HashMap;

use super::patterns::{kind_name, Resolved};
use super::{issue, Index};
use crate::error::ModelIssue;
use crate::types::ids::TableId;

pub(super) fn check(ix: &Index, res: &Resolved, out: &mut Vec<ModelIssue>) {
    // Where each table is an inner table / root: (path, tree index).
    let mut inner: HashMap<TableId, (String, usize)> = HashMap::new();
    let mut roots: HashMap<TableId, (String, usize)> = HashMap::new();
    let tree_desc = |i: usize| {
        let t = &res.trees[i];
        format!("the {} rooted at `{}` ($.patterns[{}])", kind_name(t.kind), ix.name(t.root), t.pattern)
    };
    for (i, t) in res.trees.iter().enumerate() {
        let path = format!("$.patterns[{}].root", t.pattern);
        match roots.get(&t.root) {
            Some((_, first)) => out.push(issue(
                path,
                format!("`{}` is the root of two patterns: {} and this one", ix.name(t.root), tree_desc(*first)),
                "merge the two trees into one pattern",
            )),
            None => {
                roots.insert(t.root, (path, i));
            }
        }
        for n in &t.nodes {
            match inner.get(&n.table) {
                Some((_, first)) if *first != i => out.push(issue(
                    n.path.clone(),
                    format!(
                        "`{}` is an inner table of two trees: {} and {}",
                        ix.name(n.table),
                        tree_desc(*first),
                        tree_desc(i)
                    ),
                    "an inner table belongs to exactly one star/snowflake; remove it from one of them",
                )),
                Some(_) => {}
                None => {
                    inner.insert(n.table, (n.path.clone(), i));
                }
            }
        }
    }
    for (&t, (path, i)) in sorted(&roots) {
        if let Some((_, j)) = inner.get(&t) {
            if j != i {
                out.push(issue(
                    path.clone(),
                    format!(
                        "`{}` is the root of a {} ($.patterns[{}]) and an inner table of {}",
                        ix.name(t),
                        kind_name(res.trees[*i].kind),
                        res.trees[*i].pattern,
                        tree_desc(*j)
                    ),
                    "a root is a core table and an inner table is not: merge this tree into the other one under that inner table",
                ));
            }
        }
    }

    let mut lookups: HashMap<TableId, &str> = HashMap::new();
    for (t, path) in &res.lookups {
        let name = ix.name(*t);
        if let Some(first) = lookups.get(t) {
            out.push(issue(
                path.clone(),
                format!("`{name}` is declared a lookup twice (also {first})"),
                "list each lookup table once",
            ));
            continue;
        }
        lookups.insert(*t, path);
        if let Some((_, i)) = roots.get(t) {
            out.push(issue(
                path.clone(),
                format!("lookup table `{name}` is also the root of {}", tree_desc(*i)),
                LOOKUP_HINT,
            ));
        }
        if let Some((_, i)) = inner.get(t) {
            out.push(issue(
                path.clone(),
                format!("lookup table `{name}` is also an inner table of {}", tree_desc(*i)),
                LOOKUP_HINT,
            ));
        }
        if let Some((_, p)) = res.junctions.iter().find(|(j, _)| j.junction == *t) {
            out.push(issue(
                path.clone(),
                format!("lookup table `{name}` is also the junction of the m:m pattern $.patterns[{p}]"),
                LOOKUP_HINT,
            ));
        }
    }

    let mut junctions: HashMap<TableId, usize> = HashMap::new();
    for (j, p) in &res.junctions {
        let path = format!("$.patterns[{p}].junction");
        let name = ix.name(j.junction);
        if let Some(first) = junctions.get(&j.junction) {
            out.push(issue(
                path.clone(),
                format!("`{name}` is the junction of two m:m patterns ($.patterns[{first}] and this one)"),
                "a junction sits between exactly two sides; keep one pattern",
            ));
        } else {
            junctions.insert(j.junction, *p);
        }
        if let Some((_, i)) = roots.get(&j.junction) {
            out.push(issue(
                path.clone(),
                format!("junction `{name}` is also the root of {}", tree_desc(*i)),
                JUNCTION_HINT,
            ));
        }
        if let Some((_, i)) = inner.get(&j.junction) {
            out.push(issue(
                path.clone(),
                format!("junction `{name}` is also an inner table of {}", tree_desc(*i)),
                JUNCTION_HINT,
            ));
        }
        for (k, s) in j.sides.iter().enumerate() {
            if let Some((_, i)) = inner.get(s) {
                out.push(issue(
                    format!("$.patterns[{p}].sides[{k}]"),
                    format!("m:m side `{}` is an inner table of {}", ix.name(*s), tree_desc(*i)),
                    "the solver reaches inner tables only from their root: use the root as the side, or take the table out of the tree",
                ));
            }
        }
    }
    for (j, p) in &res.junctions {
        for (k, s) in j.sides.iter().enumerate() {
            if let Some(q) = junctions.get(s) {
                out.push(issue(
                    format!("$.patterns[{p}].sides[{k}]"),
                    format!("m:m side `{}` is the junction of $.patterns[{q}]", ix.name(*s)),
                    JUNCTION_HINT,
                ));
            }
        }
    }
}

const LOOKUP_HINT: &str =
    "a lookup is a dead end in a join path; it cannot also hold another pattern role — drop one of the two";
const JUNCTION_HINT: &str = "a junction must sit between its two sides in a join path; it cannot also hold another pattern role — drop one of the two";

/// Deterministic iteration order (by table id) for stable messages.
fn sorted<V>(m: &HashMap<TableId, V>) -> Vec<(&TableId, &V)> {
    let mut v: Vec<_> = m.iter().collect();
    v.sort_by_key(|(k, _)| **k);
    v
}
