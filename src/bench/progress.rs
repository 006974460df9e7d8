//! The progress bar of a benchmark run.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar on stderr, hidden when stderr is not a terminal or CI is set.
pub fn progress_bar(len: u64, wanted: bool) -> ProgressBar {
    let visible = wanted && std::io::stderr().is_terminal() && std::env::var_os("CI").is_none();
    let bar = ProgressBar::with_draw_target(
        Some(len),
        if visible { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() },
    );
    if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} {msg} [{elapsed_precise}, eta {eta}]") {
        bar.set_style(style);
    }
    bar
}
