//! The prompt-prefix cache on disk (`llm::embedded::disk`), on the tiny
//! generated GGUF of `tests/embedded_model.rs`, across real processes: this
//! test binary runs itself as the child processes (`child_*` tests, which
//! do nothing unless `LUCY_PREFIX_CHILD` names a directory).
//!
//! - a second process evaluates only the question (counted tokens);
//! - another model (another GGUF hash) or a changed template reuses nothing;
//! - a truncated or tampered file is ignored with a warning, the answer
//!   unchanged;
//! - two processes writing at once leave only whole files.

#[path = "embedded/tiny_gguf.rs"]
mod tiny_gguf;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use lucy::llm::embedded::disk::{DiskStore, StoreKey};
use lucy::llm::embedded::{EmbeddedModel, EmbeddedOptions};
use lucy::llm::{ChatModel, ChatRequest, Message};

const SCHEMA: &str = "CLIENT(id, name, gender, loc_id), DATACENTER(id, name, loc_id), LOCATION(id, city, country, \
zip), COMPUTE(id, dc_id, name, cores), RESOURCEPOOL(id, compute_id, name), RSPOOL2CLIENT(rspool_id, client_id)";

/// A MatchTables-shaped prompt: the schema first, the question last.
fn prompt(header: &str, question: &str) -> ChatRequest {
    ChatRequest {
        phase: "test".into(),
        messages: vec![Message::user(format!(
            "{header} Here is a schema: {SCHEMA}. Which tables are relevant? Answer with a list.\nThe question: {question}"
        ))],
        temperature: 0.0,
        n: 1,
        response_schema: None,
        grammar: None,
        max_tokens: None,
    }
}

fn load(gguf: &Path, cache: &Path) -> EmbeddedModel {
    let mut o = EmbeddedOptions::new(gguf);
    o.threads = 1;
    o.n_ctx = 2048;
    o.disk_cache = Some(cache.to_path_buf());
    o.disk_cache_mb = 64;
    EmbeddedModel::load(&o, "FIX", &|_| None).unwrap().with_max_tokens(Some(6))
}

