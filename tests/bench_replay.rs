//! The first real-model runs, replayed offline: `benchmarks/cassettes/`
//! holds what the embedded default model (Qwen2.5-Coder-1.5B-Instruct
//! Q4_K_M) answered for `lucy bench ddo --method lucy,direct,direct+check`,
//! `lucy bench acme`, the Spider sample and the seed methods (each `Run`
//! below; the commands are in benchmarks/results/embedded.md and
//! methods.md). Replaying each must reproduce the
//! committed per-method summary and answers exactly; a prompt that changed
//! since the recording must fail, saying how to re-record.
//!
//! After re-recording, refresh the expected file with
//! `LUCY_UPDATE_REPLAY=1 cargo test --test bench_replay`.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

/// One recorded run.
struct Run {
    suite: &'static str,
    cassette: &'static str,
    expected: &'static str,
    methods: &'static [&'static str],
    /// Questions recorded: `None` for the whole suite, `Some(n)` for a
    /// `--limit n` recording.
    recorded: Option<usize>,
    /// The flags the recording was made with, where they differ from
    /// today's defaults (every QueryView lever is named, so a default that
    /// moves later does not change what a replay asks; `--name-hints off`,
    /// `--count-names off`, `--table-names off` and `--narrow-view off`
    /// are added by [`bench`] when a run does not name them).
    /// Groups of flags, passed in order.
    flags: &'static [&'static [&'static str]],
    /// An example pool the run used (`--examples`): its kind, built from
    /// the suite by `lucy examples pool` before the replay.
    pool: Option<&'static str>,
}

/// The QueryView levers of the first recordings' expected outcomes (issue
/// 23 moved the defaults): the free grammar (the one they were recorded
/// with), the rename on (their expected files were refreshed with it), no
/// DISTINCT rewrite, the paper's view columns.
const FIRST_RECORDINGS: &[&str] =
    &["--query-names", "free", "--rename-unknown", "on", "--distinct", "off", "--view-columns", "selected"];

const DDO: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-qwen2.5-coder-1.5b.jsonl",
    expected: "benchmarks/cassettes/ddo-qwen2.5-coder-1.5b.expected.json",
    methods: &["lucy", "direct", "direct+check"],
    recorded: None,
    flags: &[FIRST_RECORDINGS],
    pool: None,
};

/// ACME, all 44 questions (sessions 13 to 15): session 7's recording (phase 1)
/// with the calls session 13 added when acme.json marked Claim_Amount's
/// kinds `exclusive` (the subtype prompt, the attribute prompts of the
/// subtype instances) and QueryView under session 10's defaults
/// (benchmarks/results/embedded.md, session 13; the recording stopped
/// after 24 questions; session 14 resumed it to 41 and session 15 to 44
/// with the same flags). Session 7's own lucy outcome (the free grammar,
/// the model before the flag) no longer replays: the flag adds prompts to
/// its questions.
const ACME: Run = Run {
    suite: "acme",
    cassette: "benchmarks/cassettes/acme-qwen2.5-coder-1.5b.jsonl",
    expected: "benchmarks/cassettes/acme-s13.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S10_DEFAULTS],
    pool: None,
};

/// Session 10's defaults with session 14's levers (issue 23): one view
/// column per set of INNER-join-equal columns, a star's kinds read without
/// the LLM.
const S14_LEVERS: &[&str] = &[
    "--query-names",
    "strict",
    "--rename-unknown",
    "on",
    "--distinct",
    "auto",
    "--view-columns",
    "all-once",
    "--kind-names",
    "on",
    "--kind-instance",
    "on",
];

/// Session 14's levers on ACME's first 24 (issue 23): the view keeps one
/// column per set an INNER join makes equal (`--view-columns all-once`),
/// and a star's kinds are read without the LLM (`--kind-names on
/// --kind-instance on`); recorded into the same cassette (phase 1 replayed
/// where it did not change).
const ACME_S14_KINDS: Run = Run {
    suite: "acme",
    cassette: "benchmarks/cassettes/acme-qwen2.5-coder-1.5b.jsonl",
    expected: "benchmarks/cassettes/acme-s14-kinds.expected.json",
    methods: &["lucy"],
    recorded: Some(24),
    flags: &[S14_LEVERS],
    pool: None,
};

/// The same levers on DDO, all 24 (session 14), recorded into session 9's
/// defaults cassette (phase 1 replayed: no kind fired; QueryView fresh).
const DDO_S14_KINDS: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-qwen2.5-coder-1.5b-defaults-s9.jsonl",
    expected: "benchmarks/cassettes/ddo-s14-kinds.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S14_LEVERS],
    pool: None,
};

/// The same levers on the Spider sample's first 50 (session 14), recorded
/// into the session-9 Spider cassette (phase 1 replayed; no kind fired).
const SPIDER_S14_KINDS: Run = Run {
    suite: "spider-dev",
    cassette: "benchmarks/cassettes/spider-dev-sample100-seed1-first50-s9.jsonl",
    expected: "benchmarks/cassettes/spider-dev-s14-kinds.expected.json",
    methods: &["lucy"],
    recorded: Some(50),
    flags: &[&["--sample", "100", "--seed", "1"], S14_LEVERS],
    pool: None,
};

/// Session 7's `direct` on ACME, all 44, as recorded (the free grammar
/// it was recorded with; the strict one asks other prompts). acme.json's
/// `exclusive` flag does not reach `direct`, whose prompt holds no pattern.
const ACME_DIRECT_S7: Run = Run {
    suite: "acme",
    cassette: "benchmarks/cassettes/acme-qwen2.5-coder-1.5b.jsonl",
    expected: "benchmarks/cassettes/acme-direct-s7.expected.json",
    methods: &["direct"],
    recorded: None,
    flags: &[FIRST_RECORDINGS],
    pool: None,
};

/// Session 9's defaults, named (a later default does not change a replay;
/// session 10's strict rule, without derived tables, is `strict-derived`'s
/// successor, so these recordings name the old one).
const S9_DEFAULTS: &[&str] =
    &["--query-names", "strict-derived", "--rename-unknown", "on", "--distinct", "auto", "--view-columns", "all"];

/// The session-9 lever runs on DDO (benchmarks/results/embedded.md, "QueryView
/// and linker levers"): one cassette, the session-8 strict-names recording
/// and every call the levers added.
const LEVERS: &str = "benchmarks/cassettes/ddo-qwen2.5-coder-1.5b-levers.jsonl";

/// The session-8 fresh run's flags: strict names and the rename.
const DDO_STRICT: Run = Run {
    suite: "ddo",
    cassette: LEVERS,
    expected: "benchmarks/cassettes/ddo-levers-strict.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[&[
        "--query-names",
        "strict-derived",
        "--rename-unknown",
        "on",
        "--distinct",
        "off",
        "--view-columns",
        "selected",
    ]],
    pool: None,
};

/// R1: + one row per listed entity and every column in the view (today's
/// defaults, named).
const DDO_R1: Run = Run {
    suite: "ddo",
    cassette: LEVERS,
    expected: "benchmarks/cassettes/ddo-levers-r1.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S9_DEFAULTS],
    pool: None,
};

/// Session 9's fresh run of `lucy bench ddo --method lucy,direct` with the
/// defaults of that session (strict names, the rename, one row per listed
/// entity, every column in the view), every call made by the embedded model
/// on this machine kind; the defaults named, so a later default does not
/// change the replay.
const DDO_DEFAULTS_S9: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-qwen2.5-coder-1.5b-defaults-s9.jsonl",
    expected: "benchmarks/cassettes/ddo-defaults-s9.expected.json",
    methods: &["lucy", "direct"],
    recorded: None,
    flags: &[S9_DEFAULTS],
    pool: None,
};

