//! Column aliases of the view: `<TABLE>_<column>`, at most `MAX_ALIAS`
//! characters, unique case-insensitively (SQLite and MySQL compare column
//! names without case; Postgres folds unquoted names).

use std::collections::HashSet;

use crate::graph::{RelId, SchemaGraph, TableId};

/// The instance alias of table `t` in the role of relationship `rel`:
/// `TABLE_<role>` with the table's own words taken out of the role
/// (`ADDRESS` as `ship_address` → `ADDRESS_ship`, `EMPLOYEE` as `manager`
/// → `EMPLOYEE_manager`). Without a declared role: `TABLE_<OTHER>` when one
/// relationship joins the two tables (`LOCATION_CLIENT`), else the join
/// columns of the other end without `id` (`ADDRESS_ship` for
/// `ship_address_id`), else the relationship's name. The caller makes it
/// unique.
pub fn role_alias(graph: &SchemaGraph, t: TableId, rel: RelId) -> String {
    let name = graph.name(t);
    let r = graph.relationship(rel);
    let own: HashSet<String> = words(name).into_iter().collect();
    let strip = |s: &str| -> String {
        let w: Vec<String> = words(s).into_iter().filter(|x| !own.contains(x) && x != "id").collect();
        w.join("_")
    };
    let part = match &r.role {
        Some(role) => Some(strip(role)).filter(|x| !x.is_empty()).unwrap_or_else(|| role.clone()),
        None => {
            let (from, to) = graph.endpoints(rel);
            let other = graph.anchor(t, rel);
            if other != t && graph.relationships_between(t, other).len() == 1 {
                graph.name(other).to_string()
            } else {
                // The other end's join columns (for a self-relationship, the `from` end's).
                let side = if from == to || other == from { 0 } else { 1 };
                let cols: Vec<&str> = r.on.iter().map(|p| p[side].as_str()).collect();
                Some(strip(&cols.join("_")))
                    .filter(|x| !x.is_empty())
                    .or_else(|| r.name.clone())
                    .unwrap_or_else(|| format!("{}_{}", graph.name(other), cols.join("_")))
            }
        }
    };
    sanitize(&format!("{name}_{part}"))
}

/// Lower-case words of a name split at `_`, `-`, spaces and dots.
fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

/// Longest alias: Postgres truncates identifiers at 63 bytes.
pub const MAX_ALIAS: usize = 63;

/// Hands out collision-free aliases.
#[derive(Debug, Default)]
pub struct Aliaser {
    used: HashSet<String>,
}

impl Aliaser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Alias for `column` of the instance `instance`.
    pub fn alias(&mut self, instance: &str, column: &str) -> String {
        let base = sanitize(&format!("{instance}_{column}"));
        let base = if base.len() > MAX_ALIAS { shorten(&base) } else { base };
        let mut cand = base.clone();
        let mut k = 2;
        while self.used.contains(&cand.to_ascii_lowercase()) {
            let suffix = format!("_{k}");
            let keep = MAX_ALIAS.saturating_sub(suffix.len()).min(base.len());
            cand = format!("{}{suffix}", cut(&base, keep));
            k += 1;
        }
        self.used.insert(cand.to_ascii_lowercase());
        cand
    }
}

/// Replace characters that would force quoting everywhere by `_`.
fn sanitize(s: &str) -> String {
    let mut out: String = s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if out.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// Keep the head and tag it with a short stable hash of the full name, so two
/// long names that share a prefix still get different aliases.
fn shorten(s: &str) -> String {
    let mut h: u32 = 2166136261;
    for b in s.bytes() {
        h = (h ^ b as u32).wrapping_mul(16777619);
    }
    let tag = format!("_{:06x}", h & 0xFF_FFFF);
    format!("{}{tag}", cut(s, MAX_ALIAS - tag.len()))
}

fn cut(s: &str, n: usize) -> &str {
    let mut end = n.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_alias() {
        let mut a = Aliaser::new();
        assert_eq!(a.alias("CLIENT", "name"), "CLIENT_name");
        assert_eq!(a.alias("LOCATION_2", "city"), "LOCATION_2_city");
    }

    #[test]
    fn collisions_are_numbered_case_insensitively() {
        let mut a = Aliaser::new();
        assert_eq!(a.alias("A_B", "c"), "A_B_c");
        assert_eq!(a.alias("A", "B_c"), "A_B_c_2");
        assert_eq!(a.alias("a", "b_C"), "a_b_C_3");
    }

    #[test]
    fn long_names_are_capped_and_distinct() {
        let mut a = Aliaser::new();
        let t = "T".repeat(50);
        let x = a.alias(&t, &format!("{}_one", "c".repeat(30)));
        let y = a.alias(&t, &format!("{}_two", "c".repeat(30)));
        assert!(x.len() <= MAX_ALIAS && y.len() <= MAX_ALIAS, "{x} {y}");
        assert_ne!(x.to_lowercase(), y.to_lowercase());
        // Same long name twice: numbered, still capped.
        let z = a.alias(&t, &format!("{}_one", "c".repeat(30)));
        assert!(z.len() <= MAX_ALIAS);
        assert_ne!(z, x);
    }

    #[test]
    fn role_aliases_drop_the_table_s_own_words() {
        let m = crate::model::parse(
            &serde_json::json!({
                "name": "shop",
                "tables": [
                    {"name": "ORDERS", "columns": [{"name": "id"}, {"name": "ship_address_id"}, {"name": "bill_address_id"}, {"name": "store_id"}]},
                    {"name": "ADDRESS", "columns": [{"name": "id"}]},
                    {"name": "STORE", "columns": [{"name": "id"}]},
                    {"name": "EMPLOYEE", "columns": [{"name": "id"}, {"name": "manager_id"}]}
                ],
                "relationships": [
                    {"from": "ORDERS", "to": "ADDRESS", "cardinality": "M:1", "on": [["ship_address_id", "id"]]},
                    {"from": "ORDERS", "to": "ADDRESS", "cardinality": "M:1", "on": [["bill_address_id", "id"]], "role": "bill_address"},
                    {"from": "ORDERS", "to": "STORE", "cardinality": "M:1", "on": [["store_id", "id"]]},
                    {"from": "EMPLOYEE", "to": "EMPLOYEE", "cardinality": "M:1", "on": [["manager_id", "id"]]}
                ]
            })
            .to_string(),
            None,
        )
        .unwrap();
        let g = SchemaGraph::new(m).unwrap();
        assert_eq!(role_alias(&g, 1, 0), "ADDRESS_ship", "undeclared, parallel: the join column");
        assert_eq!(role_alias(&g, 1, 1), "ADDRESS_bill", "declared role");
        assert_eq!(role_alias(&g, 2, 2), "STORE_ORDERS", "one relationship: the other table");
        assert_eq!(role_alias(&g, 0, 2), "ORDERS_STORE");
        assert_eq!(role_alias(&g, 3, 3), "EMPLOYEE_manager", "self-relationship: the from column");
    }

    #[test]
    fn odd_characters_are_replaced() {
        let mut a = Aliaser::new();
        assert_eq!(a.alias("my table", "2nd-col"), "my_table_2nd_col");
        assert_eq!(a.alias("1x", "y"), "_1x_y");
    }
}
