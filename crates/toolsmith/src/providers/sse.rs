//! Server-sent events: an incremental parser ([`SseParser`], linear in the bytes it is fed,
//! with a bound on the size of one event), the events of a streamed response, and [`drive`],
//! which runs a provider's [`StreamProcessor`] over them to make a [`ModelStream`].

use std::collections::VecDeque;

use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::Value;

use crate::messages::ModelResponse;
use crate::model::{ModelError, ModelStream, ModelStreamEvent};
use crate::providers::redact::Redactor;

/// The largest server-sent event accepted by default: 16 MiB.
pub(crate) const DEFAULT_MAX_EVENT_SIZE: usize = 16 * 1024 * 1024;

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field (`message` when absent).
    pub(crate) event: String,
    /// The `data:` field.
    pub(crate) data: String,
}

/// An event (its fields and the line being read) grew past the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EventTooLarge {
    /// The limit, in bytes.
    pub(crate) max: usize,
}

/// An incremental parser of the `text/event-stream` format (the HTML standard's "event stream
/// interpretation"): `data:` lines joined with `\n`, `event:`, comments and unknown fields
/// ignored (`id:` and `retry:` too: a model stream is never resumed), CR, LF or CRLF line ends,
/// a leading byte order mark skipped, an event dispatched at a blank line and an unfinished one
/// dropped at the end of the stream.
///
/// Each byte is looked at once, whatever the chunking, and an event (with the line being read)
/// may hold at most `max_event_size` bytes.
#[derive(Debug)]
pub(crate) struct SseParser {
    /// The line being read (without its end).
    line: Vec<u8>,
    event: String,
    data: String,
    /// Whether the last byte was a CR (a LF right after it ends nothing).
    after_cr: bool,
    /// Whether the first line was read (it may start with a byte order mark).
    started: bool,
    max_event_size: usize,
}

impl SseParser {
    /// A parser whose events may hold at most `max_event_size` bytes.
    pub(crate) fn new(max_event_size: usize) -> Self {
        SseParser {
            line: Vec::new(),
            event: String::new(),
            data: String::new(),
            after_cr: false,
            started: false,
            max_event_size,
        }
    }

    /// Reads a chunk, pushing the events it completes.
    pub(crate) fn feed(&mut self, mut chunk: &[u8], out: &mut VecDeque<SseEvent>) -> Result<(), EventTooLarge> {
        while !chunk.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if chunk[0] == b'\n' {
                    chunk = &chunk[1..];
                    continue;
                }
            }
            match chunk.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(i) => {
                    self.line.extend_from_slice(&chunk[..i]);
                    self.check()?;
                    self.after_cr = chunk[i] == b'\r';
                    self.end_line(out);
                    chunk = &chunk[i + 1..];
                }
                None => {
                    self.line.extend_from_slice(chunk);
                    self.check()?;
                    break;
                }
            }
        }
        Ok(())
    }

    fn check(&self) -> Result<(), EventTooLarge> {
        let size = self.line.len().saturating_add(self.data.len()).saturating_add(self.event.len());
        if size > self.max_event_size { Err(EventTooLarge { max: self.max_event_size }) } else { Ok(()) }
    }

    fn end_line(&mut self, out: &mut VecDeque<SseEvent>) {
        let mut bytes: &[u8] = &self.line;
        if !self.started {
            self.started = true;
            bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        }
        if bytes.is_empty() {
            self.dispatch(out);
        } else if bytes[0] != b':' {
            let line = String::from_utf8_lossy(bytes);
            let (field, value) = match line.find(':') {
                Some(i) => {
                    let value = &line[i + 1..];
                    (&line[..i], value.strip_prefix(' ').unwrap_or(value))
                }
                None => (line.as_ref(), ""),
            };
            match field {
                "data" => {
                    self.data.push_str(value);
                    self.data.push('\n');
                }
                "event" => self.event = value.to_string(),
                _ => {}
            }
        }
        self.line.clear();
    }

    fn dispatch(&mut self, out: &mut VecDeque<SseEvent>) {
        let mut data = std::mem::take(&mut self.data);
        let event = std::mem::take(&mut self.event);
        if data.is_empty() {
            return;
        }
        data.pop();
        out.push_back(SseEvent { event: if event.is_empty() { "message".to_string() } else { event }, data });
    }
}

pub(crate) type SseStream = BoxStream<'static, Result<SseEvent, ModelError>>;

/// A provider's streaming state machine: SSE events in, stream events out.
pub(crate) trait StreamProcessor: Send + 'static {
    /// Handles one event, pushing what it produces; returns `true` when the stream is complete.
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<ModelStreamEvent>) -> Result<bool, ModelError>;
    /// Builds the final response (pushing the last `ToolCallEnd` events first).
    fn finish(&mut self, out: &mut Vec<ModelStreamEvent>) -> Result<ModelResponse, ModelError>;
}

struct DriveState<P> {
    sse: SseStream,
    processor: P,
    redactor: Redactor,
    queue: VecDeque<Result<ModelStreamEvent, ModelError>>,
    finished: bool,
}

impl<P: StreamProcessor> DriveState<P> {
    fn complete(&mut self) {
        let mut out = Vec::new();
        let result = self.processor.finish(&mut out);
        self.queue.extend(out.into_iter().map(Ok));
        match result {
            Ok(response) => self.queue.push_back(Ok(ModelStreamEvent::Final(response))),
            Err(e) => self.fail(e),
        }
        self.finished = true;
    }

    /// Queues an error, with every secret redacted (the one place a stream's errors pass).
    fn fail(&mut self, e: ModelError) {
        self.queue.push_back(Err(redact_error(&self.redactor, e)));
        self.finished = true;
    }
}

