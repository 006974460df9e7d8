//! Malformed and mutated dbModels through every loader entry point:
//! `model::parse`, `validate::issues`, `SchemaGraph::new` and `suggest` must
//! return `Ok` or `Err`, never panic, and agree with each other.

use lucy::graph::suggest;
use lucy::model::{parse, validate};
use lucy::SchemaGraph;
use proptest::prelude::*;
use serde_json::{json, Value};

const DDO: &str = include_str!("../dbmodels/ddo.json");

/// Run the whole pipeline on `text`; panics only on a real defect.
fn exercise(text: &str) {
    let Ok(model) = parse(text, Some("fuzz.json")) else { return };
    let issues = validate::issues(&model);
    match SchemaGraph::new(model) {
        Ok(g) => {
            assert!(issues.is_empty(), "graph built although validation found {issues:?}");
            let _ = suggest::suggest(&g);
            let _ = lucy::graph::render::show_text(&g);
            let _ = g.forbidden_relationships();
        }
        Err(lucy::Error::Model(v)) => {
            assert!(!v.is_empty());
            assert_eq!(v, issues, "SchemaGraph::new and validate::issues disagree");
        }
        Err(e) => panic!("unexpected error type: {e}"),
    }
}

/// Every path (as indices/keys) to a node of `v`.
fn paths(v: &Value, prefix: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    out.push(prefix.clone());
    match v {
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                prefix.push(json!(i));
                paths(x, prefix, out);
                prefix.pop();
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                prefix.push(json!(k));
                paths(x, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn node_mut<'a>(v: &'a mut Value, path: &[Value]) -> Option<&'a mut Value> {
    let mut cur = v;
    for seg in path {
        cur = match seg {
            Value::Number(n) => cur.get_mut(n.as_u64()? as usize)?,
            Value::String(k) => cur.get_mut(k.as_str())?,
            _ => return None,
        };
    }
    Some(cur)
}

#[derive(Debug, Clone)]
enum Mutation {
    Delete,
    Replace(Value),
    /// Rename a string to another table name or a near miss.
    Rename(String),
}

fn replacement() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[a-zA-Z_(),>:-]{0,12}".prop_map(Value::String),
        Just(json!([])),
        Just(json!({})),
        Just(json!([["id", "id"]])),
        Just(json!({"table": "CCPU"})),
        Just(json!({"kind": "lookup", "tables": ["CLIENT"]})),
        Just(json!({"kind": "star", "root": "CONFIG", "children": [{"table": "CCPU"}]})),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let names = prop::sample::select(vec![
        "CLIENT",
        "client",
        "LOCATION",
        "CONFIG",
        "CCPU",
        "RSPOOL2CLIENT",
        "PAYMENT",
        "id",
        "loc_id",
        "nope",
        "",
    ]);
    prop_oneof![
        Just(Mutation::Delete),
        replacement().prop_map(Mutation::Replace),
        names.prop_map(|s| Mutation::Rename(s.to_string())),
    ]
}

