//! The prompt-prefix cache on disk: KV snapshots of evaluated prompts kept
//! between processes, so a second `lucy ask` on the same dbModel evaluates
//! only its question.
//!
//! **Where**: `<cache root>/prefix/<model>/<tokens>.kv` (`$LUCY_CACHE`, else
//! `~/.cache/lucy`; [`DiskCacheSettings::dir`] replaces `<cache root>/prefix`).
//! `<model>` is a hash of the GGUF's SHA-256, the llama.cpp build and this
//! file format ([`StoreKey`]); `<tokens>` a hash of the prompt's exact tokens.
//! The prompt template set needs no key of its own: a changed template
//! renders other tokens, which no file matches.
//!
//! **File**: `LUCYKV` magic and format byte, a little-endian `u32` header
//! length, a JSON header (the key's parts, the prompt's tokens, the
//! payload's length and SHA-256), then the payload: the bytes llama.cpp's
//! `llama_state_seq_get_data` wrote for the prompt's KV sequence. A file
//! whose magic, key, length or hash does not match is ignored with a
//! warning (once per file and process) and never restored.
//!
//! **Writes** go to a temporary file in the same directory, then `rename`
//! (atomic on one filesystem): a reader sees a whole file or none, and two
//! processes writing the same prompt both write whole files. Only prompts
//! that start a new prefix (no file shares half of their tokens) are
//! written, so later questions over the same schema, which reuse a file,
//! write nothing.
//!
//! **Bound**: after each write the least recently used files (by
//! modification time, which a restore refreshes) are deleted until all of
//! `<cache root>/prefix` takes at most [`DiskCacheSettings::mb`] MiB; a
//! file larger than the bound is not written.

use std::collections::HashSet;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// File magic: `LUCYKV`, then the format version.
const MAGIC: &[u8; 7] = b"LUCYKV\x01";
/// The JSON header is never larger than this (a 32k-token prompt).
const MAX_HEADER: u32 = 1 << 20;
/// Default disk bound, MiB.
pub const DEFAULT_DISK_MB: usize = 2048;
/// Temporary files older than this are a crashed writer's; removed.
const STALE_TEMP: Duration = Duration::from_secs(600);

/// The disk cache's settings (`llm.prefix_disk.*`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiskCacheSettings {
    /// Keep prompt snapshots on disk between processes (off with
    /// `--llm-no-prefix-cache` too).
    pub enabled: bool,
    /// The most all snapshot files may take, in MiB (LRU beyond).
    pub mb: usize,
    /// The directory; `None`: `<cache root>/prefix`.
    pub dir: Option<PathBuf>,
}

impl Default for DiskCacheSettings {
    fn default() -> Self {
        DiskCacheSettings { enabled: true, mb: DEFAULT_DISK_MB, dir: None }
    }
}

/// The llama.cpp build lucy links (the `llama-cpp-sys-2` version in
/// Cargo.lock, which pins the llama.cpp sources it compiles).
pub fn llama_build() -> &'static str {
    static LOCK: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock"));
    static V: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    V.get_or_init(|| {
        let mut lines = LOCK.lines();
        while let Some(l) = lines.next() {
            if l.trim() == "name = \"llama-cpp-sys-2\"" {
                if let Some(v) = lines.next().and_then(|v| v.trim().strip_prefix("version = ")) {
                    return format!("llama-cpp-sys-2 {}", v.trim_matches('"'));
                }
            }
        }
        "llama-cpp-sys-2 unknown".to_string()
    })
}

/// What a snapshot is only valid for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreKey {
    /// SHA-256 of the GGUF file.
    pub model_sha256: String,
    /// [`llama_build`].
    pub llama: String,
}

impl StoreKey {
    /// The key of this model under the llama.cpp lucy links.
    pub fn new(model_sha256: &str) -> Self {
        StoreKey { model_sha256: model_sha256.to_string(), llama: llama_build().to_string() }
    }

