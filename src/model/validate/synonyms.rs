//! Synonyms (`synonyms` on tables and columns, `role_synonyms` on
//! relationships): each a non-blank word or phrase of at most
//! [`MAX_SYNONYM_CHARS`] characters, listed once per object
//! (case-insensitively), and role synonyms only beside a `role`.

use std::collections::HashMap;

use super::{issue, Index};
use crate::error::ModelIssue;

/// The longest synonym accepted: synonyms are words or short phrases, not
/// descriptions.
pub const MAX_SYNONYM_CHARS: usize = 100;

pub(super) fn check(ix: &Index, out: &mut Vec<ModelIssue>) {
    for (i, t) in ix.model.tables.iter().enumerate() {
        let base = format!("$.tables[{i}].synonyms");
        list(&t.synonyms, &base, &format!("table `{}`", t.name), out);
        for (j, c) in t.columns.iter().enumerate() {
            let base = format!("$.tables[{i}].columns[{j}].synonyms");
            list(&c.synonyms, &base, &format!("column `{}.{}`", t.name, c.name), out);
        }
    }
    for (r, rel) in ix.model.relationships.iter().enumerate() {
        let base = format!("$.relationships[{r}].role_synonyms");
        if rel.role.is_none() && !rel.role_synonyms.is_empty() {
            out.push(issue(
                base.clone(),
                format!("relationship `{}` has role_synonyms but names no role", rel.id()),
                "add \"role\": \"<name>\" or remove role_synonyms",
            ));
        }
        list(&rel.role_synonyms, &base, &format!("the role of relationship `{}`", rel.id()), out);
    }
}

/// One object's synonyms at JSON path `base`, of `what` (for messages).
fn list(synonyms: &[String], base: &str, what: &str, out: &mut Vec<ModelIssue>) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (k, s) in synonyms.iter().enumerate() {
        let path = format!("{base}[{k}]");
        let key = normalized(s);
        if key.is_empty() {
            out.push(issue(path, format!("empty synonym of {what}"), "remove it or write the word it stands for"));
        } else if s.chars().count() > MAX_SYNONYM_CHARS {
            out.push(issue(
                path,
                format!("synonym of {what} is {} characters long (at most {MAX_SYNONYM_CHARS})", s.chars().count()),
                "a synonym is a word or short phrase; put explanations in `description`",
            ));
        } else if let Some(first) = seen.get(&key) {
            out.push(issue(
                path,
                format!(
                    "duplicate synonym `{}` of {what} (also {base}[{first}]; synonyms are case-insensitive)",
                    s.trim()
                ),
                "list each synonym once",
            ));
        } else {
            seen.insert(key, k);
        }
    }
}

/// A synonym as compared: trimmed, inner whitespace collapsed, lower-cased.
pub(crate) fn normalized(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

#[cfg(test)]
mod tests {
    fn issues(json: &str) -> Vec<String> {
        let m: crate::types::DbModel = serde_json::from_str(json).expect("deserializes");
        super::super::issues(&m).into_iter().map(|i| format!("{}: {}", i.path, i.message)).collect()
    }

    #[test]
    fn blank_duplicate_long_and_roleless_synonyms_are_reported_by_json_path() {
        let long = "x".repeat(101);
        let json = format!(
            r#"{{"name": "w", "tables": [
                {{"name": "A", "primary_key": ["id"], "synonyms": ["thing", " ", "Thing "],
                  "columns": [{{"name": "id"}}, {{"name": "b_id", "synonyms": ["{long}", "ok"]}}]}},
                {{"name": "B", "primary_key": ["id"], "columns": [{{"name": "id", "synonyms": ["key", "KEY"]}}]}}],
              "relationships": [
                {{"from": "A", "to": "B", "cardinality": "M:1", "on": [["b_id", "id"]], "role_synonyms": ["owner"]}},
                {{"name": "r2", "from": "A", "to": "B", "cardinality": "M:1", "on": [["id", "id"]], "role": "twin",
                  "role_synonyms": ["sibling", ""]}}]}}"#
        );
        assert_eq!(
            issues(&json),
            [
                "$.tables[0].synonyms[1]: empty synonym of table `A`",
                "$.tables[0].synonyms[2]: duplicate synonym `Thing` of table `A` (also $.tables[0].synonyms[0]; synonyms are case-insensitive)",
                "$.tables[0].columns[1].synonyms[0]: synonym of column `A.b_id` is 101 characters long (at most 100)",
                "$.tables[1].columns[0].synonyms[1]: duplicate synonym `KEY` of column `B.id` (also $.tables[1].columns[0].synonyms[0]; synonyms are case-insensitive)",
                "$.relationships[0].role_synonyms: relationship `A(b_id)->B(id)` has role_synonyms but names no role",
                "$.relationships[1].role_synonyms[1]: empty synonym of the role of relationship `r2`",
            ]
        );
    }

    #[test]
    fn valid_synonyms_pass_and_none_is_the_default() {
        let json = r#"{"name": "w", "tables": [{"name": "A", "primary_key": ["id"], "synonyms": ["thing", "item"],
                       "columns": [{"name": "id", "synonyms": ["number"]}]}]}"#;
        assert_eq!(issues(json), Vec::<String>::new());
        let m: crate::types::DbModel = serde_json::from_str(json).unwrap();
        let plain = crate::types::DbModel {
            tables: vec![crate::types::Table { synonyms: Vec::new(), ..m.tables[0].clone() }],
            ..m.clone()
        };
        // No synonyms: nothing serialized (models without them read and write as before).
        assert!(!serde_json::to_string(&plain).unwrap().contains("synonyms\":[]"));
    }
}
