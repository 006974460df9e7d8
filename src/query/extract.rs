//! Finding the SQL in an LLM answer: a ```sql fence, else any fence that
//! holds a query, else a bare query starting at SELECT/WITH.

const STATEMENT_STARTS: &[&str] = &[
    "SELECT", "WITH", "INSERT", "UPDATE", "DELETE", "DROP", "CREATE", "ALTER", "PRAGMA", "ATTACH", "DETACH", "REPLACE",
    "VACUUM", "GRANT", "REVOKE", "TRUNCATE", "MERGE", "BEGIN", "COMMIT", "ROLLBACK", "EXPLAIN", "VALUES",
];

/// The SQL found and how (`sql_fence`, `fence`, `bare`), or `None`.
pub fn extract_sql(answer: &str) -> Option<(String, &'static str)> {
    let fences = fences(answer);
    if let Some((_, body)) = fences.iter().find(|(info, _)| {
        let i = info.to_ascii_lowercase();
        i == "sql" || i.starts_with("sql ") || i == "sqlite" || i == "mysql" || i == "postgresql" || i == "postgres"
    }) {
        let t = body.trim();
        if !t.is_empty() {
            return Some((t.to_string(), "sql_fence"));
        }
    }
    for (_, body) in &fences {
        if starts_with_statement(body.trim()) {
            return Some((body.trim().to_string(), "fence"));
        }
    }
    bare(answer).map(|s| (s, "bare"))
}

/// `(info string, body)` of every closed ``` fence.
fn fences(s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let (info, body_start) = match after.find('\n') {
            Some(nl) => (after[..nl].trim().to_string(), nl + 1),
            None => break,
        };
        let body = &after[body_start..];
        match body.find("```") {
            Some(end) => {
                out.push((info, body[..end].to_string()));
                rest = &body[end + 3..];
            }
            None => {
                // Unclosed fence (truncated answer): take the rest.
                out.push((info, body.to_string()));
                break;
            }
        }
    }
    out
}

fn starts_with_statement(s: &str) -> bool {
    let first: String = s.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
    STATEMENT_STARTS.iter().any(|k| k.eq_ignore_ascii_case(&first))
}

/// From the first line that starts a statement (SELECT/WITH in any case,
/// other statement keywords in upper case — a bare `DROP TABLE x` must reach
/// the guard and be rejected there) to the end; failing that, from a
/// `SELECT` inside a line (`SQL: SELECT …`). Text after the first `;` is
/// kept only if it starts another statement (so the guard sees and rejects
/// it); otherwise it is prose and is cut.
fn bare(s: &str) -> Option<String> {
    let mut offset = 0;
    let mut start = None;
    for line in s.split_inclusive('\n') {
        let t = line.trim_start();
        let first: String = t.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
        let query = first.eq_ignore_ascii_case("SELECT") || first.eq_ignore_ascii_case("WITH");
        let other = first.chars().all(|c| c.is_ascii_uppercase()) && STATEMENT_STARTS.contains(&first.as_str());
        if !first.is_empty() && (query || other) {
            start = Some(offset + (line.len() - t.len()));
            break;
        }
        offset += line.len();
    }
    if start.is_none() {
        offset = 0;
        for line in s.split_inclusive('\n') {
            if let Some(i) = find_keyword(line, "SELECT") {
                start = Some(offset + i);
                break;
            }
            offset += line.len();
        }
    }
    let sql = &s[start?..];
    let sql = match sql.find(';') {
        Some(i) if !starts_with_statement(sql[i + 1..].trim_start()) => &sql[..i],
        _ => sql,
    };
    let t = sql.trim();
    (!t.is_empty()).then(|| t.to_string())
}

fn find_keyword(line: &str, kw: &str) -> Option<usize> {
    let upper = line.to_ascii_uppercase();
    let i = upper.find(kw)?;
    let before_ok = i == 0 || upper.as_bytes()[i - 1] == b' ' || upper.as_bytes()[i - 1] == b':';
    let after = upper.as_bytes().get(i + kw.len());
    let after_ok = after.is_none_or(|c| c.is_ascii_whitespace());
    (before_ok && after_ok).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x(s: &str) -> Option<(String, &'static str)> {
        extract_sql(s)
    }

    #[test]
    fn fenced() {
        let a = "Here it is:\n```sql\nSELECT CLIENT_name FROM lucy_view;\n```\nThis selects names.";
        assert_eq!(x(a), Some(("SELECT CLIENT_name FROM lucy_view;".into(), "sql_fence")));
        let a = "```\nSELECT 1\n```";
        assert_eq!(x(a), Some(("SELECT 1".into(), "fence")));
        let a = "```text\nnot sql\n```\n```sqlite\nWITH a AS (SELECT 1) SELECT * FROM a\n```";
        assert_eq!(x(a).unwrap().1, "sql_fence");
        let a = "```sql\nSELECT a\nFROM v";
        assert_eq!(x(a), Some(("SELECT a\nFROM v".into(), "sql_fence")));
        let a = "```sql\nDROP TABLE CLIENT;\n```";
        assert_eq!(x(a).unwrap().0, "DROP TABLE CLIENT;");
    }

    #[test]
    fn bare_queries_and_prose() {
        assert_eq!(x("SELECT a FROM v"), Some(("SELECT a FROM v".into(), "bare")));
        assert_eq!(x("Sure.\nSELECT a\nFROM v;\nThis returns a."), Some(("SELECT a\nFROM v".into(), "bare")));
        assert_eq!(x("SQL: SELECT a FROM v"), Some(("SELECT a FROM v".into(), "bare")));
        // A second statement is kept so that the guard rejects it.
        assert_eq!(x("SELECT a FROM v; DROP TABLE v;").unwrap().0, "SELECT a FROM v; DROP TABLE v;");
        assert_eq!(x("I cannot answer that."), None);
        assert_eq!(x(""), None);
        assert_eq!(x("with t as (select 1) select * from t").unwrap().1, "bare");
        assert_eq!(x("DROP TABLE CLIENT").unwrap().0, "DROP TABLE CLIENT");
        assert_eq!(x("Sure:\nPRAGMA writable_schema = 1;").unwrap().0, "PRAGMA writable_schema = 1");
        assert_eq!(x("Delete the rows? No. SELECT 1").unwrap().0, "SELECT 1");
    }
}
