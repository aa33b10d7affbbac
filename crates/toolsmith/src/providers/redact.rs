//! Redaction of secrets (API keys, bearer tokens, credential headers) from text a server sent,
//! before it becomes part of an error message or a log line.
//!
//! A server may echo a secret in many forms: as it is, JSON-escaped (`\u0073k-...`, `\/`),
//! percent-encoded, as HTML entities, escaped twice (a JSON document inside a JSON string), or
//! base64 / hex encoded. [`Redactor::redact`] decodes the text (up to three nested levels of
//! escapes, each decoded character remembering where it came from in the original) and replaces
//! every stretch of the original whose decoding is a secret, or one of the secret's base64 or hex
//! forms, by `[REDACTED]`. [`Redactor::snippet`] redacts before it cuts, so a cut never leaves
//! the start of a secret behind.
//!
//! This file is compiled into both the providers and the MCP toolset (which do not import each
//! other); each uses part of it.
#![allow(dead_code)]

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;

use base64::Engine;

/// What replaces a secret.
pub(crate) const REDACTED: &str = "[REDACTED]";

/// The shortest secret redacted (shorter values would redact ordinary words).
const MIN_SECRET_CHARS: usize = 4;
/// The shortest secret whose encoded forms (base64, hex) are redacted too.
const MIN_ENCODED_CHARS: usize = 8;
/// Nested levels of escapes decoded (`\\u0073` in a JSON string inside a JSON string is two).
const DECODE_LEVELS: usize = 3;
/// How many original characters an encoded secret may take per character of the secret, for the
/// window a snippet redacts beyond its cut.
const ENCODED_CHARS_PER_CHAR: usize = 64;

/// Replaces secrets in text from a server. Cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    /// The secrets and their encoded forms, as characters.
    patterns: Arc<[Vec<char>]>,
    longest: usize,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor").field("patterns", &self.patterns.len()).finish()
    }
}

/// Auth schemes stripped from a header value to redact the credential alone too.
const SCHEMES: [&str; 4] = ["bearer ", "basic ", "token ", "apikey "];

impl Redactor {
    /// A redactor for these secrets (header values such as `Bearer sk-...` are redacted whole
    /// and without their scheme). Secrets shorter than four characters are ignored.
    pub(crate) fn new<I, S>(secrets: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut plain: Vec<String> = Vec::new();
        for secret in secrets {
            let secret = secret.as_ref().trim();
            let lower = secret.to_ascii_lowercase();
            if let Some(scheme) = SCHEMES.iter().find(|s| lower.starts_with(**s)) {
                plain.push(secret[scheme.len()..].trim().to_string());
            }
            plain.push(secret.to_string());
        }
        plain.retain(|s| s.chars().count() >= MIN_SECRET_CHARS);
        // A secret that contains another is redacted through it (`Bearer sk-...` through `sk-...`).
        let minimal: Vec<String> = plain
            .iter()
            .filter(|s| !plain.iter().any(|o| o.len() < s.len() && s.contains(o.as_str())))
            .cloned()
            .collect();
        let mut patterns: Vec<String> = Vec::new();
        for secret in minimal {
            if secret.chars().count() >= MIN_ENCODED_CHARS {
                patterns.extend(encoded_forms(secret.as_bytes()));
            }
            patterns.push(secret);
        }
        // Longest first: where two patterns overlap, both spans are redacted anyway.
        patterns.sort_by_key(|p| std::cmp::Reverse(p.len()));
        patterns.dedup();
        let patterns: Vec<Vec<char>> = patterns.into_iter().map(|p| p.chars().collect()).collect();
        let longest = patterns.iter().map(Vec::len).max().unwrap_or(0);
        Redactor { patterns: patterns.into(), longest }
    }

    /// A redactor that redacts nothing.
    pub(crate) fn none() -> Self {
        Redactor::default()
    }

    /// Whether there is nothing to redact.
    pub(crate) fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// `text` with every secret (in any of the forms the module describes) replaced by
    /// `[REDACTED]`.
    pub(crate) fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.is_empty() {
            return Cow::Borrowed(text);
        }
        let spans = self.spans(text);
        if spans.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (start, end) in spans {
            out.push_str(&text[at..start]);
            out.push_str(REDACTED);
            at = end;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }

