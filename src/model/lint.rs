//! Warnings: things that are legal in a dbModel but usually a mistake.
//! `lucy model check` prints them without failing; the planner ignores them.

use crate::error::ModelIssue;
use crate::types::{Cardinality, DbModel};

/// Warnings for a model (meaningful only once it passes validation).
pub fn warnings(model: &DbModel) -> Vec<ModelIssue> {
    let mut out = Vec::new();
    let names = super::resolve::Names::new(model);
    let lookup = |name: &str| names.table(name);
    let mut connected = vec![false; model.tables.len()];
    for rel in &model.relationships {
        for t in [&rel.from, &rel.to] {
            if let Some(i) = lookup(t) {
                connected[i] = true;
            }
        }
    }
    for (i, t) in model.tables.iter().enumerate() {
        if t.primary_key.is_empty() {
            out.push(warn(
                format!("$.tables[{i}].primary_key"),
                format!("table `{}` has no primary key", t.name),
                "declare it if the table has one: cardinalities and pattern suggestions rely on keys",
            ));
        }
        if !connected[i] && model.tables.len() > 1 {
            out.push(warn(
                format!("$.tables[{i}]"),
                format!("table `{}` has no relationship to any other table", t.name),
                "a view can join it to nothing; add the relationship the data supports, if any",
            ));
        }
    }
    odd_names(model, &mut out);
    synonym_clashes(model, &mut out);
    for (r, rel) in model.relationships.iter().enumerate() {
        // The "one" side of a M:1 / 1:M should be joined on its key.
        let (one, cols, side) = match rel.cardinality {
            Cardinality::ManyToOne | Cardinality::OneToOne => {
                (&rel.to, rel.on.iter().map(|p| &p[1]).collect::<Vec<_>>(), 1)
            }
            Cardinality::OneToMany => (&rel.from, rel.on.iter().map(|p| &p[0]).collect::<Vec<_>>(), 0),
        };
        let Some(t) = lookup(one).map(|i| &model.tables[i]) else { continue };
        if t.primary_key.is_empty() {
            continue;
        }
        let mut key: Vec<String> = t.primary_key.iter().map(|c| c.to_lowercase()).collect();
        let mut got: Vec<String> = cols.iter().map(|c| c.to_lowercase()).collect();
        key.sort();
        got.sort();
        if key != got {
            out.push(warn(
                format!("$.relationships[{r}].on"),
                format!(
                    "relationship `{}` is {} but joins `{}` on ({}), not on its primary key ({})",
                    rel.id(),
                    rel.cardinality.as_str(),
                    t.name,
                    cols.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", "),
                    t.primary_key.join(", ")
                ),
                if side == 1 {
                    "fine for a unique column; otherwise the cardinality is probably wrong"
                } else {
                    "fine for a unique column; otherwise the cardinality is probably wrong (1:M reads from the `from` side)"
                },
            ));
        }
    }
    out
}

/// Names with characters a reader cannot see or tell apart from ASCII
/// (control and bidi characters, zero-width and non-ASCII spaces, letters
/// that look like Latin ones), and names that look like another table's.
fn odd_names(model: &DbModel, out: &mut Vec<ModelIssue>) {
    use crate::error::{cut, escape_odd, odd_char_in_name};
    let skeletons: Vec<String> = model.tables.iter().map(|t| skeleton(&t.name)).collect();
    let mut check = |path: String, what: &str, name: &str, tables: bool| {
        let Some(odd) = odd_char_in_name(name) else { return };
        let sk = skeleton(name);
        let look_alike = tables
            .then(|| model.tables.iter().zip(&skeletons).find(|(t, s)| t.name != name && **s == sk))
            .flatten()
            .map(|(t, _)| format!(" and reads like table `{}`", cut(&escape_odd(&t.name), 80)))
            .unwrap_or_default();
        out.push(warn(
            path,
            format!("{what} `{}` contains {odd}{look_alike}", cut(&escape_odd(name), 80)),
            "rename it to plain ASCII: readers, LLMs and SQL tools mistake or drop such characters",
        ));
    };
    for (i, t) in model.tables.iter().enumerate() {
        check(format!("$.tables[{i}].name"), "table", &t.name, true);
        for (j, c) in t.columns.iter().enumerate() {
            check(format!("$.tables[{i}].columns[{j}].name"), "column", &c.name, false);
        }
    }
}

/// A table or column synonym that spells another table's name (case,
/// spaces and `_` aside): retrieval would then point that word at both
/// tables.
fn synonym_clashes(model: &DbModel, out: &mut Vec<ModelIssue>) {
    let key = |s: &str| super::validate::normalized_synonym(&s.replace('_', " "));
    let names: Vec<String> = model.tables.iter().map(|t| key(&t.name)).collect();
    let mut check = |path: String, owner: usize, what: &str, syn: &str| {
        let k = key(syn);
        if let Some(other) = (0..names.len()).find(|&i| i != owner && names[i] == k) {
            out.push(warn(
                path,
                format!("synonym `{}` of {what} is the name of table `{}`", syn.trim(), model.tables[other].name),
                "a question using this word would point at both; drop the synonym or make it more specific",
            ));
        }
    };
    for (i, t) in model.tables.iter().enumerate() {
        for (k, s) in t.synonyms.iter().enumerate() {
            check(format!("$.tables[{i}].synonyms[{k}]"), i, &format!("table `{}`", t.name), s);
        }
        for (j, c) in t.columns.iter().enumerate() {
            for (k, s) in c.synonyms.iter().enumerate() {
                let what = format!("column `{}.{}`", t.name, c.name);
                check(format!("$.tables[{i}].columns[{j}].synonyms[{k}]"), i, &what, s);
            }
        }
    }
}

