//! Python's `str()` of a JSON value, as the reference writes a value into text (an f-string):
//! a top-level string as it is, everything else as its `repr` (`None`, `True`, `1.0`,
//! `{'a': [1, 'x']}`).

use serde_json::Value;

/// `str(value)` in Python, for the value `json.loads` would make of this JSON.
pub(crate) fn py_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

/// `repr(value)` in Python.
pub(crate) fn py_repr(value: &Value) -> String {
    let mut out = String::new();
    // Iteratively, so that a deep value cannot exhaust the stack: a stack of what is left to
    // write (a value, or a literal piece of text).
    enum Item<'a> {
        Value(&'a Value),
        Text(&'static str),
        Key(&'a str),
    }
    let mut stack = vec![Item::Value(value)];
    while let Some(item) = stack.pop() {
        match item {
            Item::Text(t) => out.push_str(t),
            Item::Key(k) => {
                out.push_str(&py_str_repr(k));
                out.push_str(": ");
            }
            Item::Value(v) => match v {
                Value::Null => out.push_str("None"),
                Value::Bool(true) => out.push_str("True"),
                Value::Bool(false) => out.push_str("False"),
                Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                    (Some(i), _, _) => out.push_str(&i.to_string()),
                    (None, Some(u), _) => out.push_str(&u.to_string()),
                    (None, None, Some(f)) => out.push_str(&py_float(f)),
                    _ => out.push_str(&n.to_string()),
                },
                Value::String(s) => out.push_str(&py_str_repr(s)),
                Value::Array(items) => {
                    out.push('[');
                    stack.push(Item::Text("]"));
                    for (i, item) in items.iter().enumerate().rev() {
                        stack.push(Item::Value(item));
                        if i > 0 {
                            stack.push(Item::Text(", "));
                        }
                    }
                }
                Value::Object(map) => {
                    out.push('{');
                    stack.push(Item::Text("}"));
                    for (i, (k, v)) in map.iter().enumerate().rev() {
                        stack.push(Item::Value(v));
                        stack.push(Item::Key(k));
                        if i > 0 {
                            stack.push(Item::Text(", "));
                        }
                    }
                }
            },
        }
    }
    out
}

/// `repr(f)` for a float: the shortest digits that read back, in positional notation for
/// exponents from -4 to 15, else scientific with a signed two-digit (or longer) exponent.
fn py_float(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    // Rust's `{:e}` gives the shortest round-trip digits: `-1.2345e-5`, `1e16`, `0e0`.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if !(-4..16).contains(&exp) {
        let m = if digits.len() > 1 { format!("{}.{}", &digits[..1], &digits[1..]) } else { digits };
        return format!("{sign}{m}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs());
    }
    if exp >= 0 {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            format!("{sign}{digits}{}.0", "0".repeat(int_len - digits.len()))
        } else {
            format!("{sign}{}.{}", &digits[..int_len], &digits[int_len..])
        }
    } else {
        format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize))
    }
}

/// `repr(s)` for a string: single quotes unless the string holds a single quote and no double
/// one; backslashes, the quote, `\t`, `\n`, `\r` and characters Python does not print escaped.
fn py_str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !printable(c) => {
                let n = c as u32;
                if n <= 0xff {
                    out.push_str(&format!("\\x{n:02x}"));
                } else if n <= 0xffff {
                    out.push_str(&format!("\\u{n:04x}"));
                } else {
                    out.push_str(&format!("\\U{n:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python's `str.isprintable` for one character, for the classes it refuses that text meets:
/// controls, separators other than the space, format characters and private use.
fn printable(c: char) -> bool {
    let n = c as u32;
    !(c.is_control()
        || matches!(n, 0xa0 | 0xad | 0x1680 | 0x2000..=0x200f | 0x2028..=0x202f | 0x205f..=0x2064)
        || matches!(n, 0x2066..=0x206f | 0x3000 | 0xfeff | 0xfff9..=0xfffb | 0xe000..=0xf8ff)
        || matches!(n, 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0xf0000..))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_read_as_python_writes_them() {
        // Each pair: the JSON, and Python's `str(json.loads(...))`.
        let cases = [
            ("null", "None"),
            ("true", "True"),
            ("false", "False"),
            ("42", "42"),
            ("-7", "-7"),
            ("1.0", "1.0"),
            ("0.1", "0.1"),
            ("-0.0", "-0.0"),
            ("1e16", "1e+16"),
            ("1.5e-7", "1.5e-07"),
            ("123456789012345.6", "123456789012345.6"),
            ("0.0001", "0.0001"),
            ("0.00001", "1e-05"),
            ("\"Anne\"", "Anne"),
            ("\"\"", ""),
            (r#"{"a": [1, "x", null], "b": {"c": true}}"#, "{'a': [1, 'x', None], 'b': {'c': True}}"),
            (r#"["it's", "say \"hi\"", "both ' \""]"#, r#"["it's", 'say "hi"', 'both \' "']"#),
            (r#"["tab\t", "nl\n", "back\\", "\u0007", "\u00a0é"]"#, r"['tab\t', 'nl\n', 'back\\', '\x07', '\xa0é']"),
            ("[]", "[]"),
            ("{}", "{}"),
        ];
        for (json, python) in cases {
            let value: Value = serde_json::from_str(json).unwrap();
            assert_eq!(py_str(&value), python, "{json}");
        }
        let mut deep = json!(1);
        for _ in 0..10_000 {
            deep = Value::Array(vec![deep]);
        }
        assert_eq!(py_repr(&deep).len(), 20_001);
        // serde_json drops a value recursively: this one is left to the process's end.
        std::mem::forget(deep);
    }
}