    /// The directory name for this key.
    fn dir_name(&self) -> String {
        let mut h = Sha256::new();
        h.update(self.model_sha256.as_bytes());
        h.update([0]);
        h.update(self.llama.as_bytes());
        h.update([0, MAGIC[6]]);
        hex(&h.finalize()[..8])
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Header {
    key: StoreKey,
    tokens: Vec<i32>,
    payload_len: u64,
    payload_sha256: String,
}

/// One file found on disk.
#[derive(Debug, Clone)]
struct Entry {
    path: PathBuf,
    tokens: Vec<i32>,
}

/// Counters of the disk cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskStats {
    /// Files usable when the store was opened or written since.
    pub files: usize,
    /// Snapshots restored from disk.
    pub restores: u64,
    /// Snapshots written.
    pub writes: u64,
    /// Files ignored (corrupt, truncated, foreign).
    pub ignored: u64,
    /// Files deleted by the bound.
    pub evictions: u64,
}

/// The snapshots of one model on disk.
#[derive(Debug)]
pub struct DiskStore {
    root: PathBuf,
    dir: PathBuf,
    key: StoreKey,
    bound: u64,
    entries: Vec<Entry>,
    warned: HashSet<PathBuf>,
    stats: DiskStats,
}

/// The cache root's `prefix` directory for `env` (`$LUCY_CACHE/prefix`,
/// else `$HOME/.cache/lucy/prefix`).
pub fn default_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let nonempty = |k: &str| env(k).filter(|v| !v.is_empty());
    if let Some(c) = nonempty("LUCY_CACHE") {
        return Some(PathBuf::from(c).join("prefix"));
    }
    nonempty("HOME").map(|h| PathBuf::from(h).join(".cache/lucy/prefix"))
}

impl DiskStore {
    /// Open (and index) the snapshots of `key` under `root`, at most
    /// `bound_mb` MiB in all. Files that cannot be read are warned about
    /// and ignored; a directory that cannot be made gives a store that
    /// keeps nothing (also warned about, at the first write).
    pub fn open(root: &Path, key: StoreKey, bound_mb: usize) -> Self {
        let dir = root.join(key.dir_name());
        let mut s = DiskStore {
            root: root.to_path_buf(),
            dir,
            key,
            bound: (bound_mb as u64).saturating_mul(1 << 20),
            entries: Vec::new(),
            warned: HashSet::new(),
            stats: DiskStats::default(),
        };
        s.rescan();
        s
    }

    /// Read every file's header again (another process may have written).
    pub fn rescan(&mut self) {
        self.entries.clear();
        let Ok(rd) = fs::read_dir(&self.dir) else { return };
        for e in rd.flatten() {
            let path = e.path();
            if path.extension().is_some_and(|x| x == "kv") {
                match read_header(&path, &self.key) {
                    Ok((h, _)) => self.entries.push(Entry { path, tokens: h.tokens }),
                    Err(why) => self.ignore(&path, &why),
                }
            }
        }
        self.entries.sort_by(|a, b| a.path.cmp(&b.path));
        self.stats.files = self.entries.len();
    }

    fn ignore(&mut self, path: &Path, why: &str) {
        self.stats.ignored += 1;
        if self.warned.insert(path.to_path_buf()) {
            eprintln!("lucy: warning: prompt cache file {}: {why}; ignored", path.display());
        }
    }

    /// The file sharing the longest token prefix with `prompt`: (its
    /// number, the tokens shared), if any shares one.
    pub fn best(&self, prompt: &[i32]) -> Option<(usize, usize)> {
        self.entries
            .iter()
            .enumerate()
            .map(|(i, e)| (i, common_prefix(&e.tokens, prompt)))
            .filter(|&(_, n)| n > 0)
            .max_by_key(|&(i, n)| (n, std::cmp::Reverse(i)))
    }

    /// The tokens of file `i`.
    pub fn tokens(&self, i: usize) -> &[i32] {
        &self.entries[i].tokens
    }

    /// Read and check file `i`; its payload, or `None` (warned when the
    /// file is damaged, silent when another process removed it).
    pub fn load(&mut self, i: usize) -> Option<Vec<u8>> {
        let path = self.entries[i].path.clone();
        match read_file(&path, &self.key, &self.entries[i].tokens) {
            Ok(payload) => {
                // Mark it used for the LRU bound.
                if let Ok(f) = fs::File::options().append(true).open(&path) {
                    let _ = f.set_modified(SystemTime::now());
                }
                self.stats.restores += 1;
                Some(payload)
            }
            Err(None) => {
                self.entries.remove(i);
                None
            }
            Err(Some(why)) => {
                self.entries.remove(i);
                self.ignore(&path, &why);
                None
            }
        }
    }

