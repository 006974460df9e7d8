//! Which *roles* a relevant table may play in a question (issue 17, item 5):
//! the ways in that MatchTables asks about before exploring a table.
//!
//! A way in of relevant table `T` is a relationship that joins `T` to a
//! relevant table `A` (or to `T` itself) such that each `A` row reaches at
//! most one `T` row (`A → T` is M:1 or 1:1): `T` is *referenced* by `A`,
//! like LOCATION by CLIENT.loc_id and by DATACENTER.loc_id, or EMPLOYEE by
//! EMPLOYEE.manager_id. Such a role instance is a lookup from its anchor: it
//! never multiplies the anchor's rows, so keeping one role too many costs a
//! column set, not wrong counts.
//!
//! Ways in are a *choice* (one prompt) only where the model says the
//! instances differ:
//! - `T` is a lookup (`patterns[].kind = lookup`): no path may pass through
//!   it, so each referencing table reaches its own row (the client's city,
//!   the datacenter's city);
//! - one table references `T` twice (bill and ship address, source and
//!   destination airport), or `T` references itself (an employee's
//!   manager);
//! - two or more ways carry a declared `role`.
//!
//! Elsewhere a table referenced by two relevant tables is the hub that
//! relates them (CLIENT between its PAYMENT and its RETENTION rows): the
//! question means one row of it, and one instance per referencing table
//! would lose that. A table that instead references two relevant tables (a
//! junction or a fact: RSPOOL2CLIENT between CLIENT and RESOURCEPOOL) has
//! no ways in at all: each of its rows *is* one link between them, and one
//! instance per side would cut the link the question needs (the paper's Q1
//! and every m:m question); a declared m:m junction whose two sides are
//! relevant is excluded by name as well, whatever its cardinalities say.
//! Pattern roots are not offered roles: their inner tables hang off the
//! plain instance, except that a root with exclusive children may be split
//! into subtype instances once its children are chosen (`ask_subtypes` in
//! the parent module).

use crate::graph::{RelId, SchemaGraph, TableId};
use crate::types::Cardinality;

/// One way a relevant table joins the question: the relationship and the
/// table at its other end (the table itself for a self-relationship).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Way {
    pub rel: RelId,
    pub anchor: TableId,
}

/// The ways in of relevant table `t`, given the relevant core tables, in
/// model order of the relationships. A role question is worth asking when
/// there are two or more, or when one is a self-relationship (then the
/// choice is between `t` alone and `t` with its related row).
pub fn ways_in(graph: &SchemaGraph, t: TableId, relevant: &[TableId]) -> Vec<Way> {
    if !graph.is_core(t) || graph.pattern_root_kind(t).is_some() {
        return Vec::new();
    }
    if graph.junction_of(t).is_some_and(|j| j.sides.iter().all(|s| relevant.contains(s))) {
        return Vec::new();
    }
    let forbidden_rels = graph.forbidden_relationships();
    let forbidden_tables = graph.forbidden_tables();
    let mut rels: Vec<RelId> = graph.neighbors(t).map(|(_, r)| r).collect();
    rels.sort_unstable();
    rels.dedup();
    rels.into_iter()
        .filter(|r| !forbidden_rels.contains(r))
        .filter_map(|rel| {
            let anchor = graph.anchor(t, rel);
            let reachable = anchor == t || (relevant.contains(&anchor) && graph.is_core(anchor));
            let one_side =
                matches!(graph.cardinality_from(rel, anchor), Cardinality::ManyToOne | Cardinality::OneToOne);
            (reachable && one_side && !forbidden_tables.contains(&anchor)).then_some(Way { rel, anchor })
        })
        .collect()
}

/// Whether the ways in of `t` offer a choice worth one prompt (see the
/// module documentation): a self-relationship, a lookup or a table
/// referenced twice by one table, or two declared roles.
pub fn is_choice(graph: &SchemaGraph, t: TableId, ways: &[Way]) -> bool {
    if ways.iter().any(|w| w.anchor == t) {
        return true;
    }
    if ways.len() < 2 {
        return false;
    }
    let twice_from_one = ways.iter().enumerate().any(|(i, w)| ways[i + 1..].iter().any(|v| v.anchor == w.anchor));
    let declared = ways.iter().filter(|w| graph.relationship(w.rel).role.is_some()).count() >= 2;
    graph.is_lookup(t) || twice_from_one || declared
}

