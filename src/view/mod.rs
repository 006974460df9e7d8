//! The summary view (Lucy §3.3 "Summary view", Appendix D.3.1): join the
//! solved walk and the pattern branches along their key columns, keep the
//! requested attributes plus the keys of relevant tables, alias every column
//! `<TABLE>_<column>`, and write `CREATE VIEW` for the requested dialect.

pub mod alias;
pub mod grain;
pub mod joins;
pub mod merge;
pub mod sql;

use std::collections::{BTreeMap, BTreeSet};

use crate::graph::{ColumnId, RelId, SchemaGraph, TableId};
use crate::types::{
    Ambiguity, Dialect, Grain, Instance, InstanceColumn, Join, JoinKind, MergedColumn, RoleInstance, ViewBody,
    ViewColumn,
};

use alias::Aliaser;
use sql::{quote_alias, quote_name, quote_table};

/// What the view builder needs besides the walk.
#[derive(Debug, Clone)]
pub struct ViewSpec<'a> {
    /// Relevant tables (their keys are kept; with no attributes, all columns).
    pub relevant: &'a BTreeSet<TableId>,
    /// Relevant role instances (columns as for relevant tables).
    pub roles: &'a [RoleInstance],
    /// Relevant inner tables, reached by LEFT JOIN branches.
    pub inner: &'a [TableId],
    /// Relevant tables that hang off an m:m junction of the walk, with
    /// their relationship (C3 case b): INNER-joined to the junction.
    pub junction_children: &'a [(TableId, RelId)],
    /// Requested attributes; empty means every column of the relevant tables.
    pub attributes: &'a [ColumnId],
    pub forbidden_rels: &'a BTreeSet<RelId>,
    pub dialect: Dialect,
    pub name: &'a str,
    /// Keep every row of this table: the view starts from its (first)
    /// instance and reaches every other instance by LEFT JOIN.
    pub keep: Option<TableId>,
    /// Pattern branches joined by INNER JOIN instead of LEFT JOIN, with the
    /// branches on the way to them ([`joins::inner_branch`]); ignored with
    /// `keep`.
    pub inner_branches: &'a [TableId],
    /// Row filters: the column (of its table's first plain instance, else
    /// its first instance) and the filter ([`crate::types::ViewFilter`]).
    pub filters: &'a [(ColumnId, crate::types::ViewFilter)],
    /// Expose every column of every instance the view joins (`--view-columns
    /// all`), not only the relevant instances' requested attributes and keys.
    pub all_columns: bool,
    /// Of the columns an INNER join makes equal, keep one (`--view-columns
    /// all-once`, [`merge`]).
    pub merge_equal: bool,
}

/// The built view.
#[derive(Debug, Clone)]
pub struct BuiltView {
    /// Instance aliases in join order.
    pub tables: Vec<String>,
    /// The instances themselves (alias and table id), in join order.
    pub instances: Vec<Instance>,
    pub joins: Vec<Join>,
    pub ambiguities: Vec<Ambiguity>,
    pub columns: Vec<ViewColumn>,
    /// The columns left out because an INNER join makes them equal to a
    /// view column (`merge_equal`).
    pub merged: Vec<MergedColumn>,
    /// `CREATE VIEW` text (`body.create_sql()`).
    pub sql: String,
    /// Instance of every column and the joins that repeat its rows.
    pub grain: Grain,
    /// The view's name and its `SELECT`, apart.
    pub body: ViewBody,
}

/// One node of a solved walk: a table, the relationship of a role instance
/// (`None` for a plain one) and the role's copy (`RoleInstance::copy`).
pub type WalkNode = (TableId, Option<RelId>, u8);

/// Build the view for a solved core walk of plain instances (table ids, in
/// walk order).
pub fn build(graph: &SchemaGraph, walk: &[TableId], spec: &ViewSpec<'_>) -> Result<BuiltView, String> {
    let walk: Vec<WalkNode> = walk.iter().map(|&t| (t, None, 0)).collect();
    build_instances(graph, &walk, spec)
}

