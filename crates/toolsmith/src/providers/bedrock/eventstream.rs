//! The `application/vnd.amazon.eventstream` framing of ConverseStream, decoded with
//! `aws-smithy-eventstream` (which checks both CRC32s of every frame: the prelude's and the
//! message's).
//!
//! A frame is: its total length (u32), its headers' length (u32), the prelude's CRC32, the
//! headers, the payload, the message's CRC32. Each frame becomes one event for the stream
//! processor: an `event` frame is named by its `:event-type` header and carries its JSON
//! payload; an `exception` frame is named `exception/{:exception-type}`, an `error` frame
//! `error/{:error-code}` with its `:error-message`.

use std::collections::VecDeque;

use aws_smithy_eventstream::frame::read_message_from;
use aws_smithy_types::event_stream::{HeaderValue, Message};

use crate::providers::http::EventDecoder;
use crate::providers::sse::SseEvent;

/// The prelude: total length, headers length, prelude CRC32.
const PRELUDE: usize = 12;
/// The smallest frame: a prelude and the message CRC32.
const MIN_FRAME: usize = PRELUDE + 4;

/// Decodes event-stream frames from a byte stream, whatever its chunking.
pub(super) struct EventStreamDecoder {
    /// Bytes received and not yet decoded (at most one frame's).
    buffer: VecDeque<u8>,
    max_frame: usize,
}

impl EventStreamDecoder {
    /// A decoder of frames of at most `max_frame` bytes.
    pub(super) fn new(max_frame: usize) -> Self {
        EventStreamDecoder { buffer: VecDeque::new(), max_frame: max_frame.max(MIN_FRAME) }
    }
}

/// A string header of a frame.
fn header<'m>(message: &'m Message, name: &str) -> Option<&'m str> {
    message.headers().iter().find(|h| h.name().as_str() == name).and_then(|h| match h.value() {
        HeaderValue::String(s) => Some(s.as_str()),
        _ => None,
    })
}

/// The event a decoded frame stands for.
fn event_of(message: &Message) -> SseEvent {
    let payload = String::from_utf8_lossy(message.payload()).into_owned();
    let or = |name: &str, default: &str| header(message, name).unwrap_or(default).to_string();
    match header(message, ":message-type").unwrap_or("event") {
        "exception" => SseEvent { event: format!("exception/{}", or(":exception-type", "unknown")), data: payload },
        "error" => {
            SseEvent { event: format!("error/{}", or(":error-code", "unknown")), data: or(":error-message", "") }
        }
        _ => SseEvent { event: or(":event-type", ""), data: payload },
    }
}

impl EventDecoder for EventStreamDecoder {
    fn feed(&mut self, chunk: &[u8], out: &mut VecDeque<SseEvent>) -> Result<(), String> {
        self.buffer.extend(chunk);
        while self.buffer.len() >= PRELUDE {
            let mut total = [0u8; 4];
            for (slot, b) in total.iter_mut().zip(&self.buffer) {
                *slot = *b;
            }
            let total = u32::from_be_bytes(total) as usize;
            if total < MIN_FRAME {
                return Err(format!(
                    "sent an event-stream frame that declares {total} bytes, fewer than any frame has (the answer is not an AWS event stream, or it is corrupted)"
                ));
            }
            if total > self.max_frame {
                return Err(format!(
                    "sent an event-stream frame of {total} bytes, more than the limit of {} bytes (the builder's `.max_event_size(...)`)",
                    self.max_frame
                ));
            }
            if self.buffer.len() < total {
                break;
            }
            let frame: Vec<u8> = self.buffer.drain(..total).collect();
            let message = read_message_from(frame.as_slice())
                .map_err(|e| format!("sent an event-stream frame that could not be read ({e}): it was corrupted"))?;
            out.push_back(event_of(&message));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_smithy_eventstream::frame::write_message_to;
    use aws_smithy_types::event_stream::Header;

    fn frame(headers: &[(&'static str, &'static str)], payload: &'static str) -> Vec<u8> {
        let mut message = Message::new(payload.as_bytes());
        for (name, value) in headers {
            message = message.add_header(Header::new(*name, HeaderValue::String((*value).into())));
        }
        let mut out = Vec::new();
        write_message_to(&message, &mut out).unwrap();
        out
    }

    fn stream() -> Vec<u8> {
        [
            frame(&[(":message-type", "event"), (":event-type", "messageStart")], r#"{"role":"assistant"}"#),
            frame(&[(":message-type", "exception"), (":exception-type", "validationException")], r#"{"message":"no"}"#),
            frame(&[(":message-type", "error"), (":error-code", "InternalFailure"), (":error-message", "oops")], ""),
        ]
        .concat()
    }

    fn expected() -> Vec<SseEvent> {
        vec![
            SseEvent { event: "messageStart".into(), data: r#"{"role":"assistant"}"#.into() },
            SseEvent { event: "exception/validationException".into(), data: r#"{"message":"no"}"#.into() },
            SseEvent { event: "error/InternalFailure".into(), data: "oops".into() },
        ]
    }

    #[test]
    fn frames_decode_the_same_wherever_the_bytes_are_cut() {
        let bytes = stream();
        for cut in 0..=bytes.len() {
            let mut decoder = EventStreamDecoder::new(1 << 20);
            let mut out = VecDeque::new();
            decoder.feed(&bytes[..cut], &mut out).unwrap();
            decoder.feed(&bytes[cut..], &mut out).unwrap();
            assert_eq!(out.into_iter().collect::<Vec<_>>(), expected(), "cut at {cut}");
        }
        let mut decoder = EventStreamDecoder::new(1 << 20);
        let mut out = VecDeque::new();
        for b in &bytes {
            decoder.feed(std::slice::from_ref(b), &mut out).unwrap();
        }
        assert_eq!(out.len(), 3);
    }

    #[test]
    fn corrupted_oversized_and_short_frames_are_errors() {
        let bytes = stream();
        for at in [0, 5, 9, 13, 30, bytes.len() / 3 - 2] {
            let mut corrupted = bytes.clone();
            corrupted[at] ^= 0x41;
            let mut out = VecDeque::new();
            assert!(EventStreamDecoder::new(1 << 20).feed(&corrupted, &mut out).is_err(), "byte {at}");
        }
        let mut out = VecDeque::new();
        let e = EventStreamDecoder::new(20).feed(&bytes, &mut out).unwrap_err();
        assert!(e.contains("more than the limit of 20 bytes"), "{e}");
        let e = EventStreamDecoder::new(1 << 20).feed(&[0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0], &mut out).unwrap_err();
        assert!(e.contains("declares 3 bytes"), "{e}");
    }
}
