//! TLS for every HTTP client the library makes (providers, MCP over HTTP, the web back ends):
//! rustls with the crypto provider the application installed process-wide, or else `ring`, used
//! by these clients only and never installed process-wide, so that the application stays free to
//! choose its own; certificates are checked by the platform's verifier
//! (`rustls-platform-verifier`: the system's trust store and its revocation rules).

use std::sync::{Arc, OnceLock};

/// A `reqwest` client builder with the library's TLS configuration.
pub(crate) fn client_builder() -> Result<reqwest::ClientBuilder, String> {
    Ok(reqwest::Client::builder().tls_backend_preconfigured(config()?))
}

/// The TLS configuration, made once (with the provider installed at that time, if any).
fn config() -> Result<rustls::ClientConfig, String> {
    static CONFIG: OnceLock<Result<rustls::ClientConfig, String>> = OnceLock::new();
    CONFIG.get_or_init(make_config).clone()
}

fn make_config() -> Result<rustls::ClientConfig, String> {
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
    let verifier = rustls_platform_verifier::Verifier::new(provider.clone())
        .map_err(|e| format!("could not set up TLS certificate verification: {e}"))?;
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("the installed rustls crypto provider cannot do TLS 1.2 or 1.3: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    // The clients speak HTTP/1.1 only.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}
