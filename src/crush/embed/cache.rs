//! On-disk cache of embedding matrices, keyed by the embedder id and a hash
//! of the exact texts, so a schema (or a benchmark's probe set) is embedded
//! once per embedder and every later run reads the same vectors.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::{cache_root, Embedder};
use crate::error::Result;

const MAGIC: &[u8; 8] = b"LUCYEMB1";

/// A directory of cached embedding matrices.
#[derive(Debug, Clone)]
pub struct EmbeddingCache {
    dir: PathBuf,
}

impl EmbeddingCache {
    /// A cache in `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        EmbeddingCache { dir: dir.into() }
    }

    /// `<cache root>/embeddings` (see [`cache_root`]).
    pub fn default_location() -> Self {
        Self::new(cache_root().join("embeddings"))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The cache key of `texts` under `embedder_id`: sha256 over the id and
    /// every text, length-prefixed so no two lists collide by concatenation.
    pub fn key(embedder_id: &str, texts: &[String]) -> String {
        let mut h = Sha256::new();
        h.update((embedder_id.len() as u64).to_le_bytes());
        h.update(embedder_id.as_bytes());
        for t in texts {
            h.update((t.len() as u64).to_le_bytes());
            h.update(t.as_bytes());
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Embeddings of `texts`, from the cache when present, else computed with
    /// `embedder` and stored. A cache that cannot be read or written is
    /// bypassed (the vectors are still returned): caching is an optimisation.
    pub fn get_or_embed(&self, embedder: &dyn Embedder, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let key = Self::key(&embedder.id(), texts);
        let path = self.dir.join(format!("{key}.emb"));
        if let Some(m) = read(&path, texts.len()) {
            return Ok(m);
        }
        let m = embedder.embed(texts)?;
        let _ = write(&self.dir, &path, &m);
        Ok(m)
    }
}

fn read(path: &Path, n: usize) -> Option<Vec<Vec<f32>>> {
    let bytes = std::fs::read(path).ok()?;
    if bytes.len() < 24 || &bytes[..8] != MAGIC {
        return None;
    }
    let rows = u64::from_le_bytes(bytes[8..16].try_into().ok()?) as usize;
    let dim = u64::from_le_bytes(bytes[16..24].try_into().ok()?) as usize;
    if rows != n || bytes.len() != 24 + rows * dim * 4 {
        return None;
    }
    let mut out = Vec::with_capacity(rows);
    for r in 0..rows {
        let start = 24 + r * dim * 4;
        out.push(
            bytes[start..start + dim * 4]
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        );
    }
    Some(out)
}

fn write(dir: &Path, path: &Path, m: &[Vec<f32>]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let dim = m.first().map(Vec::len).unwrap_or(0);
    if m.iter().any(|v| v.len() != dim) {
        return Ok(());
    }
    let mut bytes = Vec::with_capacity(24 + m.len() * dim * 4);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(m.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&(dim as u64).to_le_bytes());
    for v in m {
        for x in v {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
    }
    // Write then rename, so a concurrent reader never sees half a file.
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, &bytes)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crush::embed::HashEmbedder;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Counting(HashEmbedder, AtomicUsize);
    impl Embedder for Counting {
        fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
            self.1.fetch_add(1, Ordering::SeqCst);
            self.0.embed(texts)
        }
        fn id(&self) -> String {
            self.0.id()
        }
    }

    #[test]
    fn second_lookup_reads_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let cache = EmbeddingCache::new(dir.path());
        let e = Counting(HashEmbedder::default(), AtomicUsize::new(0));
        let texts: Vec<String> = vec!["a.b".into(), "c.d".into()];
        let first = cache.get_or_embed(&e, &texts).unwrap();
        let second = cache.get_or_embed(&e, &texts).unwrap();
        assert_eq!(first, second);
        assert_eq!(e.1.load(Ordering::SeqCst), 1);
        // Different content, different key.
        cache.get_or_embed(&e, &texts[..1]).unwrap();
        assert_eq!(e.1.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn key_separates_concatenations() {
        assert_ne!(
            EmbeddingCache::key("m", &["ab".into(), "c".into()]),
            EmbeddingCache::key("m", &["a".into(), "bc".into()])
        );
        assert_ne!(EmbeddingCache::key("m1", &["a".into()]), EmbeddingCache::key("m2", &["a".into()]));
    }

    #[test]
    fn corrupt_file_is_recomputed() {
        let dir = tempfile::tempdir().unwrap();
        let cache = EmbeddingCache::new(dir.path());
        let e = HashEmbedder::default();
        let texts: Vec<String> = vec!["x".into()];
        let key = EmbeddingCache::key(&e.id(), &texts);
        std::fs::write(dir.path().join(format!("{key}.emb")), b"garbage").unwrap();
        assert_eq!(cache.get_or_embed(&e, &texts).unwrap(), e.embed(&texts).unwrap());
    }
}
