//! The index on disk, keyed by the database's identity, and in memory for
//! the life of the process (a benchmark asks many questions of one
//! database).
//!
//! Identity: for a SQLite file its canonical path, size, modification time
//! (ns) and the header's file change counter (and the same of a `-wal` file
//! beside it); for a server its URL without the password and a fingerprint
//! of its catalog (every column's table, name and type, and the server's
//! per-table write counters where it keeps them: PostgreSQL's
//! `pg_stat_user_tables`, MySQL's `update_time`). The key hashes the
//! identity with the model's text-like columns and the bounds, so a changed
//! database, model or bound builds anew. The file lives in
//! `<cache root>/values/<key>.json` (`LUCY_CACHE`, else `~/.cache/lucy`).

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{build, is_text_type, ValueBounds, ValueIndex};
use crate::crush::embed::cache_root;
use crate::error::{Error, Result};
use crate::graph::SchemaGraph;
use crate::sql::exec::{self, Database, ExecOptions};

/// Version of the file format and of the build's queries: a change makes
/// every cached index stale.
const FORMAT: u32 = 1;

/// Where an index came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provenance {
    /// Read from the database just now.
    Built,
    /// Read from the cache file.
    Cache,
    /// Already in this process's memory.
    Memory,
}

/// A directory of cached value indexes.
#[derive(Debug, Clone)]
pub struct ValueCache {
    dir: PathBuf,
}

#[derive(Serialize, Deserialize)]
struct CacheFile {
    format: u32,
    key: String,
    identity: String,
    index: ValueIndex,
}

impl ValueCache {
    /// A cache in `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ValueCache { dir: dir.into() }
    }

    /// `<cache root>/values`.
    pub fn default_location() -> Self {
        Self::new(cache_root().join("values"))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `key`.
    pub fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    fn read(&self, key: &str) -> Option<ValueIndex> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        let f: CacheFile = serde_json::from_str(&text).ok()?;
        (f.format == FORMAT && f.key == key).then_some(f.index)
    }

    /// Write atomically (a temporary file renamed into place), so a reader
    /// never sees half a file.
    fn write(&self, key: &str, identity: &str, index: &ValueIndex) -> Result<()> {
        std::fs::create_dir_all(&self.dir).map_err(|e| Error::io(&self.dir, e))?;
        let file =
            CacheFile { format: FORMAT, key: key.to_string(), identity: identity.to_string(), index: index.clone() };
        let text = serde_json::to_string(&file).map_err(|e| Error::Input(format!("value index: {e}")))?;
        let tmp = self.dir.join(format!("{key}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, text).map_err(|e| Error::io(&tmp, e))?;
        let path = self.path(key);
        std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))
    }
}

/// Size, modification time (ns) and, for a SQLite file, the header's file
/// change counter (bytes 24..28) of `path`, or `None` when it does not exist.
fn file_stamp(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    let mtime = meta.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
    let mut header = [0u8; 28];
    let counter = std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut header))
        .map(|()| u32::from_be_bytes([header[24], header[25], header[26], header[27]]))
        .unwrap_or(0);
    Some(format!("{}:{mtime}:{counter}", meta.len()))
}

