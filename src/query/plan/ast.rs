//! The plan itself: what QueryView's model answers in the plan form, as
//! JSON (serde), and the bounds every plan keeps.
//!
//! ```json
//! {"kind": "query",
//!  "select": [{"col": "CLIENT_name"}, {"agg": "sum", "col": "PAYAMOUNT_amount"}],
//!  "where": {"and": [{"col": "LOCATION_country", "op": "=", "value": "France"},
//!                    {"col": "PAYMENT_date", "part": "year", "op": "=", "value": 2020}]},
//!  "group_by": ["CLIENT_name"],
//!  "order_by": [{"agg": "sum", "col": "PAYAMOUNT_amount", "desc": true}],
//!  "limit": 5}
//! ```
//!
//! Names are view columns (aliases) as the view wrote them; `of` (a
//! `count_of` plan) names a table instance of the view. Nothing here is
//! checked against a view: [`super::compile`] does that.

use serde::{Deserialize, Serialize};

/// The longest text literal a plan may hold, in characters (the SQL
/// grammar's bound, [`crate::query::grammar::MAX_STRING_CHARS`]).
pub const MAX_TEXT_CHARS: usize = crate::query::grammar::MAX_STRING_CHARS;
/// The longest number literal, in characters.
pub const MAX_NUMBER_CHARS: usize = 24;
/// Select items at most.
pub const MAX_SELECT: usize = 8;
/// GROUP BY columns at most.
pub const MAX_GROUP: usize = 4;
/// ORDER BY items at most.
pub const MAX_ORDER: usize = 3;
/// HAVING conditions at most (joined by AND).
pub const MAX_HAVING: usize = 3;
/// Conditions in one `and` or `or` at most.
pub const MAX_CONDITIONS: usize = 8;
/// Nesting of `and`/`or` at most: a condition, `and`/`or` of conditions,
/// `and`/`or` of those.
pub const MAX_DEPTH: usize = 3;
/// Values of one `in` at most.
pub const MAX_IN: usize = 12;
/// The largest LIMIT.
pub const MAX_LIMIT: u64 = 10_000;
/// The largest N of a per-group top-N.
pub const MAX_TOP: u64 = 100;

/// What shape of query the plan asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanKind {
    /// SELECT … FROM the view WHERE … GROUP BY … HAVING … ORDER BY … LIMIT.
    Query,
    /// The first `top` rows of each group of `per`, by `order_by`.
    TopPerGroup,
    /// The selected rows of one table with no row of another (`without`
    /// names a column of the other): "each client with no payment".
    Without,
    /// How many rows of the table instance `of` (each counted once, by its
    /// key), per `group_by`.
    CountOf,
    /// The plan form cannot express the question: free SQL (`auto`).
    NeedsSql,
}

impl PlanKind {
    /// The kind's JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            PlanKind::Query => "query",
            PlanKind::TopPerGroup => "top_per_group",
            PlanKind::Without => "without",
            PlanKind::CountOf => "count_of",
            PlanKind::NeedsSql => "needs_sql",
        }
    }
}

/// An aggregate function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Agg {
    Count,
    CountDistinct,
    Sum,
    Avg,
    Min,
    Max,
}

impl Agg {
    /// Every aggregate, in the grammar's order.
    pub const ALL: [Agg; 6] = [Agg::Count, Agg::CountDistinct, Agg::Sum, Agg::Avg, Agg::Min, Agg::Max];

    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Agg::Count => "count",
            Agg::CountDistinct => "count_distinct",
            Agg::Sum => "sum",
            Agg::Avg => "avg",
            Agg::Min => "min",
            Agg::Max => "max",
        }
    }

    /// SUM and AVG read a quantity: only a measure column.
    pub fn needs_measure(self) -> bool {
        matches!(self, Agg::Sum | Agg::Avg)
    }

    /// COUNT, SUM and AVG come out wrong over rows the view repeats (MIN,
    /// MAX and COUNT(DISTINCT) do not).
    pub fn counts_repeats(self) -> bool {
        matches!(self, Agg::Count | Agg::Sum | Agg::Avg)
    }
}

/// A select item, an ORDER BY item's expression: a view column, or an
/// aggregate over one (`count` without a column is `COUNT(*)`). A date
/// column's select item may be a `bucket`: the date cut to its year
/// (`YYYY`), month (`YYYY-MM`) or day (`YYYY-MM-DD`), grouped and ordered
/// by that text ("payments per month").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Item {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agg: Option<Agg>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub col: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bucket: Option<DatePart>,
}

