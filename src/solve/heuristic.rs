//! The exact search's A* lower bounds: from a node that still has to visit a
//! set U of relevant tables, how much (cost, length) the rest of any valid
//! walk needs at least.
//!
//! Up to `SUBSET_DP_MAX` relevant tables on a curated-size graph: min over
//! the first table t in U of dist(node, t) + the cheapest chain over U from
//! t (Held–Karp), over plain distances. Large requests ([`super::exact`]'s
//! `is_large`) work over distances that never pass through a lookup (C4) and
//! take the largest of:
//! - the same Held–Karp bound over U ∩ S for a part S of at most
//!   `SUBSET_DP_PART` tables chosen far apart;
//! - when S is not all of T, min over t of dist(node, t) + the minimum
//!   spanning tree of U in the metric closure (a walk covering U contains a
//!   spanning path of U, which weighs at least the MST; memoised per U);
//! - the farthest table of U;
//! - the **spur bound**, when U holds lookups: C4 lets a walk visit a lookup
//!   L only as a spur X → L → X (or as its first or last table), so
//!   deleting one L and the X after it from every spur leaves a walk over
//!   U's other tables that is 2 tables shorter per lookup (1 for a lookup
//!   that ends the walk) and [X ∉ T] cheaper. Over U without its lookups the
//!   bounds above apply, plus 2 per lookup (minus 1) and the cheapest X per
//!   lookup (minus the largest). In the distances to L itself, L's
//!   neighbours are one step apart from each other, so a chain through L
//!   jumps between any two of them for 2 steps: the spur bound is what rules
//!   that out where lookups are hubs.

use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;

use super::distance::{cost_distances, cost_distances_rules, distances, held_karp, plain_distances, INF};
use super::problem::{CoreProblem, StepRules};

/// Relevant-set sizes above `SUBSET_DP_MAX` get Held–Karp over at most
/// this many of their tables (a walk covering U covers any part of it).
pub(super) const SUBSET_DP_PART: usize = 16;

/// Lower bounds for the exact search (see the module docs).
pub(super) struct Heuristic {
    /// Number of relevant tables.
    k: usize,
    /// Node-major (lower-bound) distance and cost distance from every node
    /// to each relevant table: `len_col[node * k + r]` (one evaluation reads
    /// one contiguous row).
    len_col: Vec<u32>,
    cost_col: Vec<u32>,
    /// The same between relevant tables: `len_rr[a][b]` from a to b.
    len_rr: Vec<Vec<u32>>,
    cost_rr: Vec<Vec<u32>>,
    /// Whether the large-request bounds are used.
    large: bool,
    /// The chain bound over all relevant tables.
    all: Chain,
    /// The spur bound: the chain over the relevant tables that are not
    /// lookups, and per relevant lookup its spur's (cost, length).
    spur: Option<(Chain, Vec<(usize, (u32, u32))>)>,
}

/// Held–Karp (and MST) over some of the relevant tables.
struct Chain {
    /// The relevant tables (indices into `rel`) this chain is over, as a mask.
    members: u64,
    /// The ones Held–Karp covers: all members up to `SUBSET_DP_PART`, else a part.
    part: Vec<usize>,
    /// Held–Karp tables over subsets of `part` (indexed by part bits).
    len_h: Vec<Vec<u32>>,
    cost_h: Vec<Vec<u32>>,
    /// MST weights (cost, length) per unvisited set.
    mst: RefCell<HashMap<u64, (u32, u32)>>,
}

