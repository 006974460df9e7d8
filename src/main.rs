mod cli;

fn main() {
    reset_sigpipe();
    std::process::exit(cli::main());
}

/// Rust ignores SIGPIPE, so `lucy view ... | head` would panic on the
/// closed pipe; restore the default so the process ends quietly instead,
/// like other Unix filters.
fn reset_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