impl Item {
    /// A plain column.
    pub fn col(c: &str) -> Self {
        Item { agg: None, col: Some(c.to_string()), bucket: None }
    }

    /// An aggregate over a column.
    pub fn agg(a: Agg, c: &str) -> Self {
        Item { agg: Some(a), col: Some(c.to_string()), bucket: None }
    }

    /// A date column cut to `part` (`YYYY`, `YYYY-MM`, `YYYY-MM-DD`).
    pub fn bucket(c: &str, part: DatePart) -> Self {
        Item { agg: None, col: Some(c.to_string()), bucket: Some(part) }
    }

    /// `COUNT(*)`.
    pub fn count_rows() -> Self {
        Item { agg: Some(Agg::Count), col: None, bucket: None }
    }
}

/// An ORDER BY item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrderItem {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agg: Option<Agg>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub col: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub desc: bool,
}

impl OrderItem {
    /// The item's expression.
    pub fn item(&self) -> Item {
        Item { agg: self.agg, col: self.col.clone(), bucket: None }
    }
}

/// A HAVING condition: an aggregate compared with a number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Having {
    pub agg: Agg,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub col: Option<String>,
    pub op: Op,
    pub value: Literal,
}

/// A literal: a JSON number or string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Literal {
    Number(serde_json::Number),
    Text(String),
}

impl Literal {
    /// The literal as the plan's table shows it.
    pub fn show(&self) -> String {
        match self {
            Literal::Number(n) => n.to_string(),
            Literal::Text(t) => format!("'{t}'"),
        }
    }
}

/// A comparison or test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    #[serde(rename = "=")]
    Eq,
    #[serde(rename = "!=")]
    Ne,
    #[serde(rename = "<")]
    Lt,
    #[serde(rename = "<=")]
    Le,
    #[serde(rename = ">")]
    Gt,
    #[serde(rename = ">=")]
    Ge,
    #[serde(rename = "like")]
    Like,
    #[serde(rename = "not like")]
    NotLike,
    #[serde(rename = "in")]
    In,
    #[serde(rename = "not in")]
    NotIn,
    #[serde(rename = "between")]
    Between,
    #[serde(rename = "is null")]
    IsNull,
    #[serde(rename = "is not null")]
    IsNotNull,
}

impl Op {
    /// The comparisons (`=` … `>=`).
    pub const COMPARISONS: [Op; 6] = [Op::Eq, Op::Ne, Op::Lt, Op::Le, Op::Gt, Op::Ge];

    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Like => "like",
            Op::NotLike => "not like",
            Op::In => "in",
            Op::NotIn => "not in",
            Op::Between => "between",
            Op::IsNull => "is null",
            Op::IsNotNull => "is not null",
        }
    }

    /// The SQL spelling (`<>` for `!=`).
    pub fn sql(self) -> &'static str {
        match self {
            Op::Ne => "<>",
            Op::Like => "LIKE",
            Op::NotLike => "NOT LIKE",
            Op::In => "IN",
            Op::NotIn => "NOT IN",
            Op::Between => "BETWEEN",
            Op::IsNull => "IS NULL",
            Op::IsNotNull => "IS NOT NULL",
            other => other.as_str(),
        }
    }

    /// `=` … `>=`.
    pub fn is_comparison(self) -> bool {
        Op::COMPARISONS.contains(&self)
    }
}

/// The part of a date a condition compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DatePart {
    Year,
    Month,
    Day,
}

impl DatePart {
    /// Every part, in the grammar's order.
    pub const ALL: [DatePart; 3] = [DatePart::Year, DatePart::Month, DatePart::Day];

    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            DatePart::Year => "year",
            DatePart::Month => "month",
            DatePart::Day => "day",
        }
    }
}

/// One condition on a view column: `op` decides which of `value`,
/// `values`, `low`/`high` it reads; `part` compares a date's year, month or
/// day; `other` compares the column with another view column instead of a
/// literal (`col op other [+ plus]`: "a limit greater than the usage by
/// 100", "in their own city").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    pub col: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<DatePart>,
    pub op: Op,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Literal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<Literal>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low: Option<Literal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<Literal>,
    /// Another view column, compared with `col` by `op`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other: Option<String>,
    /// A number added to `other` before comparing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plus: Option<Literal>,
}

impl Condition {
    /// `col op value`.
    pub fn cmp(col: &str, op: Op, value: Literal) -> Self {
        Condition {
            col: col.into(),
            part: None,
            op,
            value: Some(value),
            values: None,
            low: None,
            high: None,
            other: None,
            plus: None,
        }
    }
}

