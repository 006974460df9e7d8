//! An enterprise-shaped synthetic dbModel (issue: GenerateView at enterprise
//! scale): hubs (preferential attachment), many lookups, star and snowflake
//! patterns, m:m junctions and parallel relationships (two foreign keys from
//! one table to the same table, e.g. `created_by` / `approved_by`).
//!
//! Deterministic for a seed; every model it writes passes `lucy model check`
//! (`solve_bench --enterprise` builds a `SchemaGraph` from it, which
//! validates).
//!
//! Also the one random connected schema of the benchmarks and tests
//! ([`random_schema`]: `solve_bench`, `deadline_bench`,
//! tests/solve_deadline.rs), the random graphs under it ([`random_tree`],
//! [`add_random_edges`]: also the solver tests'), the relevant sets
//! `solve_bench` and `plan_bench` time ([`queries`]) and the small model
//! builder of `solve_bench`'s hand-made models ([`model_of`]). Included
//! with `#[path]` by each of them.

// Each includer uses a part of this file.
#![allow(dead_code)]

use std::collections::HashSet;

use lucy::graph::SchemaGraph;
use lucy::types::{Cardinality, Column, DbModel, Pattern, PatternNode, Relationship, Table};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Shares of the tables, in percent of `n`.
const LOOKUP_PCT: usize = 4;
const JUNCTION_PCT: usize = 4;
const TREE_ROOT_PCT: usize = 3;

struct Builder {
    tables: Vec<Table>,
    relationships: Vec<Relationship>,
}

impl Builder {
    fn table(&mut self, name: String) -> usize {
        let cols = vec![column("id", "INTEGER", false), column("name", "TEXT", true)];
        self.tables.push(Table {
            name,
            description: None,
            primary_key: vec!["id".into()],
            columns: cols,
            synonyms: Vec::new(),
            origin: None,
            relation: Vec::new(),
        });
        self.tables.len() - 1
    }

    /// A many-to-one foreign key from `from` to `to`; the column is numbered
    /// so that parallel relationships get distinct columns.
    fn fk(&mut self, from: usize, to: usize) {
        let to_name = self.tables[to].name.to_lowercase();
        let k = self.tables[from].columns.iter().filter(|c| c.name.starts_with(&format!("{to_name}_id"))).count();
        let col = if k == 0 { format!("{to_name}_id") } else { format!("{to_name}_id{}", k + 1) };
        self.tables[from].columns.push(column(col.clone(), "INTEGER", true));
        let name = format!("{}_{col}", self.tables[from].name.to_lowercase());
        self.relationships.push(many_to_one(Some(name), &self.tables[from].name, &self.tables[to].name, col));
    }
}

