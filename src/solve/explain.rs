//! Why a request is infeasible: first plain connectivity, then the smallest
//! set of constraint groups (C3 m:m, C4 lookup, user forbids) whose
//! relaxation admits a walk, described by what that walk would have to
//! break.

use std::time::Instant;

use crate::graph::SchemaGraph;

use super::exact::{solve_exact, ExactLimits, ExactOutcome};
use super::preprocess::{Bounds, INF};
use super::problem::CoreProblem;
use super::relevant::{core_problem, CoreMap, Relax, Scope};

/// A human explanation of the infeasibility of `scope`.
pub fn explain(graph: &SchemaGraph, scope: &Scope, deadline: Instant) -> String {
    if !scope.blocked.is_empty() {
        return scope.blocked.join("; ");
    }
    // 1. Connectivity, ignoring C3/C4, with and without the user forbids.
    let plain = core_problem(graph, scope, Relax { c3: false, c4: false, forbids: true });
    if let Some((a, b)) = disconnected_pair(&plain.problem) {
        // Forbids only remove edges: both problems have the same nodes.
        let unforbidden = core_problem(graph, scope, Relax { c3: false, c4: false, forbids: false });
        let still = !connected(&unforbidden.problem, a, b);
        let names = &plain.problem.names;
        let why = if still {
            "among core tables".to_string()
        } else {
            format!("once the forbidden tables/relationships are removed{}", forbids_note(graph, scope))
        };
        // A role instance joins only through its anchor: say so per instance.
        // (The anchor of a role instance is relevant because of it: blame
        // the instance when its anchor was not requested itself.)
        // (A subtype instance joins as its table does: no anchor.)
        let anchored = |k: usize| plain.roles[k].filter(|&r| graph.subtype_child(plain.tables[k], r).is_none());
        for (x, y) in [(b, a), (a, b)] {
            let role_node = match (plain.roles[x], anchored(x)) {
                (_, Some(_)) => Some(x),
                (Some(_), None) => None,
                (None, None) if !scope.relevant.contains(&plain.tables[x]) => (0..plain.tables.len())
                    .find(|&k| anchored(k).is_some_and(|r| graph.anchor(plain.tables[k], r) == plain.tables[x])),
                (None, None) => None,
            };
            if let Some(k) = role_node {
                let r = anchored(k).expect("an anchored role node");
                let anchor = graph.anchor(plain.tables[k], r);
                return format!(
                    "{} cannot attach: it joins only through {} ({}), and there is no relationship path between {} and {} {why}",
                    names[k],
                    graph.name(anchor),
                    graph.relationship(r).id(),
                    graph.name(anchor),
                    names[y]
                );
            }
        }
        return format!("no relationship path between {} and {} {why}", names[a], names[b]);
    }
    // 2. Relax constraint groups, smallest sets first. Every blocking set of
    // the smallest size is reported: with COMPUTE forbidden, CLIENT and
    // DATACENTER are blocked both by the forbid and by the LOCATION lookup,
    // and the user needs to see both ways out.
    const TIERS: [&[Relax]; 2] = [
        &[
            Relax { c3: false, c4: true, forbids: true },
            Relax { c3: true, c4: false, forbids: true },
            Relax { c3: true, c4: true, forbids: false },
        ],
        &[
            Relax { c3: false, c4: false, forbids: true },
            Relax { c3: false, c4: true, forbids: false },
            Relax { c3: true, c4: false, forbids: false },
        ],
    ];
    const CUT_SHORT: &str = "no walk satisfies the dbModel constraints; the time limit ended the search for which constraint blocks it (raise --time-limit to see why)";
    let late = || Instant::now() >= deadline;
    if late() {
        return CUT_SHORT.into();
    }
    let strict = core_problem(graph, scope, Relax::NONE);
    for tier in TIERS {
        let mut reasons: Vec<String> = Vec::new();
        for &relax in tier {
            if late() {
                return if reasons.is_empty() { CUT_SHORT.into() } else { reasons.join("; alternatively, ") };
            }
            let cm = core_problem(graph, scope, relax);
            // Two relevant tables that no C3/C4-respecting path joins: this
            // relaxation has no walk either, and proving that by the
            // exhaustive search was most of an explanation's time on
            // 1,000-table schemas.
            if Bounds::new(&cm.problem).lower_nodes >= INF {
                continue;
            }
            let limits = ExactLimits::new(500_000, Some(deadline));
            if let ExactOutcome::Optimal { walk, .. } = solve_exact(&cm.problem, None, limits) {
                let mut why = Vec::new();
                if !relax.c4 {
                    why.extend(c4_breaks(&strict.problem, &walk));
                }
                if !relax.c3 {
                    why.extend(c3_breaks(&strict.problem, &walk));
                }
                if !relax.forbids {
                    why.extend(forbid_breaks(graph, scope, &cm, &walk));
                }
                why.dedup();
                if !why.is_empty() {
                    let r = why.join("; ");
                    if !reasons.contains(&r) {
                        reasons.push(r);
                    }
                }
            }
        }
        if !reasons.is_empty() {
            return reasons.join("; alternatively, ");
        }
    }
    "no walk satisfies the dbModel constraints, and relaxing C3 (m:m), C4 (lookup) or the user forbids alone or in pairs does not help (or the search for a relaxed walk ran out of time): all three groups block it together".into()
}

