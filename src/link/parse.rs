//! Reading a list of names out of an LLM answer, whatever shape it has:
//! JSON arrays, Python lists, bullets, numbered lists, comma-separated
//! lines, quoted or not, inside code fences, followed by prose.

/// How the items were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListShape {
    /// A bracketed list (`[...]`, JSON or not).
    Bracketed,
    /// One item per line (bullets, numbers, bare names) or a comma-separated line.
    Lines,
    /// No list structure: every word of the answer, for exact matching only.
    Scan,
}

/// The raw items of an answer, in order, and how they were found.
pub fn parse_list(answer: &str) -> (Vec<String>, ListShape) {
    let body = fence_body(answer).unwrap_or(answer);
    match bracketed(body) {
        Some(items) if !items.is_empty() => return (items, ListShape::Bracketed),
        // An explicit `[]` is an answer: nothing is relevant.
        Some(_) if body.trim().starts_with('[') => return (Vec::new(), ListShape::Bracketed),
        _ => {}
    }
    let items = lines(body);
    if !items.is_empty() {
        return (items, ListShape::Lines);
    }
    let words = answer
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '$'))
        .map(|w| w.trim_matches('.'))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    (words, ListShape::Scan)
}

/// Content of the first ``` fence, if the answer has one.
fn fence_body(s: &str) -> Option<&str> {
    let start = s.find("```")?;
    let after = &s[start + 3..];
    // Skip the info string (e.g. `json`, `python`).
    let body_start = after.find('\n').map(|i| i + 1).unwrap_or(0);
    let body = &after[body_start..];
    let end = body.find("```").unwrap_or(body.len());
    Some(&body[..end])
}

/// Items of the first bracketed list: `[a, "b", 'c', [d]]`.
fn bracketed(s: &str) -> Option<Vec<String>> {
    let open = s.find('[')?;
    let bytes: Vec<char> = s[open..].chars().collect();
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut end = None;
    for (i, &c) in bytes.iter().enumerate() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '"' | '\'' | '`' => quote = Some(c),
                '[' => depth += 1,
                ']' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = Some(i);
                        break;
                    }
                }
                _ => {}
            },
        }
    }
    let inner: String = match end {
        Some(e) => bytes[1..e].iter().collect(),
        // An unterminated list (truncated answer): take what is there.
        None => bytes[1..].iter().collect(),
    };
    if let Ok(serde_json::Value::Array(v)) = serde_json::from_str::<serde_json::Value>(&format!("[{inner}]")) {
        let mut out = Vec::new();
        flatten_json(&serde_json::Value::Array(v), &mut out);
        return Some(out.into_iter().map(|x| clean(&x)).filter(|x| !x.is_empty()).collect());
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in inner.chars() {
        match quote {
            Some(q) if c == q => {
                quote = None;
                cur.push(c);
            }
            Some(_) => cur.push(c),
            None => match c {
                '"' | '\'' | '`' => {
                    quote = Some(c);
                    cur.push(c);
                }
                ',' | '\n' | ';' => out.push(std::mem::take(&mut cur)),
                '[' | ']' => {}
                _ => cur.push(c),
            },
        }
    }
    out.push(cur);
    Some(out.iter().map(|x| clean(x)).filter(|x| !x.is_empty()).collect())
}

fn flatten_json(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| flatten_json(x, out)),
        serde_json::Value::Object(m) => m.values().for_each(|x| flatten_json(x, out)),
        serde_json::Value::Number(n) => out.push(n.to_string()),
        _ => {}
    }
}

/// One item per line, or a single comma-separated line. Prose lines
/// (several words, no list marker) are skipped.
fn lines(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in s.lines() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let (marked, rest) = strip_marker(t);
        if marked {
            // "- CLIENT: the customers" / "1. `CLIENT` (customers)": the leading name.
            if let Some(name) = leading_name(rest) {
                out.push(name);
            }
            continue;
        }
        let parts: Vec<String> = rest.split(',').map(clean).collect();
        if parts.iter().all(|p| is_name(p)) {
            out.extend(parts.into_iter().filter(|p| !p.is_empty()));
        }
    }
    out
}

