//! The CRUSH4SQL benchmark schemas: BirdUnion (798 columns of the 11 BIRD
//! dev databases) and SpiderUnion (4,502 columns of 166 Spider databases),
//! one `db.table.column` per line, tables prefixed with their database as in
//! the paper (§5.1); and the recorded BIRD dev questions with gold schema
//! elements and an LLM's hallucinated schema.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use super::docs::Corpus;
use crate::error::{read_to_string, Error, Result};

/// Load a `*_UNION.txt` file as a column-only corpus. Tables are named
/// `db.table`; documents read `db.table.column`; connectivity is same-table
/// (the files carry no keys). Returns the corpus and an index from the
/// lower-cased `db.table.column` to the document.
pub fn load_union(path: &Path) -> Result<(Corpus, HashMap<String, usize>)> {
    let text = read_to_string(path)?;
    let mut cols = Vec::new();
    let mut index = HashMap::new();
    for (lineno, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let mut parts = line.splitn(3, '.');
        let (Some(db), Some(table), Some(column)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(Error::Input(format!(
                "{}:{}: expected `db.table.column`, found `{line}`",
                path.display(),
                lineno + 1
            )));
        };
        index.entry(line.to_lowercase()).or_insert(cols.len());
        cols.push((format!("{db}.{table}"), column.to_string()));
    }
    if cols.is_empty() {
        return Err(Error::Input(format!("{}: no columns", path.display())));
    }
    Ok((Corpus::from_columns(cols), index))
}

/// One recorded BIRD dev question (iMayK/CRUSH4SQL `data/bird_dev.json`).
#[derive(Debug, Clone, Deserialize)]
pub struct BirdDevItem {
    pub question_id: u64,
    pub db_id: String,
    pub question: String,
    /// Gold `[db, table, column]` triples from the gold SQL.
    pub schema_elements: Vec<Vec<String>>,
    /// The LLM's hallucinated schema, e.g. `["Schools(school_id, county)"]`.
    #[serde(rename = "question_decomposition_hallucinate_schema_bird")]
    pub hallucinated: Vec<String>,
}

impl BirdDevItem {
    /// Gold elements as lower-cased `db.table.column` keys.
    pub fn gold_keys(&self) -> Vec<String> {
        self.schema_elements.iter().map(|e| e.join(".").to_lowercase()).collect()
    }
}

/// Load `bird_dev.json`.
pub fn load_bird_dev(path: &Path) -> Result<Vec<BirdDevItem>> {
    let text = read_to_string(path)?;
    let de = &mut serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(de)
        .map_err(|e| Error::Input(format!("{}: {} at {}", path.display(), e.inner(), e.path())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared(p: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/benchmarks/bird/crush4sql").join(p)
    }

    #[test]
    fn bird_union_has_798_columns_and_covers_the_gold() {
        let (c, idx) = load_union(&shared("bird_UNION.txt")).unwrap();
        assert_eq!(c.len(), 798);
        assert_eq!(c.docs[0].text, "debit_card_specializing.customers.customerid");
        assert!(c.connected(0, 1));
        let items = load_bird_dev(&shared("bird_dev.json")).unwrap();
        assert_eq!(items.len(), 1534);
        let gold: usize = items.iter().map(|i| i.gold_keys().len()).sum();
        let found: usize = items.iter().map(|i| i.gold_keys().iter().filter(|k| idx.contains_key(*k)).count()).sum();
        // All but 34 of the 6,869 gold elements are BirdUnion columns (the
        // rest are malformed in the recording, e.g. `toxicology..label`).
        assert_eq!((gold, found), (6869, 6835));
    }

    #[test]
    fn spider_union_has_4503_columns() {
        // The paper says 4,502; the released file has 4,503 distinct lines
        // (the last one without a newline, so `wc -l` says 4502).
        let (c, _) = load_union(&shared("spider_UNION.txt")).unwrap();
        assert_eq!(c.len(), 4503);
    }

    #[test]
    fn malformed_line_names_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("u.txt");
        std::fs::write(&p, "a.b.c\nnodots\n").unwrap();
        let e = load_union(&p).unwrap_err().to_string();
        assert!(e.contains("u.txt:2") && e.contains("db.table.column"), "{e}");
    }
}