    /// At most about `max_chars` characters of `text`, redacted, with `…` when cut. A secret
    /// that starts before the cut is redacted whole; the cut never splits one.
    pub(crate) fn snippet(&self, text: &str, max_chars: usize) -> String {
        let window_chars = max_chars.saturating_add(self.longest.saturating_mul(ENCODED_CHARS_PER_CHAR));
        let window_end = text.char_indices().nth(window_chars).map_or(text.len(), |(i, _)| i);
        let cut = text.char_indices().nth(max_chars).map_or(text.len(), |(i, _)| i);
        let window = &text[..window_end];
        let spans = if self.is_empty() { Vec::new() } else { self.spans(window) };
        let mut out = String::new();
        let mut at = 0;
        for (start, end) in spans {
            if start >= cut {
                break;
            }
            out.push_str(&window[at..start]);
            out.push_str(REDACTED);
            at = end;
        }
        if at < cut {
            out.push_str(&text[at..cut]);
            at = cut;
        }
        if at < text.len() {
            out.push('…');
        }
        out
    }

    /// The byte ranges of `text` to redact, sorted and merged.
    fn spans(&self, text: &str) -> Vec<(usize, usize)> {
        let mut found: Vec<(usize, usize)> = Vec::new();
        for level in 0..=DECODE_LEVELS {
            let decoded_any = std::rc::Rc::new(std::cell::Cell::new(false));
            let mut items: Box<dyn Iterator<Item = Item> + '_> =
                Box::new(text.char_indices().map(|(i, c)| Item { c, start: i, end: i + c.len_utf8() }));
            for _ in 0..level {
                items = Box::new(Decoder::new(items, decoded_any.clone()));
            }
            let mut matchers: Vec<Matcher<'_>> = self.patterns.iter().map(|p| Matcher::new(p)).collect();
            for item in items {
                for m in &mut matchers {
                    if let Some(span) = m.push(&item) {
                        found.push(span);
                    }
                }
            }
            if level > 0 && !decoded_any.get() {
                // Nothing was decoded at this level: the levels above see the same text.
                break;
            }
        }
        found.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(found.len());
        for (start, end) in found {
            match merged.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        merged
    }
}

/// The base64 (standard and URL-safe, at each of the three byte alignments a secret may have
/// inside a larger encoded value) and hex forms of a secret: only the characters that depend on
/// the secret's bytes alone.
fn encoded_forms(secret: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    for engine in [&base64::engine::general_purpose::STANDARD_NO_PAD, &base64::engine::general_purpose::URL_SAFE_NO_PAD]
    {
        for align in 0..3usize {
            let mut bytes = vec![0u8; align];
            bytes.extend_from_slice(secret);
            let encoded = engine.encode(&bytes);
            let first = (8 * align).div_ceil(6);
            let last = (8 * align + 8 * secret.len()) / 6;
            if last > first + MIN_ENCODED_CHARS {
                out.push(encoded[first..last].to_string());
            }
        }
    }
    let hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
    out.push(hex.to_ascii_uppercase());
    out.push(hex);
    out
}

/// A decoded character and the byte range of the original text it came from.
#[derive(Debug, Clone, Copy)]
struct Item {
    c: char,
    start: usize,
    end: usize,
}

/// Knuth–Morris–Pratt over decoded characters, remembering where the last characters started.
struct Matcher<'p> {
    pattern: &'p [char],
    failure: Vec<usize>,
    state: usize,
    /// The start offsets of the last `pattern.len()` characters (a ring).
    starts: Vec<usize>,
    seen: usize,
}

impl<'p> Matcher<'p> {
    fn new(pattern: &'p [char]) -> Self {
        let mut failure = vec![0; pattern.len()];
        let mut k = 0;
        for i in 1..pattern.len() {
            while k > 0 && pattern[i] != pattern[k] {
                k = failure[k - 1];
            }
            if pattern[i] == pattern[k] {
                k += 1;
            }
            failure[i] = k;
        }
        Matcher { pattern, failure, state: 0, starts: vec![0; pattern.len().max(1)], seen: 0 }
    }

    fn push(&mut self, item: &Item) -> Option<(usize, usize)> {
        let n = self.pattern.len();
        if n == 0 {
            return None;
        }
        self.starts[self.seen % n] = item.start;
        self.seen += 1;
        while self.state > 0 && self.pattern[self.state] != item.c {
            self.state = self.failure[self.state - 1];
        }
        if self.pattern[self.state] == item.c {
            self.state += 1;
        }
        if self.state == n {
            self.state = self.failure[n - 1];
            // The match's first character is the n-th last seen.
            let start = self.starts[(self.seen - n) % n];
            return Some((start, item.end));
        }
        None
    }
}

