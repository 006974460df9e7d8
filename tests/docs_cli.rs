//! docs/cli.md carries the `--help` text of every command (and the
//! `--help-all` text of those that hide levers) between `<!-- help: … -->`
//! markers. This test regenerates those blocks from the
//! real binary and fails when the doc is stale, so the CLI reference stays
//! true. Regenerate with: `LUCY_UPDATE_DOCS=1 cargo test --test docs_cli`.

use std::process::Command;

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cli.md");

/// Every command whose help is documented, as argument lists.
const COMMANDS: &[&[&str]] = &[
    &[],
    &["init"],
    &["config", "show"],
    &["config", "levers"],
    &["model"],
    &["model", "check"],
    &["model", "show"],
    &["model", "import"],
    &["model", "diff"],
    &["model", "suggest"],
    &["model", "schema"],
    &["view"],
    &["ask"],
    &["explain"],
    &["bench"],
    &["crush"],
    &["check"],
    &["examples"],
    &["examples", "add"],
    &["examples", "check"],
];

/// Commands whose every option (the levers too) is documented.
const COMMANDS_ALL: &[&[&str]] = &[&["ask"], &["bench"]];

fn help(args: &[&str], flag: &str) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_lucy")).args(args).arg(flag).output().unwrap();
    assert!(o.status.success(), "lucy {} {flag} failed", args.join(" "));
    String::from_utf8(o.stdout).unwrap().trim_end().to_string()
}

fn name_of(args: &[&str], flag: &str) -> String {
    let name = if args.is_empty() { "lucy".to_string() } else { format!("lucy {}", args.join(" ")) };
    if flag == "--help" {
        name
    } else {
        format!("{name} {flag}")
    }
}

fn block(args: &[&str], flag: &str) -> String {
    let name = name_of(args, flag);
    let cmd = if flag == "--help" { format!("{name} --help") } else { name.clone() };
    format!("<!-- help: {name} -->\n```text\n$ {cmd}\n{}\n```\n<!-- end help -->", help(args, flag))
}

/// Replace every help block of `doc` with the current text.
fn regenerate(doc: &str) -> String {
    let mut out = doc.to_string();
    let all = COMMANDS.iter().map(|a| (*a, "--help")).chain(COMMANDS_ALL.iter().map(|a| (*a, "--help-all")));
    for (args, flag) in all {
        let name = name_of(args, flag);
        let start_tag = format!("<!-- help: {name} -->");
        let start = out.find(&start_tag).unwrap_or_else(|| panic!("docs/cli.md has no block `{start_tag}`"));
        let end = start
            + out[start..].find("<!-- end help -->").expect("unterminated help block")
            + "<!-- end help -->".len();
        out.replace_range(start..end, &block(args, flag));
    }
    out
}

#[test]
fn cli_reference_matches_the_binary() {
    let doc = std::fs::read_to_string(DOC).unwrap();
    let fresh = regenerate(&doc);
    if std::env::var_os("LUCY_UPDATE_DOCS").is_some() {
        std::fs::write(DOC, &fresh).unwrap();
        return;
    }
    assert!(
        fresh == doc,
        "docs/cli.md is stale: run `LUCY_UPDATE_DOCS=1 cargo test --test docs_cli` and review the diff"
    );
}
