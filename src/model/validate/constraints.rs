//! The user constraints block: every table and relationship it names must
//! exist, and a table cannot be both forbidden and required.

use super::patterns::Resolved;
use super::{issue, Index};
use crate::error::ModelIssue;
use crate::model::resolve::RelRef;

pub(super) fn check(ix: &Index, _res: &Resolved, out: &mut Vec<ModelIssue>) {
    let c = &ix.model.constraints;
    let mut forbidden = Vec::new();
    for (k, t) in c.forbid_tables.iter().enumerate() {
        match ix.table(t) {
            Some(id) => forbidden.push(id),
            None => out.push(ix.unknown_table(format!("$.constraints.forbid_tables[{k}]"), t)),
        }
    }
    for (k, t) in c.require_tables.iter().enumerate() {
        let path = format!("$.constraints.require_tables[{k}]");
        match ix.table(t) {
            Some(id) if forbidden.contains(&id) => out.push(issue(
                path,
                format!("table `{}` is both required and forbidden", ix.name(id)),
                "remove it from forbid_tables or from require_tables",
            )),
            Some(_) => {}
            None => out.push(ix.unknown_table(path, t)),
        }
    }
    for (k, s) in c.forbid_relationships.iter().enumerate() {
        let path = format!("$.constraints.forbid_relationships[{k}]");
        match ix.names.relationship_ref(s) {
            Some(RelRef::One(_)) => {}
            Some(RelRef::Between(a, b, rels)) if rels.is_empty() => out.push(issue(
                path,
                format!("no relationship between `{}` and `{}`, so `{s}` forbids nothing", ix.name(a), ix.name(b)),
                "name two tables that are joined by a relationship, or remove the entry",
            )),
            Some(RelRef::Between(..)) => {}
            None => out.push(issue(
                path,
                format!("`{s}` matches no relationship"),
                "use a relationship `name`, its `FROM(cols)->TO(cols)` id, or `A-B` for every relationship between tables A and B",
            )),
        }
    }
}
