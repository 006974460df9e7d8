//! The GGUF file behind the embedded backend: where the default model lives,
//! the checks that turn a bad file into a clear error before llama.cpp sees
//! it, and its SHA-256 (cached by path, size and mtime, so a 1 GB file is
//! hashed once, not on every run).

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// File name of the default model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M).
pub const DEFAULT_MODEL_FILE: &str = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf";
/// SHA-256 of the default model: the file of Qwen's official
/// `Qwen2.5-Coder-1.5B-Instruct-GGUF` repository.
pub const DEFAULT_MODEL_SHA256: &str = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046";
/// Size of the default model in bytes.
pub const DEFAULT_MODEL_SIZE: u64 = 1_117_320_768;
/// What to run to get the default model.
pub const FETCH_HINT: &str = "run scripts/fetch-model.sh";

/// The directory the default model is fetched into:
/// `$LUCY_MODEL_DIR`, else `$LUCY_CACHE/models`, else `~/.cache/lucy/models`
/// (the same rule as `scripts/fetch-model.sh`).
pub fn default_model_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let nonempty = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    if let Some(d) = nonempty("LUCY_MODEL_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(c) = nonempty("LUCY_CACHE") {
        return Some(PathBuf::from(c).join("models"));
    }
    nonempty("HOME").map(|h| PathBuf::from(h).join(".cache/lucy/models"))
}

/// The default model's path (whether or not it exists).
pub fn default_model_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    default_model_dir(env).map(|d| d.join(DEFAULT_MODEL_FILE))
}

/// The GGUF magic: the file's first four bytes.
const GGUF_MAGIC: &[u8; 4] = b"GGUF";

/// Check that `path` is a readable GGUF file of plausible size, before
/// llama.cpp (which reports most problems only on its log) opens it.
/// `fix` is appended to every error: what the user should do.
pub fn check_gguf(path: &Path, fix: &str) -> Result<u64> {
    let meta =
        std::fs::metadata(path).map_err(|e| Error::Input(format!("GGUF model {}: {e}; {fix}", path.display())))?;
    if !meta.is_file() {
        return Err(Error::Input(format!("GGUF model {}: not a file; {fix}", path.display())));
    }
    let mut head = [0u8; 24];
    let mut f = File::open(path).map_err(|e| Error::Input(format!("GGUF model {}: {e}; {fix}", path.display())))?;
    let n = read_up_to(&mut f, &mut head).map_err(|e| Error::io(path, e))?;
    if n < 4 || &head[..4] != GGUF_MAGIC {
        return Err(Error::Input(format!(
            "{} is not a GGUF model file (it does not start with the GGUF magic bytes); pass a .gguf chat model, {fix}",
            path.display()
        )));
    }
    if n < 24 {
        return Err(Error::Input(format!("GGUF model {} is truncated ({} bytes); {fix}", path.display(), meta.len())));
    }
    let version = u32::from_le_bytes(head[4..8].try_into().expect("4 bytes"));
    if !(2..=3).contains(&version) {
        return Err(Error::Input(format!(
            "GGUF model {} has format version {version}, this build reads versions 2 and 3; {fix}",
            path.display()
        )));
    }
    Ok(meta.len())
}

fn read_up_to(f: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// `(size, mtime in seconds)` of a file: what the hash cache is keyed by.
fn stamp(path: &Path) -> Result<(u64, u64)> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    let mtime = meta.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map_or(0, |d| d.as_secs());
    Ok((meta.len(), mtime))
}

/// The sidecar holding a file's cached hash: `<file>.sha256`, the format
/// `scripts/fetch-model.sh` writes (`<sha256>  <size> <mtime>`).
fn sidecar(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".sha256");
    PathBuf::from(s)
}

/// Where the hash is cached when the model's directory is read-only.
fn fallback_sidecar(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let dir = default_model_dir(env)?.join(".hashes");
    let abs = std::fs::canonicalize(path).ok()?;
    let key: String =
        Sha256::digest(abs.to_string_lossy().as_bytes()).iter().take(16).map(|b| format!("{b:02x}")).collect();
    Some(dir.join(format!("{key}.sha256")))
}