/// Run child test `name` of this binary with `LUCY_PREFIX_CHILD=dir` and
/// `args` (in `LUCY_PREFIX_ARGS`); its output.
fn child(name: &str, dir: &Path, args: &str) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env("LUCY_PREFIX_CHILD", dir)
        .env("LUCY_PREFIX_ARGS", args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn run_child(name: &str, dir: &Path, args: &str) -> Output {
    let out = child(name, dir, args).wait_with_output().unwrap();
    assert!(out.status.success(), "child {name} {args}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// `key=value` lines a child printed (`COST evaluated=.. reused=..`).
fn costs(out: &Output) -> Vec<(u64, u64, u64, String)> {
    let c = parse_costs(out);
    assert!(
        !c.is_empty(),
        "the child printed no costs: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    c
}

fn parse_costs(out: &Output) -> Vec<(u64, u64, u64, String)> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.find("COST ").map(|i| &l[i + 5..]))
        .map(|l| {
            let f: Vec<&str> = l.splitn(4, ' ').chain(std::iter::once("")).collect();
            let n = |s: &str| s.split('=').nth(1).unwrap().parse::<u64>().unwrap();
            (n(f[0]), n(f[1]), n(f[2]), f[3].to_string())
        })
        .collect()
}

/// Child: load `<dir>/<gguf>` with the disk cache in `<dir>/cache`, answer
/// each `header|question` of `LUCY_PREFIX_ARGS` (`;`-separated after the
/// GGUF name), and print `COST evaluated=E reused=R disk=D answer`.
#[test]
fn child_ask() {
    let Some(dir) = std::env::var_os("LUCY_PREFIX_CHILD") else { return };
    let dir = PathBuf::from(dir);
    let args = std::env::var("LUCY_PREFIX_ARGS").unwrap();
    let mut parts = args.split(';');
    let gguf = dir.join(parts.next().unwrap());
    let m = load(&gguf, &dir.join("cache"));
    for p in parts {
        let (h, q) = p.split_once('|').unwrap();
        let r = m.chat(&prompt(h, q)).unwrap();
        let l = r.local.unwrap();
        println!(
            "COST evaluated={} reused={} disk={} {}",
            l.prompt_evaluated,
            l.prompt_reused,
            l.disk_reused,
            r.choices[0].replace('\n', "\\n")
        );
    }
}

fn setup(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    tiny_gguf::write(&p, 7, Default::default());
    let other = dir.path().join("other.gguf");
    tiny_gguf::write(&other, 8, Default::default());
    (dir, p)
}

#[test]
fn a_second_process_evaluates_only_its_question() {
    let (dir, _) = setup("tiny.gguf");
    let first = costs(&run_child("child_ask", dir.path(), "tiny.gguf;A|Which clients use dev?"));
    assert_eq!(first[0].1, 0, "a cold cache reuses nothing: {first:?}");
    let total = first[0].0;
    // A new process, another question over the same schema.
    let second = costs(&run_child("child_ask", dir.path(), "tiny.gguf;A|How many datacenters per city?"));
    let (evaluated, reused, disk, _) = &second[0];
    assert!(*disk > 0 && disk == reused, "restored from disk: {second:?}");
    // The tiny model's vocabulary is bytes: the question's bytes and the
    // chat template's closing tokens are all that is evaluated.
    // (13 tokens close a user turn and open the answer in the chat template).
    let (q1, q2) = ("Which clients use dev?".len() as u64, "How many datacenters per city?".len() as u64);
    assert!(
        *evaluated <= q2 + 13 && *reused >= total - q1 - 13,
        "only the question is evaluated: {second:?} (first {total})"
    );
    // The same question again: everything but the last token is reused, and
    // the answer is the first process's (a restored prefix answers as a
    // fresh evaluation).
    let again = costs(&run_child("child_ask", dir.path(), "tiny.gguf;A|Which clients use dev?"));
    assert_eq!(again[0].0, 1, "{again:?}");
    assert_eq!(again[0].3, first[0].3);

    // A changed template (another header) shares only the chat template's
    // first tokens: nothing worth reading from disk.
    let changed = costs(&run_child("child_ask", dir.path(), "tiny.gguf;B|Which clients use dev?"));
    assert_eq!(changed[0].2, 0, "{changed:?}");
    // Another model: its own key, nothing reused.
    let other = costs(&run_child("child_ask", dir.path(), "other.gguf;A|Which clients use dev?"));
    assert_eq!((other[0].1, other[0].2), (0, 0), "{other:?}");
}

#[test]
fn a_damaged_file_is_ignored_with_a_warning() {
    let (dir, gguf) = setup("tiny.gguf");
    let first = costs(&run_child("child_ask", dir.path(), "tiny.gguf;A|Which clients use dev?"));
    let files = kv_files(&dir.path().join("cache"));
    assert_eq!(files.len(), 1, "{files:?}");
    let sha = lucy::llm::embedded::file::sha256_cached(&gguf, &|_| None).unwrap();
    for damage in ["truncate", "tamper"] {
        let bytes = std::fs::read(&files[0]).unwrap();
        let mut bad = bytes.clone();
        match damage {
            "truncate" => bad.truncate(bytes.len() - 100),
            _ => {
                let n = bad.len();
                bad[n - 50] ^= 0x55;
            }
        }
        std::fs::write(&files[0], &bad).unwrap();
        let out = run_child("child_ask", dir.path(), "tiny.gguf;A|Which clients use dev?");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("warning: prompt cache file") && err.contains("ignored"), "{damage}: {err}");
        let c = costs(&out);
        assert_eq!(c[0].2, 0, "{damage}: nothing restored from the damaged file: {c:?}");
        assert_eq!(c[0].3, first[0].3, "{damage}: the answer is unchanged");
        // Restore the good file for the next damage.
        std::fs::write(&files[0], &bytes).unwrap();
    }
    // The good file is used again.
    let c = costs(&run_child("child_ask", dir.path(), "tiny.gguf;A|Which clients use dev?"));
    assert!(c[0].2 > 0, "{c:?}");
    let store = DiskStore::open(&dir.path().join("cache"), StoreKey::new(&sha), 64);
    assert_eq!(store.stats().ignored, 0);
}

#[test]
fn two_processes_writing_at_once_leave_whole_files() {
    let (dir, gguf) = setup("tiny.gguf");
    // Both write the same prompt prefixes and their own, at the same time.
    let qs = |tag: &str| {
        let mut s = String::from("tiny.gguf");
        for h in ["A", "B", "C", "D"] {
            s.push_str(&format!(";{h}|question {tag} {h}"));
        }
        s
    };
    let a = child("child_ask", dir.path(), &qs("one"));
    let b = child("child_ask", dir.path(), &qs("two"));
    for c in [a, b] {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let sha = lucy::llm::embedded::file::sha256_cached(&gguf, &|_| None).unwrap();
    let cache = dir.path().join("cache");
    let mut store = DiskStore::open(&cache, StoreKey::new(&sha), 64);
    assert_eq!(store.stats().ignored, 0, "no damaged file");
    assert!(store.stats().files >= 4, "{:?}", store.stats());
    for i in 0..store.stats().files {
        assert!(store.load(i).is_some(), "file {i} is whole");
    }
    let tmp = std::fs::read_dir(store.dir())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "tmp"))
        .count();
    assert_eq!(tmp, 0, "no temporary file left");
    // And a third process reuses them.
    let c = costs(&run_child("child_ask", dir.path(), "tiny.gguf;C|a third question"));
    assert!(c[0].2 > 0, "{c:?}");
}

fn kv_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in std::fs::read_dir(root).unwrap().flatten() {
        for f in std::fs::read_dir(d.path()).unwrap().flatten() {
            if f.path().extension().is_some_and(|x| x == "kv") {
                out.push(f.path());
            }
        }
    }
    out
}