/// One level of decoding: JSON / JavaScript escapes (`\uXXXX` with surrogate pairs, `\xXX`,
/// `\/`, `\"`, `\n`...), percent-encoding (UTF-8 sequences included) and HTML entities.
struct Decoder<'a> {
    inner: Box<dyn Iterator<Item = Item> + 'a>,
    buffer: VecDeque<Item>,
    decoded_any: std::rc::Rc<std::cell::Cell<bool>>,
}

impl<'a> Decoder<'a> {
    fn new(inner: Box<dyn Iterator<Item = Item> + 'a>, decoded_any: std::rc::Rc<std::cell::Cell<bool>>) -> Self {
        Decoder { inner, buffer: VecDeque::new(), decoded_any }
    }

    /// The item `i` places ahead (0 is the next one), reading as needed.
    fn peek(&mut self, i: usize) -> Option<Item> {
        while self.buffer.len() <= i {
            let next = self.inner.next()?;
            self.buffer.push_back(next);
        }
        self.buffer.get(i).copied()
    }

    fn hex(&mut self, from: usize, digits: usize) -> Option<u32> {
        let mut value = 0u32;
        for i in from..from + digits {
            value = value * 16 + self.peek(i)?.c.to_digit(16)?;
        }
        Some(value)
    }

    /// Consumes `count` items and returns the decoded character spanning them.
    fn take(&mut self, count: usize, c: char) -> Item {
        let first = self.buffer.pop_front().unwrap_or(Item { c, start: 0, end: 0 });
        let mut end = first.end;
        for _ in 1..count {
            if let Some(item) = self.buffer.pop_front() {
                end = item.end;
            }
        }
        self.decoded_any.set(true);
        Item { c, start: first.start, end }
    }

    fn backslash(&mut self) -> Option<Item> {
        let next = self.peek(1)?.c;
        let simple = match next {
            '/' => Some('/'),
            '\\' => Some('\\'),
            '"' => Some('"'),
            '\'' => Some('\''),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            _ => None,
        };
        if let Some(c) = simple {
            return Some(self.take(2, c));
        }
        match next {
            'x' => {
                let v = self.hex(2, 2)?;
                Some(self.take(4, char::from_u32(v)?))
            }
            'u' => {
                let unit = self.hex(2, 4)?;
                if (0xD800..0xDC00).contains(&unit) {
                    let low = (self.peek(6)?.c == '\\' && self.peek(7)?.c == 'u').then(|| self.hex(8, 4)).flatten();
                    if let Some(low) = low.filter(|l| (0xDC00..0xE000).contains(l)) {
                        let c = char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))?;
                        return Some(self.take(12, c));
                    }
                    return None;
                }
                Some(self.take(6, char::from_u32(unit)?))
            }
            _ => None,
        }
    }

    fn percent(&mut self) -> Option<Item> {
        let lead = self.hex(1, 2)?;
        let len = match lead {
            0x00..=0x7F => 1,
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => return None,
        };
        let mut bytes = vec![lead as u8];
        for k in 1..len {
            if self.peek(3 * k)?.c != '%' {
                return None;
            }
            bytes.push(self.hex(3 * k + 1, 2)? as u8);
        }
        let c = std::str::from_utf8(&bytes).ok()?.chars().next()?;
        Some(self.take(3 * len, c))
    }

    fn entity(&mut self) -> Option<Item> {
        let mut name = String::new();
        let mut i = 1;
        loop {
            let c = self.peek(i)?.c;
            if c == ';' {
                break;
            }
            if name.len() >= 10 || !(c.is_ascii_alphanumeric() || c == '#') {
                return None;
            }
            name.push(c);
            i += 1;
        }
        let c = match name.as_str() {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            "sol" => '/',
            n if n.starts_with("#x") || n.starts_with("#X") => char::from_u32(u32::from_str_radix(&n[2..], 16).ok()?)?,
            n if n.starts_with('#') => char::from_u32(n[1..].parse().ok()?)?,
            _ => return None,
        };
        Some(self.take(i + 1, c))
    }
}

