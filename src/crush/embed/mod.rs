//! Text embeddings behind one trait, so CRUSH can run offline (MiniLM in
//! process) or against an OpenAI-compatible `/v1/embeddings` server, and so
//! tests can use a deterministic fake.

use std::path::PathBuf;

use crate::error::Result;

pub mod bert;
pub mod cache;
pub mod minilm;
pub mod openai;

pub use cache::EmbeddingCache;
pub use minilm::MiniLm;
pub use openai::OpenAiEmbedder;

/// Something that turns texts into vectors.
pub trait Embedder: Send + Sync {
    /// One vector per text, in order. Vectors of one embedder have one
    /// dimension; they need not be normalised (callers use [`cosine`]).
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>>;
    /// Identifies the model (and anything that changes its output), for
    /// cache keys and reports.
    fn id(&self) -> String;
}

impl<E: Embedder + ?Sized> Embedder for &E {
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        (**self).embed(texts)
    }
    fn id(&self) -> String {
        (**self).id()
    }
}

impl<E: Embedder + ?Sized> Embedder for Box<E> {
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        (**self).embed(texts)
    }
    fn id(&self) -> String {
        (**self).id()
    }
}

/// Cosine similarity; 0 when either vector is zero.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let mut dot = 0.0f64;
    let mut na = 0.0f64;
    let mut nb = 0.0f64;
    for (x, y) in a.iter().zip(b) {
        dot += *x as f64 * *y as f64;
        na += *x as f64 * *x as f64;
        nb += *y as f64 * *y as f64;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// Scale a vector to unit length (left alone when zero).
pub fn normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| *x as f64 * *x as f64).sum::<f64>().sqrt();
    if n > 0.0 {
        for x in v.iter_mut() {
            *x = (*x as f64 / n) as f32;
        }
    }
}

/// lucy's cache directory: `$LUCY_CACHE`, else `~/.cache/lucy`.
pub fn cache_root() -> PathBuf {
    if let Some(d) = std::env::var_os("LUCY_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    home.join(".cache").join("lucy")
}

/// A deterministic bag-of-character-trigrams embedder. No model files, no
/// network: used in tests and as `--embedder hash` for quick smoke runs.
/// Texts sharing trigrams get positive cosine, which is enough to exercise
/// the retrieval and solvers end to end.
#[derive(Debug, Clone)]
pub struct HashEmbedder {
    pub dim: usize,
}

impl Default for HashEmbedder {
    fn default() -> Self {
        HashEmbedder { dim: 256 }
    }
}

impl Embedder for HashEmbedder {
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; self.dim];
                let norm: Vec<char> =
                    t.to_lowercase().chars().map(|c| if c.is_alphanumeric() { c } else { ' ' }).collect();
                for word in norm.iter().collect::<String>().split_whitespace() {
                    let w: Vec<char> = format!(" {word} ").chars().collect();
                    for g in w.windows(3) {
                        let mut h: u64 = 1469598103934665603;
                        for c in g {
                            h ^= *c as u64;
                            h = h.wrapping_mul(1099511628211);
                        }
                        v[(h % self.dim as u64) as usize] += 1.0;
                    }
                }
                normalize(&mut v);
                v
            })
            .collect())
    }
    fn id(&self) -> String {
        format!("hash-trigram-{}", self.dim)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_parallel_and_orthogonal_vectors() {
        assert!((cosine(&[1.0, 2.0], &[2.0, 4.0]) - 1.0).abs() < 1e-12);
        assert!(cosine(&[1.0, 0.0], &[0.0, 3.0]).abs() < 1e-12);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
    }

    #[test]
    fn hash_embedder_prefers_shared_words() {
        let e = HashEmbedder::default();
        let v = e.embed(&["client gender".into(), "CLIENT.gender".into(), "loan amount".into()]).unwrap();
        assert!(cosine(&v[0], &v[1]) > 0.99);
        assert!(cosine(&v[0], &v[2]) < 0.3);
    }
}
