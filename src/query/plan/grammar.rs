//! The Lark grammar (llguidance dialect) a plan is decoded under: JSON in
//! the shape of [`super::ast::Plan`], keys in a fixed order, whose names
//! are the view's columns only and whose literals are typed by the column.
//!
//! - A select item, an ORDER BY or HAVING aggregate: `count` (of rows, or
//!   of a column), `count_distinct`, `min`, `max` over any view column;
//!   `sum` and `avg` over the view's measures only (`query::measures`: no
//!   key, date or text). With `--fanout` other than `rewrite`, `count`,
//!   `sum` and `avg` read no column of an instance the view repeats
//!   (nothing would count its rows once).
//! - A select item may cut a date column to its year, month or day
//!   (`{"col": DATE, "bucket": "month"}`) when the question asks per one
//!   ([`Cues::bucket`]).
//! - A condition: numbers for a number column (`=`…`>=`, `between`, `in`);
//!   for a text column strings (`like` any pattern; `=`, `!=`, `in` the
//!   values offered for it — those the question matched in the value
//!   index, or all of a fully indexed column's few values — and any string
//!   where none are offered); date strings and year/month/day parts for a
//!   date column; `is null`/`is not null` for any column; another column
//!   (`other`): `=`/`!=` for any two, an ordering for two numbers (with a
//!   `plus` number) or two dates.
//! - Bounds: the lists and nesting of [`super::ast`]'s constants, strings
//!   of at most [`super::ast::MAX_TEXT_CHARS`] characters on one line,
//!   numbers of at most 15 digits, whitespace between tokens at most 24
//!   characters: no answer can run away.
//!
//! A grammar narrows; the compiler and the guard still decide.

use super::ast::{DatePart, MAX_CONDITIONS, MAX_GROUP, MAX_HAVING, MAX_IN, MAX_ORDER, MAX_SELECT, MAX_TEXT_CHARS};
use super::cues::Cues;
use super::view::{ColumnClass, PlanView};
use crate::types::FanoutMode;

/// A Lark literal matching the JSON string `s` exactly.
fn json_lit(s: &str) -> String {
    let json = serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    serde_json::to_string(&json).unwrap_or_default()
}

