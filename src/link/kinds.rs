//! Kinds of a pattern root (issue 23): the subtype children of a star
//! (`Policy_Amount` → `Premium`; `Claim_Amount` → `Loss_Payment`, …), read
//! without the LLM where the model's list is weakest.
//!
//! - [`named`] (`--kind-names on`): the kinds the question names word for
//!   word. The 1.5B model, asked to list a root's children and attributes
//!   in one list, leaves out a child the question spells ("total amount of
//!   premiums" → never `Premium`), though it lists attributes readily.
//! - [`single_marker`] (`--kind-instance on`): a kind that holds nothing
//!   but its key is only a filter; the view should hold the root's rows of
//!   that kind (the instance `ROOT@CHILD`, INNER-joined to the child), not
//!   every row with a LEFT JOIN branch whose NULLs QueryView must know to
//!   filter.

use crate::graph::{RelId, SchemaGraph, TableId};

use super::named::holds;
use super::retrieve::tokens;

/// `--kind-names` and `--kind-instance` by default: on since session 18.
/// With today's other defaults, recorded fresh where the view changed (the
/// embedded model, 15 of ACME's 44 questions): ACME 8 → 13 of 44 (+5, none
/// lost: "the loss reserve amount of all claims" now reads the
/// `Claim_Amount@Loss_Reserve` rows instead of every amount with a LEFT
/// JOIN branch, and "premium" keeps `Premium` and its instance); DDO 14 →
/// 14 and the Spider sample 63 → 63 (replayed: no prompt there changes).
pub const DEFAULT_ON: bool = true;

/// The subtype children of pattern node `r` ([`SchemaGraph::subtype_child`])
/// whose name or one of whose synonyms the question holds word for word
/// (stemmed words in a row: "loss payments" holds `Loss_Payment`, "expense
/// payment, loss reserve" does not hold `Expense_Reserve`), in model order.
pub fn named(graph: &SchemaGraph, question: &str, r: TableId) -> Vec<TableId> {
    let q = tokens(question);
    graph
        .pattern_children(r)
        .iter()
        .copied()
        .filter(|&c| child_rel(graph, r, c).is_some())
        .filter(|&c| {
            let t = graph.table(c);
            std::iter::once(&t.name).chain(&t.synonyms).any(|name| holds(&q, &tokens(name)))
        })
        .collect()
}

/// The relationship joining subtype child `c` to `r`, when `c` is one.
pub fn child_rel(graph: &SchemaGraph, r: TableId, c: TableId) -> Option<RelId> {
    let rel = graph.inner_position(c)?.rel;
    (graph.subtype_child(r, rel) == Some(c)).then_some(rel)
}

/// Whether subtype child `c` of `r` (through `rel`) has no column but its
/// join columns to `r`: a marker of a kind (`Premium(Policy_Amount_Identifier)`).
pub fn is_marker(graph: &SchemaGraph, rel: RelId, c: TableId) -> bool {
    let (from, _) = graph.endpoints(rel);
    let side = usize::from(from != c);
    let keys: Vec<&str> = graph.relationship(rel).on.iter().map(|p| p[side].as_str()).collect();
    let t = graph.table(c);
    !t.columns.is_empty() && t.columns.iter().all(|col| keys.iter().any(|k| k.eq_ignore_ascii_case(&col.name)))
}

/// When `kids` (the children chosen at pattern node `r`) hold exactly one
/// subtype child and it is a marker ([`is_marker`]): that child and its
/// relationship to `r`.
pub fn single_marker(graph: &SchemaGraph, r: TableId, kids: &[TableId]) -> Option<(TableId, RelId)> {
    let subtypes: Vec<(TableId, RelId)> =
        kids.iter().filter_map(|&c| child_rel(graph, r, c).map(|rel| (c, rel))).collect();
    match subtypes.as_slice() {
        [(c, rel)] if is_marker(graph, *rel, *c) => Some((*c, *rel)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::graph::fixtures::acme;

    use crate::graph::fixtures::ddo;

    fn names(g: &SchemaGraph, ts: &[TableId]) -> Vec<String> {
        ts.iter().map(|&t| g.name(t).to_string()).collect()
    }

    #[test]
    fn the_kinds_a_question_names_word_for_word() {
        let g = acme();
        let pa = g.table_id("Policy_Amount").unwrap();
        let ca = g.table_id("Claim_Amount").unwrap();
        assert_eq!(
            names(&g, &named(&g, "What is the total amount of premiums paid by policy number?", pa)),
            ["Premium"]
        );
        assert!(named(&g, "What is the average policy size?", pa).is_empty());
        // "expense payment, loss reserve" holds no "expense reserve".
        let q = "the sum of loss payment, loss reserve, expense payment amounts";
        assert_eq!(names(&g, &named(&g, q, ca)), ["Loss_Payment", "Loss_Reserve", "Expense_Payment"]);
        // Plurals and case.
        assert_eq!(names(&g, &named(&g, "All Expense Reserves by claim", ca)), ["Expense_Reserve"]);
    }

    #[test]
    fn only_a_single_marker_kind_becomes_an_instance() {
        let g = acme();
        let pa = g.table_id("Policy_Amount").unwrap();
        let premium = g.table_id("Premium").unwrap();
        let (c, rel) = single_marker(&g, pa, &[premium]).unwrap();
        assert_eq!(c, premium);
        assert_eq!(g.instance_label(pa, Some(rel)), "Policy_Amount@Premium.Policy_Amount_Identifier");
        let ca = g.table_id("Claim_Amount").unwrap();
        let lp = g.table_id("Loss_Payment").unwrap();
        let lr = g.table_id("Loss_Reserve").unwrap();
        assert!(single_marker(&g, ca, &[lp]).is_some());
        assert!(single_marker(&g, ca, &[lp, lr]).is_none(), "two kinds: the subtype prompt's business");
        assert!(single_marker(&g, ca, &[]).is_none());
        // DDO's BONUS holds an amount: a kind with data, not a marker.
        let d = ddo();
        let ret = d.table_id("RETENTION").unwrap();
        let bonus = d.table_id("BONUS").unwrap();
        assert!(single_marker(&d, ret, &[bonus]).is_none());
    }
}
