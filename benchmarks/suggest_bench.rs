//! Relationship proposals (`lucy model suggest --relationships`, issue #25)
//! measured against curated models: each suite's model is stripped of its
//! relationships (and patterns and constraints, which name them), and, as a
//! second setting, of its declared primary keys too (what a Spark catalog
//! import gives); the suggester runs on names alone and on names + values
//! (the suite's SQLite database), and its proposals are compared with the
//! curated relationships. Prints a markdown table.
//!
//! `cargo run --example suggest_bench [-- --verbose]`
//!
//! Counting: a proposal is correct when the unordered pair of sides
//! (table, columns) ↔ (table, columns), column pairs matched, equals a
//! curated relationship's, whatever the direction (a proposal read in the
//! reverse direction of the curated one counts) and whatever the
//! cardinality (agreement on cardinality is its own column). A proposal on
//! one column of a curated composite relationship is wrong. Role and
//! subtype relationships whose column names differ (ACME's Policy 1:1
//! Agreement on Policy_Identifier = Agreement_Identifier) count in the
//! recall's denominator: names cannot find them, and the table says how
//! many there are.

use std::collections::HashSet;
use std::path::Path;
use std::time::Instant;

use lucy::check::inclusion::{suggest_checked, InclusionBounds};
use lucy::graph::fk::{self, relationship_key, PairKey, RelationshipProposal};
use lucy::sql::exec::Database;
use lucy::types::Cardinality;

struct Suite {
    name: &'static str,
    model: &'static str,
    database: &'static str,
}

/// Paths relative to the repository root (ACME's as in benchmarks/suites/acme.json).
const SUITES: [Suite; 2] = [
    Suite { name: "DDO", model: "dbmodels/ddo.json", database: "dbmodels/ddo.sqlite" },
    Suite { name: "ACME", model: "dbmodels/acme.json", database: "../shared/benchmarks/acme/acme_small.sqlite" },
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn main() {
    let verbose = std::env::args().any(|a| a == "--verbose");
    println!("| suite | setting | proposals | correct | precision | recall | cardinality agrees | queries | wall |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut notes = Vec::new();
    for s in &SUITES {
        let curated = lucy::model::load(root().join(s.model)).expect("model loads");
        // (sides, cardinality, id, from table) of each curated relationship.
        let truth: Vec<(PairKey, Cardinality, String, String)> = curated
            .relationships
            .iter()
            .map(|r| (relationship_key(r), r.cardinality, r.id(), r.from.clone()))
            .collect();
        let truth_keys: HashSet<PairKey> = truth.iter().map(|t| t.0.clone()).collect();
        let db_path = root().join(s.database);
        let db = Database::Sqlite(db_path.clone());
        for keys in [true, false] {
            let mut m = curated.clone();
            m.relationships.clear();
            m.patterns.clear();
            m.constraints = Default::default();
            if !keys {
                for t in &mut m.tables {
                    t.primary_key.clear();
                }
            }
            for values in [false, true] {
                if values && !db_path.exists() {
                    notes.push(format!("{}: {} missing, values not measured", s.name, db_path.display()));
                    continue;
                }
                let t0 = Instant::now();
                let (proposals, queries): (Vec<RelationshipProposal>, usize) = if values {
                    let out = suggest_checked(&m, &db, &InclusionBounds::default()).expect("check runs");
                    (out.proposals, out.queries)
                } else {
                    (fk::suggest_relationships(&m), 0)
                };
                let wall = t0.elapsed();
                let setting = format!(
                    "{}, {}",
                    if keys { "declared keys" } else { "no keys" },
                    if values { "names + values" } else { "names" }
                );
                let mut correct = 0;
                let mut card_ok = 0;
                let mut found: HashSet<PairKey> = HashSet::new();
                for p in &proposals {
                    let k = relationship_key(&p.value);
                    if let Some(t) = truth.iter().find(|t| t.0 == k) {
                        correct += 1;
                        found.insert(k);
                        // Cardinality as read from the curated side's `from`.
                        let same_dir = p.value.from.eq_ignore_ascii_case(&t.3);
                        let card = if same_dir { p.value.cardinality } else { reverse(p.value.cardinality) };
                        if card == t.1 {
                            card_ok += 1;
                        }
                    } else if verbose {
                        println!("<!-- {} {setting}: wrong: {} ({}) -->", s.name, p.value.id(), p.reason);
                    }
                }
                if verbose {
                    for t in truth.iter().filter(|t| !found.contains(&t.0)) {
                        println!("<!-- {} {setting}: missed: {} -->", s.name, t.2);
                    }
                }
                let precision = if proposals.is_empty() { 1.0 } else { correct as f64 / proposals.len() as f64 };
                let recall = correct as f64 / truth_keys.len().max(1) as f64;
                println!(
                    "| {} | {setting} | {} | {correct} | {precision:.2} | {recall:.2} ({correct}/{}) | {card_ok}/{correct} | {queries} | {:.1} ms |",
                    s.name,
                    proposals.len(),
                    truth_keys.len(),
                    wall.as_secs_f64() * 1000.0
                );
            }
        }
    }
    println!();
    for n in notes {
        println!("- {n}");
    }
}

fn reverse(c: Cardinality) -> Cardinality {
    match c {
        Cardinality::ManyToOne => Cardinality::OneToMany,
        Cardinality::OneToMany => Cardinality::ManyToOne,
        Cardinality::OneToOne => Cardinality::OneToOne,
    }
}
