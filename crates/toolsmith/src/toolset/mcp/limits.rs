//! What the client refuses to read from a server, and how the requests waiting on it learn so at
//! once: a message past the size limit, or nested deeper than serde_json's parser (rmcp's) reads.
//! rmcp drops a message it cannot parse and leaves its request waiting for the request timeout;
//! these checks see such a message first, close the connection (stdio, in process) or mark the
//! session (streamable HTTP), and every request waiting fails with the reason.

use std::sync::Arc;

use super::McpError;
use super::session::SessionNotes;

/// How deep a message may nest: as deep as serde_json parses (its recursion limit of 128 lets
/// 127 levels of arrays and objects through).
pub(crate) const MAX_MESSAGE_DEPTH: usize = 127;

/// Why a message of the server's could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unreadable {
    /// Larger than the limit (bytes).
    TooLarge(usize),
    /// Nested deeper than the limit (levels).
    TooDeep(usize),
}

impl Unreadable {
    /// The error a request waiting on the session fails with.
    pub(crate) fn error(self, server: &str, method: &str) -> McpError {
        let (server, method) = (server.to_string(), method.to_string());
        match self {
            Unreadable::TooLarge(max_bytes) => McpError::MessageTooLarge { server, method, max_bytes },
            Unreadable::TooDeep(max_depth) => McpError::MessageTooDeep { server, method, max_depth },
        }
    }
}

/// The nesting of JSON text read in pieces: arrays and objects opened and not closed, brackets
/// inside strings aside.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct JsonDepth {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl JsonDepth {
    /// Reads `bytes`; whether the nesting went past [`MAX_MESSAGE_DEPTH`] in them.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> bool {
        let mut exceeded = false;
        for &b in bytes {
            if self.in_string {
                match (self.escaped, b) {
                    (true, _) => self.escaped = false,
                    (false, b'\\') => self.escaped = true,
                    (false, b'"') => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'[' | b'{' => {
                    self.depth += 1;
                    exceeded |= self.depth > MAX_MESSAGE_DEPTH;
                }
                b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
        }
        exceeded
    }

    /// Whether one whole message nests past [`MAX_MESSAGE_DEPTH`].
    pub(crate) fn exceeds(message: &[u8]) -> bool {
        JsonDepth::default().feed(message)
    }
}

/// A reader of newline-delimited JSON-RPC messages that fails (and marks the session) when a
/// line, one message, grows past the size limit or nests deeper than a parser reads: failing
/// the read closes the connection, so that every request waiting on it fails at once.
pub(crate) struct LimitedReader<R> {
    inner: R,
    /// Bytes of the line being read.
    line: usize,
    /// The nesting of the line being read.
    depth: JsonDepth,
    max: usize,
    notes: Arc<SessionNotes>,
    failed: Option<Unreadable>,
}

impl<R> LimitedReader<R> {
    pub(crate) fn new(inner: R, max: usize, notes: Arc<SessionNotes>) -> Self {
        LimitedReader { inner, line: 0, depth: JsonDepth::default(), max, notes, failed: None }
    }
}

fn read_error(why: Unreadable) -> std::io::Error {
    let message = match why {
        Unreadable::TooLarge(max) => format!("the server sent a message larger than {max} bytes, the limit"),
        Unreadable::TooDeep(max) => format!("the server sent a message nested deeper than {max} levels"),
    };
    std::io::Error::new(std::io::ErrorKind::InvalidData, message)
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for LimitedReader<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        if let Some(why) = self.failed {
            return std::task::Poll::Ready(Err(read_error(why)));
        }
        let before = buf.filled().len();
        let this = &mut *self;
        match std::pin::Pin::new(&mut this.inner).poll_read(cx, buf) {
            std::task::Poll::Ready(Ok(())) => {}
            other => return other,
        }
        let mut failed = None;
        for (i, segment) in buf.filled()[before..].split(|&b| b == b'\n').enumerate() {
            if i > 0 {
                // A line end: the next segment starts a new message.
                this.line = 0;
                this.depth = JsonDepth::default();
            }
            this.line = this.line.saturating_add(segment.len());
            if this.line > this.max {
                failed = Some(Unreadable::TooLarge(this.max));
            } else if this.depth.feed(segment) {
                failed = failed.or(Some(Unreadable::TooDeep(MAX_MESSAGE_DEPTH)));
            }
        }
        if let Some(why) = failed {
            this.failed = Some(why);
            this.notes.mark_unreadable(why);
            tracing::warn!(?why, "an MCP server sent a message the client cannot read: closing the session");
            return std::task::Poll::Ready(Err(read_error(why)));
        }
        std::task::Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> String {
        format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
    }

    #[test]
    fn the_limit_is_where_serde_json_stops_parsing() {
        let ok = format!(r#"{{"a":{}}}"#, nested(MAX_MESSAGE_DEPTH - 1));
        let deep = format!(r#"{{"a":{}}}"#, nested(MAX_MESSAGE_DEPTH));
        assert!(serde_json::from_str::<serde_json::Value>(&ok).is_ok());
        assert!(serde_json::from_str::<serde_json::Value>(&deep).is_err());
        assert!(!JsonDepth::exceeds(ok.as_bytes()));
        assert!(JsonDepth::exceeds(deep.as_bytes()));
    }

    #[test]
    fn brackets_in_strings_and_pieces_count_as_a_parser_counts_them() {
        let text = format!(r#"{{"s":"{}\"[{{","t":["{}"]}}"#, "[".repeat(500), "\\\\");
        assert!(serde_json::from_str::<serde_json::Value>(&text).is_ok());
        assert!(!JsonDepth::exceeds(text.as_bytes()));
        // Read one byte at a time, the answer is the same.
        let deep = nested(MAX_MESSAGE_DEPTH + 1);
        let mut depth = JsonDepth::default();
        assert!(deep.as_bytes().chunks(1).fold(false, |hit, b| depth.feed(b) | hit));
    }
}
