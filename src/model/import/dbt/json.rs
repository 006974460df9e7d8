//! Reading dbt's JSON artifacts: a size bound, and errors that name the
//! file and the JSON path of what is wrong.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};

use crate::error::{Error, Result};

/// Largest artifact read (1 GiB): far above real manifests (the largest
/// public ones are ~100 MB), low enough that memory stays bounded.
pub const MAX_BYTES: u64 = 1 << 30;

/// `null` or missing reads as the type's default (dbt Fusion writes `null`
/// where dbt Core writes `{}` or `[]`).
pub fn nullable<'de, D, T>(d: D) -> std::result::Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// The bytes of `path`, refusing anything but a regular file under
/// [`MAX_BYTES`].
pub fn read(path: &Path, limit: u64) -> Result<Vec<u8>> {
    crate::error::regular_file(path)?;
    let len = std::fs::metadata(path).map_err(|e| Error::io(path, e))?.len();
    if len > limit {
        return Err(Error::Input(format!(
            "{}: {len} bytes, more than the {limit} bytes lucy reads from a dbt artifact",
            path.display()
        )));
    }
    std::fs::read(path).map_err(|e| Error::io(path, e))
}

/// Deserialize `bytes` (the contents of `path`) as `T`; an error names the
/// file, the JSON path and, for syntax errors, line and column.
pub fn parse<T: DeserializeOwned>(path: &Path, bytes: &[u8]) -> Result<T> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let out: T = serde_path_to_error::deserialize(&mut de).map_err(|e| located(path, e))?;
    de.end().map_err(|e| Error::Input(format!("{}: {}", path.display(), syntax(&e))))?;
    Ok(out)
}

fn located(path: &Path, e: serde_path_to_error::Error<serde_json::Error>) -> Error {
    let at = json_path(e.path());
    let inner = e.inner();
    let what = if inner.is_syntax() || inner.is_eof() { syntax(inner) } else { format!("{inner}") };
    Error::Input(format!("{}: {at}: {what}", path.display()))
}

fn syntax(e: &serde_json::Error) -> String {
    if e.is_eof() {
        format!(
            "unexpected end of the file at line {} column {} (is it truncated? re-run dbt to write it again)",
            e.line(),
            e.column()
        )
    } else {
        format!("not valid JSON at line {} column {}: {e}", e.line(), e.column())
    }
}

/// `$.nodes["model.shop.orders"].columns[0]` from serde_path_to_error's path.
pub fn json_path(p: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut s = String::from("$");
    for seg in p.iter() {
        match seg {
            Segment::Seq { index } => s.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    s.push('.');
                    s.push_str(key);
                } else {
                    s.push_str(&format!("[{}]", serde_json::Value::String(key.clone())));
                }
            }
            Segment::Unknown => s.push_str(".?"),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct T {
        nodes: std::collections::BTreeMap<String, Vec<u32>>,
    }

    #[test]
    fn errors_name_file_and_path() {
        let p = Path::new("m.json");
        let e = parse::<T>(p, br#"{"nodes": {"model.a.b": [1, "x"]}}"#).unwrap_err().to_string();
        assert!(e.starts_with("m.json: $.nodes[\"model.a.b\"][1]: "), "{e}");
        let e = parse::<T>(p, br#"{"nodes": {"model.a.b": [1, "#).unwrap_err().to_string();
        assert!(e.contains("truncated"), "{e}");
        let e = parse::<T>(p, b"hello").unwrap_err().to_string();
        assert!(e.contains("not valid JSON at line 1"), "{e}");
    }
}
