//! A fetched body as text: its media type (declared or sniffed), its charset, and HTML turned
//! into Markdown.

use super::*;

/// What a body becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Html,
    Text,
    Binary,
}

pub(crate) fn kind_of(media_type: &str) -> Kind {
    match media_type {
        "text/html" | "application/xhtml+xml" => Kind::Html,
        t if t.starts_with("text/") => Kind::Text,
        "application/json"
        | "application/xml"
        | "application/javascript"
        | "application/x-javascript"
        | "application/ecmascript"
        | "application/x-ndjson"
        | "application/ndjson"
        | "application/yaml"
        | "application/x-yaml"
        | "application/toml"
        | "application/x-sh"
        | "application/sql"
        | "application/graphql"
        | "application/x-www-form-urlencoded" => Kind::Text,
        t if t.ends_with("+json") || t.ends_with("+xml") => Kind::Text,
        _ => Kind::Binary,
    }
}

/// The media type and content of a body.
pub(crate) async fn into_content(
    header: Option<&str>,
    body: Vec<u8>,
    url: &Url,
    deadline: Instant,
) -> (String, FetchedContent) {
    let (mut media_type, charset) = parse_content_type(header.unwrap_or(""));
    if media_type.is_empty() || media_type == "application/octet-stream" || media_type == "binary/octet-stream" {
        media_type = sniff(&body).to_string();
    }
    let content = match kind_of(&media_type) {
        Kind::Binary => FetchedContent::Binary { data: body, media_type: media_type.clone() },
        Kind::Text => FetchedContent::Text(decode(&body, charset.as_deref(), false)),
        Kind::Html => {
            let html = decode(&body, charset.as_deref(), true);
            drop(body);
            let base = url.clone();
            // A large page takes a while to parse: off the async threads.
            let convert = move || {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| html::to_markdown(&html, &base, deadline)))
                    .unwrap_or_else(|_| html::to_text(&html))
            };
            FetchedContent::Markdown(tokio::task::spawn_blocking(convert).await.unwrap_or_default())
        }
    };
    (media_type, content)
}

/// The media type (lowercase, without parameters) and the charset of a `Content-Type`.
pub(crate) fn parse_content_type(header: &str) -> (String, Option<String>) {
    let mut parts = header.split(';');
    let media_type = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let charset = parts.find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim().eq_ignore_ascii_case("charset").then(|| v.trim().trim_matches(['"', '\'']).to_string())
    });
    (media_type, charset)
}

/// The media type of a body without a (useful) `Content-Type`, from its first bytes.
pub(crate) fn sniff(body: &[u8]) -> &'static str {
    let head = &body[..body.len().min(1024)];
    let trimmed: &[u8] = {
        let t = head.strip_prefix(b"\xef\xbb\xbf".as_slice()).unwrap_or(head);
        let start = t.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(t.len());
        &t[start..]
    };
    let starts_ci =
        |prefix: &[u8]| trimmed.len() >= prefix.len() && trimmed[..prefix.len()].eq_ignore_ascii_case(prefix);
    if [b"<!doctype html".as_slice(), b"<html", b"<head", b"<body", b"<!--"].iter().any(|p| starts_ci(p)) {
        return "text/html";
    }
    pub(crate) const SIGNATURES: &[(&[u8], &str)] = &[
        (b"%PDF-", "application/pdf"),
        (b"\x89PNG\r\n\x1a\n", "image/png"),
        (b"\xff\xd8\xff", "image/jpeg"),
        (b"GIF87a", "image/gif"),
        (b"GIF89a", "image/gif"),
        (b"PK\x03\x04", "application/zip"),
        (b"\x1f\x8b", "application/gzip"),
    ];
    if let Some((_, t)) = SIGNATURES.iter().find(|(sig, _)| body.starts_with(sig)) {
        return t;
    }
    if body.len() >= 12 && &body[..4] == b"RIFF" && &body[8..12] == b"WEBP" {
        return "image/webp";
    }
    let sample = &body[..body.len().min(8192)];
    let text_like = !sample.contains(&0)
        && match std::str::from_utf8(sample) {
            Ok(_) => true,
            // A multi-byte character cut at the end of the sample.
            Err(e) => e.error_len().is_none(),
        };
    if text_like { "text/plain" } else { "application/octet-stream" }
}

/// Decodes text: a byte order mark, else the charset given, else (HTML) a `<meta charset>` in
/// the first 1,024 bytes, else UTF-8; invalid bytes become U+FFFD.
pub(crate) fn decode(body: &[u8], charset: Option<&str>, html: bool) -> String {
    if let Some((encoding, bom_len)) = encoding_rs::Encoding::for_bom(body) {
        return encoding.decode_without_bom_handling(&body[bom_len..]).0.into_owned();
    }
    let from_meta = || {
        static META: LazyLock<regex::bytes::Regex> = LazyLock::new(|| {
            regex::bytes::Regex::new(r#"(?i)<meta[^>]{0,512}?charset\s*=\s*["']?\s*([a-z0-9_:.\-]{1,40})"#)
                .unwrap_or_else(|_| unreachable!("the pattern is valid"))
        });
        let head = &body[..body.len().min(1024)];
        META.captures(head).and_then(|c| c.get(1)).map(|m| m.as_bytes().to_vec())
    };
    let label: Option<Vec<u8>> =
        charset.map(|c| c.as_bytes().to_vec()).or_else(|| if html { from_meta() } else { None });
    let encoding = label.and_then(|l| encoding_rs::Encoding::for_label(&l)).unwrap_or(encoding_rs::UTF_8);
    // A page declaring UTF-16 in ASCII-compatible bytes is not UTF-16 (as the HTML standard says).
    let encoding = if encoding == encoding_rs::UTF_16LE || encoding == encoding_rs::UTF_16BE {
        if html { encoding_rs::UTF_8 } else { encoding }
    } else {
        encoding
    };
    encoding.decode_without_bom_handling(body).0.into_owned()
}
