//! Mapping the names an LLM wrote to the names a prompt offered:
//! case-insensitive, then ignoring punctuation, then fuzzy (Jaro-Winkler)
//! for near misses. Every non-trivial mapping is reported as a [`Remap`];
//! everything else is dropped with a warning that says what was dropped
//! and the closest name.

use crate::graph::{RelId, SchemaGraph, TableId};
use crate::types::trace::Remap;

/// Minimum Jaro-Winkler similarity (on normalised names) of a fuzzy match.
pub const FUZZY_MIN: f64 = 0.88;
/// A fuzzy match must beat the runner-up by this much, so that `CPU` does
/// not silently become `CCPU` rather than `RCPU`.
pub const FUZZY_MARGIN: f64 = 0.03;

/// What a prompt offered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Candidate {
    Table(TableId),
    /// A column (by name) of the prompt's subject table.
    Column(String),
    /// An instance of a table (the role question, `link::roles`): the plain
    /// one (`None`) or a role through a relationship, named by
    /// `SchemaGraph::instance_label`.
    Instance(TableId, Option<RelId>),
}

impl Candidate {
    /// Tables and table instances (not columns).
    fn is_table(&self) -> bool {
        !matches!(self, Candidate::Column(_))
    }
}

/// The result of mapping one raw item.
#[derive(Debug, Clone, PartialEq)]
pub enum Mapped {
    /// Index into the candidates, with the remap when the name was changed.
    Hit(usize, Option<Remap>),
    /// Dropped, with the warning to record.
    Dropped(String),
}

/// Maps raw items to the candidates of one prompt.
pub struct Mapper<'a> {
    graph: &'a SchemaGraph,
    subject: Option<TableId>,
    candidates: &'a [Candidate],
    /// At the core-table level an inner table stands for its pattern root.
    inner_to_root: bool,
}

/// Lower-case, alphanumerics only: `Resource_Pool` and `resource pool` → `resourcepool`.
pub fn normalize(s: &str) -> String {
    s.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
}

impl<'a> Mapper<'a> {
    pub fn new(
        graph: &'a SchemaGraph,
        subject: Option<TableId>,
        candidates: &'a [Candidate],
        inner_to_root: bool,
    ) -> Self {
        Mapper { graph, subject, candidates, inner_to_root }
    }

    /// Display name of candidate `i`.
    pub fn name(&self, i: usize) -> String {
        match &self.candidates[i] {
            Candidate::Table(t) => self.graph.name(*t).to_string(),
            Candidate::Instance(t, r) => self.graph.instance_label(*t, *r),
            Candidate::Column(c) => c.clone(),
        }
    }

    fn find_exact(&self, s: &str, want_table: Option<bool>) -> Option<usize> {
        let hit = |i: &usize| {
            let is_table = self.candidates[*i].is_table();
            want_table.is_none_or(|w| w == is_table) && self.name(*i).eq_ignore_ascii_case(s)
        };
        // Tables win over same-named columns (pattern_children offers both).
        let idx: Vec<usize> = (0..self.candidates.len()).filter(hit).collect();
        idx.iter().copied().find(|&i| self.candidates[i].is_table()).or(idx.first().copied())
    }

    fn find_normalized(&self, s: &str) -> Option<usize> {
        let n = normalize(s);
        (!n.is_empty()).then(|| (0..self.candidates.len()).find(|&i| normalize(&self.name(i)) == n)).flatten()
    }

    /// Best and runner-up similarity.
    fn closest(&self, s: &str) -> Option<(usize, f64, f64)> {
        let n = normalize(s);
        let mut scored: Vec<(usize, f64)> =
            (0..self.candidates.len()).map(|i| (i, strsim::jaro_winkler(&n, &normalize(&self.name(i))))).collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let best = scored.first()?;
        Some((best.0, best.1, scored.get(1).map(|x| x.1).unwrap_or(0.0)))
    }