/// Session 9's fresh Spider dev run: the first 50 questions of the seed-1
/// sample of 100, lucy and direct, with that session's defaults named.
const SPIDER_S9: Run = Run {
    suite: "spider-dev",
    cassette: "benchmarks/cassettes/spider-dev-sample100-seed1-first50-s9.jsonl",
    expected: "benchmarks/cassettes/spider-dev-s9.expected.json",
    methods: &["lucy", "direct"],
    recorded: Some(50),
    flags: &[&["--sample", "100", "--seed", "1"], S9_DEFAULTS],
    pool: None,
};

/// Session 10's defaults, named: the strict rule without derived tables.
const S10_DEFAULTS: &[&str] =
    &["--query-names", "strict", "--rename-unknown", "on", "--distinct", "auto", "--view-columns", "all"];

/// Session 10's DDO runs (benchmarks/results/embedded.md): each recorded
/// into a copy of session 9's defaults cassette, so only the QueryView
/// prompts the new grammar changes (and what a lever adds) were sent to the
/// model; their calls are appended to that cassette.
const DDO_S10: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-qwen2.5-coder-1.5b-defaults-s9.jsonl",
    expected: "benchmarks/cassettes/ddo-defaults-s10.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S10_DEFAULTS],
    pool: None,
};

/// + `--values on` (the value index in the prompts).
const DDO_S10_VALUES: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-qwen2.5-coder-1.5b-defaults-s9.jsonl",
    expected: "benchmarks/cassettes/ddo-values-s10.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S10_DEFAULTS, &["--values", "on"]],
    pool: None,
};

/// + `--exec-vote 3` (execution-guided choice among 3 answers).
const DDO_S10_EXEC_VOTE: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-qwen2.5-coder-1.5b-defaults-s9.jsonl",
    expected: "benchmarks/cassettes/ddo-exec-vote-s10.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S10_DEFAULTS, &["--exec-vote", "3"]],
    pool: None,
};

/// Session 10's Spider run (lucy only; direct is unchanged), recorded into
/// a copy of session 9's and appended to it.
const SPIDER_S10: Run = Run {
    suite: "spider-dev",
    cassette: "benchmarks/cassettes/spider-dev-sample100-seed1-first50-s9.jsonl",
    expected: "benchmarks/cassettes/spider-dev-s10.expected.json",
    methods: &["lucy"],
    recorded: Some(50),
    flags: &[&["--sample", "100", "--seed", "1"], S10_DEFAULTS],
    pool: None,
};

/// + `--min-votes 3` (a table in MatchTables' answer needs 3 of 5 samples).
const SPIDER_S10_MV3: Run = Run {
    suite: "spider-dev",
    cassette: "benchmarks/cassettes/spider-dev-sample100-seed1-first50-s9.jsonl",
    expected: "benchmarks/cassettes/spider-dev-mv3-s10.expected.json",
    methods: &["lucy"],
    recorded: Some(50),
    flags: &[&["--sample", "100", "--seed", "1"], S10_DEFAULTS, &["--min-votes", "3"]],
    pool: None,
};

/// Session 11's seed-method runs on DDO (issue 24; benchmarks/results/
/// methods.md): each method recorded fresh, one after the other, into one
/// cassette (which also holds a `crush` run stopped after one question).
const DDO_METHODS_S11: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-methods-s11.jsonl",
    expected: "benchmarks/cassettes/ddo-methods-s11.expected.json",
    methods: &["ta-sql", "rasl"],
    recorded: None,
    flags: &[S10_DEFAULTS],
    pool: None,
};

/// Session 12's: `crush` on DDO, recorded into the same cassette (it
/// resumed the stopped run's first question).
const DDO_CRUSH_S12: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-methods-s11.jsonl",
    expected: "benchmarks/cassettes/ddo-crush-s12.expected.json",
    methods: &["crush"],
    recorded: None,
    flags: &[S10_DEFAULTS],
    pool: None,
};

/// `fewshot` (DynVS) on DDO with the in-database pool (`lucy examples pool
/// --suite ddo --kind in-database`), into the same cassette.
const DDO_FEWSHOT_S12: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-methods-s11.jsonl",
    expected: "benchmarks/cassettes/ddo-fewshot-s12.expected.json",
    methods: &["fewshot"],
    recorded: None,
    flags: &[S10_DEFAULTS],
    pool: Some("in-database"),
};

/// `fewshot` (DynVS) on the Spider sample with the cross-database pool
/// (`lucy examples pool --suite spider-dev --kind cross-database`: the
/// other databases' questions): the first 50 in session 15, questions
/// 51–100 in session 22 (62 calls).
const SPIDER_FEWSHOT_S15: Run = Run {
    suite: "spider-dev",
    cassette: "benchmarks/cassettes/spider-dev-methods-s15.jsonl",
    expected: "benchmarks/cassettes/spider-dev-fewshot-s15.expected.json",
    methods: &["fewshot"],
    recorded: Some(100),
    flags: &[&["--sample", "100", "--seed", "1"], S10_DEFAULTS],
    pool: Some("cross-database"),
};

/// `crush` (budget 10) on the Spider sample (the first 25 in session 15,
/// 26–50 in session 16, 51–100 in session 22), into the same cassette.
const SPIDER_CRUSH_S15: Run = Run {
    suite: "spider-dev",
    cassette: "benchmarks/cassettes/spider-dev-methods-s15.jsonl",
    expected: "benchmarks/cassettes/spider-dev-crush-s15.expected.json",
    methods: &["crush"],
    recorded: Some(100),
    flags: &[&["--sample", "100", "--seed", "1"]],
    pool: None,
};

/// `rasl` on the Spider sample (the first 45 in session 16, 46–50 in
/// session 17, 51–100 in session 22), into the same cassette as the other
/// Spider seed methods.
const SPIDER_RASL_S16: Run = Run {
    suite: "spider-dev",
    cassette: "benchmarks/cassettes/spider-dev-methods-s15.jsonl",
    expected: "benchmarks/cassettes/spider-dev-rasl-s16.expected.json",
    methods: &["rasl"],
    recorded: Some(100),
    flags: &[&["--sample", "100", "--seed", "1"]],
    pool: None,
};

/// Session 15's `--name-hints on` (issue 23): session 10's defaults, and
/// QueryView's prompt names the view columns phrases of the question
/// spell; phase 1 replays, QueryView was recorded fresh into each suite's
/// cassette.
const S15_HINTS: &[&str] = &[
    "--query-names",
    "strict",
    "--rename-unknown",
    "on",
    "--distinct",
    "auto",
    "--view-columns",
    "all",
    "--name-hints",
    "on",
];

const DDO_S15_HINTS: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-qwen2.5-coder-1.5b-defaults-s9.jsonl",
    expected: "benchmarks/cassettes/ddo-s15-hints.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S15_HINTS],
    pool: None,
};

const SPIDER_S15_HINTS: Run = Run {
    suite: "spider-dev",
    cassette: "benchmarks/cassettes/spider-dev-sample100-seed1-first50-s9.jsonl",
    expected: "benchmarks/cassettes/spider-dev-s15-hints.expected.json",
    methods: &["lucy"],
    recorded: Some(50),
    flags: &[&["--sample", "100", "--seed", "1"], S15_HINTS],
    pool: None,
};

const ACME_S15_HINTS: Run = Run {
    suite: "acme",
    cassette: "benchmarks/cassettes/acme-qwen2.5-coder-1.5b.jsonl",
    expected: "benchmarks/cassettes/acme-s15-hints.expected.json",
    methods: &["lucy"],
    recorded: Some(24),
    flags: &[S15_HINTS],
    pool: None,
};

