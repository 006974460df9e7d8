//! The examples nearest a question: cosine similarity of question
//! embeddings (MiniLM in `lucy ask`, as the dynamic few-shot vector store
//! retrieves by question embedding), highest first, ties by line.

use serde::{Deserialize, Serialize};

use super::validate::Usable;
use crate::crush::embed::{cosine, Embedder};
use crate::error::{Error, Result};

/// A retrieved example.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Retrieved {
    /// 1-based line in the examples file.
    pub line: usize,
    pub question: String,
    pub sql: String,
    /// Cosine similarity of its question to the asked one.
    pub score: f64,
    /// The model tables its SQL reads.
    pub tables: Vec<String>,
}

/// The `k` examples whose questions are most similar to `question`.
pub fn retrieve(embedder: &dyn Embedder, question: &str, examples: &[Usable], k: usize) -> Result<Vec<Retrieved>> {
    if examples.is_empty() || k == 0 {
        return Ok(Vec::new());
    }
    let mut texts = Vec::with_capacity(examples.len() + 1);
    texts.push(question.to_string());
    texts.extend(examples.iter().map(|u| u.entry.example.question.clone()));
    let vecs = embedder.embed(&texts)?;
    if vecs.len() != texts.len() {
        return Err(Error::Input(format!(
            "embedder {} returned {} vectors for {} texts",
            embedder.id(),
            vecs.len(),
            texts.len()
        )));
    }
    let mut scored: Vec<(f64, usize)> = vecs[1..].iter().enumerate().map(|(i, v)| (cosine(&vecs[0], v), i)).collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(examples[a.1].entry.line.cmp(&examples[b.1].entry.line)));
    Ok(scored
        .into_iter()
        .take(k)
        .map(|(score, i)| {
            let u = &examples[i];
            Retrieved {
                line: u.entry.line,
                question: u.entry.example.question.clone(),
                sql: u.entry.example.sql.clone(),
                score,
                tables: u.tables.clone(),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crush::embed::HashEmbedder;
    use crate::examples::{Entry, Example};

    fn usable(line: usize, q: &str) -> Usable {
        Usable {
            entry: Entry {
                line,
                example: Example { question: q.into(), sql: format!("SELECT {line}"), database: None },
            },
            tables: vec![],
        }
    }

    #[test]
    fn ranks_by_similarity_then_line_and_keeps_k() {
        let ex = vec![
            usable(1, "total loan amount per district"),
            usable(2, "gender of every client"),
            usable(4, "gender of every client"),
            usable(5, "list accounts opened in 1995"),
        ];
        let r = retrieve(&HashEmbedder::default(), "What is the gender of each client?", &ex, 2).unwrap();
        assert_eq!(r.iter().map(|r| r.line).collect::<Vec<_>>(), vec![2, 4]);
        assert!(r[0].score > 0.3 && (r[0].score - r[1].score).abs() < 1e-12);
        assert!(retrieve(&HashEmbedder::default(), "q", &ex, 0).unwrap().is_empty());
        assert_eq!(retrieve(&HashEmbedder::default(), "q", &ex, 10).unwrap().len(), 4);
    }
}