/// Build the view for a solved core walk of table instances (a table and,
/// for a role instance, its relationship and copy), in walk order.
pub fn build_instances(graph: &SchemaGraph, walk: &[WalkNode], spec: &ViewSpec<'_>) -> Result<BuiltView, String> {
    let mut jt = joins::build(graph, walk, spec.inner, spec.forbidden_rels)?;
    joins::attach_junction_children(graph, &mut jt, spec.junction_children)?;
    if spec.keep.is_none() {
        for &t in spec.inner_branches {
            if !joins::inner_branch(&mut jt, t) {
                return Err(format!(
                    "inner branch {}: the view does not join it; name a pattern branch the view reaches by LEFT JOIN",
                    graph.name(t)
                ));
            }
        }
    }
    if let Some(k) = spec.keep {
        let root = jt
            .instances
            .iter()
            .position(|i| i.table == k && i.role.is_none())
            .or_else(|| jt.instances.iter().position(|i| i.table == k))
            .ok_or_else(|| format!("the table to keep, {}, is not in the view", graph.name(k)))?;
        joins::reroot(&mut jt, root);
    }
    let d = spec.dialect;
    let inst_ref = |i: usize| &jt.instances[i].alias;
    // Columns: first which ones, then (with `merge_equal`) without those an
    // INNER join makes equal to another one the view shows.
    let mut picked: Vec<(usize, &str)> = Vec::new();
    for (ii, inst) in jt.instances.iter().enumerate() {
        let wanted = spec.all_columns
            || match inst.role {
                None => spec.relevant.contains(&inst.table),
                Some(rel) => spec.roles.contains(&RoleInstance { table: inst.table, rel, copy: inst.copy }),
            };
        if !wanted {
            continue;
        }
        let table = graph.table(inst.table);
        let requested: Vec<&str> = spec
            .attributes
            .iter()
            .filter(|a| a.table == inst.table)
            .map(|a| table.columns[a.column].name.as_str())
            .collect();
        let mut cols: Vec<&str> = Vec::new();
        if spec.all_columns || spec.attributes.is_empty() || (table.primary_key.is_empty() && requested.is_empty()) {
            cols.extend(table.columns.iter().map(|c| c.name.as_str()));
        } else {
            cols.extend(table.primary_key.iter().map(String::as_str));
            for r in requested {
                if !cols.iter().any(|c| c.eq_ignore_ascii_case(r)) {
                    cols.push(r);
                }
            }
        }
        picked.extend(cols.into_iter().map(|c| (ii, c)));
    }
    let slot = |ii: usize, c: &str| {
        graph.names().column(jt.instances[ii].table, c).map(|column| InstanceColumn { instance: ii, column })
    };
    let mut left_out: BTreeMap<InstanceColumn, InstanceColumn> = BTreeMap::new();
    if spec.merge_equal {
        let shown: BTreeSet<InstanceColumn> = picked.iter().filter_map(|&(ii, c)| slot(ii, c)).collect();
        left_out = merge::stand_ins(graph, &jt)
            .into_iter()
            .filter(|(gone, keep)| shown.contains(gone) && shown.contains(keep))
            .collect();
    }
    let mut aliaser = Aliaser::new();
    let mut columns = Vec::new();
    let mut select = Vec::new();
    let mut col_inst: Vec<usize> = Vec::new();
    let mut alias_of: BTreeMap<InstanceColumn, String> = BTreeMap::new();
    for &(ii, c) in &picked {
        if slot(ii, c).is_some_and(|s| left_out.contains_key(&s)) {
            continue;
        }
        let inst = &jt.instances[ii];
        let table = graph.table(inst.table);
        let role_note = inst.role.map(|r| role_note(graph, inst.table, r));
        let alias = aliaser.alias(&inst.alias, c);
        if let Some(s) = slot(ii, c) {
            alias_of.insert(s, alias.clone());
        }
        select.push(format!(
            "  {}.{} AS {}",
            quote_name_or_alias(graph, inst.table, &inst.alias, d),
            quote_name(c, d),
            quote_alias(&alias, d)
        ));
        col_inst.push(ii);
        columns.push(ViewColumn {
            alias,
            table: table.name.clone(),
            column: c.to_string(),
            description: match (&role_note, table.column(c).and_then(|x| x.description.clone())) {
                (Some(n), Some(d)) => Some(format!("{n} — {d}")),
                (Some(n), None) => Some(n.clone()),
                (None, d) => d,
            },
            note: role_note,
        });
    }
    // Each column left out, with its instance's index.
    let merged_at: Vec<(usize, MergedColumn)> = left_out
        .iter()
        .filter_map(|(gone, keep)| {
            let inst = &jt.instances[gone.instance];
            let (_, column) = graph.column_names(gone.column);
            let m = MergedColumn {
                instance: inst.alias.clone(),
                table: graph.name(inst.table).to_string(),
                column: column.to_string(),
                same_as: alias_of.get(keep)?.clone(),
            };
            Some((gone.instance, m))
        })
        .collect();
    // FROM and joins.
    let first = &jt.instances[0];
    let mut from = vec![format!("FROM {}", table_ref(graph, first.table, &first.alias, d))];
    let mut out_joins = Vec::new();
    for j in &jt.joins {
        let (lt, rt) = (jt.instances[j.left].table, jt.instances[j.right].table);
        let rel = graph.relationship(j.rel);
        let left_from = joins::left_is_from(graph, &jt, j);
        let pairs: Vec<(String, String)> = rel
            .on
            .iter()
            .map(|p| if left_from { (p[0].clone(), p[1].clone()) } else { (p[1].clone(), p[0].clone()) })
            .collect();
        // Validation guarantees every join column exists.
        let id_pairs: Vec<[InstanceColumn; 2]> = pairs
            .iter()
            .filter_map(|(a, b)| {
                let l = graph.names().column(lt, a)?;
                let r = graph.names().column(rt, b)?;
                Some([InstanceColumn { instance: j.left, column: l }, InstanceColumn { instance: j.right, column: r }])
            })
            .collect();
        let cond: Vec<String> = pairs
            .iter()
            .map(|(a, b)| {
                format!(
                    "{}.{} = {}.{}",
                    quote_name_or_alias(graph, lt, inst_ref(j.left), d),
                    quote_name(a, d),
                    quote_name_or_alias(graph, rt, inst_ref(j.right), d),
                    quote_name(b, d)
                )
            })
            .collect();
        let kw = match j.kind {
            JoinKind::Inner => "INNER JOIN",
            JoinKind::Left => "LEFT JOIN",
        };
        from.push(format!("  {kw} {} ON {}", table_ref(graph, rt, inst_ref(j.right), d), cond.join(" AND ")));
        out_joins.push(Join {
            left: inst_ref(j.left).clone(),
            right: inst_ref(j.right).clone(),
            kind: j.kind,
            on: pairs
                .iter()
                .map(|(a, b)| [format!("{}.{a}", inst_ref(j.left)), format!("{}.{b}", inst_ref(j.right))])
                .collect(),
            relationship: rel.id(),
            pairs: id_pairs,
            rel: Some(j.rel),
        });
    }
    let mut conds = Vec::new();
    for (c, f) in spec.filters {
        let ii = jt
            .instances
            .iter()
            .position(|i| i.table == c.table && i.role.is_none())
            .or_else(|| jt.instances.iter().position(|i| i.table == c.table))
            .ok_or_else(|| {
                let (t, col) = graph.column_names(*c);
                format!("filter {t}.{col}: the view does not join {t}; filter a table the view holds")
            })?;
        let (t, col) = graph.column_names(*c);
        let column_sql =
            format!("{}.{}", quote_name_or_alias(graph, c.table, &jt.instances[ii].alias, d), quote_name(col, d));
        conds.push(f.condition(&column_sql).ok_or_else(|| format!("filter {t}.{col}: give strings or numbers"))?);
    }
    if !conds.is_empty() {
        from.push(format!("WHERE {}", conds.join(" AND ")));
    }
    let body = ViewBody {
        name: quote_alias(spec.name, d),
        select: format!("SELECT\n{}\n{}", select.join(",\n"), from.join("\n")),
    };
    let built_cols: Vec<grain::BuiltColumn<'_>> = columns
        .iter()
        .zip(&col_inst)
        .map(|(c, &i)| grain::BuiltColumn { alias: &c.alias, instance: i, column: &c.column })
        .collect();
    // A key left out is still in the view under its stand-in's name.
    let stand_in_cols: Vec<grain::BuiltColumn<'_>> = merged_at
        .iter()
        .map(|(i, m)| grain::BuiltColumn { alias: &m.same_as, instance: *i, column: &m.column })
        .collect();
    let grain = grain::of_view(graph, &jt, &built_cols, &stand_in_cols);
    Ok(BuiltView {
        tables: jt.instances.iter().map(|i| i.alias.clone()).collect(),
        instances: jt.instances,
        joins: out_joins,
        ambiguities: jt.ambiguities,
        columns,
        merged: merged_at.into_iter().map(|(_, m)| m).collect(),
        sql: body.create_sql(),
        grain,
        body,
    })
}