/// Session 16's `--table-names on --group-hints on` (issue 23) over
/// session 15's hints: core tables the question names join the voted ones,
/// and a hinted phrase asked "by" said to group by its column; phase 1
/// replays where its prompts did not change, the rest was recorded fresh
/// into each suite's cassette. `--group-hints` was deleted in session 26
/// (issue 45): the Spider sample's first 50, where its line appeared in no
/// prompt, replays with `--table-names on` alone; DDO's (one line) and
/// ACME's runs went with it.
const S16_NAMES: &[&str] = &["--table-names", "on"];

const SPIDER_S16_NAMES_GROUPS: Run = Run {
    suite: "spider-dev",
    cassette: "benchmarks/cassettes/spider-dev-sample100-seed1-first50-s9.jsonl",
    expected: "benchmarks/cassettes/spider-dev-s16-names-groups.expected.json",
    methods: &["lucy"],
    recorded: Some(50),
    flags: &[&["--sample", "100", "--seed", "1"], S15_HINTS, S16_NAMES],
    pool: None,
};

/// Session 16's `--table-names on` alone on ACME's first 24: the two
/// levers above measured apart where they changed a view.
const ACME_S16_TABLE_NAMES: Run = Run {
    suite: "acme",
    cassette: "benchmarks/cassettes/acme-qwen2.5-coder-1.5b.jsonl",
    expected: "benchmarks/cassettes/acme-s16-table-names.expected.json",
    methods: &["lucy"],
    recorded: Some(24),
    flags: &[S15_HINTS, &["--table-names", "on"]],
    pool: None,
};

/// `ta-sql` on the Spider sample's first 50 (session 17), into the same
/// cassette: the column descriptions it generated once per database (244
/// calls) are the first calls of each database's first question.
/// Questions 51–100 recorded in sessions 22 (51–97) and 23 (the rest).
const SPIDER_TASQL_S17: Run = Run {
    suite: "spider-dev",
    cassette: "benchmarks/cassettes/spider-dev-methods-s15.jsonl",
    expected: "benchmarks/cassettes/spider-dev-tasql-s17.expected.json",
    methods: &["ta-sql"],
    recorded: Some(100),
    flags: &[&["--sample", "100", "--seed", "1"]],
    pool: None,
};

/// Session 17's defaults (issue 23): a QueryView `COUNT(*)` over a view
/// that repeats the rows of the table the question counts by name counts
/// that table's rows (`--count-names on`), MatchTables keeps the core
/// tables the question names (`--table-names on`, recorded in session 16)
/// and an answer with no row runs again over the view without the tables
/// its SQL reads nothing of (`--narrow-view empty`). Neither the first nor
/// the last adds a prompt, so each run replays the suite's recordings of
/// sessions 15 and 16 (the Spider sample's questions 51–100 were recorded
/// fresh with them in session 17).
const S17_DEFAULTS: &[&str] = &["--count-names", "on", "--table-names", "on", "--narrow-view", "empty"];

const DDO_S17_DEFAULTS: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-qwen2.5-coder-1.5b-defaults-s9.jsonl",
    expected: "benchmarks/cassettes/ddo-s17-defaults.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S15_HINTS, S17_DEFAULTS],
    pool: None,
};

const SPIDER_S17_DEFAULTS: Run = Run {
    suite: "spider-dev",
    cassette: "benchmarks/cassettes/spider-dev-sample100-seed1-first50-s9.jsonl",
    expected: "benchmarks/cassettes/spider-dev-s17-defaults.expected.json",
    methods: &["lucy"],
    recorded: Some(100),
    flags: &[&["--sample", "100", "--seed", "1"], S15_HINTS, S17_DEFAULTS],
    pool: None,
};

/// `direct` on the Spider sample's 100 with session 9's flags (the grammar
/// its first 50 were recorded with; questions 51–100 recorded in session 17
/// beside lucy's, which `SPIDER_S17_DEFAULTS` replays).
const SPIDER_DIRECT_S17: Run = Run {
    suite: "spider-dev",
    cassette: "benchmarks/cassettes/spider-dev-sample100-seed1-first50-s9.jsonl",
    expected: "benchmarks/cassettes/spider-dev-direct-s17.expected.json",
    methods: &["direct"],
    recorded: Some(100),
    flags: &[&["--sample", "100", "--seed", "1"], S9_DEFAULTS],
    pool: None,
};

/// CRUSH4SQL end to end on ACME, all 44 (session 18, budget 10; issue
/// 24), recorded fresh into its own cassette.
const ACME_CRUSH_S18: Run = Run {
    suite: "acme",
    cassette: "benchmarks/cassettes/acme-methods-s18.jsonl",
    expected: "benchmarks/cassettes/acme-crush-s18.expected.json",
    methods: &["crush"],
    recorded: None,
    flags: &[],
    pool: None,
};

/// ACME with session 17's defaults: the first 24 from the recordings of
/// sessions 7 to 16, questions 25–44 recorded fresh in session 18.
const ACME_S17_DEFAULTS: Run = Run {
    suite: "acme",
    cassette: "benchmarks/cassettes/acme-qwen2.5-coder-1.5b.jsonl",
    expected: "benchmarks/cassettes/acme-s17-defaults.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S15_HINTS, S17_DEFAULTS],
    pool: None,
};

/// Session 18's defaults (issue 23): an answer runs again over the view
/// without the relevant tables its SQL reads nothing of and the question
/// does not name (`--narrow-view unnamed`), and relevant tables no
/// relationship joins to the rest are dropped before GenerateView solves
/// again (`--drop-unjoinable on`), and a star's kinds are read without the
/// LLM (`--kind-names on --kind-instance on`, session 14's levers). The
/// first adds no prompt; the second adds QueryView prompts where the view
/// was infeasible (the Spider sample's 183 and 938, recorded fresh in
/// session 18); the kinds change 15 of ACME's views (recorded fresh in
/// session 18) and no DDO or Spider question.
const S18_DEFAULTS: &[&str] = &[
    "--count-names",
    "on",
    "--table-names",
    "on",
    "--narrow-view",
    "unnamed",
    "--drop-unjoinable",
    "on",
    "--kind-names",
    "on",
    "--kind-instance",
    "on",
];

const DDO_S18_DEFAULTS: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-qwen2.5-coder-1.5b-defaults-s9.jsonl",
    expected: "benchmarks/cassettes/ddo-s18-defaults.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S15_HINTS, S18_DEFAULTS],
    pool: None,
};

/// Session 19's defaults (issue 23), two steps after the answer with no
/// prompt change: the pattern branch the answer is about (the question
/// names it, the SQL reads it) is INNER-joined (`--inner-branches named`:
/// DDO 14 → 16, DDO-10 and DDO-15), and a lookup row the question names
/// filters the view (`--lookup-filters named`: ACME 13 → 19, "agents" →
/// `Party_Role_Code = 'AG'`). Neither fires on the Spider sample (no
/// patterns), so its run replays to session 18's committed outcome.
const S19_DEFAULTS: &[&str] = &["--inner-branches", "named", "--lookup-filters", "named"];

const DDO_S19_DEFAULTS: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-qwen2.5-coder-1.5b-defaults-s9.jsonl",
    expected: "benchmarks/cassettes/ddo-s19-defaults.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS],
    pool: None,
};

