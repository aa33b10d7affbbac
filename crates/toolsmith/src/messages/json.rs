//! Reading and writing message histories as JSON, to a depth both sides agree on.
//!
//! serde_json stops reading at 128 levels of nesting, but a history holds values of any depth
//! (tool arguments, tool returns, metadata): a tool returning a document 200 levels deep would
//! write a history that could not be read back. Here the reader and the writer share one limit,
//! [`MAX_HISTORY_DEPTH`]: the reader parses past serde_json's own limit (serde_stacker grows the
//! stack on the heap as it goes) up to that depth, and the writer refuses (or, for
//! [`history_to_json`](super::history_to_json), flattens) anything deeper. Every check is made
//! without recursing, so a value nested far deeper than the stack allows is an error, never a
//! stack overflow.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{HistoryError, ModelMessage};
use crate::validation::LocItem;
use crate::validation::depth::{cut_points, dispose, locate, too_deep};

/// How deeply arrays and objects may nest in a message history's JSON, counting the list of
/// messages as the first level (a message is the second, its `parts` the third, a part the
/// fourth, so a tool's return value may itself nest about 500 levels deep).
///
/// [`parse_history`](super::parse_history) and [`history_from_value`](super::history_from_value)
/// read histories up to this depth and refuse deeper ones;
/// [`try_history_to_json`](super::try_history_to_json) refuses to write deeper ones, so that
/// every history toolsmith writes, it reads back.
pub const MAX_HISTORY_DEPTH: usize = 512;

/// Reads a history from JSON text, refusing text nested deeper than [`MAX_HISTORY_DEPTH`].
pub(super) fn parse(json: &str) -> Result<Vec<ModelMessage>, HistoryError> {
    if let Some(offset) = text_too_deep(json.as_bytes(), MAX_HISTORY_DEPTH) {
        let before = &json.as_bytes()[..offset];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = offset - before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
        return Err(HistoryError::too_deep(format!("at line {line} column {column}")));
    }
    let mut de = serde_json::Deserializer::from_str(json);
    // The depth was checked above; serde_stacker keeps the stack from running out below it.
    de.disable_recursion_limit();
    let messages = Vec::<ModelMessage>::deserialize(serde_stacker::Deserializer::new(&mut de))?;
    de.end()?;
    Ok(messages)
}

/// Reads a history from a JSON value, refusing (and dropping without recursion) a value nested
/// deeper than [`MAX_HISTORY_DEPTH`].
pub(super) fn from_value(value: Value) -> Result<Vec<ModelMessage>, HistoryError> {
    if let Some(loc) = too_deep(&value, MAX_HISTORY_DEPTH) {
        dispose(value);
        return Err(HistoryError::too_deep(in_message(&loc)));
    }
    Ok(Vec::<ModelMessage>::deserialize(serde_stacker::Deserializer::new(value))?)
}

/// Writes a history as JSON text, refusing one nested deeper than [`MAX_HISTORY_DEPTH`].
pub(super) fn to_json(messages: &[ModelMessage]) -> Result<String, HistoryError> {
    // The depth is measured first (the probe stops at the first bracket past the limit, so it
    // never recurses deeper), then serde_json's own writer writes what is known to fit.
    if let Some(i) = super::depth::first_too_deep(messages) {
        return Err(HistoryError::too_deep(format!("in message {i}")));
    }
    let mut out = Vec::with_capacity(256);
    serde_json::to_writer(&mut out, messages)?;
    Ok(utf8(out))
}

/// Writes a history nested deeper than [`MAX_HISTORY_DEPTH`] with every array or object past
/// the limit replaced by a string of its JSON text, so the result reads back.
pub(super) fn to_json_flattened(messages: &[ModelMessage]) -> Result<String, HistoryError> {
    let mut doc = messages.serialize(serde_stacker::Serializer::new(serde_json::value::Serializer))?;
    for loc in cut_points(&doc, MAX_HISTORY_DEPTH) {
        let Some(slot) = locate(&mut doc, &loc) else { continue };
        let deep = std::mem::take(slot);
        let mut text = Vec::new();
        let written = deep.serialize(serde_stacker::Serializer::new(&mut serde_json::Serializer::new(&mut text)));
        dispose(deep);
        written?;
        *slot = Value::String(utf8(text));
    }
    let out = serde_json::to_string(&doc);
    dispose(doc);
    Ok(out?)
}

fn utf8(bytes: Vec<u8>) -> String {
    // serde_json writes UTF-8; the fallback is never taken.
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn in_message(loc: &[LocItem]) -> String {
    match loc.first() {
        Some(LocItem::Index(i)) => format!("in message {i}"),
        _ => "in the list of messages".to_owned(),
    }
}

/// Tracks how deeply the JSON text fed to it nests (brackets inside strings do not count).
struct Nesting {
    depth: usize,
    max: usize,
    in_string: bool,
    escaped: bool,
}

impl Nesting {
    fn new(max: usize) -> Self {
        Nesting { depth: 0, max, in_string: false, escaped: false }
    }

    /// Feeds one byte; `false` when it opens an array or object past the limit.
    fn feed(&mut self, b: u8) -> bool {
        if self.in_string {
            match b {
                _ if self.escaped => self.escaped = false,
                b'\\' => self.escaped = true,
                b'"' => self.in_string = false,
                _ => {}
            }
            return true;
        }
        match b {
            b'"' => self.in_string = true,
            b'[' | b'{' => {
                self.depth += 1;
                if self.depth > self.max {
                    return false;
                }
            }
            b']' | b'}' => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
        true
    }
}

/// The byte offset of the first bracket in `json` that opens an array or object past `max`
/// levels. serde_json's parser nests exactly as the brackets of the text it accepts do, so
/// text that passes this check cannot take it deeper.
fn text_too_deep(json: &[u8], max: usize) -> Option<usize> {
    let mut nesting = Nesting::new(max);
    json.iter().position(|&b| !nesting.feed(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_nesting_skips_strings_and_escapes() {
        assert_eq!(text_too_deep(br#"[[1]]"#, 2), None);
        assert_eq!(text_too_deep(br#"[[[1]]]"#, 2), Some(2));
        assert_eq!(text_too_deep(br#"["[[[", {"a": "\"[[["}]"#, 2), None);
        assert_eq!(text_too_deep(br#"["\\", [[1]]]"#, 2), Some(8));
        assert_eq!(text_too_deep(br#"[[1], [2], [[3]]]"#, 2), Some(12));
    }
}
