//! A plan compiled to one SELECT over the view, in the view's dialect.
//!
//! Every name is checked against the [`PlanView`] first (a name the view
//! lacks, SUM/AVG over a column that is not a measure, COUNT/SUM/AVG over a
//! column the view repeats when no fan-out rewrite follows, a literal of the
//! wrong type or too long, a plan past its bounds): a bad plan is a
//! [`PlanError`] naming the clause and what to do, never a panic. Names are
//! written as the view wrote them (`view::sql::quote_alias`), strings in the
//! dialect's quotes (a backslash doubled where the dialect reads escapes).
//! What comes out goes through the guard and the same rewrites as a
//! model's SQL (`query::check_and_run`).
//!
//! The kinds:
//!
//! - `query`: `SELECT [DISTINCT] … FROM view [WHERE] [GROUP BY] [HAVING]
//!   [ORDER BY] [LIMIT]`. With an aggregate in the select list, its plain
//!   columns are grouped by; when it holds aggregates only, the grouped
//!   columns are put first in it (the question's "per X" shows X).
//! - `top_per_group`: `ROW_NUMBER() OVER (PARTITION BY per ORDER BY …)` in
//!   a derived table, rows ranked at most `top` kept.
//! - `without`: `NOT EXISTS` over the view for the same row of the
//!   selected table (its key) with a non-NULL `without` column.
//! - `count_of`: `COUNT(*)` over the distinct keys of the instance `of`
//!   (with the grouped columns) in a derived table.

use std::fmt;

use super::ast::*;
use super::view::{ColumnClass, PlanView};
use crate::types::{Dialect, FanoutMode};
use crate::view::sql::quote_alias;

/// Why a plan does not compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanError {
    /// The model answered the `needs_sql` kind.
    NeedsSql,
    /// The plan is wrong; the message names the clause and what to do.
    Invalid(String),
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::NeedsSql => write!(f, "the plan says the question needs free SQL (kind needs_sql)"),
            PlanError::Invalid(m) => write!(f, "the query plan is not valid: {m}"),
        }
    }
}

fn bad<T>(m: impl Into<String>) -> Result<T, PlanError> {
    Err(PlanError::Invalid(m.into()))
}

/// The alias of a derived table's rank column (`top_per_group`).
const RANK: &str = "lucy_rank";
/// The alias of `count_of`'s count.
const COUNT: &str = "lucy_count";

/// Compile `plan` over `view` to SQL text.
pub fn compile(plan: &Plan, view: &PlanView) -> Result<String, PlanError> {
    let c = Compiler { view, d: view.dialect };
    c.bounds(plan)?;
    match plan.kind {
        PlanKind::NeedsSql => Err(PlanError::NeedsSql),
        PlanKind::Query => c.query(plan),
        PlanKind::TopPerGroup => c.top_per_group(plan),
        PlanKind::Without => c.without(plan),
        PlanKind::CountOf => c.count_of(plan),
    }
}

struct Compiler<'a> {
    view: &'a PlanView,
    d: Dialect,
}

