//! `lucy view`: GenerateView from the command line.

use std::path::PathBuf;

use super::values::{Dialect, ViewColumns};
use super::{print_json, Ctx};
use lucy::error::{Error, Result};
use lucy::graph::SchemaGraph;
use lucy::types::{ColumnRef, JoinKind, SolveStatus, ViewFilter, ViewRequest};

/// Solve the join walk for the given tables and print the view.
#[derive(Debug, clap::Args)]
pub struct ViewArgs {
    /// dbModel JSON file.
    #[arg(long)]
    pub model: PathBuf,
    /// Relevant table instances, comma-separated (inner pattern tables
    /// allowed): TABLE, or TABLE@ROLE for one more instance of TABLE that
    /// joins through one relationship, e.g. ADDRESS@ship_address,
    /// ADDRESS@ORDERS.ship_address_id, EMPLOYEE@manager. ROLE is the
    /// relationship's role, its name or id, OTHER.column, or the other
    /// table's name (see docs/cli.md).
    #[arg(long, required = true)]
    pub tables: Vec<String>,
    /// Requested attributes `TABLE.column`, comma-separated. Without it the
    /// view keeps every column of the relevant tables.
    #[arg(long, value_delimiter = ',')]
    pub attrs: Vec<String>,
    /// Dialect of the emitted CREATE VIEW.
    #[arg(long, value_enum, default_value_t = Dialect::Sqlite)]
    pub dialect: Dialect,
    /// Time limit for the solve, in seconds.
    #[arg(long = "time-limit", default_value_t = 10.0, value_parser = super::num::seconds)]
    pub time_limit: f64,
    /// Name of the view.
    #[arg(long, default_value = "lucy_view")]
    pub name: String,
    /// Also draw the join path (tables, walk, LEFT JOIN branches, refused
    /// lookups and junctions) as an SVG picture into FILE.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Keep every row of this table: the view starts from it and reaches
    /// every other table by LEFT JOIN (for "for each …" questions).
    #[arg(long, value_name = "TABLE")]
    pub keep: Option<String>,
    /// Join these pattern branches (comma-separated or repeated) by INNER
    /// JOIN instead of LEFT JOIN, with the branches on the way to them: the
    /// view holds only the rows that have one. Ignored with --keep.
    #[arg(long = "inner-branch", value_name = "TABLE")]
    pub inner_branches: Vec<String>,
    /// Keep only the view rows where TABLE.column equals one of the values
    /// (repeatable; `Party_Role.Party_Role_Code=AG` or
    /// `CLIENT.country=IE,FR`); a value that parses as a number is
    /// compared as one. What `lucy ask --lookup-filters named` adds.
    #[arg(long = "filter", value_name = "TABLE.column=VALUE[,VALUE…]", value_parser = parse_filter)]
    pub filters: Vec<ViewFilter>,
    /// Columns of the view: selected (the --attrs and the relevant tables'
    /// keys; every column of a relevant table without --attrs), all
    /// (every column of every table the view joins) or all-once (as all,
    /// but of the columns an INNER join makes equal only the referenced
    /// key; `merged` lists the others).
    #[arg(long, value_enum, value_name = "WHICH", default_value_t = ViewColumns::Selected)]
    pub view_columns: ViewColumns,
}

/// `--filter TABLE.column=VALUE[,VALUE…]`: values that parse as numbers
/// are numbers, the others strings.
fn parse_filter(s: &str) -> std::result::Result<ViewFilter, String> {
    let (col, values) =
        s.split_once('=').ok_or_else(|| format!("`{s}`: write TABLE.column=VALUE (several values comma-separated)"))?;
    let (t, c) = col
        .trim()
        .split_once('.')
        .filter(|(t, c)| !t.is_empty() && !c.is_empty())
        .ok_or_else(|| format!("`{col}`: name the column as TABLE.column"))?;
    let values: Vec<serde_json::Value> = values
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(|v| match v.parse::<i64>() {
            Ok(n) => n.into(),
            Err(_) => match v.parse::<f64>().ok().and_then(serde_json::Number::from_f64) {
                Some(n) => serde_json::Value::Number(n),
                None => v.into(),
            },
        })
        .collect();
    if values.is_empty() {
        return Err(format!("`{s}`: give at least one value after ="));
    }
    Ok(ViewFilter { column: ColumnRef::new(t.trim(), c.trim()), values })
}