    /// Map one raw item. `exact_only` (answers without list structure)
    /// disables the fuzzy step.
    pub fn map(&self, raw: &str, exact_only: bool) -> Mapped {
        let raw = raw.trim();
        if raw.is_empty() {
            return Mapped::Dropped("dropped an empty item".into());
        }
        if let Some(i) = self.find_exact(raw, None) {
            return Mapped::Hit(i, None);
        }
        // A table instance written another way `Names::instance` reads
        // (`LOCATION@CLIENT`), or its role alone (`CLIENT.loc_id`, `CLIENT`).
        if self.candidates.iter().any(|c| matches!(c, Candidate::Instance(..))) {
            let hit = |s: &str| -> Option<usize> {
                let (t, r) = self.graph.instance(s).ok()?;
                (0..self.candidates.len()).find(|&i| self.candidates[i] == Candidate::Instance(t, r))
            };
            let prefixed = self.subject.map(|t| format!("{}@{raw}", self.graph.name(t)));
            if let Some(i) = hit(raw).or_else(|| prefixed.as_deref().and_then(hit)) {
                return Mapped::Hit(
                    i,
                    Some(Remap { from: raw.into(), to: self.name(i), how: "role".into(), score: None }),
                );
            }
        }
        // `Table.column`: a column of the subject, or a table offered here.
        if let Some((q, c)) = raw.rsplit_once('.') {
            let remap = |i: usize| {
                Some(Remap { from: raw.to_string(), to: self.name(i), how: "qualifier".into(), score: None })
            };
            if self.subject.is_some_and(|s| self.graph.name(s).eq_ignore_ascii_case(q.trim())) {
                if let Some(i) = self.find_exact(c.trim(), Some(false)) {
                    return Mapped::Hit(i, remap(i));
                }
            }
            let q_last = q.rsplit('.').next().unwrap_or(q).trim();
            if let Some(i) = self.find_exact(q_last, Some(true)) {
                return Mapped::Hit(i, remap(i));
            }
            if self.subject.is_none() || !exact_only {
                if let Mapped::Hit(i, r) = self.map(c, true) {
                    if matches!(self.candidates[i], Candidate::Column(_)) {
                        return Mapped::Hit(i, r.or_else(|| remap(i)));
                    }
                }
            }
        }
        if let Some(i) = self.find_normalized(raw) {
            return Mapped::Hit(
                i,
                Some(Remap { from: raw.into(), to: self.name(i), how: "normalized".into(), score: None }),
            );
        }
        if self.inner_to_root {
            if let Some(t) = self.graph.table_id(raw) {
                if let Some(pos) = self.graph.inner_position(t) {
                    let root = pos.root;
                    if let Some(i) = (0..self.candidates.len()).find(|&i| self.candidates[i] == Candidate::Table(root))
                    {
                        return Mapped::Hit(
                            i,
                            Some(Remap {
                                from: raw.into(),
                                to: self.name(i),
                                how: "inner_to_root".into(),
                                score: None,
                            }),
                        );
                    }
                }
            }
        }
        let closest = self.closest(raw);
        if !exact_only {
            if let Some((i, best, second)) = closest {
                if best >= FUZZY_MIN && best - second >= FUZZY_MARGIN {
                    let score = (best * 1000.0).round() / 1000.0;
                    return Mapped::Hit(
                        i,
                        Some(Remap { from: raw.into(), to: self.name(i), how: "fuzzy".into(), score: Some(score) }),
                    );
                }
            }
        }
        Mapped::Dropped(self.drop_message(raw, closest))
    }

    fn drop_message(&self, raw: &str, closest: Option<(usize, f64, f64)>) -> String {
        let offers_tables = self.candidates.iter().any(Candidate::is_table);
        let what = match (offers_tables, self.subject) {
            (true, _) => "unknown table".to_string(),
            (false, Some(s)) => format!("unknown attribute of {}", self.graph.name(s)),
            (false, None) => "unknown name".to_string(),
        };
        let mut msg = format!("dropped {what} `{raw}`");
        if let Some(t) = self.graph.table_id(raw) {
            let t_name = self.graph.name(t);
            msg = match self.graph.inner_position(t) {
                Some(pos) => format!(
                    "dropped `{raw}`: table {t_name} of the model is not offered by this prompt (it is an inner table under {})",
                    self.graph.name(pos.parent)
                ),
                None => format!("dropped `{raw}`: table {t_name} of the model is not offered by this prompt"),
            };
        } else if let Some((i, best, _)) = closest {
            if best >= 0.7 && raw.chars().filter(|c| c.is_alphabetic()).count() >= 3 {
                msg.push_str(&format!(" (did you mean {}?)", self.name(i)));
            }
        }
        msg
    }
}