fn forbids_note(graph: &SchemaGraph, scope: &Scope) -> String {
    let mut v: Vec<String> = scope.forbidden_tables.iter().map(|&t| graph.name(t).to_string()).collect();
    v.extend(scope.forbidden_rels.iter().filter(|r| !scope.bypassed.contains(r)).map(|&r| graph.relationship(r).id()));
    let mut note = if v.is_empty() { String::new() } else { format!(" (forbidden: {})", v.join(", ")) };
    if !scope.bypassed.is_empty() {
        let b: Vec<String> = scope.bypassed.iter().map(|&r| graph.relationship(r).id()).collect();
        note.push_str(&format!(" (shortcuts left out while the table they short-cut is relevant: {})", b.join(", ")));
    }
    note
}

fn connected(p: &CoreProblem, a: usize, b: usize) -> bool {
    let mut seen = vec![false; p.len()];
    let mut stack = vec![a];
    seen[a] = true;
    while let Some(u) = stack.pop() {
        if u == b {
            return true;
        }
        for &v in &p.adj[u] {
            if !seen[v] {
                seen[v] = true;
                stack.push(v);
            }
        }
    }
    false
}

fn disconnected_pair(p: &CoreProblem) -> Option<(usize, usize)> {
    let rel = p.relevant_nodes();
    let first = *rel.first()?;
    rel.iter().skip(1).find(|&&t| !connected(p, first, t)).map(|&t| (first, t))
}

/// Interior lookups whose neighbours differ: "A and B can only be connected
/// through lookup L (C4)".
fn c4_breaks(p: &CoreProblem, walk: &[usize]) -> Vec<String> {
    let mut out = Vec::new();
    for w in 1..walk.len().saturating_sub(1) {
        let l = walk[w];
        if p.lookup[l] && walk[w - 1] != walk[w + 1] {
            out.push(format!(
                "{} and {} can only be connected through lookup {} (C4)",
                p.names[walk[w - 1]],
                p.names[walk[w + 1]],
                p.names[l]
            ));
        }
    }
    out
}

fn c3_breaks(p: &CoreProblem, walk: &[usize]) -> Vec<String> {
    let mut out = Vec::new();
    for (q, j) in p.junctions.iter().enumerate() {
        let (s0, s1, k) = (&p.names[j.sides[0]], &p.names[j.sides[1]], &p.names[j.k]);
        for w in 1..walk.len().saturating_sub(1) {
            if walk[w] == j.k && !p.step_allowed(Some(walk[w - 1]), walk[w], walk[w + 1]) {
                out.push(format!(
                    "the only connection passes through junction {k} from {} to {}, but {k} only relates {s0} and {s1} (C3)",
                    p.names[walk[w - 1]],
                    p.names[walk[w + 1]]
                ));
            }
        }
        if walk.contains(&j.sides[0]) && walk.contains(&j.sides[1]) && !p.c3_settled(walk, q) {
            let group = p.junction_group(q);
            let mut theirs = if group.len() > 1 {
                let ks: Vec<&str> = group.iter().map(|&o| p.names[p.junctions[o].k].as_str()).collect();
                format!("one of their junctions {}", ks.join(", "))
            } else {
                format!("their junction {k}")
            };
            let bridges: Vec<&str> =
                p.bridges.iter().filter(|b| b.between(j.sides[0], j.sides[1])).map(|b| p.names[b.t].as_str()).collect();
            if !bridges.is_empty() {
                theirs.push_str(&format!(
                    " or from one to the other through {}, which references both",
                    bridges.join(" or ")
                ));
            }
            out.push(format!(
                "{s0} and {s1} must both be in the view, but they can only be connected without passing once through {theirs} (C3)"
            ));
        }
    }
    out
}

fn forbid_breaks(graph: &SchemaGraph, scope: &Scope, cm: &CoreMap, walk: &[usize]) -> Vec<String> {
    let mut out = Vec::new();
    for &l in walk {
        let t = cm.tables[l];
        if scope.forbidden_tables.contains(&t) {
            out.push(format!(
                "the only valid connection needs {}, forbidden by constraints.forbid_tables",
                graph.name(t)
            ));
        }
    }
    for w in walk.windows(2) {
        let (a, b) = (cm.tables[w[0]], cm.tables[w[1]]);
        // A step to or from a role node uses its relationship only (a
        // subtype instance steps as its table does).
        let anchored = |k: usize| cm.roles[k].filter(|&r| graph.subtype_child(cm.tables[k], r).is_none());
        let role = anchored(w[0]).or(anchored(w[1]));
        let rels = match role {
            Some(r) => vec![r],
            None => graph.relationships_between(a, b),
        };
        if !rels.is_empty() && rels.iter().all(|r| scope.forbidden_rels.contains(r)) {
            let what = match role {
                Some(_) => format!(
                    "{} cannot attach: it joins",
                    cm.problem.names[if anchored(w[0]).is_some() { w[0] } else { w[1] }]
                ),
                None => "the only valid connection joins".to_string(),
            };
            let why = if rels.iter().any(|r| scope.bypassed.contains(r)) {
                "forbidden by constraints.forbid_relationships or left out as a shortcut of a relevant table (via)"
            } else {
                "forbidden by constraints.forbid_relationships"
            };
            out.push(format!(
                "{what} {} and {} through {}, {why}",
                graph.name(a),
                graph.name(b),
                rels.iter().map(|&r| graph.relationship(r).id()).collect::<Vec<_>>().join(" / ")
            ));
        }
    }
    out.dedup();
    out
}