const SPIDER_S19_DEFAULTS: Run = Run {
    suite: "spider-dev",
    cassette: "benchmarks/cassettes/spider-dev-sample100-seed1-first50-s9.jsonl",
    expected: "benchmarks/cassettes/spider-dev-s18-defaults.expected.json",
    methods: &["lucy"],
    recorded: Some(100),
    flags: &[&["--sample", "100", "--seed", "1"], S15_HINTS, S18_DEFAULTS, S19_DEFAULTS],
    pool: None,
};

const ACME_S19_DEFAULTS: Run = Run {
    suite: "acme",
    cassette: "benchmarks/cassettes/acme-qwen2.5-coder-1.5b.jsonl",
    expected: "benchmarks/cassettes/acme-s19-defaults.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS],
    pool: None,
};

/// Session 20's defaults (issue 23), two rewrites of QueryView's SQL read
/// from the question's words, with no prompt change: a filter that fixes
/// an identifying column (an id, a number, a name) to a value the question
/// never holds is dropped (`--entity-literals on`: the model copies the
/// descriptions' example values), and an aggregate over every row is
/// grouped by the column the question asks "by" (`--by-groups on`). ACME
/// 19 → 21; DDO and the Spider sample unchanged (16, 63). Since session
/// 21 a `col IS NOT NULL` test alone no longer keeps `--by-groups` from
/// grouping by `col` (ACME 21 → 22: IQ_5b813c2c; the fresh 20: 8 → 9).
const S20_DEFAULTS: &[&str] = &["--entity-literals", "on", "--by-groups", "on", "--shorten-prompt", "on"];

const DDO_S20_DEFAULTS: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-qwen2.5-coder-1.5b-defaults-s9.jsonl",
    expected: "benchmarks/cassettes/ddo-s20-defaults.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS, S20_DEFAULTS],
    pool: None,
};

const SPIDER_S20_DEFAULTS: Run = Run {
    suite: "spider-dev",
    cassette: "benchmarks/cassettes/spider-dev-sample100-seed1-first50-s9.jsonl",
    expected: "benchmarks/cassettes/spider-dev-s20-defaults.expected.json",
    methods: &["lucy"],
    recorded: Some(100),
    flags: &[&["--sample", "100", "--seed", "1"], S15_HINTS, S18_DEFAULTS, S19_DEFAULTS, S20_DEFAULTS],
    pool: None,
};

const ACME_S20_DEFAULTS: Run = Run {
    suite: "acme",
    cassette: "benchmarks/cassettes/acme-qwen2.5-coder-1.5b.jsonl",
    expected: "benchmarks/cassettes/acme-s20-defaults.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS, S20_DEFAULTS],
    pool: None,
};

/// Session 21's default (issue 23): a text filter whose literal the
/// database does not hold in that column is respelled to the one value it
/// folds to, or moved to the one other view column holding it, when the
/// question holds it (`--value-literals on`; the value index, no prompt
/// change). The Spider sample 63 → 64 (113: `countries_Continent =
/// 'France'` → `countries_CountryName = 'france'`); DDO and ACME unchanged
/// (it never fires there), so their runs replay to session 20's outcomes
/// (ACME's 22 with session 21's reading of presence tests in `--by-groups`).
const S21_DEFAULTS: &[&str] = &["--value-literals", "on"];

const DDO_S21_DEFAULTS: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-qwen2.5-coder-1.5b-defaults-s9.jsonl",
    expected: "benchmarks/cassettes/ddo-s20-defaults.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS, S20_DEFAULTS, S21_DEFAULTS],
    pool: None,
};

const SPIDER_S21_DEFAULTS: Run = Run {
    suite: "spider-dev",
    cassette: "benchmarks/cassettes/spider-dev-sample100-seed1-first50-s9.jsonl",
    expected: "benchmarks/cassettes/spider-dev-s21-defaults.expected.json",
    methods: &["lucy"],
    recorded: Some(100),
    flags: &[&["--sample", "100", "--seed", "1"], S15_HINTS, S18_DEFAULTS, S19_DEFAULTS, S20_DEFAULTS, S21_DEFAULTS],
    pool: None,
};

const ACME_S21_DEFAULTS: Run = Run {
    suite: "acme",
    cassette: "benchmarks/cassettes/acme-qwen2.5-coder-1.5b.jsonl",
    expected: "benchmarks/cassettes/acme-s20-defaults.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS, S20_DEFAULTS, S21_DEFAULTS],
    pool: None,
};

/// ACME, all 44, fresh: questions 21–44 sent fresh in session 21 (binary
/// of session 21's tree with `--value-literals`, before the `--by-groups`
/// reading of presence tests; 10:36–11:41 UTC, builds beside it), the
/// first 20 from session 20's fresh recording (`ACME_S20_FRESH20`),
/// replayed with today's defaults.
const ACME_S21_FRESH44: Run = Run {
    suite: "acme",
    cassette: "benchmarks/cassettes/acme-s20-fresh.jsonl",
    expected: "benchmarks/cassettes/acme-s21-fresh44.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS, S20_DEFAULTS, S21_DEFAULTS],
    pool: None,
};

/// `--core-votes majority` (session 21, off by default): MatchTables keeps
/// only the core tables more than half of its samples named, or the
/// question names; the 27 calls its narrower views needed were recorded
/// fresh into each suite's cassette (binary of session 21's tree,
/// 11:41–11:58 UTC): ACME 22 → 23 (IQ_43461e70), DDO 16 and the Spider
/// sample 64 unchanged, none lost; held-out: DDO's 5 → 5, ACME's 4 → 3.
const MAJORITY: &[&str] = &["--core-votes", "majority"];

const DDO_S21_MAJORITY: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-qwen2.5-coder-1.5b-defaults-s9.jsonl",
    expected: "benchmarks/cassettes/ddo-s21-majority.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS, S20_DEFAULTS, S21_DEFAULTS, MAJORITY],
    pool: None,
};

const SPIDER_S21_MAJORITY: Run = Run {
    suite: "spider-dev",
    cassette: "benchmarks/cassettes/spider-dev-sample100-seed1-first50-s9.jsonl",
    expected: "benchmarks/cassettes/spider-dev-s21-majority.expected.json",
    methods: &["lucy"],
    recorded: Some(100),
    flags: &[
        &["--sample", "100", "--seed", "1"],
        S15_HINTS,
        S18_DEFAULTS,
        S19_DEFAULTS,
        S20_DEFAULTS,
        S21_DEFAULTS,
        MAJORITY,
    ],
    pool: None,
};

const ACME_S21_MAJORITY: Run = Run {
    suite: "acme",
    cassette: "benchmarks/cassettes/acme-qwen2.5-coder-1.5b.jsonl",
    expected: "benchmarks/cassettes/acme-s21-majority.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS, S20_DEFAULTS, S21_DEFAULTS, MAJORITY],
    pool: None,
};

const DDO_HELDOUT_MAJORITY: Run = Run {
    suite: "ddo-heldout",
    cassette: "benchmarks/cassettes/ddo-heldout-s20.jsonl",
    expected: "benchmarks/cassettes/ddo-heldout-s21-majority.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS, S20_DEFAULTS, S21_DEFAULTS, MAJORITY],
    pool: None,
};

const ACME_HELDOUT_MAJORITY: Run = Run {
    suite: "acme-heldout",
    cassette: "benchmarks/cassettes/acme-heldout-s20.jsonl",
    expected: "benchmarks/cassettes/acme-heldout-s21-majority.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS, S20_DEFAULTS, S21_DEFAULTS, MAJORITY],
    pool: None,
};

