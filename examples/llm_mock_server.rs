//! Run lucy's scripted OpenAI-compatible mock server from a JSON script, to
//! try `lucy ask` or `lucy bench` without an LLM:
//!
//! ```sh
//! cargo run --example llm_mock_server -- script.json      # prints http://127.0.0.1:PORT/v1
//! lucy ask --model dbmodels/ddo.json "..." --llm-url http://127.0.0.1:PORT/v1 --llm-model mock
//! ```
//!
//! The script format is in docs/llm.md ("Mock server"). The server stops
//! after the script's `idle_timeout_secs` without requests (600 s when the
//! script does not say) or after `max_requests`.

use lucy::llm::mock::{MockServer, Script};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: llm_mock_server SCRIPT.json (format: docs/llm.md, \"Mock server\")");
        std::process::exit(2);
    };
    let mut script = match Script::from_file(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let idle = *script.idle_timeout_secs.get_or_insert(600.0);
    let server = match MockServer::try_start(script) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    println!("{}", server.url());
    eprintln!("mock LLM server listening; stops after {idle} s without requests");
    server.wait();
}
