//! `lucy model suggest --relationships`: foreign keys proposed from column
//! names alone (no database; `check::inclusion` tests the candidates on the
//! data).
//!
//! A catalog import (Spark, usually) brings tables, columns and types but no
//! relationships, often no primary keys either. The rules here read the
//! names, never a particular schema's spelling:
//!
//! - **Keys** of a table B: its declared primary key; when it declares none,
//!   every column that names a key by itself (`id`, `identifier`, `key`,
//!   `code`, …) or names B and a key (`<B>_id`, `<B>Id`, `<B>_Identifier`,
//!   `<B>_code`, B singular or plural): the key is then *inferred*.
//! - **Reference columns**: a column's name is split into words (at `_`,
//!   other punctuation, digits and case changes); one ending in a key word
//!   (`loc_id`, `Party_Identifier`, `StuID`, `status_code`) or glued to `id`
//!   (`clientid`) references something, unless its stem names its own table
//!   (`Party.Party_Identifier` is Party's own key).
//! - **Matches**, scored, column A.c to key B.k (types compatible, A ≠ B):
//!   c has the name of B.k, a key that names B (`Party_Identifier` →
//!   Party.Party_Identifier, 1.0; a key that names another table, shared by
//!   a subtype: 0.7); c's stem names B (`client_id` → CLIENT.id, 0.9); c's
//!   stem abbreviates B (its letters in order, one piece per word of B, each
//!   piece starting with that word's first letter: `dc` → DATACENTER, `rspool`
//!   → RESOURCEPOOL, `pcd` → Policy_Coverage_Detail; 0.5–0.8, more for more
//!   of B's letters, so `pay_id` picks PAYMENT over PAYAMOUNT); c's stem ends
//!   with B's name after other words (`ship_address_id` → ADDRESS, a role,
//!   0.45). Except for the same-name rule, the key is B's generic key or
//!   B's own `<B>_…` key, and c's key word must agree with it (`id`,
//!   `identifier`, `key` and `pk` with each other; `code`, `no`, `number`, …
//!   only with the same word).
//! - **Composite keys**: a table holding every column of B's declared
//!   composite primary key by name (at least one of them a key-like name)
//!   references B on all of them (0.95).
//!
//! Self-references (`manager_id` → the same table) are not proposed: they
//! need a role name and a second instance, which `suggest_roles` then
//! proposes once the relationship exists. Columns that already hold the
//! foreign key of a declared relationship, and pairs of tables and columns
//! a declared relationship joins (in either direction), are not proposed
//! again. Each reference column keeps its best target (ties: the first
//! table in model order); [`candidates`] lists the others for a caller that
//! tests them on the data.
//!
//! Cardinality from names alone: `1:1` when the columns are the whole
//! declared primary key of their table (a subtype: Premium → Policy_Amount),
//! `M:1` otherwise.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde::Serialize;

use crate::types::{Cardinality, Column, DbModel, Relationship, Table};

/// Key words interchangeable with each other (`client_id` → `CLIENT.Client_Identifier`).
const ID_WORDS: [&str; 4] = ["id", "identifier", "key", "pk"];
/// Key words that match only themselves (`status_code` → `STATUS.code`).
const CODE_WORDS: [&str; 6] = ["code", "no", "nr", "num", "nbr", "number"];

/// Names longer than this (in letters) are not matched as abbreviations.
const MAX_ABBREV_LETTERS: usize = 64;

/// One proposed relationship, as a JSON-patch operation with a reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RelationshipProposal {
    /// Always `"add"`.
    pub op: String,
    /// Always `"/relationships/-"` (append).
    pub path: String,
    pub value: Relationship,
    /// The evidence: names, and values when they were checked.
    pub reason: String,
}

/// How a column's name matched the referenced table and key.
#[derive(Debug, Clone, PartialEq)]
pub enum NameMatch {
    /// The column has the name of the key, and the key names its table.
    SameNameHome,
    /// The column has the name of the key, which names another table (the
    /// key is shared, e.g. by a subtype).
    SameName,
    /// Every column of a composite primary key, by name.
    Composite,
    /// The column's stem is the table's name (singular or plural).
    Stem,
    /// The column's stem abbreviates the table's name; the share of the
    /// table name's letters it keeps.
    Abbreviation(f64),
    /// The column's stem ends with the table's name after other words.
    RoleSuffix,
}

