//! `lucy model import --dbt`: the three real fixtures of ../shared/dbt
//! (their expected tables, keys and relationships written down by hand
//! from each project's YAML tests, constraints and semantic models), small
//! hand-written manifests for each edge case, bad input, `--update`, and
//! the pattern suggester on the imports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use lucy::model::import::dbt::update;
use lucy::model::import::{dbt_with_warnings, DbtImport, DbtOptions};
use lucy::types::{Cardinality, DbModel, Pattern};
use serde_json::{json, Value};

fn shared(name: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/dbt").join(name);
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!("skipped: {} is not present", p.display());
        None
    }
}

fn import(path: &Path, select: &[&str]) -> DbtImport {
    let opts = DbtOptions {
        path: path.to_path_buf(),
        select: select.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    dbt_with_warnings(&opts).unwrap_or_else(|e| panic!("import of {} failed: {e}", path.display()))
}

fn tables(m: &DbModel) -> BTreeSet<String> {
    m.tables.iter().map(|t| t.name.clone()).collect()
}

fn keys(m: &DbModel) -> BTreeMap<String, Vec<String>> {
    m.tables.iter().filter(|t| !t.primary_key.is_empty()).map(|t| (t.name.clone(), t.primary_key.clone())).collect()
}

/// `from(a,b)->to(c,d)` of every relationship, written from the FK side.
fn rels(m: &DbModel) -> BTreeSet<String> {
    m.relationships
        .iter()
        .map(|r| {
            assert_ne!(r.cardinality, Cardinality::OneToMany, "importers write relationships from the FK side");
            r.id()
        })
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn key_map(items: &[(&str, &[&str])]) -> BTreeMap<String, Vec<String>> {
    items.iter().map(|(t, k)| (t.to_string(), k.iter().map(|s| s.to_string()).collect())).collect()
}

fn warned(imp: &DbtImport, needle: &str) -> bool {
    imp.imported.warnings.iter().any(|w| w.to_string().contains(needle))
}

// ---------------------------------------------------------------------------
// The real fixtures. Expectations come from each project's tests and YAML
// (see ../shared/dbt/SOURCES.md), not from the importer.

#[test]
fn jaffle_shop_v1_11() {
    let Some(dir) = shared("jaffle-shop-v1.11") else { return };
    let imp = import(&dir, &[]);
    let m = &imp.imported.model;
    // 14 enabled models (the MetricFlow time spine left out) and 6 seeds.
    assert_eq!(
        tables(m),
        set(&[
            "stg_products",
            "stg_customers",
            "stg_supplies",
            "stg_orders",
            "stg_order_items",
            "stg_locations",
            "supplies",
            "dim_customer_segment",
            "products",
            "customers",
            "fct_customer_segment_orders",
            "orders",
            "order_items",
            "locations",
            "raw_items",
            "raw_customers",
            "raw_stores",
            "raw_orders",
            "raw_supplies",
            "raw_products",
        ])
    );
    assert!(warned(&imp, "time spine"));
    // Keys: constraints (dim_customer_segment, fct_customer_segment_orders,
    // orders' column-level PK), dbt's primary_key, unique + not_null tests,
    // and the primary entity of the semantic models of supplies and
    // products, which have neither. Seeds have no tests.
    assert_eq!(
        keys(m),
        key_map(&[
            ("stg_products", &["product_id"]),
            ("stg_customers", &["customer_id"]),
            ("stg_supplies", &["supply_uuid"]),
            ("stg_orders", &["order_id"]),
            ("stg_order_items", &["order_item_id"]),
            ("stg_locations", &["location_id"]),
            ("supplies", &["supply_uuid"]),
            ("dim_customer_segment", &["customer_id", "segment_code"]),
            ("products", &["product_id"]),
            ("customers", &["customer_id"]),
            ("fct_customer_segment_orders", &["order_id"]),
            ("orders", &["order_id"]),
            ("order_items", &["order_item_id"]),
            ("locations", &["location_id"]),
        ])
    );
    // Constraints: the composite FK, two column-level FKs. Tests: three
    // relationships tests (one from a mart to staging). Entities: orders →
    // locations (also a constraint), orders → customers, order_items →
    // orders (also a test), order_items → products.
    assert_eq!(
        rels(m),
        set(&[
            "fct_customer_segment_orders(customer_id,segment_code)->dim_customer_segment(customer_id,segment_code)",
            "fct_customer_segment_orders(order_id)->orders(order_id)",
            "orders(location_id)->locations(location_id)",
            "stg_order_items(order_id)->stg_orders(order_id)",
            "orders(customer_id)->stg_customers(customer_id)",
            "order_items(order_id)->orders(order_id)",
            "orders(customer_id)->customers(customer_id)",
            "order_items(product_id)->products(product_id)",
        ])
    );
    let c = &imp.relationships_by_origin;
    assert_eq!((c.constraint, c.test, c.entity), (3, 3, 2));
    // Merged origins: the constraint and the entity on orders → locations.
    let loc = m.relationships.iter().find(|r| r.id() == "orders(location_id)->locations(location_id)").unwrap();
    let o = loc.origin.as_deref().unwrap();
    assert!(o.starts_with("dbt: constraint") && o.contains("entity location"), "{o}");
    // A fct row is one order: 1:1.
    let one =
        m.relationships.iter().find(|r| r.id() == "fct_customer_segment_orders(order_id)->orders(order_id)").unwrap();
    assert_eq!(one.cardinality, Cardinality::OneToOne);
    // accepted_values shown in the description; Snowflake's upper-case
    // catalog names folded to the manifest's spelling.
    let customers = m.table("customers").unwrap();
    let ct = customers.column("customer_type").unwrap();
    assert!(ct.description.as_deref().unwrap().ends_with("Values: 'new', 'returning'"), "{:?}", ct.description);
    assert!(customers.columns.iter().all(|c| c.name == c.name.to_lowercase()));
    assert!(customers.origin.as_deref().unwrap().starts_with("dbt: model jaffle_shop.customers"));
    // Semantic model names as synonyms: `order_item` on order_items.
    assert!(m.table("order_items").unwrap().synonyms.iter().any(|s| s == "order item"));
    assert_eq!(m.dialect, None, "snowflake has no lucy dialect");
}

#[test]
fn dbt_constraints_fixture() {
    let Some(dir) = shared("dbt-constraints") else { return };
    let imp = import(&dir, &[]);
    let m = &imp.imported.model;
    assert_eq!(m.name, "dbt_constraints_integration_tests", "v9 has no project_name: the package of most nodes");
    assert_eq!(m.dialect, Some(lucy::types::Dialect::Postgres));
    // 12 models (dim_customers is aliased dim_customer) and 6 seeds; no sources.
    assert_eq!(
        tables(m),
        set(&[
            "dim_customer",
            "dim_customers_view",
            "dim_duplicate_orders",
            "dim_missing_orders",
            "dim_orders",
            "dim_orders_null_keys",
            "dim_part",
            "dim_part_supplier",
            "dim_part_supplier_missing_con",
            "fact_order_line",
            "fact_order_line_longcol",
            "fact_order_line_missing_orders",
            "customer",
            "lineitem",
            "orders",
            "part",
            "partsupp",
            "supplier",
        ])
    );
    assert!(warned(&imp, "source(s) not imported"));
    // Keys: dbt_constraints.primary_key first, then unique + not_null, then
    // the unique combinations (dbt_constraints.unique_key on two columns).
    assert_eq!(
        keys(m),
        key_map(&[
            ("dim_part", &["p_partkey"]),
            ("dim_customer", &["c_custkey"]),
            ("dim_customers_view", &["c_custkey"]),
            ("dim_orders", &["o_orderkey"]),
            ("fact_order_line", &["l_orderkey", "l_linenumber"]),
            ("dim_duplicate_orders", &["o_orderkey"]),
            ("fact_order_line_missing_orders", &["l_orderkey", "l_linenumber"]),
            ("dim_orders_null_keys", &["o_orderkey"]),
            ("dim_part_supplier", &["ps_partkey", "ps_suppkey"]),
            ("fact_order_line_longcol", &["l_____________________orderkey", "l___________________linenumber"]),
            ("part", &["p_partkey"]),
            ("partsupp", &["ps_partkey", "ps_suppkey"]),
            ("supplier", &["s_suppkey"]),
            ("orders", &["o_orderkey"]),
            ("customer", &["c_custkey"]),
            ("lineitem", &["l_orderkey", "l_linenumber"]),
        ])
    );
    // The `unique` test with a where config is not a key, and says so.
    assert!(warned(&imp, "holds only where 1 = 1"));
    // relationships tests and dbt_constraints.foreign_key tests between the
    // imported models and seeds; dim_orders → dim_customers is declared by
    // five tests, kept once.
    assert_eq!(
        rels(m),
        set(&[
            "dim_orders(o_custkey)->dim_customer(c_custkey)",
            "fact_order_line(l_orderkey)->dim_orders(o_orderkey)",
            "fact_order_line(l_partkey,l_suppkey)->dim_part_supplier(ps_partkey,ps_suppkey)",
            "fact_order_line_missing_orders(l_orderkey)->dim_missing_orders(o_orderkey)",
            "fact_order_line_missing_orders(l_partkey,l_suppkey)->dim_part_supplier_missing_con(ps_partkey,ps_suppkey)",
            "dim_orders_null_keys(o_custkey)->dim_customer(c_custkey)",
            "dim_part_supplier(ps_suppkey)->supplier(s_suppkey)",
            "fact_order_line_longcol(l_____________________orderkey)->dim_orders(o_orderkey)",
            "fact_order_line_longcol(l______________________partkey,l______________________suppkey)->dim_part_supplier(ps_partkey,ps_suppkey)",
            "partsupp(ps_partkey)->part(p_partkey)",
            "partsupp(ps_suppkey)->supplier(s_suppkey)",
            "orders(o_custkey)->customer(c_custkey)",
            "lineitem(l_orderkey)->orders(o_orderkey)",
        ])
    );
    assert_eq!(imp.relationships_by_origin.test, 13);
    let five = m.relationships.iter().find(|r| r.id() == "dim_orders(o_custkey)->dim_customer(c_custkey)").unwrap();
    let o = five.origin.as_deref().unwrap();
    assert!(
        o.contains("test relationships_dim_orders_o_custkey")
            && o.contains("test dbt_constraints_foreign_key_dim_orders"),
        "{o}"
    );
    // The expression-valued lineitem → partsupp test and the target outside
    // the selection (a source) are warnings.
    assert!(warned(&imp, "relates SQL expressions"));
    assert!(warned(&imp, "source.dbt_constraints_integration_tests.tpc_h.source_supplier is not imported"));

    // The pattern suggester proposes the part–supplier junction as m:m.
    let g = lucy::graph::SchemaGraph::new(m.clone()).unwrap();
    let proposals = lucy::graph::suggest::suggest(&g);
    let mm: Vec<&Pattern> =
        proposals.iter().map(|p| &p.value).filter(|p| matches!(p, Pattern::ManyToMany { .. })).collect();
    assert!(
        mm.iter().any(|p| matches!(p, Pattern::ManyToMany { junction, sides, .. }
            if junction == "partsupp" && sides.contains(&"part".to_string()) && sides.contains(&"supplier".to_string()))),
        "{proposals:#?}"
    );
    // With the sources selected too, the tests on sources become relationships.
    let all = import(&dir, &["resource_type:source", "resource_type:model", "resource_type:seed"]);
    let r = rels(&all.imported.model);
    assert!(r.contains("source_partsupp(ps_partkey)->source_part(p_partkey)"), "{r:#?}");
    assert!(r.contains("source_lineitem(l_orderkey,l_linenumber)->lineitem(l_orderkey,l_linenumber)"), "{r:#?}");
}

#[test]
fn dbt_bouncer_111() {
    let Some(dir) = shared("dbt-bouncer-111") else { return };
    let imp = import(&dir, &[]);
    let m = &imp.imported.model;
    // The project's own tables: not the 25 tiktok_ads package models, not
    // the ephemeral ones, not the time spine, customers only as v3, and the
    // two snapshots (columns from the catalog).
    assert_eq!(
        tables(m),
        set(&[
            "stg_orders",
            "stg_customers",
            "stg_payments",
            "orders",
            "int_exclude_via_meta_config",
            "int_incremental",
            "py_order_stats",
            "raw_customers",
            "raw_payments",
            "raw_orders",
            "customers_v3",
            "snapshot_orders",
            "snapshot_orders_multiple_unique_keys",
        ])
    );
    assert!(warned(&imp, "not the latest (3)"));
    assert!(warned(&imp, "ephemeral"));
    assert!(warned(&imp, "other packages not imported"));
    // A snapshot's unique_key is not a key: the snapshots have none.
    assert_eq!(
        keys(m),
        key_map(&[
            ("stg_orders", &["order_id"]),
            ("stg_customers", &["customer_id"]),
            ("stg_payments", &["payment_id"]),
            ("orders", &["order_id_pk"]),
            ("int_exclude_via_meta_config", &["id"]),
            ("int_incremental", &["id"]),
            ("py_order_stats", &["order_id"]),
            ("customers_v3", &["customer_id_pk"]),
        ])
    );
    // The one relationships test, to `ref('customers')`: dbt resolved it to v3.
    assert_eq!(rels(m), set(&["orders(customer_id_fk)->customers_v3(customer_id_pk)"]));
    let status = m.table("stg_orders").unwrap().column("status").unwrap();
    assert!(status.description.as_deref().unwrap().contains("'return_pending'"));
    assert_eq!(m.dialect, None, "duckdb has no lucy dialect");
    // The package, selected by dbt's own words.
    let pkg = import(&dir, &["package:tiktok_ads,resource_type:model"]);
    assert!(pkg.imported.model.tables.iter().all(|t| t.name.contains("tiktok_ads")));
}

// ---------------------------------------------------------------------------
// Small hand-written manifests, one edge case each.

fn manifest(nodes: Value, sources: Value, extra: Value) -> Value {
    let mut m = json!({
        "metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json",
                     "dbt_version": "1.9.0", "project_name": "shop", "adapter_type": "postgres"},
        "nodes": nodes, "sources": sources,
    });
    if let (Some(o), Some(e)) = (m.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            o.insert(k.clone(), v.clone());
        }
    }
    m
}