/// An error with every secret in its message redacted.
pub(crate) fn redact_error(redactor: &Redactor, mut e: ModelError) -> ModelError {
    if let std::borrow::Cow::Owned(message) = redactor.redact(&e.message) {
        e.message = message;
    }
    e
}

/// Runs a processor over an SSE stream; every error it yields (from the stream or the
/// processor) has the redactor's secrets redacted.
pub(crate) fn drive<P: StreamProcessor>(sse: SseStream, processor: P, redactor: Redactor) -> ModelStream {
    let state = DriveState { sse, processor, redactor, queue: VecDeque::new(), finished: false };
    futures::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(item) = state.queue.pop_front() {
                return Some((item, state));
            }
            if state.finished {
                return None;
            }
            match state.sse.next().await {
                None => state.complete(),
                Some(Err(e)) => state.fail(e),
                Some(Ok(event)) => {
                    let mut out = Vec::new();
                    let result = state.processor.on_event(&event, &mut out);
                    state.queue.extend(out.into_iter().map(Ok));
                    match result {
                        Ok(true) => state.complete(),
                        Ok(false) => {}
                        Err(e) => state.fail(e),
                    }
                }
            }
        }
    })
    .boxed()
}

/// How much of a server's text an error message quotes.
pub(crate) const SNIPPET_CHARS: usize = 300;

/// Parses an SSE data field as JSON, or says which provider sent what (a redacted snippet).
pub(crate) fn parse_event_json(provider: &str, data: &str, redactor: &Redactor) -> Result<Value, ModelError> {
    serde_json::from_str(data).map_err(|e| {
        ModelError::new(
            crate::model::ModelErrorKind::UnexpectedResponse,
            format!(
                "the {provider} stream sent an event that is not JSON ({e}): {}",
                redactor.snippet(data, SNIPPET_CHARS)
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_chunked(input: &[u8], chunk: usize) -> Vec<SseEvent> {
        let mut parser = SseParser::new(DEFAULT_MAX_EVENT_SIZE);
        let mut out = VecDeque::new();
        for c in input.chunks(chunk.max(1)) {
            parser.feed(c, &mut out).unwrap();
        }
        out.into_iter().collect()
    }

    fn ev(event: &str, data: &str) -> SseEvent {
        SseEvent { event: event.into(), data: data.into() }
    }

    #[test]
    fn the_spec_examples_parse_the_same_whatever_the_chunking() {
        let input = "\u{FEFF}: a comment\r\ndata: first\r\ndata:second\r\n\r\nevent: add\rdata: {\"a\": 1}\r\rid: 7\nretry: 10\nfield without colon\ndata\n\ndata:  two spaces\n\nevent: empty\n\ndata: \n\ndata: unfinished";
        let expected = vec![
            ev("message", "first\nsecond"),
            ev("add", "{\"a\": 1}"),
            ev("message", ""),
            ev("message", " two spaces"),
            ev("message", ""),
        ];
        for chunk in [1, 2, 3, 5, 7, 64, 4096] {
            assert_eq!(parse_chunked(input.as_bytes(), chunk), expected, "chunks of {chunk}");
        }
    }

    #[test]
    fn crlf_split_across_chunks_is_one_line_end() {
        let mut parser = SseParser::new(100);
        let mut out = VecDeque::new();
        parser.feed(b"data: a\r", &mut out).unwrap();
        parser.feed(b"\n", &mut out).unwrap();
        parser.feed(b"\r", &mut out).unwrap();
        parser.feed(b"\ndata: b\n\n", &mut out).unwrap();
        assert_eq!(out.into_iter().collect::<Vec<_>>(), vec![ev("message", "a"), ev("message", "b")]);
    }

    #[test]
    fn an_event_past_the_limit_fails() {
        let mut parser = SseParser::new(12);
        let mut out = VecDeque::new();
        parser.feed(b"data: 123456\n\n", &mut out).unwrap();
        assert_eq!(parser.feed(b"data: 1234567", &mut out), Err(EventTooLarge { max: 12 }));
        let mut parser = SseParser::new(12);
        // Several lines of one event add up.
        parser.feed(b"data: 1234\n", &mut out).unwrap();
        assert!(parser.feed(b"data: 1234\n", &mut out).is_err());
    }

    /// 4 MiB without a line end, in chunks of 1 byte to 64 KiB: linear time (the parser looks at
    /// each byte once). `eventsource-stream`, which re-parsed its buffer at every chunk, took
    /// 131 s for this input in 1 KiB chunks.
    #[test]
    fn a_long_line_costs_linear_time() {
        let line = vec![b'x'; 4 * 1024 * 1024];
        for chunk in [1usize, 16, 1024, 64 * 1024] {
            let started = std::time::Instant::now();
            let mut parser = SseParser::new(DEFAULT_MAX_EVENT_SIZE);
            let mut out = VecDeque::new();
            parser.feed(b"data: ", &mut out).unwrap();
            for c in line.chunks(chunk) {
                parser.feed(c, &mut out).unwrap();
            }
            parser.feed(b"\n\n", &mut out).unwrap();
            assert_eq!(out.pop_front().map(|e| e.data.len()), Some(line.len()));
            let took = started.elapsed();
            // `--nocapture` shows the figures quoted in BENCHMARKS.md.
            eprintln!("4 MiB line in {chunk}-byte chunks: {took:?}");
            assert!(took < std::time::Duration::from_secs(10), "{chunk}-byte chunks took {took:?}");
        }
    }
}