impl NameMatch {
    /// Score of the match (higher is better).
    pub fn score(&self) -> f64 {
        match self {
            NameMatch::SameNameHome => 1.0,
            NameMatch::Composite => 0.95,
            NameMatch::Stem => 0.9,
            NameMatch::SameName => 0.7,
            NameMatch::Abbreviation(share) => 0.5 + 0.3 * share,
            NameMatch::RoleSuffix => 0.45,
        }
    }
}

/// One candidate: `from.from_cols` references `to.to_cols`.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub from: String,
    pub from_cols: Vec<String>,
    pub to: String,
    pub to_cols: Vec<String>,
    pub matched: NameMatch,
    /// The key `to_cols` was inferred from names (the table declares no
    /// primary key): the data must show it unique.
    pub key_inferred: bool,
    /// `from_cols` are the whole declared primary key of `from`.
    pub from_is_key: bool,
    /// `from` has a key of its own (declared, or inferred from names), which
    /// `from_cols` are not: their values being unique in the rows at hand is
    /// a coincidence, not a 1:1.
    pub from_has_own_key: bool,
}

impl Candidate {
    pub fn score(&self) -> f64 {
        self.matched.score()
    }

    /// The evidence from names, e.g. `names: COMPUTE.dc_id ~ DATACENTER.id
    /// (dc abbreviates DATACENTER)`.
    pub fn names_reason(&self) -> String {
        let a = format!("{}.{}", self.from, self.from_cols.join("+"));
        let b = format!("{}.{}", self.to, self.to_cols.join("+"));
        let stem = self.from_cols.first().map(|c| stem_text(c)).unwrap_or_default();
        let how = match &self.matched {
            NameMatch::SameNameHome => "the key's name".to_string(),
            NameMatch::SameName => format!("the name of {}'s key", self.to),
            NameMatch::Composite => format!("every column of {}'s primary key", self.to),
            NameMatch::Stem => format!("{stem} names {}", self.to),
            NameMatch::Abbreviation(_) => format!("{stem} abbreviates {}", self.to),
            NameMatch::RoleSuffix => format!("{stem} ends with {}: a role", self.to),
        };
        let key = if self.key_inferred { "; key inferred from its name" } else { "" };
        format!("names: {a} ~ {b} ({how}{key})")
    }

    /// The unordered pair of sides this candidate joins.
    pub fn pair(&self) -> PairKey {
        pair_key(&self.from, &self.from_cols, &self.to, &self.to_cols)
    }
}

/// The candidates of one reference column (or column set) of a table, best
/// first.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub from: String,
    pub from_cols: Vec<String>,
    pub options: Vec<Candidate>,
}

/// An unordered pair of (table, columns) sides, lower-cased, with the
/// column pairs in a canonical order: the same for a relationship and its
/// reverse.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PairKey(pub String, pub String, pub Vec<(String, String)>);

/// The [`PairKey`] of `a.a_cols` joined to `b.b_cols` (pairwise).
pub fn pair_key(a: &str, a_cols: &[String], b: &str, b_cols: &[String]) -> PairKey {
    let (a, b) = (a.to_lowercase(), b.to_lowercase());
    let mut pairs: Vec<(String, String)> =
        a_cols.iter().zip(b_cols).map(|(x, y)| (x.to_lowercase(), y.to_lowercase())).collect();
    let swap = a > b;
    if swap {
        pairs = pairs.into_iter().map(|(x, y)| (y, x)).collect();
    }
    if a == b {
        pairs = pairs.into_iter().map(|(x, y)| if x > y { (y, x) } else { (x, y) }).collect();
    }
    pairs.sort();
    if swap {
        PairKey(b, a, pairs)
    } else {
        PairKey(a, b, pairs)
    }
}

/// The [`PairKey`] of a declared relationship.
pub fn relationship_key(r: &Relationship) -> PairKey {
    let l: Vec<String> = r.on.iter().map(|p| p[0].clone()).collect();
    let rr: Vec<String> = r.on.iter().map(|p| p[1].clone()).collect();
    pair_key(&r.from, &l, &r.to, &rr)
}

