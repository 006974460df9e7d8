//! Relationship endpoints, join columns and role names.

use std::collections::HashMap;

use super::{issue, Index};
use crate::error::ModelIssue;
use crate::types::ids::TableId;

/// Whether `s` can be a role name: letters, digits and `_`, not starting
/// with a digit (it becomes part of view aliases and of `TABLE@role`).
pub(crate) fn valid_role_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic() || f == '_') && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

/// Role names: well formed, described only when named, and unique among
/// the relationships of each table they touch (`TABLE@role` must name one
/// relationship).
fn check_roles(ix: &Index, out: &mut Vec<ModelIssue>) {
    let mut seen: HashMap<(TableId, String), usize> = HashMap::new();
    for (r, rel) in ix.model.relationships.iter().enumerate() {
        let base = format!("$.relationships[{r}]");
        let Some(role) = &rel.role else {
            if rel.role_description.is_some() {
                out.push(issue(
                    format!("{base}.role_description"),
                    format!("relationship `{}` describes a role but names none", rel.id()),
                    "add \"role\": \"<name>\" (e.g. \"bill_address\") or remove role_description",
                ));
            }
            continue;
        };
        if !valid_role_name(role) {
            out.push(issue(
                format!("{base}.role"),
                format!("role `{role}` of relationship `{}` is not a plain name", rel.id()),
                "use letters, digits and _ only, starting with a letter (e.g. bill_address): the role becomes part of TABLE@role and of view column aliases",
            ));
            continue;
        }
        let Some((a, b)) = ix.endpoints(r) else { continue };
        let mut clash = None;
        for t in if a == b { vec![a] } else { vec![a, b] } {
            if let Some(&first) = seen.get(&(t, role.to_lowercase())) {
                clash.get_or_insert((first, t));
            } else {
                seen.insert((t, role.to_lowercase()), r);
            }
        }
        if let Some((first, t)) = clash {
            out.push(issue(
                format!("{base}.role"),
                format!("role `{role}` is also the role of $.relationships[{first}] (`{}`), which also joins table `{}`", ix.rel_label(first), ix.name(t)),
                &format!("role names must be unique among the relationships of a table, so that {}@{role} names one of them: rename one role", ix.name(t)),
            ));
        }
    }
}

/// `via`: a table other than the two ends, joined to each end by a
/// relationship (the path the relationship short-cuts).
fn check_via(ix: &Index, out: &mut Vec<ModelIssue>) {
    for (r, rel) in ix.model.relationships.iter().enumerate() {
        let Some(via) = &rel.via else { continue };
        let path = format!("$.relationships[{r}].via");
        let Some(v) = ix.table(via) else {
            out.push(ix.unknown_table(path, via));
            continue;
        };
        let Some((a, b)) = ix.endpoints(r) else { continue };
        if v == a || v == b {
            out.push(issue(
                path,
                format!("relationship `{}` names its own end `{via}` as the table it short-cuts", rel.id()),
                "via names a third table whose path from `from` to `to` this relationship agrees with (e.g. Policy_Coverage_Detail for Policy_Amount -> Policy); remove via otherwise",
            ));
            continue;
        }
        let joined = |t: TableId| {
            (0..ix.model.relationships.len())
                .any(|o| o != r && ix.endpoints(o).is_some_and(|(x, y)| (x == t && y == v) || (x == v && y == t)))
        };
        for end in [a, b] {
            if !joined(end) {
                out.push(issue(
                    path.clone(),
                    format!(
                        "relationship `{}` short-cuts `{via}`, but no relationship joins `{via}` and `{}`",
                        rel.id(),
                        ix.name(end)
                    ),
                    "via must be joined to both ends of the relationship: add that relationship, or remove via",
                ));
            }
        }
    }
}

pub(super) fn check(ix: &Index, out: &mut Vec<ModelIssue>) {
    check_roles(ix, out);
    check_via(ix, out);
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
                        format!(
                            "unknown column `{col}` in table `{}` (the `{end}` table of this relationship)",
                            t.name
                        ),
                        &match close {
                            Some(c) => format!("did you mean `{c}`? Each pair is [column of `from`, column of `to`]"),
                            None => "each pair is [column of `from`, column of `to`]; use columns defined in $.tables"
                                .into(),
                        },
                    ));
                }
            }
        }
    }
}