/// A Lark literal matching `s` exactly.
fn lit(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// `key` as a JSON object key, with its colon.
fn key(k: &str) -> String {
    format!("{} \":\"", json_lit(k))
}

/// An alternation of `alts`, or `None` when empty.
fn alt(alts: &[String]) -> Option<String> {
    if alts.is_empty() {
        None
    } else {
        Some(alts.join(" | "))
    }
}

/// `[ x ("," x){0,max-1} ]`.
fn list(x: &str, max: usize) -> String {
    if max <= 1 {
        format!("\"[\" {x} \"]\"")
    } else {
        format!("\"[\" {x} (\",\" {x}){{0,{}}} \"]\"", max - 1)
    }
}

/// The plan grammar over `view`, with the clauses `cues` allow (see
/// [`super::cues`]: without an aggregate cue, select items are columns
/// and there is no `group_by`, `having` or `count_of`; without an order
/// cue no `order_by`; without a limit cue no `limit` or `top_per_group`;
/// without a negation no `without`).
pub fn plan_grammar(view: &PlanView, cues: &Cues) -> String {
    let strict_fanout = view.fanout != FanoutMode::Rewrite;
    let names = |pred: &dyn Fn(&super::view::PlanColumn) -> bool| -> Vec<String> {
        view.columns.iter().filter(|c| pred(c)).map(|c| json_lit(&c.alias)).collect()
    };
    let any = names(&|_| true);
    let counted = names(&|c| !(strict_fanout && view.repeated(&c.alias)));
    let measures = names(&|c| c.measure && !(strict_fanout && view.repeated(&c.alias)));
    let numbers = names(&|c| c.class == ColumnClass::Number);
    let texts = names(&|c| matches!(c.class, ColumnClass::Text | ColumnClass::Other));
    let free_texts = names(&|c| matches!(c.class, ColumnClass::Text | ColumnClass::Other) && c.values.is_empty());
    let dates = names(&|c| c.class == ColumnClass::Date);
    let instances: Vec<String> = view.countable().iter().map(|i| json_lit(i)).collect();

    let mut g = String::new();
    g.push_str("%llguidance {\"ignore_once\": true}\n%ignore /[ \\t\\r\\n]{1,24}/\n");
    let count_kind = !instances.is_empty() && cues.aggregate;
    g.push_str("start: needs_plan | query_plan");
    if cues.limit && cues.order {
        g.push_str(" | top_plan");
    }
    if cues.without {
        g.push_str(" | without_plan");
    }
    if count_kind {
        g.push_str(" | count_plan");
    }
    g.push('\n');
    let kind = |k: &str| format!("\"{{\" {} {}", key("kind"), json_lit(k));
    let opt = |k: &str, rule: &str| format!("(\",\" {} {rule})?", key(k));
    let req = |k: &str, rule: &str| format!("\",\" {} {rule}", key(k));
    // An optional clause the cues allow, or nothing.
    let opt_if = |on: bool, k: &str, rule: &str| if on { opt(k, rule) } else { String::new() };
    g.push_str(&format!("needs_plan: {} \"}}\"\n", kind("needs_sql")));
    g.push_str(&format!(
        "query_plan: {} {} {} {} {} {} {} {} \"}}\"\n",
        kind("query"),
        req("select", "select_list"),
        opt("distinct", "BOOL"),
        opt("where", "filter"),
        opt_if(cues.aggregate, "group_by", "group_list"),
        opt_if(cues.aggregate, "having", "having_list"),
        opt_if(cues.order, "order_by", "order_list"),
        opt_if(cues.limit, "limit", "POSINT"),
    ));
    if cues.limit && cues.order {
        g.push_str(&format!(
            "top_plan: {} {} {} {} {} {} {} {} \"}}\"\n",
            kind("top_per_group"),
            req("select", "select_list"),
            opt("where", "filter"),
            opt_if(cues.aggregate, "group_by", "group_list"),
            req("per", "any_col"),
            req("order_by", "order_list"),
            req("top", "TOP"),
            opt("limit", "POSINT"),
        ));
    }
    if cues.without {
        g.push_str(&format!(
            "without_plan: {} {} {} {} {} {} \"}}\"\n",
            kind("without"),
            req("select", "select_list"),
            opt("where", "filter"),
            req("without", "any_col"),
            opt_if(cues.order, "order_by", "order_list"),
            opt_if(cues.limit, "limit", "POSINT"),
        ));
    }
    if count_kind {
        g.push_str(&format!(
            "count_plan: {} {} {} {} {} {} \"}}\"\n",
            kind("count_of"),
            req("of", "instance"),
            opt("where", "filter"),
            opt("group_by", "group_list"),
            opt_if(cues.order, "order_by", &list("count_order", MAX_ORDER)),
            opt_if(cues.limit, "limit", "POSINT"),
        ));
        g.push_str(&format!("instance: {}\n", instances.join(" | ")));
        g.push_str(&format!(
            "count_order: \"{{\" ({} {} | {} any_col) {} \"}}\"\n",
            key("agg"),
            json_lit("count"),
            key("col"),
            opt("desc", "BOOL")
        ));
    }
    g.push_str(&format!("select_list: {}\n", list("item", MAX_SELECT)));
    if cues.order {
        g.push_str(&format!("order_list: {}\n", list("order_item", MAX_ORDER)));
    }
    // Column sets.
    let never = lit("\u{1}never\u{1}");
    g.push_str(&format!("any_col: {}\n", alt(&any).unwrap_or_else(|| never.clone())));
    // A date cut to a year, month or day, when the question asks per one.
    let bucket_item = if cues.bucket && !dates.is_empty() {
        format!(" | \"{{\" {} date_col \",\" {} date_part \"}}\"", key("col"), key("bucket"))
    } else {
        String::new()
    };
    if !cues.aggregate {
        g.push_str(&format!("item: \"{{\" {} any_col \"}}\"{bucket_item}\n", key("col")));
        if cues.order {
            g.push_str(&format!("order_item: \"{{\" {} any_col {} \"}}\"\n", key("col"), opt("desc", "BOOL")));
        }
    } else {
        g.push_str(&format!("item: \"{{\" {} any_col \"}}\" | \"{{\" agg_body \"}}\"{bucket_item}\n", key("col")));
        if cues.order {
            g.push_str(&format!(
                "order_item: \"{{\" ({} any_col | agg_body) {} \"}}\"\n",
                key("col"),
                opt("desc", "BOOL")
            ));
        }
        g.push_str(&format!("group_list: {}\n", list("any_col", MAX_GROUP)));
        g.push_str(&format!("having_list: {}\n", list("having", MAX_HAVING)));
        g.push_str(&format!(
            "having: \"{{\" agg_body \",\" {} cmp_op \",\" {} NUMBER \"}}\"\n",
            key("op"),
            key("value")
        ));
        // Aggregates.
        let agg = |a: &str| format!("{} {}", key("agg"), json_lit(a));
        let mut aggs = vec![match alt(&counted) {
            Some(_) => format!("{} (\",\" {} counted_col)?", agg("count"), key("col")),
            None => agg("count"),
        }];
        aggs.push(format!("{} \",\" {} any_col", agg("count_distinct"), key("col")));
        if alt(&measures).is_some() {
            aggs.push(format!("({} | {}) \",\" {} measure_col", agg("sum"), agg("avg"), key("col")));
        }
        aggs.push(format!("({} | {}) \",\" {} any_col", agg("min"), agg("max"), key("col")));
        g.push_str(&format!("agg_body: {}\n", aggs.join("\n    | ")));
        if let Some(a) = alt(&counted) {
            g.push_str(&format!("counted_col: {a}\n"));
        }
        if let Some(a) = alt(&measures) {
            g.push_str(&format!("measure_col: {a}\n"));
        }
    }
    // Filters: up to MAX_DEPTH levels (a condition, and/or of conditions,
    // and/or of those).
    let junction = |inner: &str| {
        format!(
            "\"{{\" {} {} \"}}\" | \"{{\" {} {} \"}}\"",
            key("and"),
            list(inner, MAX_CONDITIONS),
            key("or"),
            list(inner, MAX_CONDITIONS)
        )
    };
    g.push_str(&format!("filter: cond | {}\n", junction("filter2")));
    g.push_str(&format!("filter2: cond | {}\n", junction("cond")));
    let col_op = |cols: &str, op: &str| format!("\"{{\" {} {cols} \",\" {} {op}", key("col"), key("op"));
    let mut conds: Vec<String> = vec![format!("{} \"}}\"", col_op("any_col", "null_op"))];
    // Two columns compared: equal or not, any two; ordered, two numbers
    // (plus a number) or two dates.
    conds.push(format!("{} \",\" {} any_col \"}}\"", col_op("any_col", "eq_op"), key("other")));
    if let Some(a) = alt(&numbers) {
        g.push_str(&format!("number_col: {a}\n"));
        conds.push(format!("{} \",\" {} NUMBER \"}}\"", col_op("number_col", "cmp_op"), key("value")));
        conds.push(format!(
            "{} \",\" {} number_col (\",\" {} NUMBER)? \"}}\"",
            col_op("number_col", "cmp_op"),
            key("other"),
            key("plus")
        ));
        conds.push(format!(
            "{} \",\" {} NUMBER \",\" {} NUMBER \"}}\"",
            col_op("number_col", &json_lit("between")),
            key("low"),
            key("high")
        ));
        conds.push(format!(
            "{} \",\" {} {} \"}}\"",
            col_op("number_col", "in_op"),
            key("values"),
            list("NUMBER", MAX_IN)
        ));
    }
    if let Some(a) = alt(&texts) {
        g.push_str(&format!("text_col: {a}\n"));
        conds.push(format!("{} \",\" {} STRING \"}}\"", col_op("text_col", "like_op"), key("value")));
    }
    if let Some(a) = alt(&free_texts) {
        g.push_str(&format!("free_text_col: {a}\n"));
        conds.push(format!("{} \",\" {} STRING \"}}\"", col_op("free_text_col", "eq_op"), key("value")));
        conds.push(format!(
            "{} \",\" {} {} \"}}\"",
            col_op("free_text_col", "in_op"),
            key("values"),
            list("STRING", MAX_IN)
        ));
    }
    for (i, c) in view.columns.iter().enumerate() {
        if !matches!(c.class, ColumnClass::Text | ColumnClass::Other) || c.values.is_empty() {
            continue;
        }
        let vals: Vec<String> = c.values.iter().map(|v| json_lit(v)).collect();
        g.push_str(&format!("values_{i}: {}\n", vals.join(" | ")));
        let me = json_lit(&c.alias);
        conds.push(format!("{} \",\" {} values_{i} \"}}\"", col_op(&me, "eq_op"), key("value")));
        conds.push(format!(
            "{} \",\" {} {} \"}}\"",
            col_op(&me, "in_op"),
            key("values"),
            list(&format!("values_{i}"), MAX_IN)
        ));
    }
    if let Some(a) = alt(&dates) {
        g.push_str(&format!("date_col: {a}\n"));
        conds.push(format!("{} \",\" {} DATE \"}}\"", col_op("date_col", "cmp_op"), key("value")));
        conds.push(format!("{} \",\" {} date_col \"}}\"", col_op("date_col", "cmp_op"), key("other")));
        conds.push(format!(
            "{} \",\" {} DATE \",\" {} DATE \"}}\"",
            col_op("date_col", &json_lit("between")),
            key("low"),
            key("high")
        ));
        let part = format!("\"{{\" {} date_col \",\" {} date_part \",\" {}", key("col"), key("part"), key("op"));
        conds.push(format!("{part} cmp_op \",\" {} INT \"}}\"", key("value")));
        conds.push(format!("{part} {} \",\" {} INT \",\" {} INT \"}}\"", json_lit("between"), key("low"), key("high")));
        let parts: Vec<String> = DatePart::ALL.iter().map(|p| json_lit(p.as_str())).collect();
        g.push_str(&format!("date_part: {}\n", parts.join(" | ")));
    }
    g.push_str(&format!("cond: {}\n", conds.join("\n    | ")));
    let ops = |os: &[&str]| os.iter().map(|o| json_lit(o)).collect::<Vec<_>>().join(" | ");
    g.push_str(&format!("cmp_op: {}\n", ops(&["=", "!=", "<", "<=", ">", ">="])));
    g.push_str(&format!("eq_op: {}\n", ops(&["=", "!="])));
    g.push_str(&format!("in_op: {}\n", ops(&["in", "not in"])));
    g.push_str(&format!("like_op: {}\n", ops(&["like", "not like"])));
    g.push_str(&format!("null_op: {}\n", ops(&["is null", "is not null"])));
    g.push_str("BOOL: \"true\" | \"false\"\n");
    g.push_str("POSINT: /[1-9][0-9]{0,3}/\n");
    g.push_str("TOP: /[1-9][0-9]?/\n");
    g.push_str("INT: /-?[0-9]{1,4}/\n");
    g.push_str("NUMBER: /-?[0-9]{1,15}(\\.[0-9]{1,6})?/\n");
    g.push_str(&format!("STRING: /\"([^\"\\\\\\x00-\\x1F]|\\\\[\"\\\\bfnrt]){{0,{MAX_TEXT_CHARS}}}\"/\n"));
    g.push_str("DATE: /\"[0-9]{4}(-[0-9]{2}(-[0-9]{2}([ T][0-9]{2}(:[0-9]{2}(:[0-9]{2})?)?)?)?)?\"/\n");
    g
}