/// A name with Cyrillic and Greek letters that look like Latin ones mapped
/// to those, lower-cased: two names with one skeleton look the same.
fn skeleton(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            'А' | 'а' | 'Α' | 'α' => 'a',
            'В' | 'Β' | 'в' => 'b',
            'С' | 'с' | 'Ϲ' => 'c',
            'Е' | 'е' | 'Ε' => 'e',
            'Н' | 'н' | 'Η' => 'h',
            'І' | 'і' | 'Ι' | 'ι' => 'i',
            'Ј' | 'ј' => 'j',
            'К' | 'к' | 'Κ' | 'κ' => 'k',
            'М' | 'м' | 'Μ' => 'm',
            'Ν' => 'n',
            'О' | 'о' | 'Ο' | 'ο' => 'o',
            'Р' | 'р' | 'Ρ' | 'ρ' => 'p',
            'Ѕ' | 'ѕ' => 's',
            'Т' | 'т' | 'Τ' | 'τ' => 't',
            'Х' | 'х' | 'Χ' | 'χ' => 'x',
            'У' | 'у' | 'Υ' | 'γ' => 'y',
            'Ζ' => 'z',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

fn warn(path: String, message: String, hint: &str) -> ModelIssue {
    ModelIssue { file: None, path, message, hint: hint.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ddo_has_no_warnings() {
        let m = crate::model::parse(include_str!("../../dbmodels/ddo.json"), None).expect("parses");
        assert_eq!(warnings(&m), vec![]);
    }

    #[test]
    fn invisible_and_look_alike_characters_in_names_are_flagged() {
        let m = crate::model::parse(
            "{\"name\": \"w\", \"tables\": [
                {\"name\": \"CLIENT\", \"primary_key\": [\"id\"], \"columns\": [{\"name\": \"id\"}, {\"name\": \"na\\u0000me\"}]},
                {\"name\": \"\u{421}LIENT\", \"primary_key\": [\"id\"], \"columns\": [{\"name\": \"id\"}]},
                {\"name\": \"EVIL\u{202e}TXT\", \"primary_key\": [\"id\"], \"columns\": [{\"name\": \"id\"}]}],
              \"relationships\": [{\"from\": \"CLIENT\", \"to\": \"\u{421}LIENT\", \"cardinality\": \"1:1\", \"on\": [[\"id\", \"id\"]]},
                {\"from\": \"CLIENT\", \"to\": \"EVIL\u{202e}TXT\", \"cardinality\": \"1:1\", \"on\": [[\"id\", \"id\"]]}]}",
            None,
        )
        .expect("parses");
        let w: Vec<String> = warnings(&m).into_iter().map(|i| format!("{}: {}", i.path, i.message)).collect();
        assert_eq!(
            w,
            [
                "$.tables[0].columns[1].name: column `na\\u{0}me` contains U+0000 (NUL) at character 3",
                "$.tables[1].name: table `\\u{421}LIENT` contains U+0421 (non-ASCII letter) at character 1 and reads like table `CLIENT`",
                "$.tables[2].name: table `EVIL\\u{202e}TXT` contains U+202E (bidi control) at character 5",
            ]
        );
    }

    #[test]
    fn a_synonym_naming_another_table_is_flagged() {
        let m = crate::model::parse(
            r#"{"name": "w", "tables": [
                {"name": "Policy_Holder", "primary_key": ["id"], "columns": [{"name": "id"}], "synonyms": ["insured"]},
                {"name": "Insured", "primary_key": ["id"], "columns": [{"name": "id", "synonyms": ["policy holder", "key"]}]}],
              "relationships": [{"from": "Insured", "to": "Policy_Holder", "cardinality": "1:1", "on": [["id", "id"]]}]}"#,
            None,
        )
        .expect("parses");
        let w: Vec<String> = warnings(&m).into_iter().map(|i| format!("{}: {}", i.path, i.message)).collect();
        assert_eq!(
            w,
            [
                "$.tables[0].synonyms[0]: synonym `insured` of table `Policy_Holder` is the name of table `Insured`",
                "$.tables[1].columns[0].synonyms[0]: synonym `policy holder` of column `Insured.id` is the name of table `Policy_Holder`",
            ]
        );
    }

    #[test]
    fn isolated_table_missing_key_and_non_key_join() {
        let m = crate::model::parse(
            r#"{"name": "w", "tables": [
                {"name": "A", "columns": [{"name": "id"}, {"name": "b_code"}]},
                {"name": "B", "primary_key": ["id"], "columns": [{"name": "id"}, {"name": "code"}]},
                {"name": "C", "primary_key": ["id"], "columns": [{"name": "id"}]}],
              "relationships": [{"from": "A", "to": "B", "cardinality": "M:1", "on": [["b_code", "code"]]}]}"#,
            None,
        )
        .expect("parses");
        let w: Vec<String> = warnings(&m).into_iter().map(|i| format!("{}: {}", i.path, i.message)).collect();
        assert_eq!(
            w,
            [
                "$.tables[0].primary_key: table `A` has no primary key",
                "$.tables[2]: table `C` has no relationship to any other table",
                "$.relationships[0].on: relationship `A(b_code)->B(code)` is M:1 but joins `B` on (code), not on its primary key (id)",
            ]
        );
    }
}
