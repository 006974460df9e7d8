//! The TLS crypto provider for lucy's HTTPS clients (the OpenAI-compatible
//! chat and embedding endpoints).
//!
//! reqwest is built with `rustls-no-provider`: rustls needs a process-wide
//! [`rustls::crypto::CryptoProvider`], and lucy installs ring's (TLS 1.2 and
//! 1.3, the platform's root certificates through rustls-platform-verifier)
//! before it builds a client. aws-lc-rs, reqwest's default, took ~45 s of
//! every clean build here (benchmarks/results/build.md).

/// Install ring as the process's rustls provider, once. Harmless when a
/// provider is already installed (by an earlier call or by an embedding
/// application): that one is kept.
pub fn install_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            // Err only when another thread installed one first: keep it.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_client_builds_after_install() {
        super::install_provider();
        super::install_provider();
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
        reqwest::blocking::Client::builder().build().expect("an HTTPS-capable client");
    }
}
