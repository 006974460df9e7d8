use super::*;
use crate::types::{ColumnRef, ViewRequest};

const DDO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");

use crate::graph::fixtures::ddo;

fn solve(g: &SchemaGraph, tables: &[&str], attrs: &[(&str, &str)]) -> ViewResult {
    let mut r = ViewRequest::new(tables.iter().map(|s| s.to_string()).collect());
    r.attributes = attrs.iter().map(|(t, c)| ColumnRef::new(*t, *c)).collect();
    crate::solve::generate_view(g, &r).unwrap()
}

fn kind_of(s: &Scene, key: &str) -> NodeKind {
    s.node(key)
        .unwrap_or_else(|| panic!("no node {key} in {:?}", s.nodes.iter().map(|n| &n.key).collect::<Vec<_>>()))
        .kind
}

/// Two LOCATION instances: each node is a relevant LOCATION with its role.
#[test]
fn role_instances_are_relevant_nodes_with_their_role() {
    let g = ddo();
    let v = solve(&g, &["CLIENT", "DATACENTER", "LOCATION@CLIENT", "LOCATION@DATACENTER"], &[("LOCATION", "city")]);
    let s = Scene::of_view(&v, Some(&g));
    for (key, role) in [("LOCATION_CLIENT", "CLIENT.loc_id"), ("LOCATION_DATACENTER", "DATACENTER.loc_id")] {
        let n = s.node(key).unwrap_or_else(|| panic!("no {key}"));
        assert_eq!(
            (n.table.as_str(), n.kind, n.role.as_deref()),
            ("LOCATION", NodeKind::Relevant, Some(role)),
            "{key}"
        );
    }
    assert!(svg::render(&s).contains("role: CLIENT.loc_id"));
}

/// Q1: CLIENT and DATACENTER are joined through the m:m junction, and the
/// picture shows LOCATION as the lookup the walk may not pass through.
#[test]
fn q1_scene_shows_walk_junction_and_refused_lookup() {
    let g = ddo();
    let v = solve(&g, &["CLIENT", "DATACENTER"], &[("CLIENT", "name"), ("DATACENTER", "name")]);
    let s = Scene::of_view(&v, Some(&g));
    assert_eq!(kind_of(&s, "CLIENT"), NodeKind::Relevant);
    assert_eq!(kind_of(&s, "DATACENTER"), NodeKind::Relevant);
    for t in ["RSPOOL2CLIENT", "RESOURCEPOOL", "COMPUTE"] {
        assert_eq!(kind_of(&s, t), NodeKind::Bridge, "{t}");
    }
    assert_eq!(kind_of(&s, "LOCATION"), NodeKind::Refused);
    let loc = s.node("LOCATION").unwrap();
    assert!(loc.note.as_deref().unwrap().contains("C4"), "{:?}", loc.note);
    let refused: Vec<_> = s.edges.iter().filter(|e| e.kind == EdgeKind::Refused).map(|e| e.from.as_str()).collect();
    assert_eq!(refused, ["CLIENT", "DATACENTER"]);
    let steps: Vec<usize> =
        s.edges.iter().filter_map(|e| if let EdgeKind::Walk { step } = e.kind { Some(step) } else { None }).collect();
    assert_eq!(steps, [1, 2, 3, 4]);
    let junction = s.node("RSPOOL2CLIENT").unwrap();
    assert!(junction.badges.iter().any(|b| b.contains("m:m junction CLIENT ↔ RESOURCEPOOL")), "{:?}", junction.badges);
    // Columns land on their instance: keys plus the requested names.
    assert_eq!(s.node("CLIENT").unwrap().columns, ["id", "name"]);
    let walk = &s.caption[0];
    // Either direction of the optimal walk (the solver may return either).
    let through = walk.contains("RSPOOL2CLIENT → CLIENT") || walk.contains("CLIENT → RSPOOL2CLIENT");
    assert!(walk.starts_with("walk: ") && through && !walk.contains("LOCATION"), "{walk}");
}