/// An enterprise-shaped model of about `n` tables.
///
/// Layout: `LK*` lookups (reference nothing, referenced by many), `E*` core
/// entities attached by preferential attachment (a few hubs get hundreds of
/// references; 5% of entities hold a second, parallel key to one of their
/// targets), `J*` m:m junctions between two entities, and star/snowflake
/// trees (`R*_C*`, `R*_C*_G*`) hanging off entities.
pub fn enterprise(n: usize, seed: u64) -> DbModel {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut b = Builder { tables: Vec::new(), relationships: Vec::new() };
    let mut patterns = Vec::new();

    let n_lookup = (n * LOOKUP_PCT / 100).max(1);
    let n_junction = n * JUNCTION_PCT / 100;
    let n_roots = (n * TREE_ROOT_PCT / 100).max(1);
    // Each tree has on average ~6 inner tables (see below).
    let n_inner_budget = n_roots * 6;
    let n_entity = n.saturating_sub(n_lookup + n_junction + n_inner_budget).max(2);

    let lookups: Vec<usize> = (0..n_lookup).map(|i| b.table(format!("LK{i:05}"))).collect();
    // Preferential attachment: each new entity references 1–2 earlier ones,
    // chosen proportionally to (references so far + 1).
    let mut entities: Vec<usize> = Vec::new();
    let mut weight: Vec<usize> = Vec::new();
    for i in 0..n_entity {
        let t = b.table(format!("E{i:05}"));
        if !entities.is_empty() {
            let refs = if rng.random_range(0..10) < 3 { 2 } else { 1 };
            let total: usize = weight.iter().sum();
            let mut picked: Vec<usize> = Vec::new();
            for _ in 0..refs {
                let mut x = rng.random_range(0..total);
                let mut j = 0;
                while x >= weight[j] {
                    x -= weight[j];
                    j += 1;
                }
                if !picked.contains(&j) {
                    picked.push(j);
                }
            }
            for &j in &picked {
                b.fk(t, entities[j]);
                weight[j] += 1;
                // A parallel relationship now and then.
                if rng.random_range(0..100) < 5 {
                    b.fk(t, entities[j]);
                }
            }
        }
        // About a third of the entities use a lookup (city, currency, code).
        if rng.random_range(0..3) == 0 {
            b.fk(t, lookups[rng.random_range(0..lookups.len())]);
        }
        entities.push(t);
        weight.push(1);
    }
    // Every lookup is referenced at least twice.
    for (i, &l) in lookups.iter().enumerate() {
        for k in 0..2 {
            let e = entities[(i * 7 + k * 13 + 1) % entities.len()];
            if !b.tables[e].columns.iter().any(|c| c.name == format!("{}_id", b.tables[l].name.to_lowercase())) {
                b.fk(e, l);
            }
        }
    }
    patterns.push(Pattern::Lookup {
        tables: lookups.iter().map(|&l| b.tables[l].name.clone()).collect(),
        description: None,
    });

    // m:m junctions between two distinct entities.
    for i in 0..n_junction {
        let a = entities[rng.random_range(0..entities.len())];
        let mut c = entities[rng.random_range(0..entities.len())];
        if c == a {
            c = entities[(entities.iter().position(|&x| x == a).unwrap_or(0) + 1) % entities.len()];
        }
        let j = b.table(format!("J{i:05}"));
        b.fk(j, a);
        b.fk(j, c);
        patterns.push(Pattern::ManyToMany {
            junction: b.tables[j].name.clone(),
            sides: [b.tables[a].name.clone(), b.tables[c].name.clone()],
            relationships: None,
            description: None,
        });
    }

    // Star / snowflake trees on distinct entities: 2–4 children, and in a
    // snowflake 0–2 grandchildren per child.
    let mut roots: Vec<usize> = entities.clone();
    for i in (1..roots.len()).rev() {
        let j = rng.random_range(0..=i);
        roots.swap(i, j);
    }
    roots.truncate(n_roots);
    for (ri, &root) in roots.iter().enumerate() {
        let snowflake = ri % 2 == 0;
        let mut children = Vec::new();
        for ci in 0..rng.random_range(2..=4) {
            let c = b.table(format!("R{ri:04}_C{ci}"));
            b.fk(c, root);
            let mut grand = Vec::new();
            if snowflake {
                for gi in 0..rng.random_range(0..=2) {
                    let g = b.table(format!("R{ri:04}_C{ci}_G{gi}"));
                    b.fk(g, c);
                    grand.push(PatternNode {
                        table: b.tables[g].name.clone(),
                        children: vec![],
                        relationship: None,
                        exclusive: false,
                    });
                }
            }
            children.push(PatternNode {
                table: b.tables[c].name.clone(),
                children: grand,
                relationship: None,
                exclusive: false,
            });
        }
        let root_name = b.tables[root].name.clone();
        patterns.push(if snowflake {
            Pattern::Snowflake { root: root_name, children, description: None, exclusive: false }
        } else {
            Pattern::Star { root: root_name, children, description: None, exclusive: false }
        });
    }
    DbModel {
        name: format!("enterprise{n}"),
        tables: b.tables,
        relationships: b.relationships,
        patterns,
        ..Default::default()
    }
}

/// Seeded random relevant sets of `size.0..=size.1` core tables: from all
/// core tables, or (with `radius`) from the BFS neighbourhood of a random
/// core table, as a question touches related tables. Shared by
/// `solve_bench` and `plan_bench`, so both time the same requests.
pub fn queries(
    g: &SchemaGraph,
    count: usize,
    size: (usize, usize),
    radius: Option<u32>,
    seed: u64,
) -> Vec<Vec<String>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let core = g.core_tables();
    let mut out = Vec::new();
    while out.len() < count {
        let k = rng.random_range(size.0..=size.1);
        let pool: Vec<usize> = match radius {
            None => core.clone(),
            Some(rad) => {
                let c = core[rng.random_range(0..core.len())];
                let mut dist = vec![u32::MAX; g.len()];
                dist[c] = 0;
                let mut q = std::collections::VecDeque::from([c]);
                while let Some(u) = q.pop_front() {
                    for (v, _) in g.neighbors(u) {
                        if dist[v] == u32::MAX && dist[u] < rad {
                            dist[v] = dist[u] + 1;
                            q.push_back(v);
                        }
                    }
                }
                core.iter().copied().filter(|&t| dist[t] != u32::MAX).collect()
            }
        };
        if pool.len() < k {
            continue;
        }
        let mut pick = pool.clone();
        for i in 0..k {
            let j = rng.random_range(i..pick.len());
            pick.swap(i, j);
        }
        out.push(pick[..k].iter().map(|&t| g.name(t).to_string()).collect());
    }
    out
}

/// A random spanning tree on the nodes `0..n`: node `b` (for `b` = 1 to
/// `n - 1`, in that order) hangs off a node drawn from `0..b`. Returned as
/// the edges `(b, parent)` (node `b` references its parent), `b` ascending.
pub fn random_tree(rng: &mut ChaCha8Rng, n: usize) -> Vec<(usize, usize)> {
    (1..n).map(|b| (b, rng.random_range(0..b))).collect()
}