/// Held-out questions (session 20): 12 on DDO's and 12 on ACME's database,
/// written with their gold SQL before any lucy run on them and recorded
/// fresh once with session 20's defaults (binary of this session's tree,
/// 06:56–07:43 UTC; builds and tests beside it): lucy 5 vs direct 3 on
/// DDO's, 4 vs 1 on ACME's. No lever was tuned on them.
const DDO_HELDOUT_S20: Run = Run {
    suite: "ddo-heldout",
    cassette: "benchmarks/cassettes/ddo-heldout-s20.jsonl",
    expected: "benchmarks/cassettes/ddo-heldout-s20.expected.json",
    methods: &["lucy", "direct"],
    recorded: None,
    flags: &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS, S20_DEFAULTS],
    pool: None,
};

const ACME_HELDOUT_S20: Run = Run {
    suite: "acme-heldout",
    cassette: "benchmarks/cassettes/acme-heldout-s20.jsonl",
    expected: "benchmarks/cassettes/acme-heldout-s20.expected.json",
    methods: &["lucy", "direct"],
    recorded: None,
    flags: &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS, S20_DEFAULTS],
    pool: None,
};

/// ACME's first 20 questions with session 20's defaults, every call sent
/// fresh in session 20 (38 calls with the binary of `5f796bb`, 06:41–06:56
/// UTC, then 196 with this session's tree, 07:50–08:45; tests beside it
/// for half of the time): 8 of 20, where the replay of the older
/// recordings (`ACME_S20_DEFAULTS`) has 9; IQ_d9925658 fails fresh (phase
/// 1's extra tables), as in session 19's fresh check.
const ACME_S20_FRESH20: Run = Run {
    suite: "acme",
    cassette: "benchmarks/cassettes/acme-s20-fresh.jsonl",
    expected: "benchmarks/cassettes/acme-s20-fresh20.expected.json",
    methods: &["lucy"],
    recorded: Some(20),
    flags: &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS, S20_DEFAULTS],
    pool: None,
};

/// DDO with session 19's defaults, every call sent fresh in session 19
/// (binary of `c82f4e4`, 04:50–05:15 UTC, 189 calls; builds and tests
/// beside it): 16 of 24, the same questions as the replay of the older
/// recordings (`DDO_S19_DEFAULTS`).
const DDO_S19_FRESH: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-s19-fresh.jsonl",
    expected: "benchmarks/cassettes/ddo-s19-fresh.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS],
    pool: None,
};

/// The direct baseline on ACME, all 44, recorded fresh in session 19 with
/// the binary of session 18's last commit and its defaults (session 7's
/// `ACME_DIRECT_S7` was recorded with the first grammar): 3 of 44 again.
const ACME_DIRECT_S19: Run = Run {
    suite: "acme",
    cassette: "benchmarks/cassettes/acme-methods-s18.jsonl",
    expected: "benchmarks/cassettes/acme-direct-s19.expected.json",
    methods: &["direct"],
    recorded: None,
    flags: &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS],
    pool: None,
};

/// `fewshot` (DynVS) on ACME, all 44, recorded fresh in session 19 with
/// the in-database pool (templated from ACME's schema and values, never
/// its questions) and the binary of session 18's last commit: 2 of 44.
const ACME_FEWSHOT_S19: Run = Run {
    suite: "acme",
    cassette: "benchmarks/cassettes/acme-methods-s18.jsonl",
    expected: "benchmarks/cassettes/acme-fewshot-s19.expected.json",
    methods: &["fewshot"],
    recorded: None,
    flags: &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS],
    pool: Some("in-database"),
};

/// RASL on ACME, all 44 (issue 24), recorded fresh into the methods
/// cassette in four stretches over sessions 19–21 (binaries of `5a91179`
/// and `a6f67c0`: RASL unchanged between them), 159 calls: 2 of 44.
const ACME_RASL_S21: Run = Run {
    suite: "acme",
    cassette: "benchmarks/cassettes/acme-methods-s18.jsonl",
    expected: "benchmarks/cassettes/acme-rasl-s21.expected.json",
    methods: &["rasl"],
    recorded: None,
    flags: &[],
    pool: None,
};

/// TA-SQL on ACME, all 44 (issue 24), recorded fresh into the methods
/// cassette in session 22 (binary of `b4fe0c2`, an AMD EPYC with AVX-512,
/// 15:51–16:31 UTC, tests beside it), 162 calls: 3 of 44.
const ACME_TASQL_S22: Run = Run {
    suite: "acme",
    cassette: "benchmarks/cassettes/acme-methods-s18.jsonl",
    expected: "benchmarks/cassettes/acme-tasql-s22.expected.json",
    methods: &["ta-sql"],
    recorded: None,
    flags: &[],
    pool: None,
};

/// DDO with today's defaults (session 21's), every call sent fresh in
/// session 22 on an AMD EPYC with AVX-512 (binary of `b4fe0c2`,
/// 16:31–16:42 UTC, nothing else recording; 189 calls): 16 of 24, the
/// same questions as the replay of the older recordings
/// (`DDO_S21_DEFAULTS`); median 18.8 s per question.
const DDO_S22_FRESH: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-s22-fresh.jsonl",
    expected: "benchmarks/cassettes/ddo-s22-fresh.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS, S20_DEFAULTS, S21_DEFAULTS],
    pool: None,
};

/// `--set query.form=plan` and `=auto`, after today's defaults.
/// A generous bound on each query's run for replays whose recorded
/// queries take seconds (the Spider sample's self-joins of `world_1`'s view:
/// 3–7 s here, past the default 30 s when the 2-core CI machine runs the
/// replays side by side); the recorded runs never hit the bound.
const LOADED_MACHINE: &[&str] = &["--set", "limits.exec_timeout_s=300"];
const PLAN_FORM: &[&str] = &["--set", "query.form=plan"];
const AUTO_FORM: &[&str] = &["--set", "query.form=auto"];

/// QueryView's plan form (issue 46), session 29 (the plan prompt lists each
/// column once, a role instance's note once; the plan calls of session 28
/// no longer match it): DDO's 24 with phase 1 and GenerateView replayed from
/// session 22's fresh recording and the 24 plan calls sent fresh (an AMD
/// EPYC without AVX-512, 20:06–20:14 UTC, load 1–2), kept in a small
/// cassette of their own beside it. benchmarks/results/query-plan.md has
/// the numbers.
const DDO_S29_PLAN: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-s22-fresh.jsonl,benchmarks/cassettes/ddo-plan-s29.jsonl",
    expected: "benchmarks/cassettes/ddo-plan-s29.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS, S20_DEFAULTS, S21_DEFAULTS, PLAN_FORM],
    pool: None,
};

/// The same recording in the `auto` form (free SQL answers where a plan
/// selects less than the question lists, fails, or finds no row).
const DDO_S29_AUTO: Run = Run {
    expected: "benchmarks/cassettes/ddo-auto-s29.expected.json",
    flags: &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS, S20_DEFAULTS, S21_DEFAULTS, AUTO_FORM],
    ..DDO_S29_PLAN
};

/// The held-out DDO questions (session 20's 12) in the plan form, the
/// plan calls fresh in session 29 (same binary and machine as
/// `DDO_S29_PLAN`), and in session 30 the one question asking per month
/// (ddo-h01: its prompt and grammar now offer a date bucket). These
/// questions were looked at while the plan's tidying was written (session
/// 28).
const DDO_HELDOUT_S29_PLAN: Run = Run {
    suite: "ddo-heldout",
    cassette: "benchmarks/cassettes/ddo-heldout-s20.jsonl,benchmarks/cassettes/ddo-heldout-plan-s29.jsonl,benchmarks/cassettes/ddo-heldout-plan-s30.jsonl",
    expected: "benchmarks/cassettes/ddo-heldout-plan-s29.expected.json",
    ..DDO_S29_PLAN
};

