//! Text helpers: Python `repr` of JSON values and numbers as Pydantic prints them.

use std::fmt::Write;

use serde_json::Value;

/// A number from a schema or an input, kept exact when it is an integer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    pub(super) fn from_json(n: &serde_json::Number) -> Num {
        if let Some(i) = n.as_i64() {
            Num::Int(i128::from(i))
        } else if let Some(u) = n.as_u64() {
            Num::Int(i128::from(u))
        } else {
            Num::Float(n.as_f64().unwrap_or(f64::NAN))
        }
    }

    pub(super) fn as_f64(self) -> f64 {
        match self {
            // Lossy only beyond 2^53, where an approximate comparison is the best on offer.
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }

    /// `self` compared with `other`, exactly for two integers; `None` when either is NaN.
    pub(super) fn partial_cmp(self, other: Num) -> Option<std::cmp::Ordering> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Some(a.cmp(&b)),
            (a, b) => a.as_f64().partial_cmp(&b.as_f64()),
        }
    }

    /// Whether `self` is a multiple of `m`, with pydantic-core's tolerance for floats.
    pub(super) fn is_multiple_of(self, m: Num) -> bool {
        match (self, m) {
            (Num::Int(_), Num::Int(0)) => true,
            (Num::Int(a), Num::Int(b)) => a % b == 0,
            (a, b) => {
                let (v, m) = (a.as_f64(), b.as_f64());
                if m == 0.0 {
                    return true;
                }
                let rem = v % m;
                let threshold = v.abs() / 1e9;
                !(rem.abs() > threshold && (rem - m).abs() > threshold)
            }
        }
    }
}

impl std::fmt::Display for Num {
    /// As pydantic-core prints constraint values: `0`, `0.5`, `1` for `1.0`, `0.0000001`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Num::Int(i) => write!(f, "{i}"),
            Num::Float(x) => write!(f, "{x}"),
        }
    }
}

/// `"s"` when `n` is not 1, for "1 character" and "2 characters".
pub(super) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Python's `repr()` of a string: single quotes unless the text has a single quote and no
/// double quote, with Python's escapes.
pub(super) fn py_repr_str(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => {
                let n = u32::from(c);
                let _ = if n < 0x100 { write!(out, "\\x{n:02x}") } else { write!(out, "\\u{n:04x}") };
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// Python's `repr()` of a float: `1.0`, `0.5`, `1e+20`, `1e-05`.
fn py_repr_float(x: f64, out: &mut String) {
    if !x.is_finite() {
        out.push_str(if x.is_nan() {
            "nan"
        } else if x > 0.0 {
            "inf"
        } else {
            "-inf"
        });
        return;
    }
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..16).contains(&exp) {
        let plain = format!("{x}");
        out.push_str(&plain);
        if !plain.contains('.') {
            out.push_str(".0");
        }
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        let _ = write!(out, "{mantissa}e{sign}{:02}", exp.abs());
    }
}

/// Python's `repr()` of the value a JSON value would be in Python (`None`, `True`, `'a'`).
pub(crate) fn py_repr(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => match Num::from_json(n) {
            Num::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Num::Float(f) => py_repr_float(f, out),
        },
        Value::String(s) => py_repr_str(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                py_repr(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                py_repr_str(k, out);
                out.push_str(": ");
                py_repr(item, out);
            }
            out.push('}');
        }
    }
}

/// Reprs joined Pydantic's way: `'a'`, `'a' or 'b'`, `'a', 'b' or 'c'`.
pub(super) fn join_or(values: &[Value]) -> String {
    let mut out = String::new();
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push_str(if i + 1 == values.len() { " or " } else { ", " });
        }
        py_repr(v, &mut out);
    }
    out
}