fn model(name: &str, cols: &[&str]) -> Value {
    let columns: serde_json::Map<String, Value> =
        cols.iter().map(|c| (c.to_string(), json!({"name": c, "description": "", "data_type": "integer"}))).collect();
    json!({"resource_type": "model", "package_name": "shop", "name": name, "alias": name, "schema": "marts",
           "config": {"enabled": true, "materialized": "table"}, "columns": columns,
           "original_file_path": format!("models/{name}.sql"), "depends_on": {"nodes": []}})
}

fn test(name: &str, attached: Option<&str>, deps: &[&str], kind: (Option<&str>, &str), kwargs: Value) -> Value {
    json!({"resource_type": "test", "package_name": "shop", "name": name, "attached_node": attached,
           "column_name": kwargs.get("column_name"), "depends_on": {"nodes": deps},
           "test_metadata": {"name": kind.1, "namespace": kind.0, "kwargs": kwargs},
           "config": {"enabled": true, "severity": "ERROR", "where": null}})
}

fn write(dir: &Path, v: &Value) -> PathBuf {
    let p = dir.join("manifest.json");
    std::fs::write(&p, serde_json::to_string(v).unwrap()).unwrap();
    p
}

fn customers_orders(extra_nodes: &[(&str, Value)]) -> serde_json::Map<String, Value> {
    let mut nodes = serde_json::Map::new();
    nodes.insert("model.shop.customers".into(), model("customers", &["id", "name"]));
    nodes.insert("model.shop.orders".into(), model("orders", &["id", "customer_id", "status"]));
    nodes.insert(
        "test.shop.unique_customers_id".into(),
        test(
            "unique_customers_id",
            Some("model.shop.customers"),
            &["model.shop.customers"],
            (None, "unique"),
            json!({"column_name": "id"}),
        ),
    );
    nodes.insert(
        "test.shop.not_null_customers_id".into(),
        test(
            "not_null_customers_id",
            Some("model.shop.customers"),
            &["model.shop.customers"],
            (None, "not_null"),
            json!({"column_name": "id"}),
        ),
    );
    for (k, v) in extra_nodes {
        nodes.insert(k.to_string(), v.clone());
    }
    nodes
}

