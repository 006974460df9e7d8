//! Writes a tiny GGUF chat model for the embedded backend's tests: a 2-layer
//! llama with random weights (seeded), a byte-level GPT-2 style vocabulary
//! (256 byte tokens plus ChatML's special tokens, no merges) and a ChatML
//! chat template. About 400 KB; llama.cpp loads and runs it like any model,
//! so the real loading, templating, sampling and grammar code is exercised
//! without a 1 GB download. Its answers are noise, which is the point of the
//! grammar tests: the constraint must hold whatever the weights.

use std::io::Write;
use std::path::Path;

const N_EMBD: usize = 64;
const N_HEAD: usize = 4;
const N_FF: usize = 128;
const N_LAYER: usize = 2;
const N_CTX_TRAIN: u32 = 8192;

/// What to leave out or break, for the bad-input tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flaws {
    pub no_chat_template: bool,
}

enum V {
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    Str(String),
    StrArr(Vec<String>),
    I32Arr(Vec<i32>),
}

fn w_str(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as u64).to_le_bytes());
    out.extend(s.as_bytes());
}

fn w_kv(out: &mut Vec<u8>, key: &str, v: &V) {
    w_str(out, key);
    match v {
        V::U32(x) => {
            out.extend(4u32.to_le_bytes());
            out.extend(x.to_le_bytes());
        }
        V::I32(x) => {
            out.extend(5u32.to_le_bytes());
            out.extend(x.to_le_bytes());
        }
        V::F32(x) => {
            out.extend(6u32.to_le_bytes());
            out.extend(x.to_le_bytes());
        }
        V::Bool(b) => {
            out.extend(7u32.to_le_bytes());
            out.push(u8::from(*b));
        }
        V::Str(s) => {
            out.extend(8u32.to_le_bytes());
            w_str(out, s);
        }
        V::StrArr(a) => {
            out.extend(9u32.to_le_bytes());
            out.extend(8u32.to_le_bytes());
            out.extend((a.len() as u64).to_le_bytes());
            for s in a {
                w_str(out, s);
            }
        }
        V::I32Arr(a) => {
            out.extend(9u32.to_le_bytes());
            out.extend(5u32.to_le_bytes());
            out.extend((a.len() as u64).to_le_bytes());
            for x in a {
                out.extend(x.to_le_bytes());
            }
        }
    }
}

/// GPT-2's byte-to-unicode map: the text form of each byte token.
fn byte_token(b: u8) -> String {
    let printable = |c: u32| (0x21..=0x7e).contains(&c) || (0xa1..=0xac).contains(&c) || (0xae..=0xff).contains(&c);
    if printable(b as u32) {
        return char::from_u32(b as u32).unwrap().to_string();
    }
    let mut n = 0u32;
    for c in 0..256u32 {
        if printable(c) {
            continue;
        }
        if c == b as u32 {
            return char::from_u32(256 + n).unwrap().to_string();
        }
        n += 1;
    }
    unreachable!()
}

/// Write the model to `path`.
pub fn write(path: &Path, seed: u64, flaws: Flaws) {
    let mut tokens: Vec<String> = (0..=255u8).map(byte_token).collect();
    let mut types = vec![1i32; 256];
    for special in ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] {
        tokens.push(special.to_string());
        types.push(3);
    }
    let n_vocab = tokens.len();
    let eos = (n_vocab - 1) as u32; // <|im_end|>
    let mut kvs: Vec<(&str, V)> = vec![
        ("general.architecture", V::Str("llama".into())),
        ("general.name", V::Str("lucy-tiny-test".into())),
        ("general.alignment", V::U32(32)),
        ("llama.context_length", V::U32(N_CTX_TRAIN)),
        ("llama.embedding_length", V::U32(N_EMBD as u32)),
        ("llama.block_count", V::U32(N_LAYER as u32)),
        ("llama.feed_forward_length", V::U32(N_FF as u32)),
        ("llama.attention.head_count", V::U32(N_HEAD as u32)),
        ("llama.attention.head_count_kv", V::U32(N_HEAD as u32)),
        ("llama.attention.layer_norm_rms_epsilon", V::F32(1e-5)),
        ("llama.rope.dimension_count", V::U32((N_EMBD / N_HEAD) as u32)),
        ("llama.vocab_size", V::U32(n_vocab as u32)),
        ("tokenizer.ggml.model", V::Str("gpt2".into())),
        ("tokenizer.ggml.pre", V::Str("default".into())),
        ("tokenizer.ggml.tokens", V::StrArr(tokens)),
        ("tokenizer.ggml.token_type", V::I32Arr(types)),
        ("tokenizer.ggml.merges", V::StrArr(vec![])),
        ("tokenizer.ggml.bos_token_id", V::U32(256)),
        ("tokenizer.ggml.eos_token_id", V::U32(eos)),
        ("tokenizer.ggml.padding_token_id", V::U32(256)),
        ("tokenizer.ggml.add_bos_token", V::Bool(false)),
    ];
    if !flaws.no_chat_template {
        kvs.push((
            "tokenizer.chat_template",
            V::Str("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}".into()),
        ));
    }
    let _ = V::I32(0);

    let mut tensors: Vec<(String, Vec<usize>)> =
        vec![("token_embd.weight".into(), vec![N_EMBD, n_vocab]), ("output_norm.weight".into(), vec![N_EMBD])];
    for l in 0..N_LAYER {
        for (name, dims) in [
            ("attn_norm", vec![N_EMBD]),
            ("attn_q", vec![N_EMBD, N_EMBD]),
            ("attn_k", vec![N_EMBD, N_EMBD]),
            ("attn_v", vec![N_EMBD, N_EMBD]),
            ("attn_output", vec![N_EMBD, N_EMBD]),
            ("ffn_norm", vec![N_EMBD]),
            ("ffn_gate", vec![N_EMBD, N_FF]),
            ("ffn_up", vec![N_EMBD, N_FF]),
            ("ffn_down", vec![N_FF, N_EMBD]),
        ] {
            tensors.push((format!("blk.{l}.{name}.weight"), dims));
        }
    }

    let mut out = Vec::new();
    out.extend(b"GGUF");
    out.extend(3u32.to_le_bytes());
    out.extend((tensors.len() as u64).to_le_bytes());
    out.extend((kvs.len() as u64).to_le_bytes());
    for (k, v) in &kvs {
        w_kv(&mut out, k, v);
    }
    let mut offset = 0u64;
    let mut sizes = Vec::new();
    for (name, dims) in &tensors {
        w_str(&mut out, name);
        out.extend((dims.len() as u32).to_le_bytes());
        for d in dims {
            out.extend((*d as u64).to_le_bytes());
        }
        out.extend(0u32.to_le_bytes()); // F32
        out.extend(offset.to_le_bytes());
        let bytes = dims.iter().product::<usize>() as u64 * 4;
        sizes.push(bytes);
        offset += bytes.div_ceil(32) * 32;
    }
    while out.len() % 32 != 0 {
        out.push(0);
    }
    let mut state = seed | 1;
    let mut rand = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    };
    for ((name, dims), bytes) in tensors.iter().zip(&sizes) {
        let n = dims.iter().product::<usize>();
        let norm = name.contains("norm");
        for _ in 0..n {
            let x = if norm { 1.0 } else { rand() * 0.5 };
            out.extend(x.to_le_bytes());
        }
        let pad = bytes.div_ceil(32) * 32 - bytes;
        out.extend(std::iter::repeat_n(0u8, pad as usize));
    }
    std::fs::File::create(path).and_then(|mut f| f.write_all(&out)).expect("write the tiny GGUF");
}
