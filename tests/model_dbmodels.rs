//! Every curated dbModel under dbmodels/ loads and validates, and the DDO
//! model has exactly the structure of the Lucy paper (§2.1, Figures 1, 3).

use std::path::{Path, PathBuf};

use lucy::graph::load as load_graph;
use lucy::graph::TreeKind;
use lucy::model::load;

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            json_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

#[test]
fn every_dbmodel_loads_and_validates() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels"));
    let mut files = Vec::new();
    json_files(dir, &mut files);
    files.sort();
    assert!(!files.is_empty(), "no dbModels under {}", dir.display());
    let failures: Vec<String> =
        files.iter().filter_map(|f| load_graph(f).err().map(|e| format!("{}: {e}", f.display()))).collect();
    assert!(failures.is_empty(), "{} of {} dbModels fail:\n{}", failures.len(), files.len(), failures.join("\n"));
}

fn ddo_path() -> &'static str {
    concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json")
}

#[test]
fn ddo_has_the_paper_tables_and_keys() {
    let m = load(ddo_path()).unwrap();
    let expected: &[(&str, &[&str])] = &[
        ("LOCATION", &["id", "city", "country", "zip"]),
        ("CLIENT", &["id", "name", "gender", "loc_id"]),
        ("DATACENTER", &["id", "name", "loc_id"]),
        ("COMPUTE", &["id", "name", "dc_id"]),
        ("RESOURCEPOOL", &["id", "name", "compute_id"]),
        ("RSPOOL2CLIENT", &["id", "rspool_id", "client_id"]),
        ("CONFIG", &["id", "rspool_id", "changeversion"]),
        ("CCPU", &["id", "config_id", "overheadlimit", "reservation", "shares"]),
        ("CMEMORY", &["id", "config_id", "overheadlimit", "reservation"]),
        ("RUNTIME", &["id", "rspool_id", "overallstatus"]),
        ("RCPU", &["id", "runtime_id", "overallusage", "maxusage"]),
        ("RMEMORY", &["id", "runtime_id", "overallusage"]),
        ("PAYMENT", &["id", "client_id", "date"]),
        ("PAYAMOUNT", &["id", "pay_id", "amount"]),
        ("TAX", &["id", "payamt_id", "rate"]),
        ("SUPERCHARGE", &["id", "payamt_id", "reason"]),
        ("INCOME", &["id", "payamt_id", "source"]),
        ("RETENTION", &["id", "client_id", "strategy"]),
        ("GIFT", &["id", "retention_id", "item"]),
        ("BONUS", &["id", "retention_id", "amount"]),
    ];
    assert_eq!(m.tables.len(), expected.len());
    for (t, (name, cols)) in m.tables.iter().zip(expected) {
        assert_eq!(&t.name, name);
        assert_eq!(t.primary_key, ["id"], "{name}");
        let got: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(&got, cols, "{name}");
        assert!(t.description.as_deref().is_some_and(|d| d.len() > 20), "{name} needs a description");
        assert!(t.columns.iter().all(|c| c.description.is_some()), "{name} column descriptions");
    }
    // Every foreign key is a M:1 relationship from the FK side to `id`.
    let fks: Vec<String> = m
        .relationships
        .iter()
        .map(|r| format!("{}.{}->{}.{} {}", r.from, r.on[0][0], r.to, r.on[0][1], r.cardinality.as_str()))
        .collect();
    for fk in [
        "CLIENT.loc_id->LOCATION.id M:1",
        "DATACENTER.loc_id->LOCATION.id M:1",
        "COMPUTE.dc_id->DATACENTER.id M:1",
        "RESOURCEPOOL.compute_id->COMPUTE.id M:1",
        "RSPOOL2CLIENT.rspool_id->RESOURCEPOOL.id M:1",
        "RSPOOL2CLIENT.client_id->CLIENT.id M:1",
        "CONFIG.rspool_id->RESOURCEPOOL.id M:1",
        "CCPU.config_id->CONFIG.id M:1",
        "CMEMORY.config_id->CONFIG.id M:1",
        "RUNTIME.rspool_id->RESOURCEPOOL.id M:1",
        "RCPU.runtime_id->RUNTIME.id M:1",
        "RMEMORY.runtime_id->RUNTIME.id M:1",
        "PAYMENT.client_id->CLIENT.id M:1",
        "PAYAMOUNT.pay_id->PAYMENT.id M:1",
        "TAX.payamt_id->PAYAMOUNT.id M:1",
        "SUPERCHARGE.payamt_id->PAYAMOUNT.id M:1",
        "INCOME.payamt_id->PAYAMOUNT.id M:1",
        "RETENTION.client_id->CLIENT.id M:1",
        "GIFT.retention_id->RETENTION.id M:1",
        "BONUS.retention_id->RETENTION.id M:1",
    ] {
        assert!(fks.contains(&fk.to_string()), "missing {fk}");
    }
    assert_eq!(fks.len(), 20);
}