/// `count` draws of a random pair `(a, b)` of the nodes `0..n` (`a` drawn
/// first), each appended to `edges` (node `a` references node `b`) unless
/// it is a self loop or, with `simple`, a pair `edges` already joins either
/// way round.
pub fn add_random_edges(rng: &mut ChaCha8Rng, n: usize, edges: &mut Vec<(usize, usize)>, count: usize, simple: bool) {
    let mut joined: HashSet<(usize, usize)> =
        if simple { edges.iter().flat_map(|&(a, b)| [(a, b), (b, a)]).collect() } else { HashSet::new() };
    for _ in 0..count {
        let (a, b) = (rng.random_range(0..n), rng.random_range(0..n));
        if a == b || (simple && joined.contains(&(a, b))) {
            continue;
        }
        if simple {
            joined.extend([(a, b), (b, a)]);
        }
        edges.push((a, b));
    }
}

/// A random connected schema of `n` tables `T0000`, `T0001`, … (seeded):
/// a random spanning tree plus `n / 2` further foreign keys (no self or
/// repeated pair; average degree about 3), then `n / 100` lookup draws and
/// `n / 100` tries at an m:m junction (a table whose only key is its
/// parent's, given a second key to a random side; a junction is no side of
/// another m:m, no side a junction, no table a side twice, and no side or
/// junction a lookup). Every table has `id`, `name` and one `<table>_id`
/// column per foreign key.
pub fn random_schema(n: usize, seed: u64) -> DbModel {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let name = |i: usize| format!("T{i:04}");
    let mut edges = random_tree(&mut rng, n);
    add_random_edges(&mut rng, n, &mut edges, n / 2, true);
    let mut refs: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in &edges {
        refs[a].push(b);
    }
    let mut patterns = Vec::new();
    let lookups: Vec<String> = (0..n / 100).map(|_| name(rng.random_range(0..n))).collect();
    let mut used: Vec<usize> = Vec::new();
    let mut sides: Vec<usize> = Vec::new();
    for _ in 0..n / 100 {
        let k = rng.random_range(1..n);
        if refs[k].len() == 1 && !used.contains(&k) && !sides.contains(&k) {
            // Junction k between its parent and a new side.
            let side = (k + 1 + rng.random_range(0..n - 1)) % n;
            if side != refs[k][0]
                && side != k
                && !refs[side].contains(&k)
                && !used.contains(&side)
                && !used.contains(&refs[k][0])
                && !sides.contains(&side)
            {
                sides.push(side);
                sides.push(refs[k][0]);
                refs[k].push(side);
                used.push(k);
                patterns.push(Pattern::ManyToMany {
                    junction: name(k),
                    sides: [name(refs[k][0]), name(side)],
                    relationships: None,
                    description: None,
                });
            }
        }
    }
    let mut lk = lookups;
    lk.sort();
    lk.dedup();
    lk.retain(|l| !used.iter().chain(&sides).any(|&u| &name(u) == l));
    if !lk.is_empty() {
        patterns.push(Pattern::Lookup { tables: lk, description: None });
    }
    let spec: Vec<(String, Vec<String>)> =
        (0..n).map(|i| (name(i), refs[i].iter().map(|&j| name(j)).collect())).collect();
    model_of(&format!("random{n}"), &spec, patterns)
}

/// A model from `(table, referenced tables)` pairs: each table has `id`
/// (the key), `name` and one `<referenced>_id` column per reference, each
/// reference a many-to-one relationship on that column.
pub fn model_of(name: &str, spec: &[(String, Vec<String>)], patterns: Vec<Pattern>) -> DbModel {
    let tables = spec
        .iter()
        .map(|(t, refs)| {
            let mut columns = vec![column("id", "INTEGER", false), column("name", "TEXT", true)];
            columns.extend(refs.iter().map(|r| column(format!("{}_id", r.to_lowercase()), "INTEGER", true)));
            Table {
                name: t.clone(),
                description: None,
                primary_key: vec!["id".into()],
                columns,
                synonyms: Vec::new(),
                origin: None,
                relation: Vec::new(),
            }
        })
        .collect();
    let relationships = spec
        .iter()
        .flat_map(|(t, refs)| refs.iter().map(move |r| many_to_one(None, t, r, format!("{}_id", r.to_lowercase()))))
        .collect();
    DbModel { name: name.into(), tables, relationships, patterns, ..Default::default() }
}

/// The many-to-one relationship from `from` to `to` on `from.col = to.id`.
pub fn many_to_one(name: Option<String>, from: &str, to: &str, col: String) -> Relationship {
    Relationship {
        name,
        from: from.into(),
        to: to.into(),
        cardinality: Cardinality::ManyToOne,
        on: vec![[col, "id".into()]],
        description: None,
        role: None,
        role_description: None,
        role_synonyms: Vec::new(),
        via: None,
        origin: None,
    }
}

/// A column with no description.
fn column(name: impl Into<String>, sql_type: &str, nullable: bool) -> Column {
    Column {
        name: name.into(),
        sql_type: sql_type.into(),
        nullable,
        description: None,
        synonyms: Vec::new(),
        origin: None,
    }
}
