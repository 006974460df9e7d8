//! DDL import: the ACME acceptance case, separators, unknown options,
//! comments, composite keys, and a property test that garbled DDL never
//! panics.

use lucy::model::import::{ddl_with_warnings, from_ddl, Imported};
use lucy::types::{Cardinality, DbModel, Dialect, Relationship};
use proptest::prelude::*;

const ACME_DDL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/benchmarks/acme/upstream_datadotworld/ACME_Insurance/DDL/ACME_small.ddl"
);

fn acme() -> Imported {
    let sql = std::fs::read_to_string(ACME_DDL).expect("ACME DDL is staged under ../shared/benchmarks/acme");
    ddl_with_warnings(&sql, Some(Dialect::Mysql), "acme").expect("ACME DDL imports")
}

fn rel<'a>(m: &'a DbModel, from: &str, to: &str) -> Vec<&'a Relationship> {
    m.relationships.iter().filter(|r| r.from == from && r.to == to).collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<[String; 2]> {
    v.iter().map(|(a, b)| [a.to_string(), b.to_string()]).collect()
}

#[test]
fn acme_has_13_tables_with_keys() {
    let m = acme().model;
    let names: Vec<&str> = m.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "Claim",
            "Claim_Amount",
            "Loss_Payment",
            "Loss_Reserve",
            "Expense_Payment",
            "Expense_Reserve",
            "Claim_Coverage",
            "Policy_Coverage_Detail",
            "Policy",
            "Policy_Amount",
            "Agreement_Party_Role",
            "Premium",
            "Catastrophe"
        ]
    );
    let pk = |t: &str| m.table(t).unwrap().primary_key.clone();
    assert_eq!(pk("Claim"), ["Claim_Identifier"]);
    assert_eq!(pk("Claim_Coverage"), ["Claim_Identifier", "Effective_Date", "Policy_Coverage_Detail_Identifier"]);
    assert_eq!(pk("Policy_Coverage_Detail"), ["Effective_Date", "Policy_Coverage_Detail_Identifier"]);
    assert_eq!(
        pk("Agreement_Party_Role"),
        ["Agreement_Identifier", "Party_Identifier", "Party_Role_Code", "Effective_Date"]
    );
    assert_eq!(pk("Premium"), ["Policy_Amount_Identifier"]);
    let claim = m.table("Claim").unwrap();
    assert_eq!(claim.columns.len(), 14);
    let desc = claim.column("Claim_Description").unwrap();
    assert_eq!(desc.sql_type, "varchar(5000)");
    assert!(desc.nullable);
    let id = claim.column("Claim_Identifier").unwrap();
    assert_eq!(id.sql_type, "int");
    assert!(!id.nullable);
    assert_eq!(m.table("Claim_Amount").unwrap().column("Claim_Amount").unwrap().sql_type, "decimal(15,2)");
}

#[test]
fn acme_declared_foreign_keys_between_defined_tables() {
    let m = acme().model;
    assert_eq!(m.relationships.len(), 7, "{:#?}", m.relationships);
    let r = rel(&m, "Claim", "Catastrophe");
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].cardinality, Cardinality::ManyToOne);
    assert_eq!(r[0].on, pairs(&[("Catastrophe_Identifier", "Catastrophe_Identifier")]));
    assert_eq!(rel(&m, "Claim_Amount", "Claim")[0].cardinality, Cardinality::ManyToOne);
    assert_eq!(rel(&m, "Claim_Coverage", "Claim")[0].cardinality, Cardinality::ManyToOne);
    // Composite foreign key, in declaration order.
    let cc = rel(&m, "Claim_Coverage", "Policy_Coverage_Detail");
    assert_eq!(
        cc[0].on,
        pairs(&[
            ("Effective_Date", "Effective_Date"),
            ("Policy_Coverage_Detail_Identifier", "Policy_Coverage_Detail_Identifier")
        ])
    );
    assert_eq!(cc[0].cardinality, Cardinality::ManyToOne);
    assert_eq!(rel(&m, "Policy_Amount", "Policy_Coverage_Detail")[0].on.len(), 2);
    assert_eq!(rel(&m, "Policy_Amount", "Policy")[0].cardinality, Cardinality::ManyToOne);
    // Premium's FK is its whole primary key: a 1:1 subtype.
    assert_eq!(rel(&m, "Premium", "Policy_Amount")[0].cardinality, Cardinality::OneToOne);
    lucy::model::validate::check(&m, None).unwrap();
}