/// The words of a name, lower-cased: [`crate::model::resolve::words`]
/// (split at `_`, punctuation and camel case) without its digit runs, so a
/// digit separates words and is dropped (`StuID` → `stu`, `id`;
/// `RSPOOL2CLIENT` → `rspool`, `client`; `XMLFile` → `xml`, `file`).
pub fn words(name: &str) -> Vec<String> {
    crate::model::resolve::words(name).into_iter().filter(|w| w.starts_with(char::is_alphabetic)).collect()
}

/// A column name read as a reference: the words before the key word, and
/// the key word.
#[derive(Debug, Clone, PartialEq)]
struct Split {
    stem: Vec<String>,
    key_word: Option<String>,
    /// `clientid`: the key word was glued to the stem (trusted only when
    /// the stem is a table's whole name).
    glued: bool,
}

fn is_key_word(w: &str) -> bool {
    ID_WORDS.contains(&w) || CODE_WORDS.contains(&w)
}

fn split(name: &str) -> Split {
    let mut w = words(name);
    match w.last() {
        Some(last) if is_key_word(last) => {
            let key_word = w.pop();
            Split { stem: w, key_word, glued: false }
        }
        Some(last) if last.len() > 2 && last.ends_with("id") => {
            let stem_end = last[..last.len() - 2].to_string();
            w.pop();
            w.push(stem_end);
            Split { stem: w, key_word: Some("id".into()), glued: true }
        }
        _ => Split { stem: w, key_word: None, glued: false },
    }
}

/// The stem of a column name as written for a reason (`dc_id` → `dc`).
fn stem_text(name: &str) -> String {
    split(name).stem.join("_")
}

/// Whether a column's key word can reference a key with key word `k`.
fn key_words_agree(c: &str, k: &str) -> bool {
    c == k || (ID_WORDS.contains(&c) && ID_WORDS.contains(&k))
}

/// A word's singular, roughly (`addresses` → `address`, `companies` →
/// `company`, `clients` → `client`; `address`, `status` stay).
fn singular(s: &str) -> String {
    if let Some(b) = s.strip_suffix("ies") {
        if !b.is_empty() {
            return format!("{b}y");
        }
    }
    for end in ["sses", "xes", "ches", "shes"] {
        if s.ends_with(end) {
            return s[..s.len() - 2].to_string();
        }
    }
    if s.len() > 3 && s.ends_with('s') && !s.ends_with("ss") && !s.ends_with("us") {
        return s[..s.len() - 1].to_string();
    }
    s.to_string()
}

/// How the words `stem` name a table with words `table`.
fn match_stem(stem: &[String], table: &[String], glued: bool) -> Option<NameMatch> {
    let s = stem.concat();
    let t = table.concat();
    if s.is_empty() || t.is_empty() {
        return None;
    }
    if singular(&s) == singular(&t) {
        return Some(NameMatch::Stem);
    }
    if glued {
        return None;
    }
    if stem.len() > table.len() && singular(&stem[stem.len() - table.len()..].concat()) == singular(&t) {
        return Some(NameMatch::RoleSuffix);
    }
    if s.chars().count() >= 2 && s.len() < t.len() && t.len() <= MAX_ABBREV_LETTERS && abbreviates(&s, table) {
        return Some(NameMatch::Abbreviation(s.len() as f64 / t.len() as f64));
    }
    None
}

/// Whether `s` is an abbreviation of the name made of `words`: `s` cut into
/// one piece per word, in order, each piece starting with its word's first
/// letter and the rest of its letters in that word in order.
fn abbreviates(s: &str, words: &[String]) -> bool {
    let s: Vec<char> = s.chars().collect();
    let n = s.len();
    // reach[i]: s[..i] matched by the words so far.
    let mut reach = vec![false; n + 1];
    reach[0] = true;
    for w in words {
        let w: Vec<char> = w.chars().collect();
        let mut next = vec![false; n + 1];
        for i in (0..n).filter(|&i| reach[i]) {
            if s[i] != w[0] {
                continue;
            }
            // Extend the piece s[i..j] greedily as a subsequence of w.
            let mut k = 1;
            next[i + 1] = true;
            for j in i + 1..n {
                while k < w.len() && w[k] != s[j] {
                    k += 1;
                }
                if k == w.len() {
                    break;
                }
                k += 1;
                next[j + 1] = true;
            }
        }
        reach = next;
    }
    reach[n]
}