/// A WHERE clause: a condition, or conditions joined by AND or OR.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Filter {
    And { and: Vec<Filter> },
    Or { or: Vec<Filter> },
    Cond(Condition),
}

/// A query plan (see the module's example). Fields a kind does not read
/// stay empty; [`super::compile`] says which a kind needs. The fields are
/// in the order the grammar writes them ([`super::grammar`]), so a plan's
/// JSON is a sentence of its view's grammar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    pub kind: PlanKind,
    /// `count_of`: the table instance whose rows are counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub select: Vec<Item>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub distinct: bool,
    #[serde(default, rename = "where", skip_serializing_if = "Option::is_none")]
    pub filter: Option<Filter>,
    /// `without`: a column of the table the selected rows have no row of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub without: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub group_by: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub having: Vec<Having>,
    /// `top_per_group`: the column whose groups each keep `top` rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order_by: Vec<OrderItem>,
    /// `top_per_group`: how many rows each group keeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
}

impl Plan {
    /// An empty plan of `kind`.
    pub fn new(kind: PlanKind) -> Self {
        Plan {
            kind,
            select: Vec::new(),
            distinct: false,
            filter: None,
            group_by: Vec::new(),
            having: Vec::new(),
            order_by: Vec::new(),
            limit: None,
            per: None,
            top: None,
            without: None,
            of: None,
        }
    }

    /// The plan as compact JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Every number the plan holds: its conditions' and havings' literals
    /// (a text literal that reads as a number too), its limit and top.
    pub fn numbers(&self) -> Vec<f64> {
        fn of(l: &Literal) -> Option<f64> {
            match l {
                Literal::Number(n) => n.as_f64(),
                Literal::Text(t) => t.trim().parse().ok(),
            }
        }
        fn walk(f: &Filter, out: &mut Vec<f64>) {
            match f {
                Filter::And { and: fs } | Filter::Or { or: fs } => fs.iter().for_each(|x| walk(x, out)),
                Filter::Cond(c) => {
                    let lits =
                        c.value.iter().chain(c.values.iter().flatten()).chain(&c.low).chain(&c.high).chain(&c.plus);
                    out.extend(lits.filter_map(of));
                }
            }
        }
        let mut out = Vec::new();
        if let Some(f) = &self.filter {
            walk(f, &mut out);
        }
        out.extend(self.having.iter().filter_map(|h| of(&h.value)));
        out.extend(self.limit.iter().chain(&self.top).map(|&n| n as f64));
        out
    }
}

/// A cut answer (stopped by the repetition stop or the token limit inside
/// its JSON) closed after its last whole value: the text up to the last
/// `}` or `]` that ends an element or member, then the brackets still open,
/// closed. `None` when the answer holds no object, its object is whole, or
/// nothing inside it ended. The grammar decoded the text, so what is kept is
/// a prefix of a plan; what the loop repeated after it is gone.
pub fn close_cut(answer: &str) -> Option<String> {
    let s = &answer[answer.find('{')?..];
    let (mut stack, mut in_str, mut esc) = (Vec::new(), false, false);
    let mut last: Option<(usize, Vec<u8>)> = None;
    for (i, b) in s.bytes().enumerate() {
        if in_str {
            match b {
                _ if esc => esc = false,
                b'\\' => esc = true,
                b'"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'{' | b'[' => stack.push(b),
            b'}' | b']' => {
                stack.pop();
                if stack.is_empty() {
                    return None;
                }
                last = Some((i + 1, stack.clone()));
            }
            _ => {}
        }
    }
    let (end, open) = last?;
    let mut out = s[..end].to_string();
    out.extend(open.iter().rev().map(|&b| if b == b'{' { '}' } else { ']' }));
    Some(out)
}

/// Read a plan from a model's answer: the first JSON object in it (a
/// ```` ```json ```` fence or text around it is skipped). `Err` says what
/// is wrong, for the trace and the fallback.
pub fn parse_answer(answer: &str) -> Result<Plan, String> {
    let start = answer.find('{').ok_or_else(|| "the answer holds no JSON object".to_string())?;
    let mut de = serde_json::Deserializer::from_str(&answer[start..]).into_iter::<serde_json::Value>();
    let value = match de.next() {
        Some(Ok(v)) => v,
        Some(Err(e)) => return Err(format!("the answer's JSON does not parse: {e}")),
        None => return Err("the answer holds no JSON object".into()),
    };
    serde_json::from_value::<Plan>(value).map_err(|e| format!("the answer is not a query plan: {e}"))
}
