//! A strict JSON validator, to check `metadata = "..."` at compile time without a JSON library.
//!
//! It accepts exactly what `serde_json::from_str::<serde_json::Value>` accepts (RFC 8259, paired
//! UTF-16 surrogates in escapes, finite numbers, at most 127 levels of nesting), which the unit
//! tests check against serde_json itself.

/// Checks that `text` is a JSON object.
pub(crate) fn check_object(text: &str) -> Result<(), String> {
    let mut p = Parser { bytes: text.as_bytes(), pos: 0, depth: 0 };
    p.skip_ws();
    if p.peek() != Some(b'{') {
        return Err("expected a JSON object (`{...}`)".into());
    }
    p.value()?;
    p.skip_ws();
    if p.pos != p.bytes.len() {
        return Err(p.err("trailing characters"));
    }
    Ok(())
}

const MAX_DEPTH: usize = 127;

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn err(&self, what: &str) -> String {
        format!("{what} at byte {}", self.pos)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek();
        self.pos += usize::from(b.is_some());
        b
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, b: u8, what: &str) -> Result<(), String> {
        self.skip_ws();
        if self.next() == Some(b) { Ok(()) } else { Err(self.err(what)) }
    }

    fn value(&mut self) -> Result<(), String> {
        self.skip_ws();
        match self.peek() {
            Some(b'{') => self.container(b'}', true),
            Some(b'[') => self.container(b']', false),
            Some(b'"') => self.string(),
            Some(b't') => self.keyword("true"),
            Some(b'f') => self.keyword("false"),
            Some(b'n') => self.keyword("null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.err("expected a value")),
            None => Err(self.err("unexpected end of input")),
        }
    }

    fn keyword(&mut self, word: &str) -> Result<(), String> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.err("expected a value"))
        }
    }

    fn container(&mut self, close: u8, object: bool) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("nested too deeply"));
        }
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(close) {
            self.pos += 1;
        } else {
            loop {
                if object {
                    self.skip_ws();
                    if self.peek() != Some(b'"') {
                        return Err(self.err("expected a string key"));
                    }
                    self.string()?;
                    self.expect(b':', "expected `:`")?;
                }
                self.value()?;
                self.skip_ws();
                match self.next() {
                    Some(b',') => continue,
                    Some(b) if b == close => break,
                    _ => return Err(self.err("expected `,` or a closing bracket")),
                }
            }
        }
        self.depth -= 1;
        Ok(())
    }

    fn string(&mut self) -> Result<(), String> {
        self.pos += 1; // the opening quote
        loop {
            match self.next() {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => return Ok(()),
                Some(b'\\') => match self.next() {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {}
                    Some(b'u') => {
                        let n = self.hex4()?;
                        if (0xDC00..=0xDFFF).contains(&n) {
                            return Err(self.err("lone surrogate in \\u escape"));
                        }
                        if (0xD800..=0xDBFF).contains(&n) {
                            if self.next() != Some(b'\\') || self.next() != Some(b'u') {
                                return Err(self.err("lone surrogate in \\u escape"));
                            }
                            if !(0xDC00..=0xDFFF).contains(&self.hex4()?) {
                                return Err(self.err("lone surrogate in \\u escape"));
                            }
                        }
                    }
                    _ => return Err(self.err("invalid escape")),
                },
                Some(0x00..=0x1F) => return Err(self.err("control character in string")),
                Some(_) => {}
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let mut n = 0;
        for _ in 0..4 {
            let digit = self.next().and_then(|b| char::from(b).to_digit(16));
            n = n * 16 + digit.ok_or_else(|| self.err("invalid \\u escape"))?;
        }
        Ok(n)
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<(), String> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.err("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.err("invalid number"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.err("invalid number"));
            }
        }
        // Numbers too large for an f64 are an error in serde_json too.
        let text = std::str::from_utf8(&self.bytes[start..self.pos]).unwrap_or("0");
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(()),
            _ => Err(self.err("number out of range")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check_object;

    fn agrees(text: &str) -> bool {
        let ours = check_object(text).is_ok();
        let theirs = matches!(serde_json::from_str::<serde_json::Value>(text), Ok(serde_json::Value::Object(_)));
        assert_eq!(ours, theirs, "disagreement on {text:?}: ours {:?}", check_object(text));
        ours
    }

    #[test]
    fn accepts_objects() {
        for text in [
            "{}",
            " { } ",
            r#"{"a": 1}"#,
            r#"{"a": [1, 2.5, -3e10, 0, -0.0, 1E+2, 1e-2], "b": {"c": null, "d": true, "e": false}}"#,
            r#"{"s": "esc \" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00 ünïcödé"}"#,
            "{\n\t\"a\" :\r\n 1\n}",
            r#"{"a": 1, "a": 2}"#,
            r#"{"big": 18446744073709551616, "neg": -9223372036854775809}"#,
        ] {
            assert!(agrees(text), "{text}");
        }
    }

    #[test]
    fn rejects_non_objects_and_invalid_json() {
        for text in [
            "",
            "[]",
            "1",
            r#""s""#,
            "null",
            "{",
            "{}}",
            "{} x",
            r#"{"a": 1,}"#,
            r#"{"a" 1}"#,
            "{a: 1}",
            "{'a': 1}",
            r#"{"a": 01}"#,
            r#"{"a": 1.}"#,
            r#"{"a": .5}"#,
            r#"{"a": +1}"#,
            r#"{"a": 1e}"#,
            r#"{"a": NaN}"#,
            r#"{"a": 1e400}"#,
            r#"{"a": tru}"#,
            r#"{"a": "\x"}"#,
            r#"{"a": "\u12"}"#,
            r#"{"a": "\ud800"}"#,
            r#"{"a": "\ud800\u0041"}"#,
            r#"{"a": "\udc00"}"#,
            "{\"a\": \"tab\there\"}",
            r#"{"a": [1 2]}"#,
            "{} // comment",
        ] {
            assert!(!agrees(text), "{text}");
        }
    }

    #[test]
    fn nesting_limit_matches_serde_json() {
        for (depth, ok) in [(126, true), (127, true), (128, false), (129, false)] {
            let text = format!("{}{}", "{\"a\":".repeat(depth - 1), "{}".to_string() + &"}".repeat(depth - 1));
            assert_eq!(agrees(&text), ok, "{depth}");
            let text = format!("{{\"a\":{}{}}}", "[".repeat(depth - 1), "]".repeat(depth - 1));
            assert_eq!(agrees(&text), ok, "{depth}");
        }
    }
}