#[test]
fn ddo_patterns_resolve_as_in_the_paper() {
    let g = load_graph(ddo_path()).unwrap();
    let id = |n: &str| g.table_id(n).unwrap();
    let names = |ts: &[usize]| ts.iter().map(|&t| g.name(t).to_string()).collect::<Vec<_>>();

    assert_eq!(
        names(&g.core_tables()),
        ["LOCATION", "CLIENT", "DATACENTER", "COMPUTE", "RESOURCEPOOL", "RSPOOL2CLIENT", "PAYMENT", "RETENTION"]
    );
    assert_eq!(names(g.lookup_tables()), ["LOCATION"]);
    let j = g.junction_of(id("RSPOOL2CLIENT")).unwrap();
    assert_eq!(names(&j.sides), ["CLIENT", "RESOURCEPOOL"]);
    assert_eq!(g.relationship(j.rels[0]).on[0][0], "client_id");
    assert_eq!(g.relationship(j.rels[1]).on[0][0], "rspool_id");

    assert_eq!(g.pattern_root_kind(id("RESOURCEPOOL")), Some(TreeKind::Snowflake));
    assert_eq!(g.pattern_root_kind(id("PAYMENT")), Some(TreeKind::Star));
    assert_eq!(g.pattern_root_kind(id("RETENTION")), Some(TreeKind::Star));
    assert_eq!(names(g.pattern_children(id("RESOURCEPOOL"))), ["CONFIG", "RUNTIME"]);
    assert_eq!(names(g.pattern_children(id("CONFIG"))), ["CCPU", "CMEMORY"]);
    assert_eq!(names(g.pattern_children(id("PAYAMOUNT"))), ["TAX", "SUPERCHARGE", "INCOME"]);
    assert_eq!(names(&g.tree_tables(id("RESOURCEPOOL"))), ["CONFIG", "RUNTIME", "CCPU", "CMEMORY", "RCPU", "RMEMORY"]);
    // The branch RESOURCEPOOL -> CONFIG -> CCPU (the orange path of Figure 1).
    let branch: Vec<(String, String)> =
        g.branch_to(id("CCPU")).into_iter().map(|(p, c, _)| (g.name(p).to_string(), g.name(c).to_string())).collect();
    assert_eq!(branch, [("RESOURCEPOOL".into(), "CONFIG".into()), ("CONFIG".into(), "CCPU".into())]);
    let pos = g.inner_position(id("TAX")).unwrap();
    assert_eq!((g.name(pos.root), g.name(pos.parent), pos.kind), ("PAYMENT", "PAYAMOUNT", TreeKind::Star));
}

#[test]
fn docs_example_is_the_shipped_ddo_model() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/dbmodel.md")).unwrap();
    let start = doc.find("## Full example").expect("docs/dbmodel.md has a Full example section");
    let block = &doc[start..];
    let open = block.find("```json\n").expect("json block") + "```json\n".len();
    let close = block[open..].find("\n```").expect("closed block") + open;
    let example = lucy::model::parse(&block[open..close], Some("docs/dbmodel.md")).unwrap();
    assert_eq!(example, load(ddo_path()).unwrap(), "docs/dbmodel.md's example differs from dbmodels/ddo.json");
}