/// Type families for compatibility; an empty or unknown type matches any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TypeFamily {
    Integer,
    Decimal,
    Float,
    Text,
    Time,
    Bool,
    Binary,
    Unknown,
}

fn type_family(t: &str) -> TypeFamily {
    let t = t.trim().to_lowercase();
    let base: String = t.chars().take_while(|c| c.is_alphabetic() || *c == ' ' || *c == '_').collect();
    let base = base.trim();
    if base.is_empty() {
        return TypeFamily::Unknown;
    }
    let has = |w: &str| base.contains(w);
    if has("int") || has("serial") || base == "long" || base == "short" || base == "byte" {
        TypeFamily::Integer
    } else if has("decimal") || has("numeric") || base == "number" {
        // decimal(p, 0) holds integers.
        match t.split_once(',') {
            Some((_, scale)) if scale.trim().trim_end_matches(')').trim() != "0" => TypeFamily::Decimal,
            _ => TypeFamily::Integer,
        }
    } else if has("real") || has("float") || has("double") {
        TypeFamily::Float
    } else if has("char") || has("text") || has("string") || has("clob") || has("uuid") || has("enum") {
        TypeFamily::Text
    } else if has("date") || has("time") || has("interval") {
        TypeFamily::Time
    } else if has("bool") || base == "bit" {
        TypeFamily::Bool
    } else if has("blob") || has("binary") || has("bytea") {
        TypeFamily::Binary
    } else {
        TypeFamily::Unknown
    }
}

/// Whether a reference column of type `a` may hold the values of a key of type `b`.
pub fn types_compatible(a: &str, b: &str) -> bool {
    let (x, y) = (type_family(a), type_family(b));
    x == y || x == TypeFamily::Unknown || y == TypeFamily::Unknown
}

/// The single-column keys of a table: its declared primary key when it has
/// one column, else (no primary key declared) the inferred ones.
fn single_keys(t: &Table) -> Vec<(&Column, bool)> {
    if !t.primary_key.is_empty() {
        if let [k] = &t.primary_key[..] {
            return column(t, k).map(|c| vec![(c, false)]).unwrap_or_default();
        }
        return Vec::new();
    }
    let tw = words(&t.name);
    t.columns
        .iter()
        .filter(|c| {
            let s = split(&c.name);
            s.key_word.is_some() && (s.stem.is_empty() || match_stem(&s.stem, &tw, s.glued) == Some(NameMatch::Stem))
        })
        .map(|c| (c, true))
        .collect()
}

fn column<'a>(t: &'a Table, name: &str) -> Option<&'a Column> {
    t.columns.iter().find(|c| c.name.eq_ignore_ascii_case(name))
}

fn letters(s: &str) -> String {
    words(s).concat()
}

/// How column `c` (of another table) references key `k` of table `b`, if it does.
fn match_column(c: &Column, bw: &[String], k: &Column) -> Option<NameMatch> {
    let (cs, ks) = (split(&c.name), split(&k.name));
    let ckw = cs.key_word.as_deref()?;
    let kkw = ks.key_word.as_deref()?;
    if !types_compatible(&c.sql_type, &k.sql_type) {
        return None;
    }
    let key_names_b = !ks.stem.is_empty() && match_stem(&ks.stem, bw, ks.glued) == Some(NameMatch::Stem);
    if !ks.stem.is_empty() && letters(&c.name) == letters(&k.name) {
        return Some(if key_names_b { NameMatch::SameNameHome } else { NameMatch::SameName });
    }
    if !(ks.stem.is_empty() || key_names_b) || !key_words_agree(ckw, kkw) {
        return None;
    }
    match_stem(&cs.stem, bw, cs.glued)
}

/// Whether column `c` names its own table `a` (`Party.Party_Identifier`),
/// or no table at all (`id`): then it is no reference.
fn names_own_table(a: &Table, c: &Column) -> bool {
    let s = split(&c.name);
    s.stem.is_empty() || match_stem(&s.stem, &words(&a.name), s.glued) == Some(NameMatch::Stem)
}

fn same_cols(a: &[String], b: &[String]) -> bool {
    let norm = |v: &[String]| {
        let mut v: Vec<String> = v.iter().map(|s| s.to_lowercase()).collect();
        v.sort();
        v
    };
    norm(a) == norm(b)
}