const DDO_HELDOUT_S29_AUTO: Run = Run {
    expected: "benchmarks/cassettes/ddo-heldout-auto-s29.expected.json",
    flags: DDO_S29_AUTO.flags,
    ..DDO_HELDOUT_S29_PLAN
};

/// The held-out ACME questions (session 20's 12) in the plan form, the
/// plan calls fresh in session 29 (same binary and machine).
const ACME_HELDOUT_S29_PLAN: Run = Run {
    suite: "acme-heldout",
    cassette: "benchmarks/cassettes/acme-heldout-s20.jsonl,benchmarks/cassettes/acme-heldout-plan-s29.jsonl",
    expected: "benchmarks/cassettes/acme-heldout-plan-s29.expected.json",
    ..DDO_S29_PLAN
};

const ACME_HELDOUT_S29_AUTO: Run = Run {
    expected: "benchmarks/cassettes/acme-heldout-auto-s29.expected.json",
    flags: DDO_S29_AUTO.flags,
    ..ACME_HELDOUT_S29_PLAN
};

/// ACME's 44 in the plan form, phase 1 replayed from session 20's fresh
/// recording, the 44 plan calls fresh in session 29 (20:57–21:32 UTC, same
/// machine; load 2–3 with the clean-clone test run beside it at `nice 19`).
const ACME_S29_PLAN: Run = Run {
    suite: "acme",
    cassette: "benchmarks/cassettes/acme-s20-fresh.jsonl,benchmarks/cassettes/acme-plan-s29.jsonl",
    expected: "benchmarks/cassettes/acme-plan-s29.expected.json",
    ..DDO_S29_PLAN
};

const ACME_S29_AUTO: Run =
    Run { expected: "benchmarks/cassettes/acme-auto-s29.expected.json", flags: DDO_S29_AUTO.flags, ..ACME_S29_PLAN };

/// The Spider sample (100, seed 1) in the plan form, the plan calls fresh
/// in session 29 (same binary and machine), and in session 30 the one
/// question whose prompt and grammar now offer a date bucket (481, "in
/// each year").
const SPIDER_S29_PLAN: Run = Run {
    suite: "spider-dev",
    cassette: "benchmarks/cassettes/spider-dev-s23-fresh.jsonl,benchmarks/cassettes/spider-dev-plan-s29.jsonl,benchmarks/cassettes/spider-dev-plan-s30.jsonl",
    expected: "benchmarks/cassettes/spider-dev-plan-s29.expected.json",
    methods: &["lucy"],
    recorded: Some(100),
    flags: &[
        &["--sample", "100", "--seed", "1"],
        S15_HINTS,
        S18_DEFAULTS,
        S19_DEFAULTS,
        S20_DEFAULTS,
        S21_DEFAULTS,
        PLAN_FORM,
        LOADED_MACHINE,
    ],
    pool: None,
};

const SPIDER_S29_AUTO: Run = Run {
    expected: "benchmarks/cassettes/spider-dev-auto-s29.expected.json",
    flags: &[
        &["--sample", "100", "--seed", "1"],
        S15_HINTS,
        S18_DEFAULTS,
        S19_DEFAULTS,
        S20_DEFAULTS,
        S21_DEFAULTS,
        AUTO_FORM,
        LOADED_MACHINE,
    ],
    ..SPIDER_S29_PLAN
};

/// Today's defaults (session 21's), spelled out for the replay.
const TODAY: &[&[&str]] = &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS, S20_DEFAULTS, S21_DEFAULTS];

/// Today's defaults on the Spider sample's 100 with the sample's flags.
const SPIDER_TODAY: &[&[&str]] =
    &[&["--sample", "100", "--seed", "1"], S15_HINTS, S18_DEFAULTS, S19_DEFAULTS, S20_DEFAULTS, S21_DEFAULTS];

/// The Spider sample's 100 with today's defaults, every call sent fresh in
/// session 23 (AMD EPYC with AVX-512, binary of `5b87945`, nothing else
/// running) into a new cassette: lucy (`SPIDER_S23_FRESH`), then direct
/// (`SPIDER_DIRECT_S23_FRESH`) on the same machine.
const SPIDER_S23_FRESH: Run = Run {
    suite: "spider-dev",
    cassette: "benchmarks/cassettes/spider-dev-s23-fresh.jsonl",
    expected: "benchmarks/cassettes/spider-dev-s23-fresh.expected.json",
    methods: &["lucy"],
    recorded: Some(100),
    flags: SPIDER_TODAY,
    pool: None,
};

const SPIDER_DIRECT_S23_FRESH: Run = Run {
    suite: "spider-dev",
    cassette: "benchmarks/cassettes/spider-dev-s23-fresh.jsonl",
    expected: "benchmarks/cassettes/spider-dev-direct-s23-fresh.expected.json",
    methods: &["direct"],
    recorded: Some(100),
    flags: SPIDER_TODAY,
    pool: None,
};

/// lucy + examples with today's defaults (session 23, issue 24): each
/// suite's fresh recording with the in-database pool, the QueryView calls
/// the examples change sent fresh and appended to that cassette
/// (MatchTables' prompts do not see the examples, so its calls replay).
/// The Spider sample's cross-database pool changes one prompt of 100 (an
/// example from another database reads tables the view lacks, so it is
/// left out of QueryView's prompt), so Spider was recorded with the
/// in-database one. ACME's was stopped after 8 questions (150–330 s each,
/// builds beside); its 9 calls stay in `acme-s20-fresh.jsonl` for a later
/// resume.
const DDO_S23_EXAMPLES: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-s22-fresh.jsonl",
    expected: "benchmarks/cassettes/ddo-s23-examples.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: TODAY,
    pool: Some("in-database"),
};

/// Session 25: the execution vote (`--exec-vote 3`) over today's defaults
/// on DDO: phase 1 replays session 22's fresh recording; its QueryView calls
/// were the first ones of the `--runner-up on` run (deleted in session 26,
/// issue 45), appended to that cassette: 15 of 24.
const DDO_S25_EXEC_VOTE: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-s22-fresh.jsonl",
    expected: "benchmarks/cassettes/ddo-s25-exec-vote.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S15_HINTS, S18_DEFAULTS, S19_DEFAULTS, S20_DEFAULTS, S21_DEFAULTS, &["--exec-vote", "3"]],
    pool: None,
};

/// lucy + examples on ACME with today's defaults (in-database pool; issue
/// 24): phase 1 replays the fresh cassette, QueryView was sent fresh,
/// 8 questions in session 23 and the other 36 in session 24 (the same
/// binary, `9a98f14`'s tree), appended to it.
const ACME_S24_EXAMPLES: Run = Run {
    suite: "acme",
    cassette: "benchmarks/cassettes/acme-s20-fresh.jsonl",
    expected: "benchmarks/cassettes/acme-s24-examples.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: TODAY,
    pool: Some("in-database"),
};

const SPIDER_S23_EXAMPLES: Run = Run {
    suite: "spider-dev",
    cassette: "benchmarks/cassettes/spider-dev-s23-fresh.jsonl",
    expected: "benchmarks/cassettes/spider-dev-s23-examples.expected.json",
    methods: &["lucy"],
    recorded: Some(100),
    flags: SPIDER_TODAY,
    pool: Some("in-database"),
};

/// Session 12's `lucy --examples` on DDO (issue 24) with the in-database
/// pool, recorded into session 9's defaults cassette and appended to it.
const DDO_S12_EXAMPLES: Run = Run {
    suite: "ddo",
    cassette: "benchmarks/cassettes/ddo-qwen2.5-coder-1.5b-defaults-s9.jsonl",
    expected: "benchmarks/cassettes/ddo-examples-s12.expected.json",
    methods: &["lucy"],
    recorded: None,
    flags: &[S10_DEFAULTS],
    pool: Some("in-database"),
};