pub fn run(args: ViewArgs, ctx: Ctx) -> Result<i32> {
    let model = lucy::model::load(&args.model)?;
    let graph = SchemaGraph::new(model)?;
    let mut attributes = Vec::new();
    for a in args.attrs.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        let c = graph.column_ref(a).map_err(|e| Error::Input(format!("--attrs: {e}")))?;
        let (t, col) = graph.column_names(c);
        attributes.push(ColumnRef::new(t, col));
    }
    let tables: Vec<String> = args.tables.iter().flat_map(|s| split_list(s)).collect();
    let req = ViewRequest {
        tables,
        attributes,
        dialect: args.dialect.into(),
        view_name: args.name.clone(),
        time_limit_s: args.time_limit,
        keep: args.keep.clone(),
        inner_branches: args.inner_branches.iter().flat_map(|s| split_list(s)).collect(),
        filters: args.filters.clone(),
        columns: args.view_columns.into(),
    };
    let res = lucy::solve::generate_view(&graph, &req)?;
    if let Some(path) = &args.svg {
        let picture = lucy::render::view_svg(&res, Some(&graph));
        std::fs::write(path, picture).map_err(|e| Error::io(path, e))?;
    }
    if ctx.json {
        print_json(&res)?;
    } else {
        println!("status: {}", res.status.as_str());
        if res.status == SolveStatus::Infeasible {
            println!("why: {}", res.explanation.as_deref().unwrap_or("(no explanation)"));
        } else {
            println!("walk: {}", res.walk.join(" -> "));
            println!(
                "cost: {} extra table occurrence(s), length {}, {:.1} ms ({})",
                res.objective, res.path_length, res.solve_ms, res.n_bound
            );
            println!("joins:");
            for j in &res.joins {
                let kind = if j.kind == JoinKind::Inner { "INNER" } else { "LEFT " };
                let on: Vec<String> = j.on.iter().map(|p| format!("{} = {}", p[0], p[1])).collect();
                println!("  {kind} {} -> {} ON {}", j.left, j.right, on.join(" AND "));
            }
            for a in &res.ambiguities {
                println!(
                    "ambiguity: {} - {} has {} relationships ({}); chose {}: {}",
                    a.left,
                    a.right,
                    a.candidates.len(),
                    a.candidates.join(", "),
                    a.chosen,
                    a.reason
                );
            }
            for line in lucy::view::grain::describe(&res.grain) {
                println!("{line}");
            }
            if !res.merged.is_empty() {
                println!("left out (an INNER join makes each equal to the view column named):");
                for m in &res.merged {
                    println!("  {}.{} ({}) = {}", m.table, m.column, m.instance, m.same_as);
                }
            }
            if let Some(n) = &res.explanation {
                println!("note: {n}");
            }
            println!();
            println!("{}", res.view_sql);
        }
    }
    Ok(if res.status == SolveStatus::Infeasible { 3 } else { 0 })
}

/// Split a comma-separated `--tables` value, keeping commas inside
/// parentheses (a relationship id of a composite key,
/// `ADDRESS@ORDERS(a,b)->ADDRESS(a,b)`); entries are trimmed, empty ones
/// dropped.
fn split_list(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut cur) = (0usize, String::new());
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out.into_iter().map(|x| x.trim().to_string()).filter(|x| !x.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::{parse_filter, split_list};

    #[test]
    fn tables_split_at_commas_outside_parentheses() {
        assert_eq!(split_list("A, B@r ,,C"), ["A", "B@r", "C"]);
        assert_eq!(split_list("X@T(a,b)->X(c,d),Y"), ["X@T(a,b)->X(c,d)", "Y"]);
    }

    #[test]
    fn filters_parse_numbers_strings_and_lists() {
        let f = parse_filter("Party_Role.Party_Role_Code=AG").unwrap();
        assert_eq!(f.column.to_string(), "Party_Role.Party_Role_Code");
        assert_eq!(f.values, vec![serde_json::json!("AG")]);
        let f = parse_filter(" CLIENT.id = 1, 2.5 ,x ").unwrap();
        assert_eq!(f.values, vec![serde_json::json!(1), serde_json::json!(2.5), serde_json::json!("x")]);
        for bad in ["CLIENT.id", "id=1", ".id=1", "CLIENT.id=", "CLIENT.=1"] {
            assert!(parse_filter(bad).is_err(), "{bad}");
        }
    }
}