    /// Whether `prompt` would be written: no file shares half of its tokens.
    pub fn wants(&self, prompt: &[i32]) -> bool {
        self.best(prompt).is_none_or(|(_, n)| 2 * n < prompt.len())
    }

    /// Write the snapshot of `prompt` (atomically), drop files it
    /// supersedes (it shares at least half of their tokens) and apply the
    /// bound. Errors are warned about, never fatal: the cache only saves time.
    pub fn save(&mut self, prompt: &[i32], payload: &[u8]) {
        let size = payload.len() as u64 + prompt.len() as u64 * 12 + 512;
        if size > self.bound {
            return;
        }
        if let Err(e) = self.write(prompt, payload) {
            if self.warned.insert(self.dir.clone()) {
                eprintln!("lucy: warning: cannot write the prompt cache in {}: {e}", self.dir.display());
            }
            return;
        }
        self.stats.writes += 1;
        self.evict();
    }

    fn write(&mut self, prompt: &[i32], payload: &[u8]) -> std::io::Result<()> {
        fs::create_dir_all(&self.dir)?;
        let name = format!("{}.kv", tokens_hash(prompt));
        let path = self.dir.join(&name);
        let header = Header {
            key: self.key.clone(),
            tokens: prompt.to_vec(),
            payload_len: payload.len() as u64,
            payload_sha256: hex(&Sha256::digest(payload)),
        };
        let head = serde_json::to_vec(&header).map_err(std::io::Error::other)?;
        let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let tmp = self.dir.join(format!(".{name}.{}.{nanos}.tmp", std::process::id()));
        let written = (|| {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(MAGIC)?;
            f.write_all(&(head.len() as u32).to_le_bytes())?;
            f.write_all(&head)?;
            f.write_all(payload)?;
            f.sync_all()?;
            fs::rename(&tmp, &path)
        })();
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written?;
        // Files this prompt supersedes (the same schema, another question).
        let mut i = 0;
        while i < self.entries.len() {
            let e = &self.entries[i];
            if e.path != path && 2 * common_prefix(&e.tokens, prompt) >= e.tokens.len() {
                let _ = fs::remove_file(&e.path);
                self.entries.remove(i);
            } else {
                i += 1;
            }
        }
        self.entries.retain(|e| e.path != path);
        self.entries.push(Entry { path, tokens: prompt.to_vec() });
        self.stats.files = self.entries.len();
        Ok(())
    }

    /// Delete the least recently used files of every model until the bound
    /// holds, and temporary files a crashed writer left.
    fn evict(&mut self) {
        let mut files: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        let now = SystemTime::now();
        for d in fs::read_dir(&self.root).into_iter().flatten().flatten() {
            for f in fs::read_dir(d.path()).into_iter().flatten().flatten() {
                let p = f.path();
                let Ok(m) = f.metadata() else { continue };
                let mtime = m.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                if p.extension().is_some_and(|x| x == "tmp") {
                    if now.duration_since(mtime).is_ok_and(|age| age > STALE_TEMP) {
                        let _ = fs::remove_file(&p);
                    }
                    continue;
                }
                if p.extension().is_some_and(|x| x == "kv") {
                    files.push((mtime, m.len(), p));
                }
            }
        }
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        files.sort();
        for (_, len, p) in files {
            if total <= self.bound {
                break;
            }
            if fs::remove_file(&p).is_ok() {
                self.stats.evictions += 1;
            }
            total -= len;
            self.entries.retain(|e| e.path != p);
        }
        self.stats.files = self.entries.len();
    }

    /// The counters.
    pub fn stats(&self) -> DiskStats {
        self.stats
    }

    /// The directory of this model's files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn tokens_hash(tokens: &[i32]) -> String {
    let mut h = Sha256::new();
    for t in tokens {
        h.update(t.to_le_bytes());
    }
    hex(&h.finalize()[..16])
}

