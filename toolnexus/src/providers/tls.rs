//! TLS for every HTTPS client of the crate (the HTTP providers, MCP servers' streamable
//! HTTP): rustls with the process's crypto provider and the platform's certificate verifier.
//!
//! The provider is the one the host installed (`rustls::crypto::CryptoProvider::install_default`),
//! else the one rustls' crate features name: ring, which is all toolnexus turns on (fast to
//! build, no C toolchain beyond `cc`). rustls 0.23.48 deprecated naming ring's provider
//! directly (`rustls::crypto::ring::default_provider`: no post-quantum key exchange), and a
//! deprecated call breaks a user's `-D warnings` build; a host that wants post-quantum key
//! exchange installs its provider (aws-lc-rs) before the first client is built.

use std::sync::Arc;

/// The provider TLS clients use: the process's default, installed from rustls' crate
/// features when the host installed none (as `rustls::ClientConfig::builder` does).
fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    match rustls::crypto::CryptoProvider::get_default() {
        Some(provider) => Arc::clone(provider),
        None => Arc::clone(rustls::ClientConfig::builder().crypto_provider()),
    }
}

/// The TLS client configuration; the error says what could not be set up.
pub(crate) fn tls_config() -> Result<rustls::ClientConfig, String> {
    let provider = provider();
    let verifier = rustls_platform_verifier::Verifier::new(provider.clone())
        .map_err(|e| format!("cannot set up TLS certificate verification: {e}"))?;
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .dangerous() // a custom verifier: the platform's, not a weakened one
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(config)
}