#[test]
fn fusion_nulls_and_missing_keys() {
    let dir = tempfile::tempdir().unwrap();
    let mut nodes = customers_orders(&[]);
    // Fusion: null config/meta, no namespace, no data_type, [from, to] order.
    let o = nodes.get_mut("model.shop.orders").unwrap();
    o["config"] = Value::Null;
    o["meta"] = Value::Null;
    o["columns"]["status"] = json!({"name": "status", "description": null, "meta": null, "constraints": null});
    let mut t = test(
        "relationships_orders_customer_id__id__ref_customers_",
        Some("model.shop.orders"),
        &["model.shop.orders", "model.shop.customers"],
        (None, "relationships"),
        json!({"column_name": "customer_id", "to": "ref('customers')", "field": "id"}),
    );
    t["test_metadata"].as_object_mut().unwrap().remove("namespace");
    t["config"]["where"] = Value::Null;
    nodes.insert("test.shop.rel".into(), t);
    let mut m = manifest(Value::Object(nodes), Value::Null, json!({"semantic_models": null, "disabled": null}));
    m["metadata"]["dbt_version"] = json!("2.0.0-beta.2");
    let imp = import(&write(dir.path(), &m), &[]);
    assert_eq!(rels(&imp.imported.model), set(&["orders(customer_id)->customers(id)"]));
    let r = &imp.imported.model.relationships[0];
    assert_eq!(r.origin.as_deref(), Some("dbt: test relationships_orders_customer_id__id__ref_customers_"));
}