impl Heuristic {
    /// Bounds for relevant tables `rel`; `large`: the large-request bounds
    /// (over distances that keep `rules`).
    pub(super) fn new(p: &CoreProblem, rules: &StepRules, rel: &[usize], large: bool) -> Self {
        let (len_d, cost_d): (Vec<Vec<u32>>, Vec<Vec<u32>>) = if large {
            (
                rel.iter().map(|&t| distances(p, t)).collect(),
                rel.iter().map(|&t| cost_distances_rules(p, rules, t)).collect(),
            )
        } else {
            (rel.iter().map(|&t| plain_distances(p, t)).collect(), rel.iter().map(|&t| cost_distances(p, t)).collect())
        };
        let k = rel.len();
        let column = |d: &[Vec<u32>]| -> Vec<u32> {
            let mut col = vec![INF; p.len() * k];
            for (r, dr) in d.iter().enumerate() {
                for (node, &v) in dr.iter().enumerate() {
                    col[node * k + r] = v;
                }
            }
            col
        };
        let between =
            |d: &[Vec<u32>]| -> Vec<Vec<u32>> { (0..k).map(|a| (0..k).map(|b| d[a][rel[b]]).collect()).collect() };
        let (len_col, cost_col, len_rr, cost_rr) = (column(&len_d), column(&cost_d), between(&len_d), between(&cost_d));
        drop((len_d, cost_d));
        let everyone: Vec<usize> = (0..k).collect();
        let all = Chain::new(&everyone, &len_rr, &cost_rr);
        let lookups: Vec<usize> = everyone.iter().copied().filter(|&k| p.is_active_lookup(rel[k])).collect();
        let spur = (large && !lookups.is_empty()).then(|| {
            let others: Vec<usize> = everyone.iter().copied().filter(|k| !lookups.contains(k)).collect();
            let spurs = lookups
                .iter()
                .map(|&k| {
                    // The X a spur returns to: free when one is relevant.
                    let x_cost = p.adj[rel[k]].iter().map(|&x| (!p.relevant[x]) as u32).min().unwrap_or(INF);
                    (k, (x_cost, 2))
                })
                .collect();
            (Chain::new(&others, &len_rr, &cost_rr), spurs)
        });
        Heuristic { k, len_col, cost_col, len_rr, cost_rr, large, all, spur }
    }

    /// (cost, length) lower bound from `node` with unvisited set `u` (bits
    /// over `rel`).
    pub(super) fn eval(&self, node: usize, u: u64) -> (u32, u32) {
        if u == 0 {
            return (0, 0);
        }
        let row = node * self.k..(node + 1) * self.k;
        let (lc, cc) = (&self.len_col[row.clone()], &self.cost_col[row]);
        let mut h = self.all.eval(self, lc, cc, u);
        if let Some((chain, spurs)) = &self.spur {
            let mut added = (0u32, 0u32);
            let mut last = (0u32, 0u32);
            for &(k, (c, l)) in spurs {
                if u & (1u64 << k) != 0 {
                    if c >= INF {
                        return (INF, INF);
                    }
                    added = (added.0 + c, added.1 + l);
                    // The spur that ends the walk saves L's return step.
                    last = (last.0.max(c), last.1.max(1));
                }
            }
            if added.1 > 0 {
                let rest = chain.eval(self, lc, cc, u & chain.members);
                if rest.0 >= INF || rest.1 >= INF {
                    return (INF, INF);
                }
                h.0 = h.0.max(rest.0 + added.0 - last.0);
                h.1 = h.1.max(rest.1 + added.1 - last.1);
            }
        }
        h
    }
}

impl Chain {
    /// Over `members` (indices of relevant tables), with the distances
    /// between relevant tables.
    fn new(members: &[usize], len_rr: &[Vec<u32>], cost_rr: &[Vec<u32>]) -> Self {
        let part: Vec<usize> = if members.len() <= SUBSET_DP_PART {
            members.to_vec()
        } else {
            // Farthest-point choice: the part spreads over the request.
            let mut part = vec![members[0]];
            let mut near: Vec<u32> = members.iter().map(|&b| len_rr[members[0]][b]).collect();
            while part.len() < SUBSET_DP_PART {
                let Some(i) = (0..members.len())
                    .filter(|&i| !part.contains(&members[i]))
                    .max_by_key(|&i| (near[i].min(INF), std::cmp::Reverse(members[i])))
                else {
                    break;
                };
                let next = members[i];
                part.push(next);
                for (j, &b) in members.iter().enumerate() {
                    near[j] = near[j].min(len_rr[next][b]);
                }
            }
            part
        };
        // Extending a chain whose last table is a by b costs the distance
        // between them (read backwards: a tour starting at b).
        let tour = |d: &[Vec<u32>]| held_karp(part.len(), |a, b| d[part[b]][part[a]]);
        let (len_h, cost_h) =
            if part.is_empty() { (vec![vec![]], vec![vec![]]) } else { (tour(len_rr), tour(cost_rr)) };
        let members = members.iter().fold(0u64, |m, &k| m | 1u64 << k);
        Chain { members, part, len_h, cost_h, mst: RefCell::new(HashMap::default()) }
    }