fn strip_marker(t: &str) -> (bool, &str) {
    for m in ["- ", "* ", "• ", "+ "] {
        if let Some(r) = t.strip_prefix(m) {
            return (true, r.trim());
        }
    }
    let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0 {
        let r = &t[digits..];
        if let Some(r) = r.strip_prefix(". ").or_else(|| r.strip_prefix(") ")).or_else(|| r.strip_prefix(": ")) {
            return (true, r.trim());
        }
    }
    (false, t)
}

fn leading_name(s: &str) -> Option<String> {
    let s = s.trim_start_matches(['*', '`', '"', '\'']);
    let name: String = s.chars().take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '$' | '-')).collect();
    let name = clean(name.trim_end_matches(['-', '.']));
    (!name.is_empty()).then_some(name)
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && !s.contains(char::is_whitespace)
        && s.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '$'))
}

/// Strip quotes, markdown emphasis, brackets and trailing punctuation.
pub fn clean(s: &str) -> String {
    let t = s.trim().trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | '*' | '[' | ']' | '(' | ')' | '{' | '}'));
    let t = t.trim_end_matches(['.', ',', ';', ':']).trim();
    t.trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | '*')).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(s: &str) -> Vec<String> {
        parse_list(s).0
    }

    #[test]
    fn json_and_python_lists() {
        assert_eq!(items(r#"["CLIENT", "DATACENTER"]"#), ["CLIENT", "DATACENTER"]);
        assert_eq!(items("['CLIENT', 'DATACENTER']"), ["CLIENT", "DATACENTER"]);
        assert_eq!(items("[CLIENT, DATACENTER]"), ["CLIENT", "DATACENTER"]);
        assert_eq!(items("[`CLIENT.name`, DATACENTER.name]"), ["CLIENT.name", "DATACENTER.name"]);
        assert_eq!(items(r#"[["CLIENT"], {"table": "DATACENTER"}]"#), ["CLIENT", "DATACENTER"]);
        assert_eq!(parse_list("[]"), (Vec::<String>::new(), ListShape::Bracketed));
        assert_eq!(parse_list("```json\n[ ]\n```"), (Vec::<String>::new(), ListShape::Bracketed));
    }

    #[test]
    fn fences_and_trailing_prose() {
        let a = "Sure! Here you go:\n```json\n[\"CLIENT\", \"DATACENTER\"]\n```\nThese tables hold the clients.";
        assert_eq!(items(a), ["CLIENT", "DATACENTER"]);
        let a = "The relevant elements are [CLIENT, DATACENTER]. CLIENT holds customers [1].";
        assert_eq!(items(a), ["CLIENT", "DATACENTER"]);
        assert_eq!(items("```\nCLIENT, DATACENTER\n```"), ["CLIENT", "DATACENTER"]);
    }

    #[test]
    fn bullets_numbers_and_lines() {
        assert_eq!(items("- CLIENT\n- DATACENTER"), ["CLIENT", "DATACENTER"]);
        assert_eq!(items("1. **CLIENT**: customers\n2. `DATACENTER` (sites)"), ["CLIENT", "DATACENTER"]);
        assert_eq!(items("Relevant tables:\n* CLIENT - the clients\n* DATACENTER"), ["CLIENT", "DATACENTER"]);
        assert_eq!(items("CLIENT\nDATACENTER\n"), ["CLIENT", "DATACENTER"]);
        assert_eq!(items("CLIENT, DATACENTER"), ["CLIENT", "DATACENTER"]);
        assert_eq!(items("1) name\n2) gender"), ["name", "gender"]);
    }

    #[test]
    fn unterminated_and_quoted_commas() {
        assert_eq!(items("[\"CLIENT\", \"DATA"), ["CLIENT", "DATA"]);
        assert_eq!(items("['a,b', c]"), ["a,b", "c"]);
    }

    #[test]
    fn prose_falls_back_to_word_scan() {
        let (v, shape) = parse_list("I think CLIENT and DATACENTER matter here.");
        assert_eq!(shape, ListShape::Scan);
        assert!(v.contains(&"CLIENT".to_string()) && v.contains(&"DATACENTER".to_string()));
        let (v, shape) = parse_list("");
        assert!(v.is_empty() && shape == ListShape::Scan);
    }
}
