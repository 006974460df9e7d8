//! Relationship endpoints and join columns.

use super::{issue, Index};
use crate::error::ModelIssue;

pub(super) fn check(ix: &Index, out: &mut Vec<ModelIssue>) {
    for (r, rel) in ix.model.relationships.iter().enumerate() {
        let base = format!("$.relationships[{r}]");
        let from = ix.table(&rel.from);
        let to = ix.table(&rel.to);
        if from.is_none() {
            out.push(ix.unknown_table(format!("{base}.from"), &rel.from));
        }
        if to.is_none() {
            out.push(ix.unknown_table(format!("{base}.to"), &rel.to));
        }
        if rel.on.is_empty() {
            out.push(issue(
                format!("{base}.on"),
                format!("relationship `{}` has no join columns", rel.id()),
                "list the join column pairs, e.g. \"on\": [[\"loc_id\", \"id\"]]",
            ));
        }
        for (k, [a, b]) in rel.on.iter().enumerate() {
            for (side, table, col) in [(0, from, a), (1, to, b)] {
                let Some(t) = table.map(|t| &ix.model.tables[t]) else { continue };
                if t.column(col).is_none() {
                    let close = crate::model::closest(col, t.columns.iter().map(|c| c.name.as_str()));
                    let end = if side == 0 { "from" } else { "to" };
                    out.push(issue(
                        format!("{base}.on[{k}][{side}]"),
                        format!("unknown column `{col}` in table `{}` (the `{end}` table of this relationship)", t.name),
                        &match close {
                            Some(c) => format!("did you mean `{c}`? Each pair is [column of `from`, column of `to`]"),
                            None => "each pair is [column of `from`, column of `to`]; use columns defined in $.tables".into(),
                        },
                    ));
                }
            }
        }
    }
}
