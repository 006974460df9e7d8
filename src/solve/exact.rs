//! The combinatorial exact solver: a shortest-path search over walk states
//! (node, predecessor where C3/C4 need it, relevant tables visited, m:m
//! bookkeeping) ordered by the lexicographic objective (cost, length).
//!
//! Because the objective is additive and the state captures everything the
//! constraints look at, the first accepting state popped is optimal over
//! walks of *any* length: this is what proves the MILP's n sufficient. With
//! `max_len` the length joins the state and the search is the layered DP
//! over walks of at most that many tables (the brute-force suites compare it
//! with the MILP at the same n).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::Instant;

pub use super::distance::cost_distances;
use super::distance::{held_karp, plain_distances, INF, SUBSET_DP_MAX};
use super::problem::CoreProblem;

/// Outcome of the exact search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExactOutcome {
    /// Optimal walk (node indices), with its (cost, length).
    Optimal { walk: Vec<usize>, cost: usize, len: usize },
    /// Every state was explored: no valid walk exists (of any length, or of
    /// at most `max_len` tables).
    Infeasible,
    /// The state budget, the deadline or the bookkeeping limits were hit.
    GaveUp(String),
}

/// Limits of the search.
#[derive(Debug, Clone, Copy)]
pub struct ExactLimits {
    pub max_states: usize,
    pub deadline: Option<Instant>,
}

impl Default for ExactLimits {
    fn default() -> Self {
        ExactLimits { max_states: 2_000_000, deadline: None }
    }
}

const NONE: u32 = u32::MAX;
// Per-junction bookkeeping, 4 bits: seen side 0, seen side 1, occurrences
// (0 none, 1 one occurrence that is or will be interior, 2 unusable).
const SEEN0: u8 = 1;
const SEEN1: u8 = 2;
const OCC_ONE: u8 = 4;
const OCC_BAD: u8 = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct State {
    node: u32,
    prev: u32,
    len: u32,
    mask: u64,
    jst: u128,
}

fn jget(j: u128, q: usize) -> u8 {
    ((j >> (4 * q)) & 0xF) as u8
}

fn jset(j: u128, q: usize, v: u8) -> u128 {
    (j & !(0xFu128 << (4 * q))) | ((v as u128) << (4 * q))
}

