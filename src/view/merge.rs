//! `--view-columns all-once`: of the columns that an INNER join makes equal
//! on every row of the view (`ON A.x = B.y`), the view keeps one. A foreign
//! key that repeats the key it points to (`CLAIM_AMOUNT.Claim_Identifier`
//! beside `CLAIM.Claim_Identifier`), or a subtype's key that repeats its
//! supertype's (`LOSS_PAYMENT.Claim_Amount_Identifier`), is then not shown
//! twice under two names: QueryView cannot sum a key for an amount, or
//! count one column where the question means the other.
//!
//! Why only INNER joins: the condition of an INNER join holds on every row
//! the view returns (SQL drops the rows where it is false or NULL, whatever
//! the joins before it), while a LEFT JOIN's right side is NULL where no row
//! matches.
//!
//! Which column stands for a set of equal ones: a referenced end (the `to`
//! column of a relationship) that is no join's referencing end, else any
//! referenced end, else the first; ties go to the instance joined first and
//! then to the column's place in its table. The stand-in is always kept.

use std::collections::BTreeMap;

use crate::graph::{ColumnId, SchemaGraph};
use crate::types::{InstanceColumn, JoinKind};

use super::joins::{left_is_from, JoinTree};

/// For every column the view leaves out, the column that stands for it
/// (equal to it on every row).
pub fn stand_ins(graph: &SchemaGraph, jt: &JoinTree) -> BTreeMap<InstanceColumn, InstanceColumn> {
    // Union-find over the join columns of the INNER joins.
    let mut parent: BTreeMap<InstanceColumn, InstanceColumn> = BTreeMap::new();
    // (is a referencing end somewhere, is a referenced end somewhere)
    let mut ends: BTreeMap<InstanceColumn, (bool, bool)> = BTreeMap::new();
    for j in jt.joins.iter().filter(|j| j.kind == JoinKind::Inner) {
        let rel = graph.relationship(j.rel);
        let (from, to) = if left_is_from(graph, jt, j) { (j.left, j.right) } else { (j.right, j.left) };
        for [f, t] in &rel.on {
            let (Some(fc), Some(tc)) = (slot(graph, jt, from, f), slot(graph, jt, to, t)) else {
                continue;
            };
            ends.entry(fc).or_default().0 = true;
            ends.entry(tc).or_default().1 = true;
            let (rf, rt) = (find(&mut parent, fc), find(&mut parent, tc));
            if rf != rt {
                parent.insert(rf, rt);
            }
        }
    }
    let members: Vec<InstanceColumn> = ends.keys().copied().collect();
    let mut classes: BTreeMap<InstanceColumn, Vec<InstanceColumn>> = BTreeMap::new();
    for m in members {
        let root = find(&mut parent, m);
        classes.entry(root).or_default().push(m);
    }
    let mut out = BTreeMap::new();
    for class in classes.values() {
        // BTreeMap order: by instance (join order), then column place.
        let rank = |c: &InstanceColumn| {
            let (referencing, referenced) = ends[c];
            match (referenced, referencing) {
                (true, false) => 0,
                (true, true) => 1,
                _ => 2,
            }
        };
        let Some(keep) = class.iter().copied().min_by_key(|c| (rank(c), *c)) else {
            continue;
        };
        for &c in class.iter().filter(|&&c| c != keep) {
            out.insert(c, keep);
        }
    }
    out
}

/// Instance `i`'s column named `name`.
fn slot(graph: &SchemaGraph, jt: &JoinTree, i: usize, name: &str) -> Option<InstanceColumn> {
    let column: ColumnId = graph.names().column(jt.instances[i].table, name)?;
    Some(InstanceColumn { instance: i, column })
}

fn find(parent: &mut BTreeMap<InstanceColumn, InstanceColumn>, x: InstanceColumn) -> InstanceColumn {
    let mut root = x;
    while let Some(&p) = parent.get(&root) {
        root = p;
    }
    // Path compression.
    let mut cur = x;
    while let Some(&p) = parent.get(&cur) {
        if p == root {
            break;
        }
        parent.insert(cur, root);
        cur = p;
    }
    root
}