/// The header of `path`, checked against `key` and the file's length;
/// with the offset of the payload.
fn read_header(path: &Path, key: &StoreKey) -> Result<(Header, u64), String> {
    let mut f = fs::File::open(path).map_err(|e| format!("cannot read it ({e})"))?;
    let len = f.metadata().map_err(|e| format!("cannot read it ({e})"))?.len();
    let mut pre = [0u8; 11];
    f.read_exact(&mut pre).map_err(|_| "truncated (no header)".to_string())?;
    if &pre[..7] != MAGIC {
        return Err("not a lucy prompt cache file of this version (bad magic)".into());
    }
    let hlen = u32::from_le_bytes([pre[7], pre[8], pre[9], pre[10]]);
    if hlen > MAX_HEADER || u64::from(hlen) + 11 > len {
        return Err("truncated or damaged header".into());
    }
    let mut head = vec![0u8; hlen as usize];
    f.read_exact(&mut head).map_err(|_| "truncated header".to_string())?;
    let h: Header = serde_json::from_slice(&head).map_err(|e| format!("damaged header ({e})"))?;
    if h.key != *key {
        return Err(format!(
            "made for another model or llama.cpp build ({} / {}), not {} / {}",
            h.key.model_sha256, h.key.llama, key.model_sha256, key.llama
        ));
    }
    let at = 11 + u64::from(hlen);
    if len != at + h.payload_len {
        return Err(format!("truncated: {} bytes of snapshot, the header says {}", len - at, h.payload_len));
    }
    Ok((h, at))
}

/// The checked payload of `path`. `Err(None)`: the file is gone (another
/// process evicted it); `Err(Some(why))`: it is damaged or foreign.
fn read_file(path: &Path, key: &StoreKey, tokens: &[i32]) -> Result<Vec<u8>, Option<String>> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(None),
        Err(e) => return Err(Some(format!("cannot read it ({e})"))),
    };
    // The header again: the file may have been replaced since the scan.
    let (h, at) = read_header(path, key).map_err(Some)?;
    if h.tokens != tokens {
        return Err(None);
    }
    let payload = bytes.get(at as usize..).ok_or_else(|| Some("truncated".to_string()))?;
    if payload.len() as u64 != h.payload_len {
        return Err(Some("truncated while reading".into()));
    }
    if hex(&Sha256::digest(payload)) != h.payload_sha256 {
        return Err(Some("its snapshot does not match its checksum (damaged or altered)".into()));
    }
    Ok(payload.to_vec())
}

