//! `lucy view --svg` and `lucy explain --svg`: the join-path picture from
//! the command line, for the paper's Q1 (CLIENT and DATACENTER through the
//! m:m junction, never through the LOCATION lookup).

mod support;

use support::run;

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");

fn ok(o: &std::process::Output) {
    assert!(o.status.success(), "stderr: {}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn view_svg_draws_the_walk_and_the_refused_lookup() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("q1.svg");
    let o = run(&[
        "view",
        "--model",
        MODEL,
        "--tables",
        "CLIENT,DATACENTER",
        "--attrs",
        "CLIENT.name,DATACENTER.name",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stdout).contains("CREATE VIEW"), "the usual output still prints");
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.starts_with("<svg"));
    for key in ["CLIENT", "RSPOOL2CLIENT", "RESOURCEPOOL", "COMPUTE", "DATACENTER"] {
        assert!(
            s.contains(&format!(
                "class=\"table table-{}\" data-key=\"{key}\"",
                if key == "CLIENT" || key == "DATACENTER" { "relevant" } else { "bridge" }
            )),
            "{key}"
        );
    }
    assert!(s.contains("class=\"table table-refused\" data-key=\"LOCATION\""));
    assert_eq!(s.matches("class=\"edge edge-walk\"").count(), 4);
    assert_eq!(s.matches("class=\"edge edge-refused\"").count(), 2);
}

#[test]
fn explain_svg_draws_a_trace_with_votes_and_needs_a_view() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json");
    let t = trace.to_str().unwrap();
    ok(&run(&["ask", "--model", MODEL, "--tables", "CLIENT,DATACENTER", "--stop-after", "view", "--trace", t, "Q1"]));
    let svg = dir.path().join("t.svg");
    ok(&run(&["explain", t, "--svg", svg.to_str().unwrap(), "--model", MODEL]));
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.contains("data-key=\"LOCATION\""), "with --model the refused lookup is drawn");
    // Without the model: only the view.
    ok(&run(&["explain", t, "--svg", svg.to_str().unwrap()]));
    assert!(!std::fs::read_to_string(&svg).unwrap().contains("data-key=\"LOCATION\""));
    // A model of another name is refused.
    let acme = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/acme.json");
    let o = run(&["explain", t, "--svg", svg.to_str().unwrap(), "--model", acme]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("was made with `ddo`"));
    // A trace that stopped before GenerateView has nothing to draw.
    ok(&run(&["ask", "--model", MODEL, "--tables", "CLIENT", "--stop-after", "match", "--trace", t, "Q"]));
    let o = run(&["explain", t, "--svg", svg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no GenerateView result"));
}
