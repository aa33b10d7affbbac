//! The HTTP side the web back ends share: the client builder, bodies read under a size cap, and
//! errors and URLs as messages show them.

use super::*;

/// A client builder for the web back ends: the user agent, no automatic redirects, no proxies
/// from the environment.
pub(crate) fn client_builder(user_agent: &str, owner: &str) -> Result<reqwest::ClientBuilder, UserError> {
    let user_agent = HeaderValue::from_str(user_agent).map_err(|_| {
        UserError::new(format!("{owner}::builder().user_agent(...) contains characters not allowed in an HTTP header"))
    })?;
    Ok(crate::tls::client_builder()
        .map_err(UserError::new)?
        .user_agent(user_agent)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .connect_timeout(Duration::from_secs(30)))
}

/// Why a body was not read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// It is larger than the limit.
    TooLarge {
        /// The length the server announced.
        content_length: Option<u64>,
    },
    /// The transfer failed.
    Http(reqwest::Error),
}

/// Reads a body, chunk by chunk, refusing it once it passes `max_bytes` (or at once when its
/// `Content-Length` does).
pub(crate) async fn read_capped(mut response: reqwest::Response, max_bytes: usize) -> Result<Vec<u8>, ReadError> {
    let content_length = response.content_length();
    if content_length.is_some_and(|n| n > max_bytes as u64) {
        return Err(ReadError::TooLarge { content_length });
    }
    let capacity = content_length.map_or(0, |n| n.min(max_bytes as u64).min(1 << 20) as usize);
    let mut body = Vec::with_capacity(capacity);
    while let Some(chunk) = response.chunk().await.map_err(ReadError::Http)? {
        if chunk.len() > max_bytes - body.len() {
            return Err(ReadError::TooLarge { content_length });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

pub(crate) fn request_error(e: reqwest::Error, url: &Url) -> FetchError {
    let mut source: Option<&(dyn StdError + 'static)> = Some(&e);
    while let Some(s) = source {
        if let Some(r) = s.downcast_ref::<RefusedAddress>() {
            return FetchError::Forbidden { url: shown(url), address: r.address, reason: r.reason.clone() };
        }
        source = s.source();
    }
    FetchError::Http { url: shown(url), message: error_chain(&e.without_url()) }
}

/// Every error in a source chain, joined.
pub(crate) fn error_chain(e: &dyn StdError) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// A URL for an error: without its password, cut to [`SHOWN_URL_CHARS`].
pub(crate) fn shown(url: &Url) -> String {
    let mut url = url.clone();
    if url.password().is_some() {
        let _ = url.set_password(None);
    }
    shown_str(url.as_str())
}

/// A string for an error, cut to [`SHOWN_URL_CHARS`].
pub(crate) fn shown_str(s: &str) -> String {
    match s.char_indices().nth(SHOWN_URL_CHARS) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// Content