/// Solve exactly. `max_len`: only walks of at most that many tables.
pub fn solve_exact(p: &CoreProblem, max_len: Option<usize>, limits: ExactLimits) -> ExactOutcome {
    let rel = p.relevant_nodes();
    if rel.len() > 64 {
        return ExactOutcome::GaveUp("more than 64 relevant tables".into());
    }
    let juncs: Vec<_> = if p.c3 { p.junctions.clone() } else { Vec::new() };
    if juncs.len() > 32 {
        return ExactOutcome::GaveUp("more than 32 m:m patterns in the reduced graph".into());
    }
    if rel.is_empty() {
        return ExactOutcome::Infeasible;
    }
    let n = p.len();
    let mut bit = vec![0u64; n];
    for (k, &t) in rel.iter().enumerate() {
        bit[t] = 1u64 << k;
    }
    let full: u64 = if rel.len() == 64 { u64::MAX } else { (1u64 << rel.len()) - 1 };
    // Needs the predecessor remembered: C4 lookups and C3 junctions.
    let special: Vec<bool> = (0..n).map(|i| p.is_active_lookup(i) || p.is_active_junction(i)).collect();
    // A* heuristic, lexicographic (cost, length), consistent along edges:
    // the remaining walk visits every unvisited relevant table, so it needs
    // at least the cheapest tour over them in the metric closure of plain
    // distances (length) and of "tables outside T in between" (cost).
    let heur = Heuristic::new(p, &rel);
    let h = |node: usize, mask: u64| -> (u32, u32) { heur.eval(node, full & !mask) };
    let enter = |jst: u128, v: usize, first: bool| -> u128 {
        let mut j = jst;
        for (q, jn) in juncs.iter().enumerate() {
            let mut s = jget(j, q);
            if v == jn.sides[0] {
                s |= SEEN0;
            }
            if v == jn.sides[1] {
                s |= SEEN1;
            }
            if v == jn.k {
                if first || s & (OCC_ONE | OCC_BAD) != 0 {
                    s = (s & (SEEN0 | SEEN1)) | OCC_BAD;
                } else {
                    s |= OCC_ONE;
                }
            }
            j = jset(j, q, s);
        }
        j
    };
    // Junctions between the same two sides (C3 asks for one of them).
    let groups: Vec<Vec<usize>> = if p.c3 { (0..juncs.len()).map(|q| p.junction_group(q)).collect() } else { Vec::new() };
    let accept = |st: &State| -> bool {
        if st.mask != full {
            return false;
        }
        for (q, jn) in juncs.iter().enumerate() {
            let s = jget(st.jst, q);
            if s & SEEN0 != 0 && s & SEEN1 != 0 {
                // An occurring junction occurs once, interior (not the last
                // table); one that does not occur needs another of its group.
                if s & OCC_BAD != 0 || (s & OCC_ONE != 0 && st.node as usize == jn.k) {
                    return false;
                }
                if s & OCC_ONE == 0
                    && !groups[q].iter().any(|&o| o != q && jget(st.jst, o) & OCC_ONE != 0 && st.node as usize != juncs[o].k)
                {
                    return false;
                }
            }
        }
        true
    };

    // (cost + hc, len + hl, deeper first, cost, len)
    type Key = (u32, u32, u32, u32, u32);
    let mut heap: BinaryHeap<Reverse<(Key, usize)>> = BinaryHeap::new();
    let mut states: Vec<State> = Vec::new();
    let mut parent: Vec<usize> = Vec::new();
    let mut best: HashMap<State, (u32, u32)> = HashMap::new();
    let bounded = max_len.is_some();
    let cap = max_len.unwrap_or(usize::MAX) as u32;
    for s in 0..n {
        if cap == 0 {
            break;
        }
        let st = State {
            node: s as u32,
            prev: NONE,
            len: if bounded { 1 } else { 0 },
            mask: bit[s],
            jst: enter(0, s, true),
        };
        let cost = (!p.relevant[s]) as u32;
        let hv = h(s, st.mask);
        if hv.1 >= INF {
            continue;
        }
        if best.get(&st).is_some_and(|&b| b <= (cost, 1)) {
            continue;
        }
        best.insert(st, (cost, 1));
        states.push(st);
        parent.push(usize::MAX);
        heap.push(Reverse(((cost + hv.0, 1 + hv.1, u32::MAX - 1, cost, 1), states.len() - 1)));
    }
    let mut popped = 0usize;
    while let Some(Reverse(((_, _, _, cost, len), idx))) = heap.pop() {
        let st = states[idx];
        if best.get(&st).is_some_and(|&b| b < (cost, len)) {
            continue;
        }
        popped += 1;
        if popped > limits.max_states {
            return ExactOutcome::GaveUp(format!("state budget of {} exhausted", limits.max_states));
        }
        if popped % 1024 == 0 && limits.deadline.is_some_and(|d| Instant::now() >= d) {
            return ExactOutcome::GaveUp("time limit".into());
        }
        if accept(&st) {
            let mut walk = Vec::new();
            let mut i = idx;
            while i != usize::MAX {
                walk.push(states[i].node as usize);
                i = parent[i];
            }
            walk.reverse();
            return ExactOutcome::Optimal { walk, cost: cost as usize, len: len as usize };
        }
        if len >= cap {
            continue;
        }
        let u = st.node as usize;
        let prev = if st.prev == NONE { None } else { Some(st.prev as usize) };
        for &v in &p.adj[u] {
            if special[u] && !p.step_allowed(prev, u, v) {
                continue;
            }
            let mask = st.mask | bit[v];
            let hv = h(v, mask);
            if hv.1 >= INF {
                continue;
            }
            let ns = State {
                node: v as u32,
                prev: if special[v] { u as u32 } else { 0 },
                len: if bounded { len + 1 } else { 0 },
                mask,
                jst: enter(st.jst, v, false),
            };
            let nc = cost + (!p.relevant[v]) as u32;
            let nl = len + 1;
            if best.get(&ns).is_some_and(|&b| b <= (nc, nl)) {
                continue;
            }
            best.insert(ns, (nc, nl));
            states.push(ns);
            parent.push(idx);
            heap.push(Reverse(((nc + hv.0, nl + hv.1, u32::MAX - nl, nc, nl), states.len() - 1)));
        }
    }
    ExactOutcome::Infeasible
}

/// Lower bounds on the rest of a walk from a node that still has to visit a
/// set U of relevant tables: min over the first table t in U of
/// dist(node, t) + tour(U starting at t), for both objective components.
struct Heuristic {
    /// Per relevant k: plain distance and cost distance from every node.
    len_d: Vec<Vec<u32>>,
    cost_d: Vec<Vec<u32>>,
    /// Held–Karp tables over subsets (|T| ≤ 12), else None (max bound).
    len_h: Option<Vec<Vec<u32>>>,
    cost_h: Option<Vec<Vec<u32>>>,
}

impl Heuristic {
    fn new(p: &CoreProblem, rel: &[usize]) -> Self {
        let len_d: Vec<Vec<u32>> = rel.iter().map(|&t| plain_distances(p, t)).collect();
        let cost_d: Vec<Vec<u32>> = rel.iter().map(|&t| cost_distances(p, t)).collect();
        let k = rel.len();
        let (len_h, cost_h) = if k <= SUBSET_DP_MAX {
            let tour = |d: &Vec<Vec<u32>>| held_karp(k, |a, b| d[b][rel[a]]);
            (Some(tour(&len_d)), Some(tour(&cost_d)))
        } else {
            (None, None)
        };
        Heuristic { len_d, cost_d, len_h, cost_h }
    }

    /// (cost, length) lower bound from `node` with unvisited set `u`.
    fn eval(&self, node: usize, u: u64) -> (u32, u32) {
        if u == 0 {
            return (0, 0);
        }
        let one = |d: &Vec<Vec<u32>>, h: &Option<Vec<Vec<u32>>>| -> u32 {
            let mut best = INF;
            let mut worst = 0;
            for (k, dk) in d.iter().enumerate() {
                if u & (1u64 << k) == 0 {
                    continue;
                }
                worst = worst.max(dk[node]);
                if let Some(h) = h {
                    let tour = h[u as usize][k];
                    if tour < INF && dk[node] < INF {
                        best = best.min(dk[node] + tour);
                    }
                }
            }
            if h.is_some() {
                best
            } else {
                worst
            }
        };
        (one(&self.cost_d, &self.cost_h), one(&self.len_d, &self.len_h))
    }
}
