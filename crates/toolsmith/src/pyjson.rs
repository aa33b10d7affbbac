//! JSON text as Python's `json.dumps` writes it: `", "` between items and `": "` after keys, and
//! by default every character outside printable ASCII as a `\uXXXX` escape. Pydantic AI writes
//! some texts the model or a client sees this way (a schema in prompted-output instructions, a
//! judge's prompt, the values its UI adapters pack into a string field); these functions give
//! the same bytes.
//!
//! ```
//! use serde_json::json;
//!
//! let value = json!({"city": "Zürich", "days": [1, 2]});
//! assert_eq!(toolsmith::pyjson::dumps(&value), r#"{"city": "Z\u00fcrich", "days": [1, 2]}"#);
//! assert_eq!(toolsmith::pyjson::dumps_unicode(&value), r#"{"city": "Zürich", "days": [1, 2]}"#);
//! ```

use serde_json::Value;

/// `json.dumps(value)`: non-ASCII characters escaped.
pub fn dumps(value: &Value) -> String {
    let mut out = String::new();
    write(value, true, &mut out);
    out
}

/// `repr(value)` of the Python value the JSON value loads as: `None`, `True`, `'a'`, `1.0`,
/// `{'k': [1, 2]}` (a function signature's defaults and `Literal[...]` values are written so).
///
/// ```
/// use serde_json::json;
///
/// assert_eq!(toolsmith::pyjson::repr(&json!({"a": [true, null, 1.5, "it's"]})), r#"{'a': [True, None, 1.5, "it's"]}"#);
/// ```
pub fn repr(value: &Value) -> String {
    let mut out = String::new();
    crate::validation::text::py_repr(value, &mut out);
    out
}

/// `json.dumps(value, ensure_ascii=False)`: non-ASCII characters as they are.
pub fn dumps_unicode(value: &Value) -> String {
    let mut out = String::new();
    write(value, false, &mut out);
    out
}

fn write(value: &Value, ascii: bool, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write(v, ascii, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_string(k, ascii, out);
                out.push_str(": ");
                write(v, ascii, out);
            }
            out.push('}');
        }
        Value::String(s) => write_string(s, ascii, out),
        other => out.push_str(&other.to_string()),
    }
}

/// A JSON string as Python escapes it (`ascii`: everything outside space to `~` as `\uXXXX`).
pub(crate) fn write_string(s: &str, ascii: bool, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (ascii && (c as u32) > 0x7e) => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Text escaped as Python's `html.escape` escapes it (quotes included): how Pydantic AI writes a
/// value into an XML-like attribute the model reads.
pub(crate) fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escapes_like_json_dumps() {
        let v = json!({"a": ["é", 1, null, true], "b\"": "x\ny\u{08}\u{1f}", "😀": 1.5});
        assert_eq!(dumps(&v), r#"{"a": ["\u00e9", 1, null, true], "b\"": "x\ny\b\u001f", "\ud83d\ude00": 1.5}"#);
        assert_eq!(dumps_unicode(&v), r#"{"a": ["é", 1, null, true], "b\"": "x\ny\b\u001f", "😀": 1.5}"#);
    }
}