/// What a role instance's columns hold, for their descriptions (QueryView's
/// prompt shows them): `ADDRESS as ship_address: the address the order
/// ships to`, or the relationship it joins through when no role is declared.
fn role_note(graph: &SchemaGraph, t: TableId, rel: RelId) -> String {
    let r = graph.relationship(rel);
    let head = match (&r.role, graph.subtype_child(t, rel)) {
        (Some(role), _) => format!("{} as {role}", graph.name(t)),
        // A subtype instance: the rows of one kind.
        (None, Some(child)) => format!("{} that is a {}", graph.name(t), graph.name(child)),
        (None, None) => format!("{} joined through {}", graph.name(t), r.id()),
    };
    match r.role_description.as_ref().or(r.description.as_ref()) {
        Some(d) => format!("{head}: {d}"),
        None => head,
    }
}

/// `TABLE` or `TABLE AS TABLE_2` for a second instance.
/// A table with a `relation` (`marts.orders`) is always aliased by its
/// name, so columns are qualified the same way with or without one.
fn table_ref(graph: &SchemaGraph, t: TableId, alias: &str, d: Dialect) -> String {
    let table = graph.table(t);
    let from = quote_table(table, d);
    if table.name != alias {
        format!("{from} AS {}", quote_alias(alias, d))
    } else if !table.relation.is_empty() {
        format!("{from} AS {}", quote_name(alias, d))
    } else {
        from
    }
}

/// How columns of an instance are qualified: the table name for the first
/// instance, the instance alias otherwise.
fn quote_name_or_alias(graph: &SchemaGraph, t: TableId, alias: &str, d: Dialect) -> String {
    if graph.name(t) == alias {
        quote_name(alias, d)
    } else {
        quote_alias(alias, d)
    }
}
