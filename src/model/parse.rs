//! JSON text → `DbModel`, with every syntax and type error located by JSON
//! path.
//!
//! serde stops at the first error, so when the whole document does not
//! deserialize we deserialize it again piece by piece (each table,
//! relationship and pattern on its own) to report every broken element at
//! once.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::ModelIssue;
use crate::types::DbModel;

/// Top-level fields of the native format, in the order they are checked.
const TOP_FIELDS: [&str; 7] = ["name", "description", "dialect", "tables", "relationships", "patterns", "constraints"];

/// Parse JSON text into a `Value`, or one issue with line and column. A
/// leading UTF-8 byte-order mark is skipped (editors on Windows write one);
/// a key that occurs twice in one object is an error at its JSON path, as
/// JSON parsers disagree on which copy wins.
pub fn value(text: &str, file: Option<&str>) -> Result<Value, Vec<ModelIssue>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let v = syntax(text, file)?;
    let dups = duplicate_keys(text);
    if !dups.is_empty() {
        return Err(dups
            .into_iter()
            .map(|(path, key)| {
                issue(
                    file,
                    path,
                    format!("duplicate key `{}` in one object", crate::error::cut(&key, 80)),
                    "keep one copy: JSON readers disagree on which one counts",
                )
            })
            .collect());
    }
    Ok(v)
}

fn syntax(text: &str, file: Option<&str>) -> Result<Value, Vec<ModelIssue>> {
    serde_json::from_str(text).map_err(|e| {
        let what = match e.classify() {
            serde_json::error::Category::Eof => "unexpected end of JSON input",
            _ => "JSON syntax error",
        };
        vec![issue(
            file,
            "$".into(),
            format!("{what} at line {} column {}: {e}", e.line(), e.column()),
            "fix the JSON syntax (a JSON linter such as `jq . FILE` shows the spot)",
        )]
    })
}

/// Every key that occurs twice in one object: (JSON path of the second
/// copy, key). Runs over text that already parsed, so errors cannot occur
/// except at serde_json's nesting limit, which the first parse hit too.
fn duplicate_keys(text: &str) -> Vec<(String, String)> {
    use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
    use std::cell::RefCell;

    struct Walk<'a> {
        path: String,
        found: &'a RefCell<Vec<(String, String)>>,
    }
    impl<'de> DeserializeSeed<'de> for Walk<'_> {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Walk<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let mut seen = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                let mut path = self.path.clone();
                push_key(&mut path, &key);
                if !seen.insert(key.clone()) {
                    self.found.borrow_mut().push((path.clone(), key));
                }
                map.next_value_seed(Walk { path, found: self.found })?;
            }
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            let mut i = 0usize;
            while seq.next_element_seed(Walk { path: format!("{}[{i}]", self.path), found: self.found })?.is_some() {
                i += 1;
            }
            Ok(())
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
    }
    let found = RefCell::new(Vec::new());
    let mut de = serde_json::Deserializer::from_str(text);
    let _ = Walk { path: "$".into(), found: &found }.deserialize(&mut de);
    found.into_inner()
}

/// Deserialize a native-form dbModel from a parsed JSON value.
pub fn native(v: &Value, file: Option<&str>) -> Result<DbModel, Vec<ModelIssue>> {
    match deserialize_at::<DbModel>(v, "$", file) {
        Ok(m) => Ok(m),
        Err(first) => {
            let mut issues = piecewise(v, file);
            if issues.is_empty() {
                issues.push(first);
            }
            Err(issues)
        }
    }
}

/// Deserialize `v` as `T`; on error, one issue whose path is `base` followed
/// by the path serde reached inside `v`.
pub fn deserialize_at<T: DeserializeOwned>(v: &Value, base: &str, file: Option<&str>) -> Result<T, ModelIssue> {
    serde_path_to_error::deserialize::<_, T>(v).map_err(|e| {
        let path = join_path(base, e.path());
        let message = e.inner().to_string();
        let hint = hint_for(&message);
        issue(file, path, message, hint)
    })
}

/// Every type error, element by element.
fn piecewise(v: &Value, file: Option<&str>) -> Vec<ModelIssue> {
    let mut issues = Vec::new();
    let Some(obj) = v.as_object() else {
        issues.push(issue(
            file,
            "$".into(),
            format!("a dbModel must be a JSON object, found {}", kind(v)),
            "start from the example in docs/dbmodel.md",
        ));
        return issues;
    };
    for key in obj.keys() {
        if !TOP_FIELDS.contains(&key.as_str()) {
            let close = crate::model::closest(key, TOP_FIELDS.iter().copied());
            issues.push(issue(
                file,
                format!("$.{key}"),
                format!("unknown top-level field `{key}`"),
                &match close {
                    Some(c) => format!("did you mean `{c}`? Allowed: {}", TOP_FIELDS.join(", ")),
                    None => format!("allowed fields: {}", TOP_FIELDS.join(", ")),
                },
            ));
        }
    }
    for required in ["name", "tables"] {
        if !obj.contains_key(required) {
            issues.push(issue(
                file,
                "$".into(),
                format!("missing field `{required}`"),
                "every dbModel needs `name` and `tables`",
            ));
        }
    }
    let mut field = |key: &str, f: &mut dyn FnMut(&Value, &str) -> Vec<ModelIssue>| {
        if let Some(x) = obj.get(key) {
            issues.extend(f(x, &format!("$.{key}")));
        }
    };
    field("name", &mut |x, p| one::<String>(x, p, file));
    field("description", &mut |x, p| one::<Option<String>>(x, p, file));
    field("dialect", &mut |x, p| one::<Option<crate::types::Dialect>>(x, p, file));
    field("constraints", &mut |x, p| one::<crate::types::Constraints>(x, p, file));
    field("tables", &mut |x, p| each::<crate::types::Table>(x, p, file));
    field("relationships", &mut |x, p| each::<crate::types::Relationship>(x, p, file));
    field("patterns", &mut |x, p| each::<crate::types::Pattern>(x, p, file));
    issues
}