#[test]
fn relationships_test_without_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = customers_orders(&[(
        "test.shop.rel",
        test(
            "relationships_orders_customer_id",
            Some("model.shop.orders"),
            &["model.shop.customers", "model.shop.orders"],
            (None, "relationships"),
            json!({"column_name": "customer_id", "model": "{{ get_where_subquery(ref('orders')) }}"}),
        ),
    )]);
    let imp = import(&write(dir.path(), &manifest(Value::Object(nodes), json!({}), json!({}))), &[]);
    assert_eq!(rels(&imp.imported.model), set(&["orders(customer_id)->customers(id)"]));
    assert!(warned(&imp, "arguments are missing"));
}

#[test]
fn test_on_a_source() {
    let dir = tempfile::tempdir().unwrap();
    let source = json!({"resource_type": "source", "package_name": "shop", "name": "raw_orders",
        "source_name": "ecom", "identifier": "raw_orders_tbl", "schema": "marts",
        "columns": {"customer_id": {"name": "customer_id"}, "id": {"name": "id"}}, "config": {"enabled": true}});
    let nodes = customers_orders(&[(
        "test.shop.rel",
        test(
            "relationships_source_raw_orders",
            None,
            &["source.shop.ecom.raw_orders", "model.shop.customers"],
            (None, "relationships"),
            json!({"column_name": "customer_id", "to": "ref('customers')", "field": "id",
                   "model": "{{ get_where_subquery(source('ecom', 'raw_orders')) }}"}),
        ),
    )]);
    let m = manifest(Value::Object(nodes), json!({"source.shop.ecom.raw_orders": source}), json!({}));
    let path = write(dir.path(), &m);
    let imp = import(&path, &[]);
    assert!(imp.imported.model.table("raw_orders_tbl").is_none(), "sources only when selected");
    let imp = import(&path, &["resource_type:source", "resource_type:model"]);
    assert_eq!(rels(&imp.imported.model), set(&["raw_orders_tbl(customer_id)->customers(id)"]));
}