/// `lucy bench SUITE --replay CASSETTE` on the first `limit` questions (all
/// with `None`), with a freshly built pool of kind `pool` when given.
fn bench(
    suite: &str,
    cassette: &Path,
    limit: Option<usize>,
    methods: &str,
    flags: &[&[&str]],
    out: &Path,
    pool: Option<&str>,
) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lucy"));
    cmd.args(["bench", suite, "--no-progress", "--method", methods]).args(flags.iter().copied().flatten());
    // Name hints are on by default since session 15; the runs recorded
    // before were asked without them.
    if !flags.iter().copied().flatten().any(|f| *f == "--name-hints") {
        cmd.args(["--name-hints", "off"]);
    }
    // Session 17 moved three defaults: COUNT(*) reads the counted table,
    // MatchTables keeps the core tables the question names, and an empty
    // answer is run again over a narrower view. The runs recorded before
    // had none of them, nor session 18's `--drop-unjoinable` and kinds
    // (`--kind-names`, `--kind-instance`: on by default since session 18),
    // nor session 19's `--inner-branches named` and `--lookup-filters named`,
    // nor session 20's `--entity-literals on`, `--by-groups on` and
    // `--shorten-prompt on` (a prompt over the context asked again shorter),
    // nor session 21's `--value-literals on` (and `--core-votes` is named:
    // `any` is the default, `majority` measured).
    for (flag, off) in [
        ("--count-names", "off"),
        ("--table-names", "off"),
        ("--narrow-view", "off"),
        ("--drop-unjoinable", "off"),
        ("--kind-names", "off"),
        ("--kind-instance", "off"),
        ("--inner-branches", "off"),
        ("--lookup-filters", "off"),
        ("--entity-literals", "off"),
        ("--by-groups", "off"),
        ("--shorten-prompt", "off"),
        ("--value-literals", "off"),
        ("--core-votes", "any"),
    ] {
        if !flags.iter().copied().flatten().any(|f| *f == flag) {
            cmd.args([flag, off]);
        }
    }
    // Session 30 made QueryView's `auto` form the default; the runs
    // recorded before it (and any not naming a form) were asked for SQL.
    if !flags.iter().copied().flatten().any(|f| f.starts_with("query.form=")) {
        cmd.args(["--set", "query.form=sql"]);
    }
    if let Some(kind) = pool {
        std::fs::create_dir_all(out).unwrap();
        let file = out.join("pool.jsonl");
        let o = Command::new(env!("CARGO_BIN_EXE_lucy"))
            .args(["examples", "pool", "--suite", suite, "--kind", kind, "--out"])
            .arg(&file)
            .output()
            .unwrap();
        assert!(o.status.success(), "examples pool: {}", String::from_utf8_lossy(&o.stderr));
        cmd.arg("--examples").arg(file);
    }
    if let Some(n) = limit {
        cmd.args(["--limit", &n.to_string()]);
    }
    cmd.arg("--replay")
        .arg(cassette)
        .arg("--out")
        .arg(out)
        .env_remove("LUCY_LLM_MODEL")
        .env_remove("LUCY_LLM_GGUF")
        .output()
        .unwrap()
}

/// What a replay must reproduce: each method's summary without wall times,
/// and per question the SQL, the metrics and the attribution.
fn outcome(dir: &Path, methods: &[&str]) -> Value {
    let mut all = serde_json::Map::new();
    for m in methods {
        // One method writes into the output directory itself.
        let path = if methods.len() == 1 { dir.join("results.json") } else { dir.join(m).join("results.json") };
        let r: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let mut summary = r["summary"].clone();
        for k in ["wall_ms_total", "solve_ms_median", "solve_ms_p95"] {
            summary.as_object_mut().unwrap().remove(k);
        }
        let questions: Vec<Value> = r["questions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| {
                let mut metrics = q["metrics"].clone();
                if let Some(o) = metrics.as_object_mut() {
                    o.remove("solve_ms");
                }
                json!({"id": q["id"], "sql": q["prediction"]["sql"], "metrics": metrics, "attribution": q["attribution"]["label"]})
            })
            .collect();
        all.insert(m.to_string(), json!({"llm": r["llm"], "summary": summary, "questions": questions}));
    }
    Value::Object(all)
}

fn replays_to_the_committed_outcome(run: &Run) {
    let dir = tempfile::tempdir().unwrap();
    if std::env::var_os("LUCY_UPDATE_REPLAY").is_some() {
        // Every question the recording covers.
        let o = bench(
            run.suite,
            Path::new(run.cassette),
            run.recorded,
            &run.methods.join(","),
            run.flags,
            dir.path(),
            run.pool,
        );
        assert!(o.status.success(), "{} replay failed: {}", run.suite, String::from_utf8_lossy(&o.stderr));
        std::fs::write(run.expected, serde_json::to_string_pretty(&outcome(dir.path(), run.methods)).unwrap() + "\n")
            .unwrap();
        return;
    }
    let expected_text = std::fs::read_to_string(run.expected).unwrap();
    let expected: Value = serde_json::from_str(&expected_text).unwrap();
    let first = run.methods[0];
    let n = expected[first]["questions"].as_array().unwrap().len();
    assert!(n >= 6, "the committed {} run covers {n} questions", run.suite);
    let o = bench(run.suite, Path::new(run.cassette), Some(n), &run.methods.join(","), run.flags, dir.path(), run.pool);
    assert!(o.status.success(), "{} replay failed: {}", run.suite, String::from_utf8_lossy(&o.stderr));
    let got = outcome(dir.path(), run.methods);
    for m in run.methods {
        assert_eq!(got[m]["summary"], expected[m]["summary"], "{} {m}: summary", run.suite);
        assert_eq!(got[m]["questions"], expected[m]["questions"], "{} {m}: questions", run.suite);
    }
    assert!(
        got[first]["llm"].as_str().unwrap().contains("sha256:cc324af070c2"),
        "recorded with the default model: {}",
        got[first]["llm"]
    );
}

#[test]
fn the_recorded_ddo_run_replays_to_the_committed_outcome() {
    replays_to_the_committed_outcome(&DDO);
}

#[test]
fn the_recorded_acme_run_replays_to_the_committed_outcome() {
    replays_to_the_committed_outcome(&ACME);
    replays_to_the_committed_outcome(&ACME_DIRECT_S7);
}

#[test]
fn the_acme_kinds_run_replays_to_its_committed_outcome() {
    replays_to_the_committed_outcome(&ACME_S14_KINDS);
}

#[test]
fn the_ddo_and_spider_kinds_runs_replay_to_their_committed_outcomes() {
    replays_to_the_committed_outcome(&DDO_S14_KINDS);
    replays_to_the_committed_outcome(&SPIDER_S14_KINDS);
}

#[test]
fn the_spider_sample_run_replays_to_its_committed_outcome() {
    replays_to_the_committed_outcome(&SPIDER_S9);
    replays_to_the_committed_outcome(&SPIDER_S10);
    replays_to_the_committed_outcome(&SPIDER_S10_MV3);
}

#[test]
fn the_seed_method_runs_replay_to_their_committed_outcomes() {
    replays_to_the_committed_outcome(&DDO_METHODS_S11);
    replays_to_the_committed_outcome(&DDO_CRUSH_S12);
    replays_to_the_committed_outcome(&DDO_FEWSHOT_S12);
    replays_to_the_committed_outcome(&DDO_S12_EXAMPLES);
}

