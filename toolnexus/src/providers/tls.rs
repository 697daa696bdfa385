//! TLS for every HTTPS client of the crate (the HTTP providers, MCP servers' streamable
//! HTTP): rustls with the ring crypto provider (fast to build, no C toolchain beyond `cc`) and
//! the platform's certificate verifier.

use std::sync::Arc;

/// The TLS client configuration; the error says what could not be set up.
pub(crate) fn tls_config() -> Result<rustls::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
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