/// The catalog fingerprint of a server: a hash of its columns and write
/// counters (see the module documentation).
fn catalog_fingerprint(db: &Database, bounds: &ValueBounds) -> Result<String> {
    let queries: &[&str] = match db {
        Database::Postgres(_) => &[
            "SELECT table_name::text, column_name::text, data_type::text FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY 1, 2",
            "SELECT relname::text, (n_tup_ins + n_tup_upd + n_tup_del)::text FROM pg_stat_user_tables WHERE schemaname = current_schema() ORDER BY 1",
        ],
        Database::Mysql(_) => &[
            "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = DATABASE() ORDER BY 1, 2",
            "SELECT table_name, CAST(update_time AS CHAR) FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY 1",
        ],
        Database::Sqlite(_) | Database::Spark(_) => &[],
    };
    let mut h = Sha256::new();
    for q in queries {
        let opts = ExecOptions { limit: Some(200_000), timeout: bounds.query_timeout, max_result_bytes: 64 << 20 };
        let rows = exec::run(db, None, q, &opts)?;
        for r in &rows.rows {
            for v in r {
                let s = v.to_string();
                h.update((s.len() as u64).to_le_bytes());
                h.update(s.as_bytes());
            }
        }
    }
    Ok(hex(&h.finalize()))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

/// The identity of `db` (see the module documentation); never a password.
pub fn identity(db: &Database, bounds: &ValueBounds) -> Result<String> {
    match db {
        Database::Sqlite(path) => {
            let canon = std::fs::canonicalize(path)
                .map_err(|e| Error::Input(format!("{}: no such SQLite database file ({e})", path.display())))?;
            let stamp = file_stamp(&canon)
                .ok_or_else(|| Error::Input(format!("{}: cannot read the database file", canon.display())))?;
            let mut id = format!("sqlite:{}:{stamp}", canon.display());
            let mut wal = canon.clone().into_os_string();
            wal.push("-wal");
            if let Some(w) = file_stamp(Path::new(&wal)) {
                id.push_str(&format!(":wal:{w}"));
            }
            Ok(id)
        }
        Database::Postgres(_) | Database::Mysql(_) => Ok(format!("{db}#{}", catalog_fingerprint(db, bounds)?)),
        // No catalog fingerprint is read from Spark yet, so an index could
        // not tell when the data changed: none is built (the run goes on
        // without values and says why).
        Database::Spark(_) => {
            Err(Error::Input(format!("{db}: the value index is not built on Spark yet (no catalog fingerprint)")))
        }
    }
}

/// The cache key: the identity, the model's text-like columns and the bounds.
pub fn key(graph: &SchemaGraph, identity: &str, bounds: &ValueBounds) -> String {
    let mut h = Sha256::new();
    let mut put = |s: &str| {
        h.update((s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    };
    put(&FORMAT.to_string());
    put(identity);
    put(&format!("{bounds:?}"));
    for t in &graph.model().tables {
        for c in t.columns.iter().filter(|c| is_text_type(&c.sql_type)) {
            put(&format!("{}.{}:{}", t.name, c.name, c.sql_type));
        }
    }
    hex(&h.finalize())
}

/// The index of `graph`'s model over `db`: from `cache` when it holds one
/// under the current key, else built (and stored there; a cache that
/// cannot be written is only bypassed). Without a cache, always built.
pub fn load_or_build(
    graph: &SchemaGraph,
    db: &Database,
    bounds: &ValueBounds,
    cache: Option<&ValueCache>,
) -> Result<(ValueIndex, Provenance)> {
    let Some(cache) = cache else { return Ok((build(graph, db, bounds)?, Provenance::Built)) };
    let id = identity(db, bounds)?;
    let k = key(graph, &id, bounds);
    if let Some(index) = cache.read(&k) {
        return Ok((index, Provenance::Cache));
    }
    let index = build(graph, db, bounds)?;
    let _ = cache.write(&k, &id, &index);
    Ok((index, Provenance::Built))
}

type Memo = Mutex<HashMap<String, Arc<ValueIndex>>>;

/// [`load_or_build`] with the default bounds and cache, remembered in this
/// process by key: what `lucy ask --values on` and `lucy bench` use. One
/// build at a time (the lock is held while building), so parallel
/// questions of a benchmark never build the same index twice.
pub fn shared(graph: &SchemaGraph, db: &Database) -> Result<(Arc<ValueIndex>, Provenance)> {
    static MEMO: OnceLock<Memo> = OnceLock::new();
    let bounds = ValueBounds::default();
    let id = identity(db, &bounds)?;
    let k = key(graph, &id, &bounds);
    let memo = MEMO.get_or_init(Memo::default);
    let mut map = memo.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(index) = map.get(&k) {
        return Ok((index.clone(), Provenance::Memory));
    }
    let cache = ValueCache::default_location();
    let (index, how) = match cache.read(&k) {
        Some(index) => (index, Provenance::Cache),
        None => {
            let index = build(graph, db, &bounds)?;
            let _ = cache.write(&k, &id, &index);
            (index, Provenance::Built)
        }
    };
    let index = Arc::new(index);
    map.insert(k, index.clone());
    Ok((index, how))
}