#[test]
fn the_spider_seed_method_runs_replay_to_their_committed_outcomes() {
    replays_to_the_committed_outcome(&SPIDER_FEWSHOT_S15);
    replays_to_the_committed_outcome(&SPIDER_CRUSH_S15);
    replays_to_the_committed_outcome(&SPIDER_RASL_S16);
    replays_to_the_committed_outcome(&SPIDER_TASQL_S17);
}

#[test]
fn the_name_hint_runs_replay_to_their_committed_outcomes() {
    replays_to_the_committed_outcome(&DDO_S15_HINTS);
    replays_to_the_committed_outcome(&SPIDER_S15_HINTS);
    replays_to_the_committed_outcome(&ACME_S15_HINTS);
}

#[test]
fn the_table_name_and_group_hint_runs_replay_to_their_committed_outcomes() {
    replays_to_the_committed_outcome(&SPIDER_S16_NAMES_GROUPS);
    replays_to_the_committed_outcome(&ACME_S16_TABLE_NAMES);
}

#[test]
fn the_session_17_default_runs_replay_to_their_committed_outcomes() {
    replays_to_the_committed_outcome(&DDO_S17_DEFAULTS);
    replays_to_the_committed_outcome(&SPIDER_S17_DEFAULTS);
    replays_to_the_committed_outcome(&SPIDER_DIRECT_S17);
    replays_to_the_committed_outcome(&ACME_S17_DEFAULTS);
}

#[test]
fn the_session_18_default_runs_replay_to_their_committed_outcomes() {
    replays_to_the_committed_outcome(&DDO_S18_DEFAULTS);
    replays_to_the_committed_outcome(&ACME_CRUSH_S18);
}

#[test]
fn the_session_19_default_runs_replay_to_their_committed_outcomes() {
    replays_to_the_committed_outcome(&DDO_S19_DEFAULTS);
    replays_to_the_committed_outcome(&DDO_S19_FRESH);
    replays_to_the_committed_outcome(&SPIDER_S19_DEFAULTS);
    replays_to_the_committed_outcome(&ACME_S19_DEFAULTS);
    replays_to_the_committed_outcome(&ACME_DIRECT_S19);
    replays_to_the_committed_outcome(&ACME_FEWSHOT_S19);
}

#[test]
fn the_session_20_default_runs_replay_to_their_committed_outcomes() {
    replays_to_the_committed_outcome(&DDO_S20_DEFAULTS);
    replays_to_the_committed_outcome(&SPIDER_S20_DEFAULTS);
    replays_to_the_committed_outcome(&ACME_S20_DEFAULTS);
    replays_to_the_committed_outcome(&ACME_S20_FRESH20);
}

#[test]
fn the_session_21_default_runs_replay_to_their_committed_outcomes() {
    replays_to_the_committed_outcome(&DDO_S21_DEFAULTS);
    replays_to_the_committed_outcome(&SPIDER_S21_DEFAULTS);
    replays_to_the_committed_outcome(&ACME_S21_DEFAULTS);
    replays_to_the_committed_outcome(&ACME_RASL_S21);
    replays_to_the_committed_outcome(&ACME_S21_FRESH44);
}

#[test]
fn the_session_22_runs_replay_to_their_committed_outcomes() {
    replays_to_the_committed_outcome(&ACME_TASQL_S22);
    replays_to_the_committed_outcome(&DDO_S22_FRESH);
}

#[test]
fn the_session_23_runs_replay_to_their_committed_outcomes() {
    replays_to_the_committed_outcome(&SPIDER_S23_FRESH);
    replays_to_the_committed_outcome(&SPIDER_DIRECT_S23_FRESH);
}

#[test]
fn the_session_29_plan_form_runs_replay_to_their_committed_outcomes() {
    replays_to_the_committed_outcome(&DDO_S29_PLAN);
    replays_to_the_committed_outcome(&DDO_S29_AUTO);
    replays_to_the_committed_outcome(&DDO_HELDOUT_S29_PLAN);
    replays_to_the_committed_outcome(&DDO_HELDOUT_S29_AUTO);
    replays_to_the_committed_outcome(&ACME_HELDOUT_S29_PLAN);
    replays_to_the_committed_outcome(&ACME_HELDOUT_S29_AUTO);
    replays_to_the_committed_outcome(&ACME_S29_PLAN);
    replays_to_the_committed_outcome(&ACME_S29_AUTO);
    replays_to_the_committed_outcome(&SPIDER_S29_PLAN);
    replays_to_the_committed_outcome(&SPIDER_S29_AUTO);
}

#[test]
fn the_session_25_runs_replay_to_their_committed_outcomes() {
    replays_to_the_committed_outcome(&DDO_S25_EXEC_VOTE);
}

#[test]
fn the_examples_runs_with_todays_defaults_replay_to_their_committed_outcomes() {
    replays_to_the_committed_outcome(&DDO_S23_EXAMPLES);
    replays_to_the_committed_outcome(&SPIDER_S23_EXAMPLES);
    replays_to_the_committed_outcome(&ACME_S24_EXAMPLES);
}

#[test]
fn the_core_majority_runs_replay_to_their_committed_outcomes() {
    replays_to_the_committed_outcome(&DDO_S21_MAJORITY);
    replays_to_the_committed_outcome(&SPIDER_S21_MAJORITY);
    replays_to_the_committed_outcome(&ACME_S21_MAJORITY);
    replays_to_the_committed_outcome(&DDO_HELDOUT_MAJORITY);
    replays_to_the_committed_outcome(&ACME_HELDOUT_MAJORITY);
}

#[test]
fn the_held_out_runs_replay_to_their_committed_outcomes() {
    replays_to_the_committed_outcome(&DDO_HELDOUT_S20);
    replays_to_the_committed_outcome(&ACME_HELDOUT_S20);
}

#[test]
fn the_ddo_lever_runs_replay_to_their_committed_outcomes() {
    for run in [&DDO_STRICT, &DDO_R1, &DDO_DEFAULTS_S9, &DDO_S10, &DDO_S10_VALUES, &DDO_S10_EXEC_VOTE] {
        replays_to_the_committed_outcome(run);
    }
}

fn a_stale_prompt_fails_saying_how_to_re_record(run: &Run) {
    // Stand-in for a changed prompt template: the recording of the first
    // MatchTables prompt holds other text (and so another key).
    let text = std::fs::read_to_string(run.cassette).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let i = lines.iter().position(|l| l.contains("\"phase\":\"match_tables\"")).expect("a match_tables record");
    let mut rec: Value = serde_json::from_str(&lines[i]).unwrap();
    let msgs = rec["messages"].as_array_mut().unwrap();
    let last = msgs.last_mut().unwrap();
    last["content"] = json!(format!("{} (reworded)", last["content"].as_str().unwrap()));
    rec["key"] = json!("0".repeat(64));
    lines[i] = rec.to_string();
    let dir = tempfile::tempdir().unwrap();
    let stale = dir.path().join("stale.jsonl");
    std::fs::write(&stale, lines.join("\n") + "\n").unwrap();
    let o = bench(run.suite, &stale, Some(1), "lucy", run.flags, &dir.path().join("out"), None);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("did not reproduce the recording") && err.contains("Re-record with --record"), "{err}");
    assert!(err.contains("match_tables"), "names the prompt: {err}");
}

#[test]
fn a_prompt_the_ddo_cassette_does_not_hold_fails_saying_how_to_re_record() {
    a_stale_prompt_fails_saying_how_to_re_record(&DDO);
}

#[test]
fn a_prompt_the_acme_cassette_does_not_hold_fails_saying_how_to_re_record() {
    a_stale_prompt_fails_saying_how_to_re_record(&ACME);
}