#[test]
fn expression_column_and_where_config() {
    let dir = tempfile::tempdir().unwrap();
    let mut with_where = test(
        "relationships_orders_customer_id_where",
        Some("model.shop.orders"),
        &["model.shop.customers", "model.shop.orders"],
        (None, "relationships"),
        json!({"column_name": "customer_id", "to": "ref('customers')", "field": "id"}),
    );
    with_where["config"]["where"] = json!("status <> 'test'");
    let nodes = customers_orders(&[
        ("test.shop.where", with_where),
        (
            "test.shop.expr",
            test(
                "relationships_orders_expr",
                Some("model.shop.orders"),
                &["model.shop.customers", "model.shop.orders"],
                (None, "relationships"),
                json!({"column_name": "coalesce(customer_id, 0)", "to": "ref('customers')", "field": "id"}),
            ),
        ),
    ]);
    let imp = import(&write(dir.path(), &manifest(Value::Object(nodes), json!({}), json!({}))), &[]);
    assert_eq!(rels(&imp.imported.model), set(&["orders(customer_id)->customers(id)"]));
    assert!(warned(&imp, "relationships_orders_customer_id_where holds only where status <> 'test'; kept"));
    assert!(warned(&imp, "relationships_orders_expr: relates SQL expressions"));
}