    /// Minimum spanning tree weight of the relevant tables in `u` under the
    /// distances `d` (Prim, O(|u|²)); `INF` when they are not connected.
    fn mst_of(rr: &[Vec<u32>], u: u64) -> u32 {
        let members: Vec<usize> = (0..rr.len()).filter(|&k| u & (1u64 << k) != 0).collect();
        let m = members.len();
        if m <= 1 {
            return 0;
        }
        let mut in_tree = vec![false; m];
        let mut key = vec![INF; m];
        key[0] = 0;
        let mut total = 0u32;
        for _ in 0..m {
            let Some(i) = (0..m).filter(|&i| !in_tree[i]).min_by_key(|&i| key[i]) else { break };
            if key[i] >= INF {
                return INF;
            }
            in_tree[i] = true;
            total += key[i];
            for j in 0..m {
                if !in_tree[j] {
                    let w = rr[members[j]][members[i]];
                    if w < key[j] {
                        key[j] = w;
                    }
                }
            }
        }
        total
    }

    /// (cost, length) lower bound from `node` for visiting the members in `u`.
    /// `lc`, `cc`: the node's row of [`Heuristic::len_col`] and `cost_col`.
    fn eval(&self, h: &Heuristic, lc: &[u32], cc: &[u32], u: u64) -> (u32, u32) {
        let u = u & self.members;
        if u == 0 {
            return (0, 0);
        }
        // U ∩ part, in part bits.
        let mut su = 0usize;
        for (i, &b) in self.part.iter().enumerate() {
            if u & (1u64 << b) != 0 {
                su |= 1 << i;
            }
        }
        // The MST bound only where Held–Karp covers part of the members:
        // over all of U, a chain over U weighs at least its spanning tree.
        let tree = if h.large && self.part.len() < self.members.count_ones() as usize {
            let cached = self.mst.borrow().get(&u).copied();
            Some(cached.unwrap_or_else(|| {
                let v = (Chain::mst_of(&h.cost_rr, u), Chain::mst_of(&h.len_rr, u));
                self.mst.borrow_mut().insert(u, v);
                v
            }))
        } else {
            None
        };
        let one = |d: &[u32], hk: &Vec<Vec<u32>>, tree: Option<u32>| -> u32 {
            let mut chain = if su == 0 { 0 } else { INF };
            for (i, &b) in self.part.iter().enumerate() {
                if su & (1 << i) != 0 {
                    let tour = hk[su][i];
                    if tour < INF && d[b] < INF {
                        chain = chain.min(d[b] + tour);
                    }
                }
            }
            if !h.large {
                return chain;
            }
            let (mut nearest, mut worst) = (INF, 0);
            for (k, &dk) in d.iter().enumerate() {
                if u & (1u64 << k) != 0 {
                    worst = worst.max(dk);
                    nearest = nearest.min(dk);
                }
            }
            if nearest >= INF || chain >= INF || tree.is_some_and(|t| t >= INF) {
                return INF;
            }
            chain.max(worst).max(tree.map_or(0, |t| nearest + t))
        };
        (one(cc, &self.cost_h, tree.map(|t| t.0)), one(lc, &self.len_h, tree.map(|t| t.1)))
    }
}