/// Every candidate of `m`, grouped by reference column (or column set),
/// best first; declared relationships and their columns are left out (see
/// the module docs).
pub fn candidates(m: &DbModel) -> Vec<Group> {
    let declared: HashSet<PairKey> = m.relationships.iter().map(relationship_key).collect();
    // (table, column) holding a declared foreign key.
    let mut fk_cols: HashSet<(String, String)> = HashSet::new();
    for r in &m.relationships {
        let (t, side) = match r.cardinality {
            Cardinality::OneToMany => (&r.to, 1),
            _ => (&r.from, 0),
        };
        for p in &r.on {
            fk_cols.insert((t.to_lowercase(), p[side].to_lowercase()));
        }
    }
    let keys: Vec<Vec<(&Column, bool)>> = m.tables.iter().map(single_keys).collect();
    // The tables a column can match, without trying every table (catalogs
    // of thousands): by the first letter of the table's name (a stem or an
    // abbreviation starts with it), and by the letters of its named keys
    // (same-name matches).
    let table_words: Vec<Vec<String>> = m.tables.iter().map(|t| words(&t.name)).collect();
    let mut by_first: HashMap<char, Vec<usize>> = HashMap::new();
    let mut by_key: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, (w, ks)) in table_words.iter().zip(&keys).enumerate() {
        if let Some(f) = w.first().and_then(|x| x.chars().next()) {
            by_first.entry(f).or_default().push(i);
        }
        for (k, _) in ks {
            if !split(&k.name).stem.is_empty() {
                by_key.entry(letters(&k.name)).or_default().push(i);
            }
        }
    }
    let mut groups: Vec<Group> = Vec::new();
    for (a, a_keys) in m.tables.iter().zip(&keys) {
        let own_key = |cols: &[String]| {
            (!a.primary_key.is_empty() && !same_cols(&a.primary_key, cols))
                || a_keys.iter().any(|(k, _)| !cols.iter().any(|c| c.eq_ignore_ascii_case(&k.name)))
        };
        let held = |c: &str| fk_cols.contains(&(a.name.to_lowercase(), c.to_lowercase()));
        let a_is_key = |cols: &[String]| !a.primary_key.is_empty() && same_cols(&a.primary_key, cols);
        // Composite keys held whole.
        for b in m.tables.iter().filter(|b| b.primary_key.len() >= 2 && !b.name.eq_ignore_ascii_case(&a.name)) {
            let Some(cols) = b
                .primary_key
                .iter()
                .map(|k| {
                    let kc = column(b, k)?;
                    column(a, k).filter(|c| types_compatible(&c.sql_type, &kc.sql_type))
                })
                .collect::<Option<Vec<&Column>>>()
            else {
                continue;
            };
            let from_cols: Vec<String> = cols.iter().map(|c| c.name.clone()).collect();
            let to_cols: Vec<String> =
                b.primary_key.iter().filter_map(|k| column(b, k)).map(|c| c.name.clone()).collect();
            if !b.primary_key.iter().any(|k| split(k).key_word.is_some())
                || from_cols.iter().all(|c| held(c))
                || declared.contains(&pair_key(&a.name, &from_cols, &b.name, &to_cols))
            {
                continue;
            }
            groups.push(Group {
                from: a.name.clone(),
                from_cols: from_cols.clone(),
                options: vec![Candidate {
                    from: a.name.clone(),
                    from_is_key: a_is_key(&from_cols),
                    from_has_own_key: own_key(&from_cols),
                    from_cols,
                    to: b.name.clone(),
                    to_cols,
                    matched: NameMatch::Composite,
                    key_inferred: false,
                }],
            });
        }
        for c in &a.columns {
            if held(&c.name) || names_own_table(a, c) {
                continue;
            }
            let cs = split(&c.name);
            if cs.key_word.is_none() {
                continue;
            }
            let mut near: BTreeSet<usize> = BTreeSet::new();
            for w in &cs.stem {
                if let Some(ts) = w.chars().next().and_then(|f| by_first.get(&f)) {
                    near.extend(ts);
                }
            }
            near.extend(by_key.get(&letters(&c.name)).into_iter().flatten());
            let from_cols = vec![c.name.clone()];
            let mut options: Vec<Candidate> = Vec::new();
            for bi in near {
                let (b, bkeys) = (&m.tables[bi], &keys[bi]);
                if b.name.eq_ignore_ascii_case(&a.name) {
                    continue;
                }
                // The best of b's keys for c.
                let best = bkeys
                    .iter()
                    .filter_map(|&(k, inferred)| match_column(c, &table_words[bi], k).map(|mt| (mt, k, inferred)))
                    .max_by(|x, y| x.0.score().total_cmp(&y.0.score()));
                let Some((matched, k, key_inferred)) = best else { continue };
                let to_cols = vec![k.name.clone()];
                if declared.contains(&pair_key(&a.name, &from_cols, &b.name, &to_cols)) {
                    continue;
                }
                options.push(Candidate {
                    from: a.name.clone(),
                    from_cols: from_cols.clone(),
                    to: b.name.clone(),
                    to_cols,
                    matched,
                    key_inferred,
                    from_is_key: a_is_key(&from_cols),
                    from_has_own_key: own_key(&from_cols),
                });
            }
            if options.is_empty() {
                continue;
            }
            // Stable: ties keep model order.
            options.sort_by(|x, y| y.score().total_cmp(&x.score()));
            groups.push(Group { from: a.name.clone(), from_cols, options });
        }
    }
    // A column inside a composite reference to B does not also reference B alone.
    let composite: Vec<(String, Vec<String>, String)> = groups
        .iter()
        .filter(|g| g.from_cols.len() > 1)
        .map(|g| (g.from.clone(), g.from_cols.clone(), g.options[0].to.clone()))
        .collect();
    for g in groups.iter_mut().filter(|g| g.from_cols.len() == 1) {
        g.options.retain(|o| {
            !composite.iter().any(|(a, cols, b)| {
                a == &g.from && b == &o.to && cols.iter().any(|c| c.eq_ignore_ascii_case(&g.from_cols[0]))
            })
        });
    }
    groups.retain(|g| !g.options.is_empty());
    groups
}

