//! Numeric flags are checked when the command line is parsed (issue #13):
//! `--time-limit inf` and friends used to panic with "cannot convert float
//! seconds to Duration" (exit 101), in `bench` inside a worker thread;
//! `--temperature nan` was sent as `null`, `crush --gamma nan` accepted.
//! Each is now a usage error (exit 2) that names the flag and the range.

use std::process::Command;

fn lucy(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lucy")).args(args).output().expect("run lucy");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");

#[test]
fn out_of_range_numbers_are_usage_errors() {
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["view", "--model", MODEL, "--tables", "CLIENT", "--time-limit", "inf"],
            "--time-limit",
            "from 0.001 to 86400",
        ),
        (&["view", "--model", MODEL, "--tables", "CLIENT", "--time-limit", "1e308"], "--time-limit", "got 1e308"),
        (&["view", "--model", MODEL, "--tables", "CLIENT", "--time-limit", "nan"], "--time-limit", "got NaN"),
        (&["view", "--model", MODEL, "--tables", "CLIENT", "--time-limit", "0"], "--time-limit", "got 0"),
        (&["ask", "--model", MODEL, "--time-limit", "inf", "q"], "--time-limit", "from 0.001"),
        (&["ask", "--model", MODEL, "--llm-timeout", "1e308", "q"], "--llm-timeout", "got 1e308"),
        (&["ask", "--model", MODEL, "--temperature", "nan", "q"], "--temperature", "from 0 to 2, got NaN"),
        (&["ask", "--model", MODEL, "--llm-temperature=-1", "q"], "--llm-temperature", "from 0 to 2"),
        (&["ask", "--model", MODEL, "--samples", "0", "q"], "--samples", "from 1 to 100"),
        (&["bench", "--time-limit", "inf"], "--time-limit", "from 0.001"),
        (&["bench", "--time-limit", "1e308"], "--time-limit", "got 1e308"),
        (&["bench", "--jobs", "0"], "--jobs", "from 1 to 256"),
        (&["crush", "--model", MODEL, "--budget", "5", "--gamma", "nan"], "--gamma", "got NaN"),
        (&["crush", "--model", MODEL, "--budget", "5", "--temperature", "0"], "--temperature", "from 1e-6"),
        (&["crush", "--model", MODEL, "--budget", "5", "--time-limit", "inf"], "--time-limit", "from 0.001"),
    ];
    for (args, flag, range) in cases {
        let (code, err) = lucy(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(flag) && err.contains(range), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn a_large_valid_time_limit_runs() {
    let (code, err) = lucy(&["view", "--model", MODEL, "--tables", "CLIENT,DATACENTER", "--time-limit", "86400"]);
    assert_eq!(code, Some(0), "{err}");
}