#[test]
fn one_alias_in_two_schemas_is_two_tables_named_by_their_dbt_names() {
    let dir = tempfile::tempdir().unwrap();
    let mut other = model("orders_v", &["id"]);
    other["alias"] = json!("orders");
    other["schema"] = json!("staging");
    let nodes = customers_orders(&[("model.shop.orders_v", other.clone())]);
    let path = write(dir.path(), &manifest(Value::Object(nodes), json!({}), json!({})));
    let imp = import(&path, &[]);
    let m = &imp.imported.model;
    assert_eq!(tables(m), set(&["orders", "orders_v", "customers"]));
    let relation = |n: &str| m.tables.iter().find(|t| t.name == n).unwrap().relation.clone();
    // Found by schema and alias, each part quoted on its own.
    assert_eq!(relation("orders"), ["marts", "orders"]);
    assert_eq!(relation("orders_v"), ["staging", "orders"]);
    assert_eq!(relation("customers"), ["marts", "customers"]);
    // The same dbt name in two packages as well: refused, naming both.
    let mut twin = other;
    twin["name"] = json!("orders");
    twin["package_name"] = json!("other");
    let nodes = customers_orders(&[("model.other.orders", twin)]);
    let path = write(dir.path(), &manifest(Value::Object(nodes), json!({}), json!({})));
    let e = dbt_with_warnings(&DbtOptions {
        path: path.clone(),
        select: vec!["package:shop".into(), "package:other".into()],
        ..Default::default()
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("model.shop.orders (marts.orders)") && e.contains("model.other.orders (staging.orders)"), "{e}");
}

#[test]
fn versioned_and_disabled_models() {
    let dir = tempfile::tempdir().unwrap();
    let mut v1 = model("customers", &["id", "name"]);
    v1["alias"] = json!("customers_v1");
    v1["version"] = json!(1);
    v1["latest_version"] = json!(2);
    let mut v2 = model("customers", &["id", "name", "email"]);
    v2["alias"] = json!("customers_v2");
    v2["version"] = json!(2);
    v2["latest_version"] = json!(2);
    let mut off = model("legacy", &["id"]);
    off["config"]["enabled"] = json!(false);
    let mut nodes = serde_json::Map::new();
    nodes.insert("model.shop.customers.v1".into(), v1);
    nodes.insert("model.shop.customers.v2".into(), v2);
    nodes.insert("model.shop.legacy".into(), off);
    nodes.insert("model.shop.orders".into(), model("orders", &["id", "customer_id"]));
    nodes.insert(
        "test.shop.rel".into(),
        test(
            "relationships_orders_customer_id",
            Some("model.shop.orders"),
            &["model.shop.customers.v2", "model.shop.orders"],
            (None, "relationships"),
            json!({"column_name": "customer_id", "to": "ref('customers')", "field": "id"}),
        ),
    );
    let m = manifest(Value::Object(nodes), json!({}), json!({"disabled": {"model.shop.py": [model("py", &["id"])]}}));
    let imp = import(&write(dir.path(), &m), &[]);
    assert_eq!(tables(&imp.imported.model), set(&["customers_v2", "orders"]));
    assert_eq!(rels(&imp.imported.model), set(&["orders(customer_id)->customers_v2(id)"]));
    assert!(warned(&imp, "version 1 of customers, not the latest (2)"));
    assert!(warned(&imp, "model.shop.legacy: disabled"));
}

// ---------------------------------------------------------------------------
// Bad input through the binary: exit 2, the file and JSON path named,
// nothing written.

fn lucy_import(args: &[&str]) -> (i32, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_lucy")).args(["model", "import"]).args(args).output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn bad_input_is_refused_and_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    let cases: Vec<(&str, String, &str)> = vec![
        ("not_manifest.json", r#"{"tables": []}"#.into(), "$.metadata.dbt_schema_version is missing"),
        ("array.json", "[1, 2]".into(), "not a dbt manifest"),
        (
            "old.json",
            r#"{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v6.json"}, "nodes": {}}"#
                .into(),
            "manifest v6 is older than v7",
        ),
        (
            "catalog.json",
            r#"{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/catalog/v1.json"}, "nodes": {}}"#
                .into(),
            "dbt catalog artifact",
        ),
        (
            "truncated.json",
            {
                let full = serde_json::to_string(&manifest(Value::Object(customers_orders(&[])), json!({}), json!({})))
                    .unwrap();
                full[..full.len() / 2].to_string()
            },
            "truncated",
        ),
        (
            "bad_type.json",
            r#"{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json"},
                "nodes": {"model.a.b": {"resource_type": "model", "columns": [1, 2]}}}"#
                .into(),
            r#"$.nodes["model.a.b"].columns"#,
        ),
    ];
    for (file, text, needle) in cases {
        let p = dir.path().join(file);
        std::fs::write(&p, text).unwrap();
        let (code, err) = lucy_import(&["--dbt", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert_eq!(code, 2, "{file}: {err}");
        assert!(err.contains(file) && err.contains(needle), "{file}: expected {needle:?} in {err}");
        assert!(!out.exists(), "{file}: nothing may be written");
    }
    let (code, err) = lucy_import(&["--dbt", dir.path().join("nope").to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
}

/// A 100 MB manifest (20,000 models with 5 KB of compiled SQL each) is read
/// in one pass into the subset; the compiled SQL is skipped, not kept.
/// Time and memory are measured in benchmarks/results/dbt.md, not asserted.
#[test]
fn a_100_mb_manifest_imports() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("manifest.json");
    let sql = "select 1 as x -- padding padding padding padding padding padding padding padding\n".repeat(60);
    let mut s = String::with_capacity(110 << 20);
    s.push_str(r#"{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json", "project_name": "big"}, "nodes": {"#);
    for i in 0..20_000 {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!(
            r#""model.big.m{i}": {{"resource_type": "model", "package_name": "big", "name": "m{i}", "alias": "m{i}", "schema": "s", "config": {{"materialized": "table"}}, "columns": {{"id": {{"name": "id"}}}}, "raw_code": {raw}, "compiled_code": {raw}}}"#,
            raw = serde_json::to_string(&sql).unwrap()
        ));
    }
    s.push_str("}}");
    assert!(s.len() > 100_000_000, "{} bytes", s.len());
    std::fs::write(&p, s).unwrap();
    let imp = import(&p, &[]);
    assert_eq!(imp.imported.model.tables.len(), 20_000);
}

// ---------------------------------------------------------------------------
// --update keeps the curation.

#[test]
fn update_keeps_curation_and_guards_patterns() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = customers_orders(&[(
        "test.shop.rel",
        test(
            "relationships_orders_customer_id",
            Some("model.shop.orders"),
            &["model.shop.customers", "model.shop.orders"],
            (None, "relationships"),
            json!({"column_name": "customer_id", "to": "ref('customers')", "field": "id"}),
        ),
    )]);
    let mut payments = model("payments", &["id", "order_id"]);
    payments["description"] = json!("One payment.");
    let mut with_payments = nodes.clone();
    with_payments.insert("model.shop.payments".into(), payments);
    let first = import(&write(dir.path(), &manifest(Value::Object(with_payments), json!({}), json!({}))), &[]);
    // The team curates: a description, synonyms, a hand-added relationship, a pattern.
    let mut curated = first.imported.model.clone();
    let c = curated.tables.iter_mut().find(|t| t.name == "customers").unwrap();
    c.description = Some("A person who bought something.".into());
    c.synonyms = vec!["client".into()];
    curated.relationships.push(lucy::types::Relationship {
        name: Some("pay_order".into()),
        from: "payments".into(),
        to: "orders".into(),
        cardinality: Cardinality::ManyToOne,
        on: vec![["order_id".into(), "id".into()]],
        description: None,
        role: None,
        role_description: None,
        role_synonyms: Vec::new(),
        via: None,
        origin: None,
    });
    curated.patterns.push(Pattern::Lookup { tables: vec!["customers".into()], description: None });
    // dbt now: a new column on orders, payments gone (no pattern uses it).
    let mut next = nodes.clone();
    next.insert("model.shop.orders".into(), model("orders", &["id", "customer_id", "status", "amount"]));
    let fresh = import(&write(dir.path(), &manifest(Value::Object(next.clone()), json!({}), json!({}))), &[]);
    let merged = update::merge(&curated, &fresh.imported.model, false).unwrap();
    let m = &merged.model;
    let c = m.table("customers").unwrap();
    assert_eq!(c.description.as_deref(), Some("A person who bought something."));
    assert_eq!(c.synonyms, vec!["client".to_string()]);
    assert_eq!(m.patterns.len(), 1);
    assert!(m.table("payments").is_none());
    assert!(merged.notes.iter().any(|n| n.contains("dropped hand-added relationship pay_order")), "{:?}", merged.notes);
    let shown: Vec<String> = merged.changes.iter().map(|c| c.to_string()).collect();
    assert!(shown.contains(&"- table payments: 2 columns".to_string()), "{shown:?}");
    assert!(shown.contains(&"+ column orders.amount: integer".to_string()), "{shown:?}");
    // A table a pattern uses is not dropped without --force.
    let mut only_orders = serde_json::Map::new();
    only_orders.insert("model.shop.orders".into(), next["model.shop.orders"].clone());
    let fresh = import(&write(dir.path(), &manifest(Value::Object(only_orders), json!({}), json!({}))), &[]);
    let e = update::merge(&curated, &fresh.imported.model, false).unwrap_err().to_string();
    assert!(
        e.contains("table customers") && e.contains("$.patterns[0] (lookup customers)") && e.contains("--force"),
        "{e}"
    );
    let forced = update::merge(&curated, &fresh.imported.model, true).unwrap();
    assert!(forced.model.patterns.is_empty());

    // Through the binary: --update writes the merged model back in place.
    let curated_path = dir.path().join("curated.json");
    std::fs::write(&curated_path, serde_json::to_string_pretty(&curated).unwrap()).unwrap();
    let before = std::fs::read_to_string(&curated_path).unwrap();
    let (code, err) = lucy_import(&["--dbt", dir.path().to_str().unwrap(), "--update", curated_path.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--force"), "{err}");
    assert_eq!(std::fs::read_to_string(&curated_path).unwrap(), before, "a refused update writes nothing");
}