/// One line of the role prompt: what the instance is, in the model's words
/// ("LOCATION joined to CLIENT on CLIENT.loc_id = LOCATION.id: Where a
/// client is based.").
pub fn describe(graph: &SchemaGraph, t: TableId, way: Way) -> String {
    let rel = graph.relationship(way.rel);
    let (from, _) = graph.endpoints(way.rel);
    // Column pairs as anchor column = instance column.
    let anchor_side = if way.anchor == t || from == way.anchor { 0 } else { 1 };
    let on: Vec<String> = rel
        .on
        .iter()
        .map(|p| format!("{}.{} = {}.{}", graph.name(way.anchor), p[anchor_side], graph.name(t), p[1 - anchor_side]))
        .collect();
    let head = if way.anchor == t {
        format!("the {} row that another {} row points to, on {}", graph.name(t), graph.name(t), on.join(" AND "))
    } else {
        format!("{} joined to {} on {}", graph.name(t), graph.name(way.anchor), on.join(" AND "))
    };
    let words = rel.role_description.as_deref().or(rel.description.as_deref()).map(str::trim).filter(|d| !d.is_empty());
    match words {
        Some(d) => format!("{head}: {d}"),
        None => head,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::graph::fixtures::ddo;

    fn ids(g: &SchemaGraph, names: &[&str]) -> Vec<TableId> {
        names.iter().map(|n| g.table_id(n).unwrap()).collect()
    }

    fn labels(g: &SchemaGraph, t: TableId, ways: &[Way]) -> Vec<String> {
        ways.iter().map(|w| g.instance_label(t, Some(w.rel))).collect()
    }

    #[test]
    fn location_referenced_by_client_and_datacenter_is_a_choice() {
        let g = ddo();
        let rel = ids(&g, &["CLIENT", "DATACENTER", "LOCATION"]);
        let loc = rel[2];
        let ways = ways_in(&g, loc, &rel);
        assert_eq!(labels(&g, loc, &ways), ["LOCATION@CLIENT.loc_id", "LOCATION@DATACENTER.loc_id"]);
        assert!(is_choice(&g, loc, &ways));
        assert_eq!(
            describe(&g, loc, ways[0]),
            "LOCATION joined to CLIENT on CLIENT.loc_id = LOCATION.id: Where a client is based."
        );
        // One referencing table: no choice, no prompt.
        let two = ids(&g, &["CLIENT", "LOCATION"]);
        let ways = ways_in(&g, loc, &two);
        assert_eq!(ways.len(), 1);
        assert!(!is_choice(&g, loc, &ways));
    }

    #[test]
    fn junctions_and_facts_between_relevant_tables_have_no_roles() {
        let g = ddo();
        // RSPOOL2CLIENT references both relevant sides: each row is one link.
        let rel = ids(&g, &["CLIENT", "RESOURCEPOOL", "RSPOOL2CLIENT"]);
        assert!(ways_in(&g, rel[2], &rel).is_empty());
        // CLIENT is referenced by PAYMENT, RETENTION and RSPOOL2CLIENT, but
        // it is no lookup: it is the client those rows share.
        let rel = ids(&g, &["CLIENT", "PAYMENT", "RETENTION", "RSPOOL2CLIENT"]);
        let ways = ways_in(&g, rel[0], &rel);
        assert_eq!(ways.len(), 3);
        assert!(!is_choice(&g, rel[0], &ways));
        // A pattern root is not offered roles.
        let rel = ids(&g, &["RESOURCEPOOL", "RSPOOL2CLIENT"]);
        assert!(ways_in(&g, rel[0], &rel).is_empty());
    }

    #[test]
    fn a_self_relationship_is_a_choice_on_its_own() {
        let m = crate::model::parse(
            &serde_json::json!({
                "name": "hr",
                "tables": [{"name": "EMPLOYEE", "columns": [{"name": "id"}, {"name": "name"}, {"name": "manager_id"}]}],
                "relationships": [{"from": "EMPLOYEE", "to": "EMPLOYEE", "cardinality": "M:1", "on": [["manager_id", "id"]],
                                   "role": "manager", "role_description": "the employee's manager"}]
            })
            .to_string(),
            None,
        )
        .unwrap();
        let g = SchemaGraph::new(m).unwrap();
        let ways = ways_in(&g, 0, &[0]);
        assert_eq!(labels(&g, 0, &ways), ["EMPLOYEE@manager"]);
        assert!(is_choice(&g, 0, &ways));
        assert_eq!(
            describe(&g, 0, ways[0]),
            "the EMPLOYEE row that another EMPLOYEE row points to, on EMPLOYEE.manager_id = EMPLOYEE.id: the employee's manager"
        );
    }
}

#[cfg(test)]
mod parallel_tests {
    use super::*;

    #[test]
    fn one_table_referencing_another_twice_is_a_choice() {
        let m = crate::model::parse(
            &serde_json::json!({
                "name": "shop",
                "tables": [
                    {"name": "ORDERS", "columns": [{"name": "id"}, {"name": "bill_address_id"}, {"name": "ship_address_id"}, {"name": "customer_id"}]},
                    {"name": "ADDRESS", "columns": [{"name": "id"}, {"name": "city"}]},
                    {"name": "CUSTOMER", "columns": [{"name": "id"}, {"name": "name"}]}
                ],
                "relationships": [
                    {"from": "ORDERS", "to": "ADDRESS", "cardinality": "M:1", "on": [["bill_address_id", "id"]]},
                    {"from": "ORDERS", "to": "ADDRESS", "cardinality": "M:1", "on": [["ship_address_id", "id"]]},
                    {"from": "ORDERS", "to": "CUSTOMER", "cardinality": "M:1", "on": [["customer_id", "id"]]}
                ]
            })
            .to_string(),
            None,
        )
        .unwrap();
        let g = SchemaGraph::new(m).unwrap();
        let ways = ways_in(&g, 1, &[0, 1]);
        assert_eq!(ways.len(), 2);
        assert!(is_choice(&g, 1, &ways));
        // ADDRESS alone: no referencing table is relevant.
        assert!(ways_in(&g, 1, &[1]).is_empty());
        // CUSTOMER is referenced once.
        assert!(!is_choice(&g, 2, &ways_in(&g, 2, &[0, 2])));
    }
}