/// Q2: the snowflake branches are LEFT JOINs; CONFIG and RUNTIME are only
/// there to reach CCPU and RCPU.
#[test]
fn q2_scene_has_left_join_branches() {
    let g = ddo();
    let v = solve(&g, &["RESOURCEPOOL", "CCPU", "RCPU"], &[]);
    let s = Scene::of_view(&v, Some(&g));
    let branches = s.edges.iter().filter(|e| e.kind == EdgeKind::Branch).count();
    assert_eq!(branches, 4, "{:?}", s.edges);
    assert!(s.edges.iter().all(|e| e.kind != EdgeKind::Refused || e.to != "CONFIG"));
    assert_eq!(kind_of(&s, "CONFIG"), NodeKind::Bridge);
    assert!(s.node("CCPU").unwrap().badges.iter().any(|b| b.contains("snowflake of RESOURCEPOOL")));
}

/// Without the model the picture still shows the view's tables and joins.
#[test]
fn scene_without_model_uses_the_view_only() {
    let g = ddo();
    let v = solve(&g, &["CLIENT", "DATACENTER"], &[]);
    let s = Scene::of_view(&v, None);
    assert_eq!(s.nodes.len(), 5);
    assert!(s.node("LOCATION").is_none());
    // No pattern roles without the model (fan-out badges come from the view's grain).
    assert!(s.nodes.iter().flat_map(|n| &n.badges).all(|b| b.starts_with("rows repeated by")), "{:?}", s.nodes);
}

/// An infeasible request still draws the relevant tables and says why.
#[test]
fn infeasible_scene_draws_relevant_tables_and_the_reason() {
    let mut m = crate::model::load(std::path::Path::new(DDO)).unwrap();
    m.constraints.forbid_tables = vec!["COMPUTE".into()];
    let g = SchemaGraph::new(m).unwrap();
    let v = solve(&g, &["CLIENT", "DATACENTER"], &[]);
    assert_eq!(v.status, crate::types::SolveStatus::Infeasible);
    let s = Scene::of_view(&v, Some(&g));
    assert_eq!(kind_of(&s, "CLIENT"), NodeKind::Relevant);
    assert_eq!(kind_of(&s, "LOCATION"), NodeKind::Refused);
    assert!(s.caption.iter().any(|c| c.starts_with("infeasible: ")), "{:?}", s.caption);
    let svg = svg::render(&s);
    assert!(svg.contains("no join path for CLIENT, DATACENTER"));
}

/// The SVG is one self-contained document: every card and edge of the
/// scene drawn, nothing external, text escaped, the same bytes every time.
#[test]
fn svg_is_complete_escaped_and_deterministic() {
    let g = ddo();
    let v = solve(&g, &["CLIENT", "DATACENTER"], &[("CLIENT", "name"), ("DATACENTER", "name")]);
    let s = Scene::of_view(&v, Some(&g));
    let a = svg::render(&s);
    assert_eq!(a, svg::render(&s));
    assert!(a.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(a.trim_end().ends_with("</svg>"));
    for n in &s.nodes {
        assert!(a.contains(&format!("data-key=\"{}\"", n.key)), "card {} missing", n.key);
    }
    assert_eq!(a.matches("class=\"edge ").count(), s.edges.len());
    assert!(!a.contains("href=\"http") && !a.contains("<script"));
    assert_eq!(a.matches("<g").count(), a.matches("</g>").count());
    assert!(a.contains("m:m junction CLIENT ↔ RESOURCEPOOL"));
    // Hooks: an instance role and a multiplied column are drawn.
    let mut s2 = s.clone();
    s2.nodes[0].role = Some("billing <address>".into());
    s2.nodes[0].multiplied = vec!["name".into()];
    let b = svg::render(&s2);
    assert!(b.contains("role: billing &lt;address&gt;"));
    assert!(b.contains("class=\"mult\""));
}

#[test]
fn trace_votes_become_badges() {
    use crate::types::trace::{ListStep, MatchTrace, Vote};
    let g = ddo();
    let v = solve(&g, &["CLIENT", "DATACENTER"], &[]);
    let mt = MatchTrace {
        steps: vec![ListStep {
            prompt: "match_tables".into(),
            samples: vec![vec![]; 5],
            votes: vec![
                Vote { item: "CLIENT".into(), votes: 5, kept: true },
                Vote { item: "LOCATION".into(), votes: 1, kept: false },
            ],
            ..Default::default()
        }],
        ..Default::default()
    };
    let s = Scene::of_view(&v, Some(&g)).with_votes(&mt);
    assert!(s.node("CLIENT").unwrap().badges.contains(&"votes 5/5".to_string()));
    assert!(s.node("LOCATION").unwrap().badges.contains(&"votes 1/5".to_string()));
}