impl Iterator for Decoder<'_> {
    type Item = Item;

    fn next(&mut self) -> Option<Item> {
        let first = self.peek(0)?;
        let decoded = match first.c {
            '\\' => self.backslash(),
            '%' => self.percent(),
            '&' => self.entity(),
            _ => None,
        };
        decoded.or_else(|| self.buffer.pop_front())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-test-0123456789/secret";

    fn json_escaped_all(s: &str) -> String {
        s.chars().map(|c| format!("\\u{:04x}", c as u32)).collect()
    }

    fn percent_all(s: &str) -> String {
        s.bytes().map(|b| format!("%{b:02X}")).collect()
    }

    #[test]
    fn every_encoding_is_redacted() {
        let r = Redactor::new([KEY]);
        let b64 = base64::engine::general_purpose::STANDARD.encode(format!("Bearer {KEY}"));
        let cases = [
            KEY.to_string(),
            KEY.replace('/', "\\/"),
            format!("\\u0073{}", &KEY[1..]),
            json_escaped_all(KEY),
            json_escaped_all(KEY).to_uppercase().replace("\\U", "\\u"),
            percent_all(KEY),
            percent_all(KEY).to_lowercase(),
            KEY.replace('-', "%2D"),
            KEY.replace('s', "&#115;").replace('/', "&#x2F;"),
            // Twice escaped: a JSON document in a JSON string.
            format!("\\\\u0073{}", &KEY[1..]),
            json_escaped_all(&json_escaped_all(KEY)),
            percent_all(&json_escaped_all(KEY)),
            KEY.bytes().map(|b| format!("{b:02x}")).collect(),
            b64.clone(),
            base64::engine::general_purpose::URL_SAFE.encode(KEY),
            base64::engine::general_purpose::STANDARD.encode(format!("x{KEY}")),
            base64::engine::general_purpose::STANDARD.encode(format!("xy{KEY}")),
        ];
        for case in cases {
            let text = format!("{{\"error\": {{\"message\": \"bad key {case} given\"}}}}");
            let out = r.redact(&text);
            assert!(out.contains(REDACTED), "not redacted: {case} -> {out}");
            assert!(!out.contains(&case), "still there: {case} -> {out}");
            assert!(out.starts_with("{\"error\": {\"message\": \"bad key "), "{out}");
            assert!(out.ends_with(" given\"}}"), "{out}");
        }
    }

    #[test]
    fn schemes_are_stripped_and_short_values_ignored() {
        let r = Redactor::new(["Bearer tok-0123456789", "abc"]);
        assert_eq!(r.redact("echo tok-0123456789 abc"), "echo [REDACTED] abc");
        assert_eq!(r.redact("Authorization: Bearer tok-0123456789"), "Authorization: Bearer [REDACTED]");
        assert!(Redactor::new(["", "ab"]).is_empty());
    }

    #[test]
    fn text_without_secrets_is_unchanged() {
        let r = Redactor::new([KEY]);
        let text = "plain \\u00e9 %41 &amp; \\ud83d\\ude00 % & \\";
        assert!(matches!(r.redact(text), Cow::Borrowed(_)));
        assert!(matches!(Redactor::none().redact(KEY), Cow::Borrowed(_)));
    }

    #[test]
    fn a_snippet_never_cuts_a_secret_in_half() {
        let r = Redactor::new([KEY]);
        for cut in 0..60 {
            for form in [KEY.to_string(), json_escaped_all(KEY), percent_all(KEY)] {
                let text = format!("{}{form} and more text after it", "x".repeat(20));
                let s = r.snippet(&text, cut);
                for n in MIN_ENCODED_CHARS..KEY.len() {
                    assert!(!s.contains(&KEY[..n]) || n < 6, "prefix {n} leaked at cut {cut}: {s}");
                }
                assert!(!s.contains(&form[..form.len().min(12)]), "cut {cut}: {s}");
            }
        }
        assert_eq!(r.snippet("short", 10), "short");
        assert_eq!(r.snippet("a longer text", 4), "a lo…");
    }

    #[test]
    fn overlapping_and_repeated_secrets() {
        let r = Redactor::new(["aaaa"]);
        assert_eq!(r.redact("aaaaaa"), "[REDACTED]");
        assert_eq!(r.redact("xaaaayaaaaz"), "x[REDACTED]y[REDACTED]z");
    }
}
