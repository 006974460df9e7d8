//! DDL import time vs input size: the import must be linear (issue #13:
//! 1 MB of DDL and a 20,000-column table each under 2 s). Prints a markdown
//! table.
//!
//! `cargo run --example import_bench`
//! (add `-- --quick` to stop at 250 KB / 4,000 columns).
//!
//! Inputs (seeded, deterministic):
//! - random schemas of 125 KB – 1 MB, each in two spellings: with `;`
//!   between statements (parsed whole) and without (ACME-style, so the
//!   splitter and the per-statement fallback do the work), with foreign
//!   keys, comments and a few statements no dialect parses (the tolerant
//!   reader's path);
//! - one table of 1,000 – 20,000 columns, one column per line and all on
//!   one line.

use std::time::Instant;

use lucy::model::import::ddl_with_warnings;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const TYPES: [&str; 6] = ["INTEGER", "varchar(40)", "decimal(15,2)", "TEXT", "DATE", "bigint"];

/// Random DDL of about `bytes` bytes.
fn random_ddl(bytes: usize, semicolons: bool, seed: u64) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = String::with_capacity(bytes + 4096);
    let mut t = 0usize;
    while out.len() < bytes {
        let ncols = rng.random_range(3..30);
        out.push_str(&format!("-- table {t}\nCREATE TABLE t{t} (\n  id INTEGER PRIMARY KEY"));
        for c in 0..ncols {
            let ty = TYPES[rng.random_range(0..TYPES.len())];
            out.push_str(&format!(",\n  c{c} {ty}{}", if rng.random_bool(0.3) { " NOT NULL" } else { "" }));
        }
        if t > 0 && rng.random_bool(0.7) {
            let to = rng.random_range(0..t);
            out.push_str(&format!(",\n  ref_{to} INTEGER,\n  FOREIGN KEY (ref_{to}) REFERENCES t{to}(id)"));
        }
        // Now and then a statement sqlparser cannot read.
        if rng.random_bool(0.02) {
            out.push_str(",\n  weird WITH ODD SYNTAX (");
        }
        out.push_str("\n)");
        out.push_str(if semicolons { ";\n\n" } else { "\n\n" });
        t += 1;
    }
    out
}

fn wide_table(cols: usize, one_line: bool) -> String {
    let sep = if one_line { ", " } else { ",\n  " };
    let body: Vec<String> = (0..cols).map(|i| format!("c{i} {}", TYPES[i % TYPES.len()])).collect();
    format!("CREATE TABLE wide (\n  id INTEGER PRIMARY KEY{sep}{});\n", body.join(sep))
}

fn time(sql: &str) -> (f64, usize, usize) {
    let t = Instant::now();
    let imported = ddl_with_warnings(sql, None, "bench").expect("imports");
    let s = t.elapsed().as_secs_f64();
    let cols = imported.model.tables.iter().map(|t| t.columns.len()).sum();
    (s, imported.model.tables.len(), cols)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    println!("| input | bytes | tables | columns | seconds |");
    println!("|---|---:|---:|---:|---:|");
    let sizes: &[usize] = if quick { &[125_000, 250_000] } else { &[125_000, 250_000, 500_000, 1_000_000] };
    for &size in sizes {
        for semicolons in [true, false] {
            let sql = random_ddl(size, semicolons, 7);
            let (s, tables, cols) = time(&sql);
            let what = if semicolons { "random DDL, `;`" } else { "random DDL, no `;`" };
            println!("| {what} | {} | {tables} | {cols} | {s:.3} |", sql.len());
        }
    }
    let widths: &[usize] = if quick { &[1_000, 4_000] } else { &[1_000, 4_000, 20_000] };
    for &w in widths {
        for one_line in [false, true] {
            let sql = wide_table(w, one_line);
            let (s, tables, cols) = time(&sql);
            let what = if one_line { "one table, one line" } else { "one table, a column per line" };
            println!("| {what} | {} | {tables} | {cols} | {s:.3} |", sql.len());
        }
    }
}
