//! Load check of `lucy serve` on loopback: the scripted mock LLM (DDO Q1),
//! the server as a child process, and concurrent `POST /v1/view` and
//! `POST /v1/ask` from this process. Bounded in requests and time; every
//! target is 127.0.0.1.
//!
//! ```sh
//! cargo build && cargo run --example serve_load -- [--lucy target/debug/lucy] [--cap 4] [--n 200] [--secs 60]
//! ```
//!
//! Prints a Markdown table: per phase, requests, concurrency, throughput,
//! p50/p99 latency, status counts; and the server's resident memory before
//! and after. Below the cap every answer must be 200; above it the extra
//! requests must be clean 429s (JSON body, Retry-After).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lucy::llm::mock::{MockServer, Script};
use serde_json::{json, Value};

const Q1: &str =
    "List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names.";

fn arg(name: &str, default: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned()).unwrap_or_else(|| default.to_string())
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

struct Phase {
    name: String,
    concurrency: usize,
    latencies_ms: Vec<f64>,
    statuses: std::collections::BTreeMap<u16, usize>,
    bad_429: usize,
    wall_s: f64,
}

/// `n` requests from `concurrency` threads, stopping early at `deadline`.
fn run(name: &str, url: &str, body: Value, n: usize, concurrency: usize, secs: f64) -> Phase {
    let next = Arc::new(Mutex::new(0usize));
    let out = Arc::new(Mutex::new((Vec::new(), std::collections::BTreeMap::new(), 0usize)));
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let start = Instant::now();
    let threads: Vec<_> = (0..concurrency)
        .map(|_| {
            let (next, out, url, body) = (next.clone(), out.clone(), url.to_string(), body.clone());
            std::thread::spawn(move || {
                let client = reqwest::blocking::Client::builder().timeout(Duration::from_secs(120)).build().unwrap();
                loop {
                    {
                        let mut k = next.lock().unwrap();
                        if *k >= n || Instant::now() > deadline {
                            return;
                        }
                        *k += 1;
                    }
                    let t = Instant::now();
                    let r = client.post(&url).json(&body).send();
                    let ms = t.elapsed().as_secs_f64() * 1e3;
                    let (code, clean) = match r {
                        Ok(r) => {
                            let code = r.status().as_u16();
                            let retry = r.headers().contains_key("retry-after");
                            let v: Value = r.json().unwrap_or(Value::Null);
                            (code, code != 429 || (retry && v["error"].is_string()))
                        }
                        Err(_) => (0, true),
                    };
                    let mut o = out.lock().unwrap();
                    if code == 200 {
                        o.0.push(ms);
                    }
                    *o.1.entry(code).or_insert(0) += 1;
                    if !clean {
                        o.2 += 1;
                    }
                }
            })
        })
        .collect();
    for t in threads {
        let _ = t.join();
    }
    let wall_s = start.elapsed().as_secs_f64();
    let (mut latencies_ms, statuses, bad_429) = std::mem::take(&mut *out.lock().unwrap());
    latencies_ms.sort_by(|a: &f64, b| a.total_cmp(b));
    Phase { name: name.into(), concurrency, latencies_ms, statuses, bad_429, wall_s }
}

fn pct(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    // reqwest is built without a default rustls provider (src/llm/tls.rs).
    lucy::llm::tls::install_provider();
    let lucy = arg("--lucy", "target/debug/lucy");
    let cap: usize = arg("--cap", "4").parse().expect("--cap N");
    let n: usize = arg("--n", "200").parse().expect("--n N");
    let secs: f64 = arg("--secs", "60").parse().expect("--secs S");
    // The DDO Q1 answers the tests use (tests/ask_ddo.rs).
    let mut script = Script::from_file("tests/fixtures/mock/ddo-q1.json").expect("mock script");
    script.max_requests = 1_000_000;
    script.idle_timeout_secs = Some(300.0);
    let mock = MockServer::start(script);
    let mut child = Command::new(&lucy)
        .args(["serve", "--models", "dbmodels/ddo.json", "--addr", "127.0.0.1:0", "--max-concurrent", &cap.to_string()])
        .args(["--llm-url", &mock.url(), "--llm-model", "mock", "--llm-retries", "0"])
        .env("LUCY_API_KEY", "sk-load-check")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {lucy}: {e} (cargo build first, or pass --lucy PATH)"));
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let base = line.trim().strip_prefix("listening on ").expect("lucy serve did not start").to_string();
    let pid = child.id();
    let rss0 = rss_kib(pid);
    let view =
        json!({"model": "ddo", "tables": ["CLIENT", "DATACENTER"], "attributes": ["CLIENT.name", "DATACENTER.name"]});
    let ask = json!({"model": "ddo", "question": Q1, "execute": true, "min_votes": 2});
    let phases = vec![
        run("view, at the cap", &format!("{base}/v1/view"), view.clone(), n, cap, secs),
        run("ask (mock LLM, executed), at the cap", &format!("{base}/v1/ask"), ask.clone(), n / 2, cap, secs),
        run("view, 4× the cap", &format!("{base}/v1/view"), view, n, cap * 4, secs),
        run("ask, 4× the cap", &format!("{base}/v1/ask"), ask, n / 2, cap * 4, secs),
    ];
    let rss1 = rss_kib(pid);
    let _ = child.kill();
    let _ = child.wait();
    println!("| phase | concurrency | requests | 200 | 429 | other | req/s | p50 ms (200s) | p99 ms (200s) |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut ok = true;
    for p in &phases {
        let total: usize = p.statuses.values().sum();
        let c200 = p.statuses.get(&200).copied().unwrap_or(0);
        let c429 = p.statuses.get(&429).copied().unwrap_or(0);
        let other = total - c200 - c429;
        println!(
            "| {} | {} | {total} | {c200} | {c429} | {other} | {:.1} | {:.1} | {:.1} |",
            p.name,
            p.concurrency,
            total as f64 / p.wall_s,
            pct(&p.latencies_ms, 0.5),
            pct(&p.latencies_ms, 0.99)
        );
        if other > 0 || p.bad_429 > 0 || (p.concurrency <= cap && c429 > 0) {
            ok = false;
        }
    }
    println!();
    println!(
        "server memory (VmRSS): {:.1} MiB before, {:.1} MiB after; mock LLM served {} requests",
        rss0 as f64 / 1024.0,
        rss1 as f64 / 1024.0,
        mock.request_count()
    );
    if !ok {
        eprintln!("FAILED: errors other than clean 429s, or 429s at or below the cap");
        std::process::exit(1);
    }
}
