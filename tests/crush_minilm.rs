//! CRUSH with the real offline embedder on the DDO model and on BirdUnion
//! questions. Skipped (with a message) only when the MiniLM files are absent;
//! CI has them through scripts/setup.sh.

use lucy::crush::embed::{EmbeddingCache, MiniLm};
use lucy::crush::union_schema::{load_bird_dev, load_union};
use lucy::crush::{self, probes, CrushConfig, Index, SolverKind};
use std::path::Path;

fn minilm() -> Option<MiniLm> {
    let dir = MiniLm::default_dir();
    if !MiniLm::available(&dir) {
        eprintln!("SKIPPED: MiniLM files absent in {} (run scripts/fetch-minilm.sh)", dir.display());
        return None;
    }
    Some(MiniLm::load(&dir).unwrap())
}

#[test]
fn ddo_prefilter_and_linker_find_the_client_tables() {
    let Some(e) = minilm() else { return };
    let model = lucy::model::load(concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json")).unwrap();
    let graph = lucy::SchemaGraph::new(model).unwrap();
    let tables =
        crush::prefilter_tables(&graph, "List the gender of clients", Some("Client(name, gender)"), 3, None, &e)
            .unwrap();
    assert!(tables.iter().any(|t| t == "CLIENT"), "{tables:?}");
    let (tables, cols) = crush::embedding_link(&graph, "What is the tax rate of each payment?", 4, &e).unwrap();
    assert_eq!(cols.len(), 4);
    assert!(tables.iter().any(|t| t == "TAX"), "{tables:?} {cols:?}");
}

#[test]
fn bird_union_subset_exact_beats_greedy_and_stays_on_topic() {
    let Some(e) = minilm() else { return };
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/benchmarks/bird/crush4sql");
    let (full, _) = load_union(&base.join("bird_UNION.txt")).unwrap();
    // Two of the eleven databases keep the test fast (the benchmark runs all).
    let cols = full
        .docs
        .iter()
        .filter(|d| d.table.starts_with("california_schools.") || d.table.starts_with("financial."))
        .map(|d| (d.table.clone(), d.column.clone().unwrap()));
    let corpus = lucy::crush::docs::Corpus::from_columns(cols);
    let dir = tempfile::tempdir().unwrap();
    let index = Index::build(corpus, &e, Some(&EmbeddingCache::new(dir.path()))).unwrap();
    let items = load_bird_dev(&base.join("bird_dev.json")).unwrap();
    // Question 5: "How many schools with an average score in Math under 400
    // in the SAT test are exclusively virtual?"
    let item = items.iter().find(|i| i.question_id == 5).unwrap();
    let p = probes::parse_schema(&item.hallucinated.join("; ")).unwrap();
    let run = |solver| {
        let cfg = CrushConfig { budget: 8, solver, time_limit_s: 5.0, ..Default::default() };
        crush::crush(&index, &e, Some(&item.question), &p, &cfg).unwrap()
    };
    let exact = run(SolverKind::Exact);
    let greedy = run(SolverKind::Greedy);
    assert_eq!(exact.elements.len(), 8);
    assert!(exact.upper_bound.unwrap() >= exact.objective.unwrap() - 1e-9);
    assert!(exact.objective.unwrap() >= greedy.objective.unwrap() - 1e-9);
    // School probes retrieve school columns, not bank ones.
    for out in [&exact, &greedy] {
        let on_topic = out.tables.iter().filter(|t| t.starts_with("california_schools.")).count();
        assert!(on_topic * 2 > out.tables.len(), "{:?}", out.elements);
    }
}
