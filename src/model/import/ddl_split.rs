//! Split a DDL script into statements when it cannot be parsed whole:
//! dumps often omit `;` between `CREATE TABLE` statements (the ACME DDL
//! does). The scanner knows quotes and comments, so a `;` or `CREATE`
//! inside a string or comment does not split anything.

/// One statement's text and the 1-based line where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Chunk<'a> {
    pub text: &'a str,
    pub line: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Normal,
    Quoted(u8),
    LineComment,
    BlockComment,
}

/// Split at top-level `;` and before every `CREATE`, `ALTER TABLE` or
/// `COMMENT ON` that starts a statement (at parenthesis depth 0, or first
/// on its line, which also recovers from an unbalanced parenthesis).
/// Chunks holding only whitespace and comments are dropped.
pub(crate) fn split(sql: &str) -> Vec<Chunk<'_>> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut start = 0usize;
    let mut depth = 0i64;
    let mut state = State::Normal;
    let mut line_start = true; // only whitespace since the last newline
    let mut i = 0usize;
    // Newlines before `lines.0` are counted in `lines.1`: chunk starts only
    // move forward, so counting resumes where it stopped (linear overall).
    let mut lines = (0usize, 0usize);
    fn push<'a>(sql: &'a str, from: usize, to: usize, out: &mut Vec<Chunk<'a>>, lines: &mut (usize, usize)) {
        let raw = &sql[from..to];
        // Start at the first non-blank character so the line is the
        // statement's own line.
        let text = raw.trim_start();
        let from = from + (raw.len() - text.len());
        if has_code(text) {
            if from > lines.0 {
                lines.1 += sql.as_bytes()[lines.0..from].iter().filter(|&&c| c == b'\n').count();
                lines.0 = from;
            }
            out.push(Chunk { text, line: 1 + lines.1 });
        }
    }
    while i < b.len() {
        let c = b[i];
        match state {
            State::Quoted(q) => {
                if c == q {
                    // A doubled quote is an escaped quote, not the end.
                    if b.get(i + 1) == Some(&q) {
                        i += 1;
                    } else {
                        state = State::Normal;
                    }
                } else if c == b'\\' && q == b'\'' {
                    i += 1;
                }
            }
            State::LineComment => {
                if c == b'\n' {
                    state = State::Normal;
                }
            }
            State::BlockComment => {
                if c == b'*' && b.get(i + 1) == Some(&b'/') {
                    state = State::Normal;
                    i += 1;
                }
            }
            State::Normal => match c {
                b'\'' | b'"' | b'`' => state = State::Quoted(c),
                b'[' => state = State::Quoted(b']'),
                b'-' if b.get(i + 1) == Some(&b'-') => state = State::LineComment,
                b'#' => state = State::LineComment,
                b'/' if b.get(i + 1) == Some(&b'*') => state = State::BlockComment,
                b'(' => depth += 1,
                b')' => depth -= 1,
                b';' => {
                    push(sql, start, i, &mut out, &mut lines);
                    start = i + 1;
                    depth = 0;
                }
                _ if is_word_start(b, i) && (depth == 0 || line_start) && starts_statement(b, i) => {
                    push(sql, start, i, &mut out, &mut lines);
                    start = i;
                    depth = 0;
                }
                _ => {}
            },
        }
        if c == b'\n' {
            line_start = true;
        } else if !c.is_ascii_whitespace() {
            line_start = false;
        }
        i += 1;
    }
    push(sql, start, b.len(), &mut out, &mut lines);
    out
}

fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

fn is_word_start(b: &[u8], i: usize) -> bool {
    is_ident_byte(b[i]) && (i == 0 || !is_ident_byte(b[i - 1]))
}

/// The word at `i` and the one after it.
fn two_words(b: &[u8], i: usize) -> (&[u8], &[u8]) {
    let end1 = (i..b.len()).find(|&k| !is_ident_byte(b[k])).unwrap_or(b.len());
    let mut k = end1;
    while k < b.len() && b[k].is_ascii_whitespace() {
        k += 1;
    }
    let end2 = (k..b.len()).find(|&j| !is_ident_byte(b[j])).unwrap_or(b.len());
    (&b[i..end1], &b[k..end2])
}

fn starts_statement(b: &[u8], i: usize) -> bool {
    let (w1, w2) = two_words(b, i);
    // `CREATE` always begins a statement; `COMMENT` only as `COMMENT ON`
    // (a MySQL table option `COMMENT 'x'` follows the column list at depth 0).
    w1.eq_ignore_ascii_case(b"create")
        || (w1.eq_ignore_ascii_case(b"alter") && w2.eq_ignore_ascii_case(b"table"))
        || (w1.eq_ignore_ascii_case(b"comment") && w2.eq_ignore_ascii_case(b"on"))
}

/// True when `text` has something besides whitespace and comments.
fn has_code(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_whitespace() {
            i += 1;
        } else if b[i] == b'-' && b.get(i + 1) == Some(&b'-') || b[i] == b'#' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            i += 2;
        } else {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(sql: &str) -> Vec<String> {
        split(sql).into_iter().map(|c| c.text.trim().to_string()).collect()
    }

    #[test]
    fn splits_without_semicolons() {
        let sql = "CREATE TABLE a (x int)\n\nCREATE TABLE b (y int, FOREIGN KEY (y) REFERENCES a(x))\n";
        let chunks = split(sql);
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[1].line, 3);
        assert!(chunks[1].text.starts_with("CREATE TABLE b"));
    }

    #[test]
    fn quotes_and_comments_do_not_split() {
        let sql = "create table a (x int comment 'see; CREATE TABLE z') -- create table q;\n/* ; create */ create table b (y int);";
        assert_eq!(
            texts(sql),
            vec![
                "create table a (x int comment 'see; CREATE TABLE z') -- create table q;\n/* ; create */".to_string(),
                "create table b (y int)".to_string(),
            ]
        );
    }

    #[test]
    fn table_comment_option_and_unbalanced_parens() {
        let sql = "CREATE TABLE a (x int) COMMENT 'c'\nCREATE TABLE broken (x int,\nCREATE TABLE c (z int)\nCOMMENT ON TABLE c IS 'x'";
        let t = texts(sql);
        assert_eq!(t.len(), 4, "{t:?}");
        assert!(t[0].ends_with("COMMENT 'c'"));
        assert!(t[3].starts_with("COMMENT ON"));
    }

    #[test]
    fn garbage_never_panics() {
        for s in ["", ";;;", "'", "/*", "--", "create", "(((", "))) create", "é create table ü"] {
            let _ = split(s);
        }
    }
}