fn read_cached(sidecar: &Path, stamp: (u64, u64)) -> Option<String> {
    let text = std::fs::read_to_string(sidecar).ok()?;
    let mut parts = text.split_whitespace();
    let (hash, size, mtime) = (parts.next()?, parts.next()?, parts.next()?);
    let ok = hash.len() == 64
        && hash.bytes().all(|b| b.is_ascii_hexdigit())
        && size == stamp.0.to_string()
        && mtime == stamp.1.to_string();
    ok.then(|| hash.to_ascii_lowercase())
}

/// SHA-256 of `path`, from its sidecar when the file's size and mtime are
/// unchanged since it was written; otherwise hashed and cached.
pub fn sha256_cached(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<String> {
    let st = stamp(path)?;
    let candidates: Vec<PathBuf> = std::iter::once(sidecar(path)).chain(fallback_sidecar(path, env)).collect();
    if let Some(h) = candidates.iter().find_map(|c| read_cached(c, st)) {
        return Ok(h);
    }
    let hash = sha256_file(path)?;
    let line = format!("{hash}  {} {}\n", st.0, st.1);
    // Best effort: a read-only model directory falls back to lucy's cache dir;
    // failing both only costs a re-hash next time.
    for c in &candidates {
        if let Some(dir) = c.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if std::fs::File::create(c).and_then(|mut f| f.write_all(line.as_bytes())).is_ok() {
            break;
        }
    }
    Ok(hash)
}

/// SHA-256 of a file's bytes, hex.
pub fn sha256_file(path: &Path) -> Result<String> {
    let mut f = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Check `path`'s hash against `want` (hex, case-insensitive).
pub fn verify_sha256(path: &Path, want: &str, env: &dyn Fn(&str) -> Option<String>, fix: &str) -> Result<String> {
    let got = sha256_cached(path, env)?;
    if !got.eq_ignore_ascii_case(want.trim()) {
        return Err(Error::Input(format!(
            "GGUF model {} has sha256 {got}, expected {}; the file is damaged or a different model: {fix}",
            path.display(),
            want.trim().to_ascii_lowercase()
        )));
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn default_dir_precedence() {
        let env = |k: &str| match k {
            "LUCY_CACHE" => Some("/c".to_string()),
            "HOME" => Some("/h".to_string()),
            _ => None,
        };
        assert_eq!(default_model_dir(&env), Some(PathBuf::from("/c/models")));
        let env2 = |k: &str| if k == "HOME" { Some("/h".to_string()) } else { None };
        assert_eq!(default_model_dir(&env2), Some(PathBuf::from("/h/.cache/lucy/models")));
        let env3 = |k: &str| if k == "LUCY_MODEL_DIR" { Some("/m".to_string()) } else { Some("/x".into()) };
        assert_eq!(default_model_path(&env3), Some(PathBuf::from("/m").join(DEFAULT_MODEL_FILE)));
    }

    #[test]
    fn bad_files_are_named_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.gguf");
        let e = check_gguf(&missing, "FIX").unwrap_err().to_string();
        assert!(e.contains("nope.gguf") && e.contains("FIX"), "{e}");
        let text = dir.path().join("text.gguf");
        std::fs::write(&text, "hello, not a model").unwrap();
        let e = check_gguf(&text, "FIX").unwrap_err().to_string();
        assert!(e.contains("not a GGUF") && e.contains("text.gguf"), "{e}");
        let short = dir.path().join("short.gguf");
        std::fs::write(&short, b"GGUF\x03\0\0\0").unwrap();
        let e = check_gguf(&short, "FIX").unwrap_err().to_string();
        assert!(e.contains("truncated"), "{e}");
    }

    #[test]
    fn hash_is_cached_by_size_and_mtime() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("m.gguf");
        std::fs::write(&f, b"abc").unwrap();
        let h = sha256_cached(&f, &no_env).unwrap();
        assert_eq!(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert!(sidecar(&f).exists());
        // A forged sidecar with the right stamp is believed (that is the point
        // of the cache); a changed file (new size) is re-hashed.
        std::fs::write(&f, b"abcd").unwrap();
        let h2 = sha256_cached(&f, &no_env).unwrap();
        assert_eq!(h2, "88d4266fd4e6338d13b845fcf289579d209c897823b9217da3e161936f031589");
        let e = verify_sha256(&f, &h, &no_env, "FIX").unwrap_err().to_string();
        assert!(e.contains(&h) && e.contains(&h2) && e.contains("m.gguf"), "{e}");
    }
}