#[test]
fn acme_foreign_keys_to_undefined_tables_are_warnings() {
    let imp = acme();
    let text: Vec<String> = imp.warnings.iter().map(|w| w.to_string()).collect();
    for missing in [
        "Claim_Offer",
        "Claim_Payment",
        "Claim_Reserve",
        "Insurable_Object",
        "Occurrence",
        "Agreement(",
        "Party(",
        "Party_Role(",
        "Geographic_Location",
        "Coverage(",
        "Policy_Coverage_Part",
    ] {
        assert!(
            text.iter().any(|w| w.contains(missing) && w.contains("not defined")),
            "no warning for missing table {missing}: {text:#?}"
        );
    }
    assert!(text
        .iter()
        .any(|w| w.contains("Claim(Claim_Identifier) -> Claim(Claim_Identifier)") && w.contains("itself")));
    // 18 declared FKs cannot be kept: 17 to missing tables, 1 self-reference.
    assert_eq!(imp.warnings.iter().filter(|w| w.location.contains("foreign key")).count(), 18, "{text:#?}");
    assert_eq!(imp.warnings.iter().filter(|w| w.message.contains("not defined")).count(), 17);
}

#[test]
fn comments_become_descriptions() {
    let mysql = "CREATE TABLE customer (\n  id INT NOT NULL AUTO_INCREMENT COMMENT 'Customer number',\n  name VARCHAR(100) COMMENT 'Full name',\n  PRIMARY KEY (id)\n) ENGINE=InnoDB COMMENT='People who buy things';\n";
    let m = from_ddl(mysql, Dialect::Mysql, "shop").unwrap();
    let t = &m.tables[0];
    assert_eq!(t.description.as_deref(), Some("People who buy things"));
    assert_eq!(t.column("id").unwrap().description.as_deref(), Some("Customer number"));
    assert_eq!(t.column("name").unwrap().description.as_deref(), Some("Full name"));

    let pg = "CREATE TABLE item (id integer PRIMARY KEY, label text);\nCOMMENT ON TABLE item IS 'Things for sale';\nCOMMENT ON COLUMN item.label IS 'Shown on the shelf';";
    let m = from_ddl(pg, Dialect::Postgres, "shop").unwrap();
    assert_eq!(m.tables[0].description.as_deref(), Some("Things for sale"));
    assert_eq!(m.tables[0].column("label").unwrap().description.as_deref(), Some("Shown on the shelf"));
    assert_eq!(m.dialect, Some(Dialect::Postgres));
}

#[test]
fn composite_keys_inline_references_and_one_to_one() {
    let sql = "
        CREATE TABLE a (x int, y int, PRIMARY KEY (x, y));
        CREATE TABLE b (id int PRIMARY KEY, ax int, ay int, FOREIGN KEY (ax, ay) REFERENCES a (x, y));
        CREATE TABLE c (id int PRIMARY KEY REFERENCES b(id), b2 int REFERENCES b);
        CREATE TABLE d (id int PRIMARY KEY, b_id int UNIQUE REFERENCES b(id));
        ALTER TABLE d ADD CONSTRAINT fk_c FOREIGN KEY (id) REFERENCES c (id);
    ";
    let m = from_ddl(sql, Dialect::Postgres, "k").unwrap();
    assert_eq!(m.table("a").unwrap().primary_key, ["x", "y"]);
    let ab = rel(&m, "b", "a");
    assert_eq!(ab[0].on, pairs(&[("ax", "x"), ("ay", "y")]));
    assert_eq!(ab[0].cardinality, Cardinality::ManyToOne);
    let cb = rel(&m, "c", "b");
    assert_eq!(cb.len(), 2);
    assert_eq!(cb[0].cardinality, Cardinality::OneToOne, "FK that is the whole PK");
    assert_eq!(cb[1].on, pairs(&[("b2", "id")]), "REFERENCES without columns means the PK");
    assert_eq!(cb[1].cardinality, Cardinality::ManyToOne);
    assert_eq!(rel(&m, "d", "b")[0].cardinality, Cardinality::OneToOne, "FK on a UNIQUE column");
    assert_eq!(rel(&m, "d", "c").len(), 1, "ALTER TABLE … ADD FOREIGN KEY");
}