fn one<T: DeserializeOwned>(v: &Value, path: &str, file: Option<&str>) -> Vec<ModelIssue> {
    deserialize_at::<T>(v, path, file).err().into_iter().collect()
}

fn each<T: DeserializeOwned>(v: &Value, path: &str, file: Option<&str>) -> Vec<ModelIssue> {
    match v.as_array() {
        Some(items) => items
            .iter()
            .enumerate()
            .filter_map(|(i, x)| deserialize_at::<T>(x, &format!("{path}[{i}]"), file).err())
            .collect(),
        None => vec![issue(
            file,
            path.into(),
            format!("expected an array, found {}", kind(v)),
            "write a JSON array `[...]`",
        )],
    }
}

/// `base` + a serde_path_to_error path, in `$.a[0].b` notation.
fn join_path(base: &str, p: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut s = base.to_string();
    for seg in p.iter() {
        match seg {
            Segment::Seq { index } => s.push_str(&format!("[{index}]")),
            Segment::Map { key } => push_key(&mut s, key),
            Segment::Enum { variant } => push_key(&mut s, variant),
            Segment::Unknown => {}
        }
    }
    s
}

/// Append `.key`, or `["key"]` when the key is not a plain identifier.
pub fn push_key(s: &mut String, key: &str) {
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        s.push('.');
        s.push_str(key);
    } else {
        s.push_str(&format!("[{}]", serde_json::Value::String(key.to_string())));
    }
}

fn hint_for(message: &str) -> &'static str {
    if message.starts_with("unknown field") {
        "remove the field or fix its spelling (docs/dbmodel.md lists every field)"
    } else if message.starts_with("missing field") {
        "add the required field (docs/dbmodel.md lists every field)"
    } else if message.starts_with("unknown variant") && is_many_to_many(message) {
        "a relationship joins two tables directly (1:1, 1:M or M:1); model many-to-many as two M:1 relationships from the junction table plus a `many_to_many` pattern"
    } else if message.starts_with("unknown variant") {
        "use one of the listed values"
    } else {
        "fix the value's type (docs/dbmodel.schema.json has the exact schema)"
    }
}

fn is_many_to_many(message: &str) -> bool {
    let m = message.to_ascii_uppercase();
    ["`M:M`", "`M:N`", "`N:M`", "`N:N`"].iter().any(|v| m.contains(&format!("VARIANT {v}")))
}

/// A short name of a JSON value's kind, for messages.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(crate) fn issue(file: Option<&str>, path: String, message: String, hint: &str) -> ModelIssue {
    ModelIssue { file: file.map(str::to_string), path, message, hint: hint.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_error_has_line_and_column() {
        let e = value("{\n  \"name\": \"x\",\n  \"tables\": [\n", Some("m.json")).unwrap_err();
        assert_eq!(e.len(), 1);
        assert!(e[0].message.contains("end of JSON input"), "{}", e[0].message);
        assert!(e[0].message.contains("line 4"), "{}", e[0].message);
        assert_eq!(e[0].file.as_deref(), Some("m.json"));
    }

    #[test]
    fn type_errors_are_all_reported_with_paths() {
        let v: Value = serde_json::from_str(
            r#"{"name":"x","tables":[{"name":"A","columns":[{"name":"id","nullable":"no"}]},
                {"name":"B","columns":[]},{"name":3,"columns":[]}],
                "relationships":[{"from":"A","to":"B","cardinality":"M:7","on":[["a","b"]]}]}"#,
        )
        .unwrap();
        let e = native(&v, None).unwrap_err();
        let paths: Vec<&str> = e.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["$.tables[0].columns[0].nullable", "$.tables[2].name", "$.relationships[0].cardinality"]);
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let v = value("\u{feff}{\"name\": \"x\", \"tables\": []}", None).unwrap();
        assert_eq!(v["name"], "x");
    }

    #[test]
    fn duplicate_keys_are_errors_at_their_path() {
        let e = value(r#"{"name":"x","tables":[{"name":"A","columns":[],"name":"B"}],"name":"y"}"#, Some("m.json"))
            .unwrap_err();
        let got: Vec<(String, String)> = e.iter().map(|i| (i.path.clone(), i.message.clone())).collect();
        assert_eq!(
            got,
            [
                ("$.tables[0].name".to_string(), "duplicate key `name` in one object".to_string()),
                ("$.name".to_string(), "duplicate key `name` in one object".to_string())
            ]
        );
        // The same key in two objects is fine.
        value(r#"{"name":"x","tables":[{"name":"A"},{"name":"B"}]}"#, None).unwrap();
    }

    #[test]
    fn odd_keys_are_quoted() {
        let mut s = "$".to_string();
        push_key(&mut s, "a b");
        assert_eq!(s, "$[\"a b\"]");
    }
}
