//! Hand-made cases for the SQL guard.

use super::*;

fn cols() -> Vec<String> {
    ["CLIENT_id", "CLIENT_name", "CLIENT_gender", "DATACENTER_id", "DATACENTER_name"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn ok(sql: &str) -> CheckedSql {
    match check_query(sql, "lucy_view", &cols(), Dialect::Sqlite) {
        Ok(c) => c,
        Err(e) => panic!("rejected {sql}: {e}"),
    }
}

fn err(sql: &str) -> String {
    match check_query(sql, "lucy_view", &cols(), Dialect::Sqlite) {
        Ok(c) => panic!("accepted {sql}: {c:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn accepts_plain_and_aliased_queries() {
    let c = ok("SELECT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%';");
    assert_eq!(c.relations, vec!["lucy_view"]);
    assert_eq!(c.sql, "SELECT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'");
    ok("select distinct client_name from LUCY_VIEW");
    ok("SELECT v.CLIENT_name FROM lucy_view AS v WHERE v.DATACENTER_id > 1");
    ok("SELECT lucy_view.CLIENT_name FROM lucy_view");
    ok("SELECT * FROM lucy_view");
    ok("SELECT v.* FROM lucy_view v");
    ok("SELECT COUNT(DISTINCT CLIENT_id) AS n FROM lucy_view GROUP BY DATACENTER_name HAVING n > 2 ORDER BY n DESC LIMIT 3");
    ok("SELECT CLIENT_gender AS g, COUNT(*) FROM lucy_view GROUP BY g ORDER BY 2");
    ok("SELECT CASE WHEN CLIENT_gender = 'F' THEN 1 ELSE 0 END AS f FROM lucy_view");
    ok("SELECT CAST(CLIENT_id AS REAL) / 2, strftime('%Y', 'now') FROM lucy_view");
    ok("SELECT CLIENT_name FROM lucy_view WHERE CLIENT_id IN (SELECT CLIENT_id FROM lucy_view WHERE DATACENTER_id = 2)");
    ok("SELECT CLIENT_name FROM lucy_view a WHERE EXISTS (SELECT 1 FROM lucy_view b WHERE b.CLIENT_id = a.CLIENT_id)");
    ok("SELECT CLIENT_name FROM lucy_view UNION SELECT DATACENTER_name FROM lucy_view");
}

#[test]
fn accepts_ctes_and_derived_tables() {
    let c = ok(
        "WITH dev AS (SELECT CLIENT_name AS c, DATACENTER_name FROM lucy_view) SELECT c, dev.DATACENTER_name FROM dev",
    );
    assert_eq!(c.ctes, vec!["dev"]);
    assert_eq!(c.relations, vec!["lucy_view"]);
    ok("SELECT t.total FROM (SELECT COUNT(*) AS total FROM lucy_view) AS t");
    ok("SELECT x FROM (SELECT CLIENT_id FROM lucy_view) AS t(x)");
    ok("WITH t(a) AS (SELECT CLIENT_id FROM lucy_view) SELECT a FROM t");
    ok("WITH t AS (SELECT * FROM lucy_view) SELECT t.CLIENT_name FROM t");
    ok("SELECT MAX(cnt) FROM (SELECT COUNT(*) AS cnt FROM lucy_view GROUP BY CLIENT_id)");
}

#[test]
fn rejects_writes_and_admin_statements() {
    assert!(err("DROP TABLE CLIENT").contains("only a read-only SELECT is allowed, got DROP TABLE"));
    assert!(err("DELETE FROM lucy_view").contains("got DELETE"));
    assert!(err("INSERT INTO lucy_view VALUES (1)").contains("got INSERT"));
    assert!(err("UPDATE lucy_view SET CLIENT_name = 'x'").contains("got UPDATE"));
    assert!(err("CREATE TABLE x AS SELECT * FROM lucy_view").contains("got CREATE TABLE"));
    assert!(err("ALTER TABLE CLIENT ADD COLUMN z INT").contains("got ALTER TABLE"));
    assert!(err("PRAGMA table_info(CLIENT)").contains("got PRAGMA"));
    assert!(err("ATTACH DATABASE 'x.db' AS x").contains("got ATTACH"));
    assert!(err("VACUUM").contains("SQL rejected"));
}

#[test]
fn rejects_two_statements() {
    let e = err("SELECT CLIENT_name FROM lucy_view; DROP TABLE CLIENT;");
    assert!(e.contains("exactly one statement, found 2 (SELECT, DROP TABLE)"), "{e}");
    let e = err("SELECT 1; SELECT 2");
    assert!(e.contains("found 2"), "{e}");
}

#[test]
fn rejects_select_into_and_locks() {
    assert!(err("SELECT CLIENT_name INTO backup FROM lucy_view").contains("INTO"));
}

#[test]
fn rejects_other_relations() {
    let e = err("SELECT name FROM CLIENT");
    assert!(e.contains("relation `CLIENT` is not allowed: the query may read only the view lucy_view"), "{e}");
    let e = err("SELECT CLIENT_name FROM lucy_view JOIN DATACENTER d ON d.id = DATACENTER_id");
    assert!(e.contains("relation `DATACENTER`"), "{e}");
    let e = err("SELECT * FROM pragma_table_info('CLIENT')");
    assert!(e.contains("table function"), "{e}");
    let e = err("SELECT * FROM sqlite_master");
    assert!(e.contains("sqlite_master"), "{e}");
    let e = err("SELECT CLIENT_name FROM lucy_view WHERE CLIENT_id IN (SELECT id FROM CLIENT)");
    assert!(e.contains("relation `CLIENT`"), "{e}");
}

#[test]
fn rejects_unknown_columns_with_the_available_list() {
    let e = err("SELECT name FROM lucy_view");
    assert!(
        e.contains("column `name` is not a column of the view lucy_view; available: CLIENT_id, CLIENT_name"),
        "{e}"
    );
    let e = err("SELECT v.nope FROM lucy_view v");
    assert!(e.contains("column `v.nope` is not a column of lucy_view"), "{e}");
    let e = err("SELECT CLIENT.name FROM lucy_view");
    assert!(e.contains("`CLIENT` is not the view lucy_view nor an alias"), "{e}");
    let e = err("SELECT CLIENT_name FROM lucy_view WHERE DATACENTER_name LIKE \"dev%\"");
    assert!(e.contains("single quotes"), "{e}");
    let e = err("WITH t AS (SELECT CLIENT_id AS a FROM lucy_view) SELECT t.b FROM t");
    assert!(e.contains("`t` defines no column `b`"), "{e}");
}

#[test]
fn rejects_dangerous_functions_and_garbage() {
    assert!(err("SELECT load_extension('x') FROM lucy_view").contains("load_extension"));
    assert!(err("").contains("no SQL statement"));
    assert!(err("Here is the query you asked for").contains("cannot parse"));
}

#[test]
fn direct_mode_checks_model_tables() {
    let tables = vec![
        ("CLIENT".to_string(), vec!["id".to_string(), "name".to_string()]),
        ("DATACENTER".to_string(), vec!["id".to_string(), "name".to_string(), "loc_id".to_string()]),
    ];
    let c = check_over_tables(
        "SELECT c.name, d.name FROM CLIENT c JOIN DATACENTER d ON d.id = c.id",
        &tables,
        Dialect::Sqlite,
    )
    .unwrap();
    assert_eq!(c.relations, vec!["CLIENT", "DATACENTER"]);
    let e = check_over_tables("SELECT c.gender FROM CLIENT c", &tables, Dialect::Sqlite).unwrap_err().to_string();
    assert!(e.contains("column `c.gender` is not a column of CLIENT"), "{e}");
    let e = check_over_tables("SELECT loc_id FROM CLIENT", &tables, Dialect::Sqlite).unwrap_err().to_string();
    assert!(e.contains("`loc_id`"), "{e}");
    assert!(check_over_tables("SELECT * FROM LOCATION", &tables, Dialect::Sqlite).is_err());
}

#[test]
fn other_dialects_parse() {
    check_query("SELECT `CLIENT_name` FROM `lucy_view` LIMIT 5", "lucy_view", &cols(), Dialect::Mysql).unwrap();
    check_query(
        "SELECT \"CLIENT_name\" FROM lucy_view WHERE CLIENT_id::text = '1'",
        "lucy_view",
        &cols(),
        Dialect::Postgres,
    )
    .unwrap();
}

#[test]
fn accepts_what_llms_usually_write() {
    for sql in [
        "SELECT CLIENT_name FROM lucy_view WHERE DATACENTER_id BETWEEN 1 AND 3 AND CLIENT_gender IN ('F', 'M') AND CLIENT_name IS NOT NULL",
        "SELECT CLIENT_name, ROW_NUMBER() OVER (PARTITION BY DATACENTER_name ORDER BY CLIENT_id DESC) AS rn FROM lucy_view",
        "SELECT DATACENTER_name, GROUP_CONCAT(CLIENT_name, ', ') FROM lucy_view GROUP BY DATACENTER_name",
        "SELECT COALESCE(CLIENT_gender, 'unknown'), IIF(CLIENT_id > 3, 'big', 'small'), ROUND(AVG(CLIENT_id), 2) FROM lucy_view GROUP BY 1, 2",
        "SELECT CLIENT_name FROM lucy_view WHERE date('now') > '2020-01-01' AND CURRENT_DATE IS NOT NULL AND julianday('now') > 0",
        "SELECT CLIENT_name FROM lucy_view ORDER BY CLIENT_id LIMIT 5 OFFSET 10",
        "SELECT CLIENT_name FROM lucy_view WHERE NOT EXISTS (SELECT 1 FROM lucy_view AS w WHERE w.CLIENT_id = lucy_view.CLIENT_id AND w.DATACENTER_id = 9)",
        "WITH a AS (SELECT CLIENT_id FROM lucy_view), b AS (SELECT CLIENT_id FROM a) SELECT COUNT(DISTINCT b.CLIENT_id) FROM b",
        "SELECT CLIENT_name FROM lucy_view UNION ALL SELECT DATACENTER_name FROM lucy_view ORDER BY 1",
        "SELECT CLIENT_name AS \"name\" FROM lucy_view ORDER BY \"name\"",
        "SELECT CLIENT_name FROM lucy_view WHERE CLIENT_name LIKE '%x\\_%' ESCAPE '\\'",
        "SELECT CAST(COUNT(CASE WHEN CLIENT_gender = 'F' THEN 1 END) AS REAL) * 100 / COUNT(CLIENT_id) FROM lucy_view",
        "SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM lucy_view GROUP BY CLIENT_id)",
        "select client_name from lucy_view where datacenter_name like 'dev%' ;",
    ] {
        ok(sql);
    }
}

/// The bypasses of issue #13: a CTE or derived table of the same name
/// defined in another scope does not make a base table readable.
#[test]
fn a_name_defined_in_another_scope_does_not_shadow() {
    for sql in [
        "SELECT * FROM CLIENT WHERE EXISTS (WITH CLIENT AS (SELECT 1) SELECT 1)",
        "SELECT name, sql FROM sqlite_master WHERE EXISTS (WITH sqlite_master AS (SELECT 1 AS name, 1 AS sql) SELECT 1)",
        "SELECT c.* FROM CLIENT AS c, (SELECT 1 AS x) AS CLIENT",
        "SELECT * FROM pragma_database_list WHERE EXISTS (WITH pragma_database_list AS (SELECT 1) SELECT 1)",
        "SELECT CLIENT_name FROM lucy_view UNION ALL SELECT name FROM CLIENT WHERE EXISTS (WITH CLIENT AS (SELECT 1) SELECT 1)",
        "SELECT * FROM (WITH CLIENT AS (SELECT 1) SELECT 1) AS t, CLIENT",
        "WITH a AS (WITH CLIENT AS (SELECT 1 AS name) SELECT * FROM CLIENT) SELECT name FROM CLIENT",
        "SELECT (SELECT COUNT(*) FROM CLIENT), (WITH CLIENT AS (SELECT 1) SELECT 1) FROM lucy_view",
    ] {
        let e = err(sql);
        assert!(e.contains("is not allowed"), "{sql}: {e}");
    }
    let e = err("SELECT * FROM CLIENT WHERE EXISTS (WITH CLIENT AS (SELECT 1) SELECT 1)");
    assert!(e.contains("the query defines a CTE named `CLIENT`, but not in scope here"), "{e}");
}

#[test]
fn a_cte_in_scope_shadows_a_table_name() {
    ok("WITH CLIENT AS (SELECT CLIENT_name AS name FROM lucy_view) SELECT name FROM CLIENT");
    ok("SELECT * FROM lucy_view WHERE EXISTS (WITH CLIENT AS (SELECT CLIENT_id FROM lucy_view) SELECT 1 FROM CLIENT)");
    ok("WITH sqlite_master AS (SELECT 1 AS name) SELECT name FROM sqlite_master");
    ok("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5) SELECT i FROM n");
    ok("WITH RECURSIVE n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 5) SELECT i FROM n");
    // SQLite: every CTE of a WITH list sees every other, whatever the order.
    ok("WITH a AS (SELECT x FROM b), b AS (SELECT CLIENT_id AS x FROM lucy_view) SELECT x FROM a");
}

#[test]
fn cte_visibility_follows_the_dialect() {
    let pg = |sql: &str| check_query(sql, "lucy_view", &cols(), Dialect::Postgres);
    let my = |sql: &str| check_query(sql, "lucy_view", &cols(), Dialect::Mysql);
    // Without RECURSIVE, PostgreSQL and MySQL read a CTE's own name in its
    // body, and a later sibling's, as the table of that name.
    let e = pg("WITH CLIENT AS (SELECT * FROM CLIENT) SELECT * FROM CLIENT").unwrap_err().to_string();
    assert!(e.contains("relation `CLIENT` is not allowed"), "{e}");
    assert!(my("WITH CLIENT AS (SELECT * FROM CLIENT) SELECT * FROM CLIENT").is_err());
    assert!(pg("WITH a AS (SELECT * FROM CLIENT), CLIENT AS (SELECT 1) SELECT * FROM a").is_err());
    assert!(pg("WITH RECURSIVE a AS (SELECT * FROM b), b AS (SELECT 1 AS x) SELECT * FROM a").is_ok());
    assert!(my("WITH RECURSIVE a AS (SELECT * FROM b), b AS (SELECT 1 AS x) SELECT * FROM a").is_err());
    pg("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5) SELECT i FROM n").unwrap();
    my("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5) SELECT i FROM n").unwrap();
}

#[test]
fn every_clause_is_checked() {
    for sql in [
        "SELECT CLIENT_name FROM lucy_view LIMIT (SELECT COUNT(*) FROM CLIENT)",
        "SELECT CLIENT_name FROM lucy_view LIMIT 1 OFFSET (SELECT COUNT(*) FROM sqlite_master)",
        "SELECT CLIENT_name FROM lucy_view UNION SELECT DATACENTER_name FROM lucy_view ORDER BY (SELECT MAX(name) FROM CLIENT)",
        "SELECT CLIENT_name FROM lucy_view ORDER BY (SELECT MAX(name) FROM CLIENT)",
        "SELECT CLIENT_name FROM lucy_view GROUP BY (SELECT name FROM CLIENT) HAVING (SELECT 1 FROM DATACENTER)",
        "SELECT SUM(CLIENT_id) OVER w FROM lucy_view WINDOW w AS (PARTITION BY (SELECT id FROM CLIENT))",
        "SELECT CLIENT_name FROM lucy_view JOIN lucy_view AS b ON b.CLIENT_id = (SELECT id FROM CLIENT)",
        "SELECT CASE WHEN EXISTS (SELECT 1 FROM CLIENT) THEN 1 END FROM lucy_view",
        "SELECT * FROM main.sqlite_master",
        "SELECT * FROM temp.sqlite_temp_master",
        "SELECT * FROM main.CLIENT",
        "SELECT * FROM lucy_view, json_each('[1]')",
        "SELECT * FROM pragma_table_list",
        "SELECT * FROM lucy_view WHERE CLIENT_id IN (SELECT id FROM (SELECT id FROM (SELECT id FROM CLIENT)))",
    ] {
        let e = err(sql);
        assert!(e.contains("not allowed") || e.contains("cannot check"), "{sql}: {e}");
    }
    ok("SELECT * FROM main.lucy_view");
    ok("SELECT CLIENT_name FROM lucy_view UNION SELECT DATACENTER_name FROM lucy_view ORDER BY CLIENT_name LIMIT 3");
    ok("SELECT CLIENT_name AS n FROM lucy_view UNION SELECT DATACENTER_name AS m FROM lucy_view ORDER BY m");
}

#[test]
fn postgres_table_statement_is_refused() {
    let e =
        check_query("SELECT CLIENT_name FROM lucy_view UNION TABLE secrets", "lucy_view", &cols(), Dialect::Postgres)
            .unwrap_err()
            .to_string();
    assert!(e.contains("not allowed"), "{e}");
}

#[test]
fn columns_resolve_in_their_scope() {
    // A derived table's columns are its outputs, not the view's.
    let e = err("SELECT t.CLIENT_gender FROM (SELECT CLIENT_name FROM lucy_view) AS t");
    assert!(e.contains("`t` defines no column `CLIENT_gender`"), "{e}");
    // An alias of an inner query is not in scope outside it.
    let e = err("SELECT v.CLIENT_name FROM lucy_view WHERE EXISTS (SELECT 1 FROM lucy_view AS v)");
    assert!(e.contains("`v` is not the view lucy_view nor an alias in scope"), "{e}");
    ok("SELECT CLIENT_name FROM lucy_view AS a WHERE EXISTS (SELECT 1 FROM lucy_view AS b WHERE b.CLIENT_id = a.CLIENT_id)");
    ok("SELECT a, b FROM (VALUES (1, 2)) AS t(a, b)");
    ok("WITH t(a, b) AS (VALUES (1, 2)) SELECT a, b FROM t");
}

#[test]
fn long_input_is_cut_in_errors() {
    let name = "x".repeat(100_000);
    let e = err(&format!("SELECT * FROM {name}"));
    assert!(e.len() < 2_000, "{} bytes", e.len());
    assert!(e.contains("(100000 characters)"), "{}", &e[..200]);
    let e = err(&format!("SELECT {name} FROM lucy_view"));
    assert!(e.len() < 2_000, "{} bytes", e.len());
}

#[test]
fn invisible_characters_are_named() {
    let e = err("SELECT\u{a0}CLIENT_name FROM lucy_view");
    assert!(e.contains("U+00A0 (no-break space) at line 1, column 7"), "{e}");
    // Non-ASCII text inside a string literal is fine and not blamed.
    ok("SELECT CLIENT_name FROM lucy_view WHERE CLIENT_name = 'Zürich'");
    let e = err("SELECT CLIENT_name FROM lucy_view WHERE CLIENT_name = 'Zürich' AND\u{200b}CLIENT_id = 1");
    assert!(e.contains("U+200B (zero-width space)"), "{e}");
}

/// A select-list alias is not a column inside its own select list (ACME,
/// session 8: `SELECT Claim_Claim_Number AS Claim_Claim_Number` passed and
/// SQLite failed `no such column`); elsewhere it is in scope where the
/// dialect reads it.
#[test]
fn select_list_aliases_are_scoped_like_the_engines() {
    let e = err("SELECT CLIENT_CLIENT_name AS CLIENT_CLIENT_name, DATACENTER_name FROM lucy_view");
    assert!(e.contains("column `CLIENT_CLIENT_name` is not a column of the view lucy_view"), "{e}");
    let e = err("SELECT CLIENT_name AS n, n || '!' FROM lucy_view");
    assert!(e.contains("column `n`"), "{e}");
    let e = err("SELECT CLIENT_name AS n, (SELECT COUNT(*) FROM lucy_view WHERE CLIENT_name = n) FROM lucy_view");
    assert!(e.contains("column `n`"), "{e}");
    let check = |sql: &str, d: Dialect| check_query(sql, "lucy_view", &cols(), d);
    // GROUP BY and ORDER BY read aliases in every dialect.
    for d in [Dialect::Sqlite, Dialect::Postgres, Dialect::Mysql] {
        let q = "SELECT CLIENT_gender AS g, COUNT(*) AS n FROM lucy_view GROUP BY g ORDER BY n DESC";
        check(q, d).unwrap_or_else(|e| panic!("{d:?}: {e}"));
    }
    // WHERE (and ON): SQLite only; HAVING: SQLite and MySQL.
    let where_ = "SELECT CLIENT_name AS n FROM lucy_view WHERE n LIKE 'A%'";
    let having = "SELECT CLIENT_gender AS g, COUNT(*) AS n FROM lucy_view GROUP BY CLIENT_gender HAVING n > 1";
    let on = "SELECT a.CLIENT_id AS k FROM lucy_view a JOIN lucy_view b ON b.CLIENT_id = k";
    for (sql, sqlite, postgres, mysql) in
        [(where_, true, false, false), (having, true, false, true), (on, true, false, false)]
    {
        for (d, want) in [(Dialect::Sqlite, sqlite), (Dialect::Postgres, postgres), (Dialect::Mysql, mysql)] {
            assert_eq!(check(sql, d).is_ok(), want, "{d:?}: {sql}: {:?}", check(sql, d));
        }
    }
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn on_arbitrary_text(s in "\\PC{0,200}") {
            let _ = check_query(&s, "lucy_view", &cols(), Dialect::Sqlite);
        }

        #[test]
        fn on_sql_like_text(s in "(SELECT|WITH|DROP|PRAGMA|;|\\(|\\)|,|\\*|lucy_view|CLIENT_name|FROM|WHERE|AS|x|'a'|\"b\"|\\[|\\]|```sql|\n| ){0,30}") {
            let _ = check_query(&s, "lucy_view", &cols(), Dialect::Sqlite);
            let _ = check_query(&s, "lucy_view", &cols(), Dialect::Mysql);
            let _ = check_query(&s, "lucy_view", &cols(), Dialect::Postgres);
        }
    }
}
