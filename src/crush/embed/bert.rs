//! The BERT encoder that MiniLM is, in candle: embeddings, then
//! `num_hidden_layers` post-norm transformer layers (self-attention with the
//! padding mask, GELU feed-forward), as Hugging Face's `BertModel` computes
//! them without the pooler.
//!
//! lucy needs only this one encoder, so it is written here (about a hundred
//! lines over `candle-nn`'s layers) instead of depending on
//! `candle-transformers`, whose dozens of model families took minutes of
//! every clean build (benchmarks/results/build.md).

use candle_core::{DType, Module, Result, Tensor, D};
use candle_nn::{embedding, layer_norm, linear, Embedding, LayerNorm, Linear, VarBuilder};
use serde::Deserialize;

/// The fields of a BERT `config.json` the encoder reads.
#[derive(Debug, Clone, Deserialize)]
pub struct Config {
    /// Rows of the word embedding table.
    pub vocab_size: usize,
    /// Width of every hidden state.
    pub hidden_size: usize,
    /// Transformer layers.
    pub num_hidden_layers: usize,
    /// Attention heads per layer (`hidden_size` must be a multiple).
    pub num_attention_heads: usize,
    /// Width of the feed-forward layer.
    pub intermediate_size: usize,
    /// Rows of the position embedding table.
    pub max_position_embeddings: usize,
    /// Rows of the token-type embedding table.
    pub type_vocab_size: usize,
    /// Epsilon of every layer norm.
    pub layer_norm_eps: f64,
    /// Only `gelu` (the exact, erf-based GELU) is supported.
    #[serde(default = "default_act")]
    pub hidden_act: String,
}

fn default_act() -> String {
    "gelu".to_string()
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attn_out: Linear,
    attn_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    out_norm: LayerNorm,
}

/// A loaded BERT encoder.
pub struct Bert {
    words: Embedding,
    positions: Embedding,
    types: Embedding,
    norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
}

impl Bert {
    /// Load the weights under `vb` (tensor names as in Hugging Face's
    /// `BertModel`, with or without a `bert.` prefix).
    pub fn load(vb: VarBuilder, c: &Config) -> Result<Self> {
        if c.hidden_act != "gelu" {
            candle_core::bail!("hidden_act {:?} is not supported (only \"gelu\")", c.hidden_act);
        }
        if c.num_attention_heads == 0 || !c.hidden_size.is_multiple_of(c.num_attention_heads) {
            candle_core::bail!("hidden_size {} is not a multiple of {} heads", c.hidden_size, c.num_attention_heads);
        }
        let vb = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") { vb.pp("bert") } else { vb };
        let h = c.hidden_size;
        let e = vb.pp("embeddings");
        let layers = (0..c.num_hidden_layers)
            .map(|i| {
                let l = vb.pp(format!("encoder.layer.{i}"));
                let a = l.pp("attention");
                Ok(Layer {
                    query: linear(h, h, a.pp("self.query"))?,
                    key: linear(h, h, a.pp("self.key"))?,
                    value: linear(h, h, a.pp("self.value"))?,
                    attn_out: linear(h, h, a.pp("output.dense"))?,
                    attn_norm: layer_norm(h, c.layer_norm_eps, a.pp("output.LayerNorm"))?,
                    intermediate: linear(h, c.intermediate_size, l.pp("intermediate.dense"))?,
                    output: linear(c.intermediate_size, h, l.pp("output.dense"))?,
                    out_norm: layer_norm(h, c.layer_norm_eps, l.pp("output.LayerNorm"))?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Bert {
            words: embedding(c.vocab_size, h, e.pp("word_embeddings"))?,
            positions: embedding(c.max_position_embeddings, h, e.pp("position_embeddings"))?,
            types: embedding(c.type_vocab_size, h, e.pp("token_type_embeddings"))?,
            norm: layer_norm(h, c.layer_norm_eps, e.pp("LayerNorm"))?,
            layers,
            heads: c.num_attention_heads,
        })
    }

    /// The last hidden states `(batch, len, hidden)` of `ids` `(batch, len)`
    /// (token type 0 everywhere); `mask` `(batch, len)` is 1 for tokens and
    /// 0 for padding, which no token attends to.
    pub fn forward(&self, ids: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let (_, len) = ids.dims2()?;
        let positions = Tensor::arange(0u32, len as u32, ids.device())?;
        let x = (self.words.forward(ids)? + self.types.forward(&ids.zeros_like()?)?)?
            .broadcast_add(&self.positions.forward(&positions)?)?;
        let mut x = self.norm.forward(&x)?;
        // Padding gets the most negative float before the softmax, as
        // Hugging Face's extended attention mask does: (batch, 1, 1, len).
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(1)?.unsqueeze(1)?;
        let bias = ((mask.ones_like()? - &mask)? * f64::from(f32::MIN))?;
        for layer in &self.layers {
            x = self.layer(layer, &x, &bias)?;
        }
        Ok(x)
    }

    fn layer(&self, l: &Layer, x: &Tensor, bias: &Tensor) -> Result<Tensor> {
        let (b, len, h) = x.dims3()?;
        let d = h / self.heads;
        let split = |t: Tensor| t.reshape((b, len, self.heads, d))?.transpose(1, 2)?.contiguous();
        let q = split(l.query.forward(x)?)?;
        let k = split(l.key.forward(x)?)?;
        let v = split(l.value.forward(x)?)?;
        let scores = (q.matmul(&k.t()?)? / (d as f64).sqrt())?.broadcast_add(bias)?;
        let probs = candle_nn::ops::softmax(&scores, D::Minus1)?;
        let ctx = probs.matmul(&v)?.transpose(1, 2)?.contiguous()?.flatten_from(D::Minus2)?;
        let attn = l.attn_norm.forward(&(l.attn_out.forward(&ctx)? + x)?)?;
        let ff = l.intermediate.forward(&attn)?.gelu_erf()?;
        l.out_norm.forward(&(l.output.forward(&ff)? + attn)?)
    }
}