fn mutate(v: &mut Value, pick: usize, m: &Mutation) {
    let mut all = Vec::new();
    paths(v, &mut Vec::new(), &mut all);
    let path = all[pick % all.len()].clone();
    match m {
        Mutation::Delete => {
            let Some((last, parent)) = path.split_last() else { return };
            match (node_mut(v, parent), last) {
                (Some(Value::Array(a)), Value::Number(n)) => {
                    let i = n.as_u64().unwrap_or(0) as usize;
                    if i < a.len() {
                        a.remove(i);
                    }
                }
                (Some(Value::Object(o)), Value::String(k)) => {
                    o.remove(k);
                }
                _ => {}
            }
        }
        Mutation::Replace(x) => {
            if let Some(n) = node_mut(v, &path) {
                *n = x.clone();
            }
        }
        Mutation::Rename(s) => {
            if let Some(n @ Value::String(_)) = node_mut(v, &path) {
                *n = json!(s);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        exercise(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn truncated_ddo(cut in 0usize..DDO.len()) {
        let mut end = cut;
        while !DDO.is_char_boundary(end) { end -= 1; }
        exercise(&DDO[..end]);
    }

    #[test]
    fn mutated_ddo(muts in prop::collection::vec((any::<usize>(), mutation()), 1..6)) {
        let mut v: Value = serde_json::from_str(DDO).unwrap();
        for (pick, m) in &muts {
            mutate(&mut v, *pick, m);
        }
        exercise(&v.to_string());
    }

    #[test]
    fn random_small_models(model in small_model()) {
        exercise(&model.to_string());
    }
}

/// Random models over a few table names, with random relationships and
/// patterns, many of them invalid, some valid.
fn small_model() -> impl Strategy<Value = Value> {
    let t = || prop::sample::select(vec!["T0", "T1", "T2", "T3", "T4", "t1"]);
    let table =
        t().prop_map(|n| json!({"name": n, "primary_key": ["id"], "columns": [{"name": "id"}, {"name": "fk"}]}));
    let rel = (t(), t(), prop::sample::select(vec!["M:1", "1:M", "1:1"]))
        .prop_map(|(a, b, c)| json!({"from": a, "to": b, "cardinality": c, "on": [["fk", "id"]]}));
    let node = t().prop_map(|n| json!({"table": n}));
    let tree = (
        prop::sample::select(vec!["star", "snowflake"]),
        t(),
        prop::collection::vec((t(), prop::collection::vec(node, 0..3)), 0..3),
    )
        .prop_map(|(k, root, kids)| {
            let children: Vec<Value> = kids.into_iter().map(|(n, c)| json!({"table": n, "children": c})).collect();
            json!({"kind": k, "root": root, "children": children})
        });
    let pattern = prop_oneof![
        prop::collection::vec(t(), 0..3).prop_map(|ts| json!({"kind": "lookup", "tables": ts})),
        (t(), t(), t()).prop_map(|(j, a, b)| json!({"kind": "many_to_many", "junction": j, "sides": [a, b]})),
        tree,
    ];
    let constraints =
        (prop::collection::vec(t(), 0..2), prop::collection::vec(t(), 0..2), prop::collection::vec((t(), t()), 0..2))
            .prop_map(|(f, r, fr)| {
                let fr: Vec<String> = fr.into_iter().map(|(a, b)| format!("{a}-{b}")).collect();
                json!({"forbid_tables": f, "require_tables": r, "forbid_relationships": fr})
            });
    (
        prop::collection::vec(table, 1..6),
        prop::collection::vec(rel, 0..8),
        prop::collection::vec(pattern, 0..4),
        constraints,
    )
        .prop_map(|(tables, rels, pats, c)| json!({"name": "fuzz", "tables": tables, "relationships": rels, "patterns": pats, "constraints": c}))
}

/// Random valid schemas without patterns: unique tables, each foreign key
/// on its own column, random cardinalities (1:M read in reverse).
fn keys_only_model() -> impl Strategy<Value = Value> {
    (2usize..9, prop::collection::vec((0usize..9, 0usize..9, 0usize..3), 0..14)).prop_map(|(n, rels)| {
        let mut next_fk = vec![0usize; n];
        let mut relationships = Vec::new();
        for (a, b, card) in rels {
            let (a, b) = (a % n, b % n);
            let c = ["M:1", "1:1", "1:M"][card];
            // The FK lives in `from` for M:1/1:1 and in `to` for 1:M.
            let (child, parent) = if c == "1:M" { (b, a) } else { (a, b) };
            if next_fk[child] >= 3 {
                continue;
            }
            let col = format!("fk{}", next_fk[child]);
            next_fk[child] += 1;
            relationships.push(if c == "1:M" {
                json!({"from": format!("T{parent}"), "to": format!("T{child}"), "cardinality": c, "on": [["id", col]]})
            } else {
                json!({"from": format!("T{child}"), "to": format!("T{parent}"), "cardinality": c, "on": [[col, "id"]]})
            });
        }
        let tables: Vec<Value> = (0..n)
            .map(|t| {
                let mut cols = vec![json!({"name": "id"})];
                cols.extend((0..next_fk[t]).map(|k| json!({"name": format!("fk{k}")})));
                // Junction-shaped tables get a composite key of their FKs.
                let pk: Vec<String> =
                    if next_fk[t] == 2 && t % 2 == 0 { vec!["fk0".into(), "fk1".into()] } else { vec!["id".into()] };
                json!({"name": format!("T{t}"), "primary_key": pk, "columns": cols})
            })
            .collect();
        json!({"name": "keys", "tables": tables, "relationships": relationships})
    })
}

#[test]
fn suggest_on_random_valid_models_proposes_valid_patterns() {
    // Deterministic sweep: proposals applied to a valid model must validate.
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(Config::default(), TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let strategy = keys_only_model();
    let (mut valid, mut proposed) = (0, 0);
    for _ in 0..1500 {
        let v = strategy.new_tree(&mut runner).unwrap().current();
        let mut m = parse(&v.to_string(), None).unwrap();
        let g = SchemaGraph::new(m.clone()).unwrap_or_else(|e| panic!("generator made an invalid model {v}: {e}"));
        valid += 1;
        let p = suggest::suggest(&g);
        proposed += p.len();
        suggest::apply(&mut m, &p);
        let issues = validate::issues(&m);
        assert!(issues.is_empty(), "applying {p:#?} to {v} gave {issues:#?}");
    }
    assert!(valid == 1500 && proposed > 500, "{valid} models, {proposed} proposals: the generator needs tuning");
}