#[test]
fn no_semicolons_and_unknown_options() {
    // Redshift-style ENCODE/DISTKEY and an unknown option: sqlparser
    // rejects the statement, the tolerant reader keeps the table.
    let sql = "CREATE TABLE dim (id int NOT NULL ENCODE zstd, name varchar(20) DISTKEY, PRIMARY KEY (id))\n\
               CREATE TABLE fact (id int PRIMARY KEY, dim_id int REFERENCES dim(id) FROBNICATE 3)\n\
               CREATE TABLE ok (z int)\n";
    let imp = ddl_with_warnings(sql, None, "w").unwrap();
    let names: Vec<&str> = imp.model.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["dim", "fact", "ok"]);
    assert_eq!(imp.model.table("dim").unwrap().primary_key, ["id"]);
    assert_eq!(imp.model.table("dim").unwrap().column("name").unwrap().sql_type, "varchar(20)");
    assert_eq!(rel(&imp.model, "fact", "dim").len(), 1);
    assert!(
        imp.warnings.iter().any(|w| w.location == "line 1" && w.message.contains("tolerant")),
        "{:#?}",
        imp.warnings
    );
    assert!(imp.warnings.iter().any(|w| w.location == "line 2"));
    assert!(!imp.warnings.iter().any(|w| w.location == "line 3"), "the clean statement parses normally");
}

#[test]
fn unparsable_statements_are_named_and_skipped() {
    let sql = "CREATE TABLE t (a int);\nGRANT WHATEVER ON EVERYTHING TO nobody PLEASE;\nCREATE TABLE u (b int);";
    let imp = ddl_with_warnings(sql, Some(Dialect::Sqlite), "g").unwrap();
    assert_eq!(imp.model.tables.len(), 2);
    assert!(imp.warnings.iter().any(|w| w.location == "line 2" && w.message.contains("GRANT")), "{:#?}", imp.warnings);
}

#[test]
fn input_without_tables_is_an_error_naming_the_model() {
    for sql in ["", "-- nothing here\n", "SELECT 1;", "CREATE TABLE"] {
        let e = from_ddl(sql, Dialect::Sqlite, "empty").unwrap_err();
        assert!(e.to_string().contains("empty: no tables found"), "{e}");
    }
}

fn ddl_token() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("CREATE".to_string()),
        Just("TABLE".to_string()),
        Just("(".to_string()),
        Just(")".to_string()),
        Just(",".to_string()),
        Just(";".to_string()),
        Just("PRIMARY KEY".to_string()),
        Just("FOREIGN KEY".to_string()),
        Just("REFERENCES".to_string()),
        Just("NOT NULL".to_string()),
        Just("COMMENT".to_string()),
        Just("'".to_string()),
        Just("\"".to_string()),
        Just("`".to_string()),
        Just("--".to_string()),
        Just("/*".to_string()),
        Just("\n".to_string()),
        Just("ALTER TABLE".to_string()),
        Just("COMMENT ON".to_string()),
        Just("int".to_string()),
        Just("varchar(10)".to_string()),
        "[a-zA-Z_][a-zA-Z0-9_]{0,6}",
        "'[^']{0,8}'",
        "[ -~]{0,4}",
        "\\PC{0,3}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn random_tokens_never_panic(tokens in prop::collection::vec(ddl_token(), 0..40), d in 0usize..4) {
        let sql = tokens.join(" ");
        let dialect = [None, Some(Dialect::Mysql), Some(Dialect::Postgres), Some(Dialect::Sqlite)][d];
        if let Ok(imp) = ddl_with_warnings(&sql, dialect, "fuzz") {
            prop_assert!(lucy::model::validate::check(&imp.model, None).is_ok());
        }
    }

    #[test]
    fn truncated_acme_never_panics(cut in 0usize..6000) {
        let sql = std::fs::read_to_string(ACME_DDL).unwrap();
        let mut end = cut.min(sql.len());
        while !sql.is_char_boundary(end) {
            end -= 1;
        }
        if let Ok(imp) = ddl_with_warnings(&sql[..end], None, "cut") {
            prop_assert!(lucy::model::validate::check(&imp.model, None).is_ok());
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let sql = String::from_utf8_lossy(&bytes);
        let _ = ddl_with_warnings(&sql, None, "bytes");
    }
}