/// Cardinality from names: `1:1` when the columns are their table's whole
/// declared primary key.
pub fn names_cardinality(c: &Candidate) -> Cardinality {
    if c.from_is_key {
        Cardinality::OneToOne
    } else {
        Cardinality::ManyToOne
    }
}

/// The proposal for a chosen candidate.
pub fn proposal(c: &Candidate, cardinality: Cardinality, reason: String) -> RelationshipProposal {
    RelationshipProposal {
        op: "add".into(),
        path: "/relationships/-".into(),
        value: Relationship {
            name: None,
            from: c.from.clone(),
            to: c.to.clone(),
            cardinality,
            on: c.from_cols.iter().zip(&c.to_cols).map(|(a, b)| [a.clone(), b.clone()]).collect(),
            description: None,
            role: None,
            role_description: None,
            role_synonyms: Vec::new(),
            via: None,
            origin: None,
        },
        reason,
    }
}

/// Keep the first proposal of each unordered pair of sides (two tables
/// sharing a key may each reference the other).
pub fn dedupe(proposals: Vec<RelationshipProposal>) -> Vec<RelationshipProposal> {
    let mut seen: HashSet<PairKey> = HashSet::new();
    proposals.into_iter().filter(|p| seen.insert(relationship_key(&p.value))).collect()
}

/// Relationships proposed from names alone: each reference column's best
/// candidate.
pub fn suggest_relationships(m: &DbModel) -> Vec<RelationshipProposal> {
    let out = candidates(m)
        .iter()
        .map(|g| {
            let c = &g.options[0];
            let card = names_cardinality(c);
            let mut reason = c.names_reason();
            if card == Cardinality::OneToOne {
                reason.push_str(&format!("; 1:1: {} is {}'s primary key", c.from_cols.join("+"), c.from));
            }
            proposal(c, card, reason)
        })
        .collect();
    dedupe(out)
}

/// Apply relationship proposals to a model (append them).
pub fn apply(model: &mut DbModel, proposals: &[RelationshipProposal]) {
    model.relationships.extend(proposals.iter().map(|p| p.value.clone()));
}

#[cfg(test)]
#[path = "fk_tests.rs"]
mod tests;