impl Compiler<'_> {
    fn bounds(&self, p: &Plan) -> Result<(), PlanError> {
        let over = |what: &str, n: usize, max: usize| {
            if n > max {
                bad(format!("{what} has {n} items; a plan may have at most {max}"))
            } else {
                Ok(())
            }
        };
        over("select", p.select.len(), MAX_SELECT)?;
        over("group_by", p.group_by.len(), MAX_GROUP)?;
        over("order_by", p.order_by.len(), MAX_ORDER)?;
        over("having", p.having.len(), MAX_HAVING)?;
        if let Some(l) = p.limit.filter(|&l| l == 0 || l > MAX_LIMIT) {
            return bad(format!("limit {l} is outside 1..={MAX_LIMIT}"));
        }
        if let Some(t) = p.top.filter(|&t| t == 0 || t > MAX_TOP) {
            return bad(format!("top {t} is outside 1..={MAX_TOP}"));
        }
        if let Some(f) = &p.filter {
            filter_bounds(f, 1)?;
        }
        Ok(())
    }

    /// The quoted view column of a plan name, or the error naming `clause`.
    fn col(&self, name: &str, clause: &str) -> Result<String, PlanError> {
        match self.view.column(name) {
            Some(c) => Ok(quote_alias(&c.alias, self.d)),
            None => bad(format!(
                "{clause} names {name}, which is not a column of the view {} (its columns: {})",
                self.view.view_name,
                crate::error::cut(
                    &self.view.columns.iter().map(|c| c.alias.as_str()).collect::<Vec<_>>().join(", "),
                    600
                )
            )),
        }
    }

    /// An item's SQL; `groups` are the query's grouped columns (the
    /// repeated-rows test).
    fn item(&self, it: &Item, clause: &str, groups: &[String]) -> Result<String, PlanError> {
        match (it.agg, &it.col) {
            (None, Some(c)) => match it.bucket {
                None => self.col(c, clause),
                Some(part) => {
                    let q = self.col(c, clause)?;
                    if self.view.column(c).map(|x| x.class) != Some(ColumnClass::Date) {
                        return bad(format!(
                            "{clause}: {c} by {} cuts a column that is not a date; a bucket reads a date column",
                            part.as_str()
                        ));
                    }
                    Ok(self.bucket(part, &q))
                }
            },
            (None, None) => bad(format!("{clause}: an item names neither a column nor an aggregate")),
            (Some(Agg::Count), None) => Ok("COUNT(*)".into()),
            (Some(a), None) => bad(format!("{clause}: {} needs a column", a.as_str())),
            (Some(a), Some(c)) => {
                let q = self.col(c, clause)?;
                let measure = self.view.column(c).is_some_and(|x| x.measure);
                if a.needs_measure() && !measure {
                    return bad(format!(
                        "{clause}: {}({c}) reads a column that is not a quantity (a key, a date or text); \
                         {} reads only: {}",
                        a.as_str(),
                        a.as_str(),
                        self.measures()
                    ));
                }
                if a.counts_repeats() && self.view.fanout != FanoutMode::Rewrite && self.view.repeats(c, groups) {
                    return bad(format!(
                        "{clause}: {}({c}) reads rows the view repeats (joins to {}) and --fanout is {}, so no \
                         rewrite counts them once; use count_distinct over the key, or --fanout rewrite",
                        a.as_str(),
                        self.view.grain.instance_of(c).map(|i| i.multiplied_by.join(", ")).unwrap_or_default(),
                        self.view.fanout.as_str()
                    ));
                }
                Ok(match a {
                    Agg::Count => format!("COUNT({q})"),
                    Agg::CountDistinct => format!("COUNT(DISTINCT {q})"),
                    Agg::Sum => format!("SUM({q})"),
                    Agg::Avg => format!("AVG({q})"),
                    Agg::Min => format!("MIN({q})"),
                    Agg::Max => format!("MAX({q})"),
                })
            }
        }
    }

    fn measures(&self) -> String {
        let m: Vec<&str> = self.view.columns.iter().filter(|c| c.measure).map(|c| c.alias.as_str()).collect();
        if m.is_empty() {
            "no column of this view".into()
        } else {
            m.join(", ")
        }
    }

    /// A select item's SQL: [`Self::item`], a bucket named by its alias.
    fn select_item(&self, it: &Item, groups: &[String]) -> Result<String, PlanError> {
        let e = self.item(it, "select", groups)?;
        Ok(match it.bucket {
            Some(_) if it.agg.is_none() => format!("{e} AS {}", quote_alias(&Self::item_alias(it), self.d)),
            _ => e,
        })
    }

    /// A date cut to its year (`YYYY`), month (`YYYY-MM`) or day
    /// (`YYYY-MM-DD`), as text, in the dialect.
    fn bucket(&self, part: DatePart, q: &str) -> String {
        let (sqlite, pg, spark) = match part {
            DatePart::Year => ("%Y", "YYYY", "yyyy"),
            DatePart::Month => ("%Y-%m", "YYYY-MM", "yyyy-MM"),
            DatePart::Day => ("%Y-%m-%d", "YYYY-MM-DD", "yyyy-MM-dd"),
        };
        match self.d {
            Dialect::Sqlite => format!("strftime('{sqlite}', {q})"),
            Dialect::Postgres => format!("to_char(CAST({q} AS TIMESTAMP), '{pg}')"),
            Dialect::Mysql => format!("DATE_FORMAT({q}, '{sqlite}')"),
            Dialect::Spark => format!("date_format({q}, '{spark}')"),
        }
    }

    /// The bucket a select item cuts `col` to, if one does.
    fn bucket_of(p: &Plan, col: &str) -> Option<Item> {
        p.select
            .iter()
            .find(|i| {
                i.agg.is_none() && i.bucket.is_some() && i.col.as_deref().is_some_and(|c| c.eq_ignore_ascii_case(col))
            })
            .cloned()
    }

    /// The GROUP BY list: each grouped column, or the bucket a select item
    /// cuts it to.
    fn group_by_sql(&self, p: &Plan, groups: &[String]) -> Result<Vec<String>, PlanError> {
        groups
            .iter()
            .map(|g| match Self::bucket_of(p, g) {
                Some(b) => self.item(&b, "group_by", groups),
                None => self.col(g, "group_by"),
            })
            .collect()
    }

    /// A name for an item in a derived table's select list.
    fn item_alias(it: &Item) -> String {
        match (it.agg, &it.col) {
            (None, Some(c)) if it.bucket.is_some() => {
                format!("{c}_{}", it.bucket.map(|b| b.as_str()).unwrap_or_default())
            }
            (None, Some(c)) => c.clone(),
            (Some(a), Some(c)) => format!("{}_{c}", a.as_str()),
            (Some(a), None) => format!("{}_rows", a.as_str()),
            (None, None) => "item".into(),
        }
    }

    fn literal(&self, l: &Literal, class: ColumnClass, clause: &str, col: &str) -> Result<String, PlanError> {
        match l {
            Literal::Number(n) => {
                let s = n.to_string();
                if s.len() > MAX_NUMBER_CHARS {
                    return bad(format!(
                        "{clause}: the number {s} on {col} is longer than {MAX_NUMBER_CHARS} characters"
                    ));
                }
                Ok(s)
            }
            Literal::Text(t) => {
                if t.chars().count() > MAX_TEXT_CHARS {
                    return bad(format!(
                        "{clause}: the text literal on {col} has {} characters; a plan's literals have at most {MAX_TEXT_CHARS}",
                        t.chars().count()
                    ));
                }
                if class == ColumnClass::Number && t.trim().parse::<f64>().is_err() {
                    return bad(format!("{clause}: {col} holds numbers; '{t}' is not one"));
                }
                Ok(self.string(t))
            }
        }
    }

    /// A string literal in the dialect.
    fn string(&self, t: &str) -> String {
        let mut s = t.replace('\'', "''");
        if self.d.backslash_escapes() {
            s = s.replace('\\', "\\\\");
        }
        format!("'{s}'")
    }

    fn date_part(&self, part: DatePart, q: &str) -> String {
        match self.d {
            Dialect::Sqlite => {
                let f = match part {
                    DatePart::Year => "%Y",
                    DatePart::Month => "%m",
                    DatePart::Day => "%d",
                };
                format!("CAST(strftime('{f}', {q}) AS INTEGER)")
            }
            Dialect::Postgres => {
                format!("EXTRACT({} FROM CAST({q} AS TIMESTAMP))", part.as_str().to_ascii_uppercase())
            }
            Dialect::Mysql | Dialect::Spark => format!("{}({q})", part.as_str().to_ascii_uppercase()),
        }
    }

    fn condition(&self, c: &Condition, qualifier: Option<&str>) -> Result<String, PlanError> {
        let clause = "where";
        let name = self.col(&c.col, clause)?;
        let q = match qualifier {
            Some(a) => format!("{a}.{name}"),
            None => name,
        };
        let class = self.view.column(&c.col).map(|x| x.class).unwrap_or(ColumnClass::Other);
        if let Some(o) = &c.other {
            return self.column_comparison(c, o, &q, class, qualifier);
        }
        let (lhs, class) = match c.part {
            Some(p) => {
                if class != ColumnClass::Date && class != ColumnClass::Text {
                    return bad(format!("where: {} of {} needs a date column", p.as_str(), c.col));
                }
                if !c.op.is_comparison() && c.op != Op::In && c.op != Op::Between {
                    return bad(format!("where: {} of {} takes =, <, >, in or between", p.as_str(), c.col));
                }
                (self.date_part(p, &q), ColumnClass::Number)
            }
            None => (q, class),
        };
        let one = |what: &Option<Literal>, field: &str| -> Result<String, PlanError> {
            match what {
                Some(l) => self.literal(l, class, clause, &c.col),
                None => bad(format!("where: {} on {} needs \"{field}\"", c.op.as_str(), c.col)),
            }
        };
        Ok(match c.op {
            Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => {
                format!("{lhs} {} {}", c.op.sql(), one(&c.value, "value")?)
            }
            Op::Like | Op::NotLike => {
                if !matches!(c.value, Some(Literal::Text(_))) {
                    return bad(format!("where: {} on {} needs a text pattern", c.op.as_str(), c.col));
                }
                format!("{lhs} {} {}", c.op.sql(), one(&c.value, "value")?)
            }
            Op::In | Op::NotIn => {
                let vals = c.values.as_deref().unwrap_or_default();
                if vals.is_empty() || vals.len() > MAX_IN {
                    return bad(format!("where: {} on {} needs 1 to {MAX_IN} values", c.op.as_str(), c.col));
                }
                let v: Vec<String> =
                    vals.iter().map(|l| self.literal(l, class, clause, &c.col)).collect::<Result<_, _>>()?;
                format!("{lhs} {} ({})", c.op.sql(), v.join(", "))
            }
            Op::Between => format!("{lhs} BETWEEN {} AND {}", one(&c.low, "low")?, one(&c.high, "high")?),
            Op::IsNull | Op::IsNotNull => format!("{lhs} {}", c.op.sql()),
        })
    }

    /// `col op other [+ plus]`: `=`/`!=` between any two columns, an
    /// ordering between two number or two date columns, `plus` a number
    /// added to a number column.
    fn column_comparison(
        &self,
        c: &Condition,
        other: &str,
        lhs: &str,
        class: ColumnClass,
        qualifier: Option<&str>,
    ) -> Result<String, PlanError> {
        let name = self.col(other, "where")?;
        let rhs = match qualifier {
            Some(a) => format!("{a}.{name}"),
            None => name,
        };
        let oclass = self.view.column(other).map(|x| x.class).unwrap_or(ColumnClass::Other);
        if c.part.is_some() || !c.op.is_comparison() {
            return bad(format!(
                "where: {} compared with the column {other} takes =, !=, <, <=, > or >=, and no date part",
                c.col
            ));
        }
        if c.value.is_some() || c.values.is_some() || c.low.is_some() || c.high.is_some() {
            return bad(format!("where: {} is compared with the column {other}; give no value besides", c.col));
        }
        let ordered = !matches!(c.op, Op::Eq | Op::Ne);
        let comparable = class == oclass && matches!(class, ColumnClass::Number | ColumnClass::Date);
        if ordered && !comparable {
            return bad(format!(
                "where: {} {} {other} orders two columns that are not both numbers or both dates",
                c.col,
                c.op.as_str()
            ));
        }
        let rhs = match &c.plus {
            None => rhs,
            Some(Literal::Number(n)) if class == ColumnClass::Number && oclass == ColumnClass::Number => {
                format!("{rhs} + {n}")
            }
            Some(l) => {
                return bad(format!("where: plus {} on {other} needs two number columns and a number", l.show()))
            }
        };
        Ok(format!("{lhs} {} {rhs}", c.op.sql()))
    }

    fn filter(&self, f: &Filter, qualifier: Option<&str>, top: bool) -> Result<String, PlanError> {
        let join = |fs: &[Filter], op: &str| -> Result<String, PlanError> {
            if fs.is_empty() {
                return bad(format!("where: an empty \"{}\"", op.to_ascii_lowercase()));
            }
            let parts: Vec<String> = fs.iter().map(|x| self.filter(x, qualifier, false)).collect::<Result<_, _>>()?;
            let s = parts.join(&format!(" {op} "));
            Ok(if top || fs.len() == 1 { s } else { format!("({s})") })
        };
        match f {
            Filter::And { and } => join(and, "AND"),
            Filter::Or { or } => join(or, "OR"),
            Filter::Cond(c) => self.condition(c, qualifier),
        }
    }

    fn where_clause(&self, p: &Plan, extra: &[String]) -> Result<String, PlanError> {
        let mut parts: Vec<String> = Vec::new();
        if let Some(f) = &p.filter {
            let s = self.filter(f, None, extra.is_empty())?;
            parts.push(if extra.is_empty() || !matches!(f, Filter::Or { .. }) { s } else { format!("({s})") });
        }
        parts.extend(extra.iter().cloned());
        Ok(if parts.is_empty() { String::new() } else { format!(" WHERE {}", parts.join(" AND ")) })
    }

    fn having(&self, p: &Plan, groups: &[String]) -> Result<String, PlanError> {
        if p.having.is_empty() {
            return Ok(String::new());
        }
        let mut parts = Vec::new();
        for h in &p.having {
            if !h.op.is_comparison() {
                return bad(format!("having: {} takes =, !=, <, <=, > or >=", h.agg.as_str()));
            }
            let it = Item { agg: Some(h.agg), col: h.col.clone(), bucket: None };
            let lhs = self.item(&it, "having", groups)?;
            let rhs = match &h.value {
                Literal::Number(n) => n.to_string(),
                Literal::Text(t) => {
                    return bad(format!("having: compares {} with the text '{t}'; give a number", h.agg.as_str()))
                }
            };
            parts.push(format!("{lhs} {} {rhs}", h.op.sql()));
        }
        Ok(format!(" HAVING {}", parts.join(" AND ")))
    }

    fn order(&self, items: &[String]) -> String {
        if items.is_empty() {
            String::new()
        } else {
            format!(" ORDER BY {}", items.join(", "))
        }
    }

    fn limit(&self, p: &Plan) -> String {
        p.limit.map(|l| format!(" LIMIT {l}")).unwrap_or_default()
    }

    fn view_name(&self) -> String {
        quote_alias(&self.view.view_name, self.d)
    }

    fn check_names(&self, names: &[String], clause: &str) -> Result<Vec<String>, PlanError> {
        names.iter().map(|n| self.col(n, clause)).collect()
    }

    /// The select list and the grouped columns of a `query` (or the inner
    /// query of `top_per_group`): grouped columns the select list lacks
    /// go first; with an aggregate, plain selected columns are grouped by.
    fn grouped(&self, p: &Plan) -> Result<(Vec<Item>, Vec<String>), PlanError> {
        if p.select.is_empty() {
            return bad("select is empty; name at least one column or aggregate");
        }
        let same = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
        let mut groups: Vec<String> = Vec::new();
        for g in &p.group_by {
            self.col(g, "group_by")?;
            if !groups.iter().any(|x| same(x, g)) {
                groups.push(g.clone());
            }
        }
        let has_agg = aggregates(p);
        let mut items: Vec<Item> = Vec::new();
        // A select list of aggregates only shows its groups ("per X" shows
        // X); one that names a column already shows what the question
        // asked for (a client's name, grouped by the client's key too).
        let shows_a_column = p.select.iter().any(|i| i.agg.is_none());
        for g in &groups {
            if !shows_a_column
                && !p.select.iter().any(|i| i.agg.is_none() && i.col.as_deref().is_some_and(|c| same(c, g)))
            {
                items.push(Item::col(g));
            }
        }
        items.extend(p.select.iter().cloned());
        if has_agg {
            for i in &p.select {
                if let (None, Some(c)) = (i.agg, &i.col) {
                    if !groups.iter().any(|x| same(x, c)) {
                        groups.push(c.clone());
                    }
                }
            }
        }
        Ok((items, groups))
    }

    fn order_items(&self, p: &Plan, groups: &[String]) -> Result<Vec<String>, PlanError> {
        p.order_by
            .iter()
            .map(|o| {
                // A column a select item cuts to a bucket orders by the bucket.
                let it = match (o.agg, o.col.as_deref().and_then(|c| Self::bucket_of(p, c))) {
                    (None, Some(b)) => b,
                    _ => o.item(),
                };
                let e = self.item(&it, "order_by", groups)?;
                Ok(if o.desc { format!("{e} DESC") } else { e })
            })
            .collect()
    }

    fn query(&self, p: &Plan) -> Result<String, PlanError> {
        let (items, groups) = self.grouped(p)?;
        let sel: Vec<String> = items.iter().map(|i| self.select_item(i, &groups)).collect::<Result<_, _>>()?;
        let has_agg = aggregates(p);
        let distinct = if p.distinct && !has_agg { "DISTINCT " } else { "" };
        let group = if groups.is_empty() {
            String::new()
        } else {
            format!(" GROUP BY {}", self.group_by_sql(p, &groups)?.join(", "))
        };
        let having = self.having(p, &groups)?;
        let order = self.order(&self.order_items(p, &groups)?);
        Ok(format!(
            "SELECT {distinct}{} FROM {}{}{group}{having}{order}{}",
            sel.join(", "),
            self.view_name(),
            self.where_clause(p, &[])?,
            self.limit(p)
        ))
    }

    fn top_per_group(&self, p: &Plan) -> Result<String, PlanError> {
        let Some(per) = &p.per else {
            return bad("top_per_group needs \"per\": the column whose groups keep top rows");
        };
        let per_q = self.col(per, "per")?;
        let Some(top) = p.top else { return bad("top_per_group needs \"top\": how many rows each group keeps") };
        if p.order_by.is_empty() {
            return bad("top_per_group needs order_by: what ranks the rows of a group");
        }
        let (items, mut groups) = self.grouped(p)?;
        if aggregates(p) && !groups.iter().any(|g| g.eq_ignore_ascii_case(per)) {
            groups.push(per.clone());
        }
        let mut inner: Vec<String> = Vec::new();
        let mut outer: Vec<String> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        for it in &items {
            let alias = Self::item_alias(it);
            if names.iter().any(|n| n.eq_ignore_ascii_case(&alias)) {
                continue;
            }
            let e = self.item(it, "select", &groups)?;
            let a = quote_alias(&alias, self.d);
            inner.push(if it.agg.is_none() && it.bucket.is_none() { e } else { format!("{e} AS {a}") });
            outer.push(a);
            names.push(alias);
        }
        if !names.iter().any(|n| n.eq_ignore_ascii_case(per)) {
            inner.push(per_q.clone());
        }
        let rank_order = self.order_items(p, &groups)?;
        inner.push(format!("ROW_NUMBER() OVER (PARTITION BY {per_q} ORDER BY {}) AS {RANK}", rank_order.join(", ")));
        let group = if groups.is_empty() {
            String::new()
        } else {
            format!(" GROUP BY {}", self.group_by_sql(p, &groups)?.join(", "))
        };
        let having = self.having(p, &groups)?;
        Ok(format!(
            "SELECT {} FROM (SELECT {} FROM {}{}{group}{having}) AS lucy_ranked WHERE {RANK} <= {top} ORDER BY {per_q}, {RANK}{}",
            outer.join(", "),
            inner.join(", "),
            self.view_name(),
            self.where_clause(p, &[])?,
            self.limit(p)
        ))
    }

    fn keys(&self, instance: &str) -> Vec<String> {
        self.view.row_keys(instance)
    }

    fn without(&self, p: &Plan) -> Result<String, PlanError> {
        let Some(missing) = &p.without else {
            return bad("without needs \"without\": a column of the table the rows have none of");
        };
        self.col(missing, "without")?;
        let Some(first) = p.select.iter().find_map(|i| i.col.clone()) else {
            return bad("without needs a selected column of the table whose rows are listed");
        };
        self.col(&first, "select")?;
        let (Some(x), Some(y)) = (self.view.instance_of(&first), self.view.instance_of(missing)) else {
            return bad(format!("the view's grain does not place {first} or {missing} in a table"));
        };
        if x.eq_ignore_ascii_case(&y) {
            return bad(format!(
                "without: {missing} is a column of {x}, the table the rows are listed of; name a column of another table"
            ));
        }
        let keys = self.keys(&x);
        let y_col = self.keys(&y).into_iter().next().unwrap_or_else(|| missing.clone());
        let mut on: Vec<String> = keys
            .iter()
            .map(|k| {
                let k = quote_alias(k, self.d);
                format!("lucy_y.{k} = lucy_x.{k}")
            })
            .collect();
        on.push(format!("lucy_y.{} IS NOT NULL", quote_alias(&y_col, self.d)));
        let not_exists =
            format!("NOT EXISTS (SELECT 1 FROM {} AS lucy_y WHERE {})", self.view_name(), on.join(" AND "));
        let (items, groups) = self.grouped(p)?;
        let has_agg = aggregates(p);
        let sel: Vec<String> = items.iter().map(|i| self.select_item(i, &groups)).collect::<Result<_, _>>()?;
        let group = if groups.is_empty() || !has_agg {
            String::new()
        } else {
            format!(" GROUP BY {}", self.group_by_sql(p, &groups)?.join(", "))
        };
        let distinct = if has_agg { "" } else { "DISTINCT " };
        let order = self.order(&self.order_items(p, &groups)?);
        Ok(format!(
            "SELECT {distinct}{} FROM {} AS lucy_x{}{group}{order}{}",
            sel.join(", "),
            self.view_name(),
            self.where_clause(p, &[not_exists])?,
            self.limit(p)
        ))
    }

    fn count_of(&self, p: &Plan) -> Result<String, PlanError> {
        let Some(of) = &p.of else { return bad("count_of needs \"of\": the table whose rows are counted") };
        let Some(inst) = self.view.grain.instance(of) else {
            let names: Vec<&str> = self.view.grain.instances.iter().map(|i| i.instance.as_str()).collect();
            return bad(format!("count_of: {of} is not a table of the view (its tables: {})", names.join(", ")));
        };
        let keys = self.keys(&inst.instance);
        if keys.is_empty() {
            return bad(format!("count_of: the view has no column of {of} to count its rows by"));
        }
        let groups = self.check_names(&p.group_by, "group_by")?;
        let mut inner: Vec<String> = groups.clone();
        for k in &keys {
            let q = quote_alias(k, self.d);
            if !inner.contains(&q) {
                inner.push(q);
            }
        }
        let not_null: Vec<String> = keys.iter().map(|k| format!("{} IS NOT NULL", quote_alias(k, self.d))).collect();
        let mut outer = groups.clone();
        outer.push(format!("COUNT(*) AS {COUNT}"));
        let group = if groups.is_empty() { String::new() } else { format!(" GROUP BY {}", groups.join(", ")) };
        let mut order: Vec<String> = Vec::new();
        for o in &p.order_by {
            let e = match (o.agg, &o.col) {
                (Some(Agg::Count), _) => COUNT.to_string(),
                (None, Some(c)) if p.group_by.iter().any(|g| g.eq_ignore_ascii_case(c)) => self.col(c, "order_by")?,
                _ => return bad("count_of orders only by the count ({\"agg\": \"count\"}) or a grouped column"),
            };
            order.push(if o.desc { format!("{e} DESC") } else { e });
        }
        if !p.having.is_empty() {
            return bad("count_of takes no having; use the query kind with count_distinct");
        }
        Ok(format!(
            "SELECT {} FROM (SELECT DISTINCT {} FROM {}{}) AS lucy_rows{group}{}{}",
            outer.join(", "),
            inner.join(", "),
            self.view_name(),
            self.where_clause(p, &not_null)?,
            self.order(&order),
            self.limit(p)
        ))
    }
}

/// Whether the plan aggregates: in its select list, ORDER BY or HAVING
/// (`ORDER BY count DESC` over plain columns groups by them: "the most
/// frequent").
fn aggregates(p: &Plan) -> bool {
    p.select.iter().any(|i| i.agg.is_some()) || p.order_by.iter().any(|o| o.agg.is_some()) || !p.having.is_empty()
}

fn filter_bounds(f: &Filter, depth: usize) -> Result<(), PlanError> {
    match f {
        Filter::Cond(c) => {
            if c.values.as_ref().is_some_and(|v| v.len() > MAX_IN) {
                return bad(format!("where: in on {} has more than {MAX_IN} values", c.col));
            }
            Ok(())
        }
        Filter::And { and: fs } | Filter::Or { or: fs } => {
            if depth >= MAX_DEPTH {
                return bad(format!("where nests and/or deeper than {MAX_DEPTH} levels"));
            }
            if fs.len() > MAX_CONDITIONS {
                return bad(format!("where: one and/or holds {} conditions; at most {MAX_CONDITIONS}", fs.len()));
            }
            fs.iter().try_for_each(|x| filter_bounds(x, depth + 1))
        }
    }
}
