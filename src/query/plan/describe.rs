//! A plan as a small table, one line per part (what is selected, filtered,
//! grouped, ordered), for the trace, `lucy explain` and the web page: the
//! model's reading of the question, apart from the SQL text.

use super::ast::*;
use crate::types::trace::PlanLine;

fn item(i: &Item) -> String {
    match (i.agg, &i.col) {
        (None, Some(c)) if i.bucket.is_some() => format!("{c} by {}", i.bucket.map(|b| b.as_str()).unwrap_or_default()),
        (None, Some(c)) => c.clone(),
        (Some(Agg::Count), None) => "count(rows)".into(),
        (Some(a), Some(c)) => format!("{}({c})", a.as_str()),
        (Some(a), None) => format!("{}()", a.as_str()),
        (None, None) => "?".into(),
    }
}

fn condition(c: &Condition) -> String {
    let lhs = match c.part {
        Some(p) => format!("{} of {}", p.as_str(), c.col),
        None => c.col.clone(),
    };
    let show = |l: &Option<Literal>| l.as_ref().map(Literal::show).unwrap_or_else(|| "?".into());
    if let Some(o) = &c.other {
        let plus = match &c.plus {
            Some(p) => format!(" + {}", p.show()),
            None => String::new(),
        };
        return format!("{lhs} {} {o}{plus}", c.op.as_str());
    }
    match c.op {
        Op::In | Op::NotIn => {
            let v: Vec<String> = c.values.iter().flatten().map(Literal::show).collect();
            format!("{lhs} {} ({})", c.op.as_str(), v.join(", "))
        }
        Op::Between => format!("{lhs} between {} and {}", show(&c.low), show(&c.high)),
        Op::IsNull | Op::IsNotNull => format!("{lhs} {}", c.op.as_str()),
        op => format!("{lhs} {} {}", op.as_str(), show(&c.value)),
    }
}

/// A filter as one line (`a and (b or c)`).
pub fn filter(f: &Filter) -> String {
    let join = |fs: &[Filter], op: &str| {
        let parts: Vec<String> = fs
            .iter()
            .map(|x| match x {
                Filter::Cond(_) => filter(x),
                _ => format!("({})", filter(x)),
            })
            .collect();
        parts.join(&format!(" {op} "))
    };
    match f {
        Filter::And { and } => join(and, "and"),
        Filter::Or { or } => join(or, "or"),
        Filter::Cond(c) => condition(c),
    }
}

/// The plan's table: `kind`, then `select`, `filter`, `group`, `having`,
/// `order`, `limit` and the kind's own parts, each present only when set.
pub fn table(p: &Plan) -> Vec<PlanLine> {
    let mut out = Vec::new();
    let mut line = |part: &str, text: String| out.push(PlanLine { part: part.into(), text });
    line("kind", p.kind.as_str().into());
    if let Some(of) = &p.of {
        line("count", format!("rows of {of}"));
    }
    if !p.select.is_empty() {
        let mut s = p.select.iter().map(item).collect::<Vec<_>>().join(", ");
        if p.distinct {
            s = format!("distinct {s}");
        }
        line("select", s);
    }
    if let Some(f) = &p.filter {
        line("filter", filter(f));
    }
    if let Some(w) = &p.without {
        line("without", format!("rows with no {w}"));
    }
    if !p.group_by.is_empty() {
        line("group", p.group_by.join(", "));
    }
    if !p.having.is_empty() {
        let h: Vec<String> = p
            .having
            .iter()
            .map(|h| {
                let i = Item { agg: Some(h.agg), col: h.col.clone(), bucket: None };
                format!("{} {} {}", item(&i), h.op.as_str(), h.value.show())
            })
            .collect();
        line("having", h.join(" and "));
    }
    if let (Some(per), Some(top)) = (&p.per, p.top) {
        line("top", format!("{top} per {per}"));
    }
    if !p.order_by.is_empty() {
        let o: Vec<String> =
            p.order_by.iter().map(|o| format!("{}{}", item(&o.item()), if o.desc { " desc" } else { "" })).collect();
        line("order", o.join(", "));
    }
    if let Some(l) = p.limit {
        line("limit", l.to_string());
    }
    out
}