/// Length of the longest common prefix of `a` and `b`.
pub fn common_prefix(a: &[i32], b: &[i32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> StoreKey {
        StoreKey::new("aa")
    }

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("lucy-disk-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_snapshot_survives_the_store_and_the_best_prefix_wins() {
        let root = tmp("roundtrip");
        let mut s = DiskStore::open(&root, key(), 64);
        s.save(&[1, 2, 3, 4, 5, 6], b"schema A");
        s.save(&[9, 9, 9, 9], b"schema B");
        let mut t = DiskStore::open(&root, key(), 64);
        assert_eq!(t.stats().files, 2);
        let (i, n) = t.best(&[1, 2, 3, 4, 7]).unwrap();
        assert_eq!(n, 4);
        assert_eq!(t.load(i).as_deref(), Some(&b"schema A"[..]));
        assert!(!t.wants(&[1, 2, 3, 4, 5, 8]), "covered by a file");
        assert!(t.wants(&[1, 2, 7, 7, 7, 7]), "shares less than half");
        // Another model or llama.cpp build: another directory, nothing shared.
        let other = DiskStore::open(&root, StoreKey::new("bb"), 64);
        assert_eq!(other.stats().files, 0);
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn a_newer_question_over_the_same_prefix_replaces_the_file() {
        let root = tmp("supersede");
        let mut s = DiskStore::open(&root, key(), 64);
        s.save(&[1, 2, 3, 4, 50, 51], b"q1");
        s.save(&[1, 2, 3, 4, 60, 61], b"q2");
        let t = DiskStore::open(&root, key(), 64);
        assert_eq!(t.stats().files, 1);
        assert_eq!(t.tokens(0), &[1, 2, 3, 4, 60, 61]);
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn damaged_truncated_and_foreign_files_are_ignored() {
        let root = tmp("damaged");
        let mut s = DiskStore::open(&root, key(), 64);
        s.save(&[1, 2, 3], b"0123456789");
        s.save(&[7, 8, 9], b"abcdefghij");
        s.save(&[4, 4, 4], b"klmnopqrst");
        let files: Vec<PathBuf> = {
            let mut f: Vec<PathBuf> = fs::read_dir(s.dir()).unwrap().map(|e| e.unwrap().path()).collect();
            f.sort();
            f
        };
        assert_eq!(files.len(), 3);
        // Find each file by its tokens.
        let by = |t: &[i32]| files.iter().find(|p| read_header(p, &key()).unwrap().0.tokens == t).unwrap().clone();
        let (a, b, c) = (by(&[1, 2, 3]), by(&[7, 8, 9]), by(&[4, 4, 4]));
        // Truncated: the last bytes of the snapshot are missing.
        let bytes = fs::read(&a).unwrap();
        fs::write(&a, &bytes[..bytes.len() - 3]).unwrap();
        // Tampered: same length, one byte of the snapshot changed.
        let mut bytes = fs::read(&b).unwrap();
        let n = bytes.len();
        bytes[n - 1] ^= 0xff;
        fs::write(&b, &bytes).unwrap();
        // Foreign: another model's header in this directory.
        let mut h = read_header(&c, &key()).unwrap().0;
        h.key = StoreKey::new("bb");
        let head = serde_json::to_vec(&h).unwrap();
        let mut f = MAGIC.to_vec();
        f.extend((head.len() as u32).to_le_bytes());
        f.extend(head);
        f.extend(b"klmnopqrst");
        fs::write(&c, f).unwrap();
        let mut t = DiskStore::open(&root, key(), 64);
        // The truncated and foreign files are refused by their headers.
        assert_eq!(t.stats().files, 1);
        assert_eq!(t.stats().ignored, 2);
        // The tampered one only when read: its checksum fails.
        let (i, _) = t.best(&[7, 8, 9]).unwrap();
        assert_eq!(t.load(i), None);
        assert_eq!(t.stats().ignored, 3);
        assert!(t.best(&[7, 8, 9]).is_none());
        // Garbage is not a file of ours either.
        fs::write(t.dir().join("junk.kv"), b"hello").unwrap();
        let u = DiskStore::open(&root, key(), 64);
        // Its header is whole: only the tampered payload (found when read) is indexed.
        assert_eq!((u.stats().files, u.stats().ignored), (1, 3));
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn the_disk_bound_holds_and_drops_the_least_recently_used() {
        let root = tmp("bound");
        // 1 MiB bound, files of ~300 KiB: three fit.
        let mut s = DiskStore::open(&root, key(), 1);
        let payload = vec![7u8; 300 << 10];
        for k in 0..3 {
            s.save(&[k, k, k, k], &payload);
            std::thread::sleep(Duration::from_millis(20));
        }
        // Use the first: it becomes the most recent.
        let (i, _) = s.best(&[0, 0, 0, 0]).unwrap();
        assert!(s.load(i).is_some());
        std::thread::sleep(Duration::from_millis(20));
        s.save(&[3, 3, 3, 3], &payload);
        let total: u64 = fs::read_dir(s.dir()).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).sum();
        assert!(total <= 1 << 20, "{total}");
        let t = DiskStore::open(&root, key(), 1);
        let mut kept: Vec<i32> = (0..t.stats().files).map(|i| t.tokens(i)[0]).collect();
        kept.sort();
        assert_eq!(kept, vec![0, 2, 3], "the least recently used ([1]) went");
        // Larger than the whole bound: not written.
        s.save(&[5, 5, 5, 5], &vec![0u8; 2 << 20]);
        assert!(DiskStore::open(&root, key(), 1).best(&[5, 5, 5, 5]).is_none_or(|(_, n)| n == 0));
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn two_writers_at_once_leave_whole_files() {
        let root = tmp("race");
        let payload_a = vec![1u8; 200 << 10];
        let payload_b = vec![2u8; 200 << 10];
        std::thread::scope(|sc| {
            for p in [&payload_a, &payload_b] {
                let root = root.clone();
                sc.spawn(move || {
                    let mut s = DiskStore::open(&root, key(), 64);
                    for _ in 0..20 {
                        // The same prompt from both writers, and one of each.
                        s.save(&[1, 2, 3, 4], p);
                        s.save(&[p[0] as i32 + 10, 5, 6, 7], p);
                    }
                });
            }
        });
        let mut t = DiskStore::open(&root, key(), 64);
        assert_eq!(t.stats().ignored, 0);
        assert_eq!(t.stats().files, 3);
        for i in 0..t.stats().files {
            let p = t.load(i).expect("a whole file");
            assert!(p == payload_a || p == payload_b);
        }
        let leftovers = fs::read_dir(t.dir())
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "tmp"))
            .count();
        assert_eq!(leftovers, 0);
        let _ = fs::remove_dir_all(&root);
    }
}
