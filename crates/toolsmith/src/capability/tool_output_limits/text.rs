//! Measuring, rendering and truncating tool output text, character for character as the harness
//! does (Python string indices are characters, so every count here is in `char`s).

use serde_json::Value;

use super::bands::TruncationStrategy;

/// Characters per token of the token estimate (the harness's compaction heuristic).
pub(super) const CHARS_PER_TOKEN: usize = 4;

/// `n` with thousands separators, as Python's `f'{n:,}'`.
pub(super) fn commas(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A string as Python's `repr` shows it (the handles in the model-visible markers).
pub(super) fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
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
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python's `str.format` with named fields only: `{name}` replaced by its value, `{{` and `}}`
/// literal braces; any other field (or a lone brace) is an error, as it is in Python.
pub(crate) fn py_format(template: &str, values: &[(&str, &str)]) -> Result<String, String> {
    let mut out = String::with_capacity(template.len());
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let mut name = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => name.push(c),
                        None => return Err("a `{` is not closed".into()),
                    }
                }
                match values.iter().find(|(k, _)| *k == name) {
                    Some((_, v)) => out.push_str(v),
                    None => return Err(format!("unknown placeholder {{{name}}}")),
                }
            }
            '}' => return Err("a single `}` (write `}}`)".into()),
            c => out.push(c),
        }
    }
    Ok(out)
}

/// The size of `text` in characters, or in estimated tokens.
pub(super) fn measure(
    text: &str,
    over_tokens: bool,
    tokenizer: Option<&(dyn Fn(&str) -> usize + Send + Sync)>,
) -> usize {
    if !over_tokens {
        return text.chars().count();
    }
    match tokenizer {
        Some(count) => count(text),
        None => text.chars().count() / CHARS_PER_TOKEN,
    }
}

/// A tool's value as the text that is measured and reduced: a string as it is, anything else as
/// compact JSON.
pub(super) fn to_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// Escapes the Unicode line separators that would knock read-back offsets off the line grid.
fn escape_line_separators(text: String) -> String {
    if !text.contains(['\u{85}', '\u{2028}', '\u{2029}']) {
        return text;
    }
    text.replace('\u{85}', "\\u0085").replace('\u{2028}', "\\u2028").replace('\u{2029}', "\\u2029")
}

/// The `indented_json` serializer: indented JSON, one field per line.
pub(super) fn indented_json(value: &Value) -> String {
    escape_line_separators(serde_json::to_string_pretty(value).unwrap_or_default())
}

/// The `json_lines` serializer: a list as one compact JSON value per line; anything else as
/// `indented_json`.
pub(super) fn json_lines(value: &Value) -> String {
    match value {
        Value::Array(items) => escape_line_separators(
            items.iter().map(|item| serde_json::to_string(item).unwrap_or_default()).collect::<Vec<_>>().join("\n"),
        ),
        other => indented_json(other),
    }
}

/// Removes ANSI escape sequences (CSI, OSC and simple escapes).
pub(super) fn strip_ansi(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '\x1b' || i + 1 >= chars.len() {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let next = chars[i + 1];
        if next == '[' {
            // CSI: ESC [ digits/semicolons, then a letter.
            let mut j = i + 2;
            while j < chars.len() && (chars[j].is_ascii_digit() || chars[j] == ';') {
                j += 1;
            }
            if j < chars.len() && chars[j].is_ascii_alphabetic() {
                i = j + 1;
                continue;
            }
        } else if next == ']' {
            // OSC: ESC ] ... BEL (the shortest, on one line).
            if let Some(end) = chars[i + 2..].iter().take_while(|c| **c != '\n').position(|c| *c == '\x07') {
                i = i + 2 + end + 1;
                continue;
            }
        } else if !matches!(next, '[' | ']' | '(' | ')') {
            i += 2;
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// A one-line shape hint of a structured value (`{'key': type, ...}` or `[N items of type]`),
/// or an empty string.
pub(super) fn json_sketch(value: &Value) -> String {
    fn type_name(v: &Value) -> &'static str {
        match v {
            Value::Null => "NoneType",
            Value::Bool(_) => "bool",
            Value::Number(n) if n.is_f64() => "float",
            Value::Number(_) => "int",
            Value::String(_) => "str",
            Value::Array(_) => "list",
            Value::Object(_) => "dict",
        }
    }
    match value {
        Value::Object(map) => {
            let shown: Vec<String> =
                map.iter().take(10).map(|(k, v)| format!("{}: {}", py_repr(k), type_name(v))).collect();
            let more = if map.len() <= 10 { String::new() } else { format!(", ... ({} keys)", map.len()) };
            format!("{{{}{more}}}", shown.join(", "))
        }
        Value::Array(items) => {
            let elem = items.first().map_or("empty", type_name);
            format!("[{} items of {elem}]", items.len())
        }
        _ => String::new(),
    }
}

fn collect(chars: &[char]) -> String {
    chars.iter().collect()
}

/// The last `n` characters (`text[-n:]`; `n == 0` is the whole text, as in Python).
fn last(chars: &[char], n: usize) -> &[char] {
    if n == 0 { chars } else { &chars[chars.len().saturating_sub(n)..] }
}

/// Keeps the tail within `max_chars`, the marker included.
pub(super) fn truncate_tail(text: &str, max_chars: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    if max_chars == 0 {
        return String::new();
    }
    if chars.len() <= max_chars {
        return text.to_string();
    }
    let marker = |n: usize| format!("[... output truncated, showing last {n} chars]\n");
    let mut tail = max_chars.saturating_sub(marker(max_chars).chars().count());
    if tail + 1 + marker(tail + 1).chars().count() <= max_chars {
        tail += 1;
    }
    if tail == 0 {
        return collect(last(&chars, max_chars));
    }
    marker(tail) + &collect(last(&chars, tail))
}

/// Where the last `count` LF/CRLF lines start.
fn tail_line_start(chars: &[char], count: usize) -> usize {
    let mut end = chars.len() - usize::from(chars.last() == Some(&'\n'));
    for _ in 0..count {
        match chars[..end].iter().rposition(|c| *c == '\n') {
            Some(i) => end = i,
            None => return 0,
        }
    }
    end + 1
}

/// Limits `text` to `max_chars`, the truncation marker included (the harness's `truncate_text`).
pub(super) fn truncate_text(
    text: &str,
    max_chars: usize,
    strategy: TruncationStrategy,
    keep_tail_lines: usize,
) -> String {
    if max_chars == 0 {
        return String::new();
    }
    let chars: Vec<char> = text.chars().collect();
    let total = chars.len();
    if total <= max_chars {
        return text.to_string();
    }
    let tail_chars = if keep_tail_lines > 0 { total - tail_line_start(&chars, keep_tail_lines) } else { 0 };
    if tail_chars > max_chars {
        return truncate_tail(text, max_chars);
    }
    if tail_chars == max_chars {
        return collect(last(&chars, max_chars));
    }
    if strategy == TruncationStrategy::Tail {
        let truncated = truncate_tail(text, max_chars);
        if tail_chars > 0 && !truncated.ends_with(&collect(&chars[total - tail_chars..])) {
            return collect(last(&chars, max_chars));
        }
        return truncated;
    }
    head_and_tail(&chars, max_chars, strategy, tail_chars)
}

fn head_and_tail(chars: &[char], max_chars: usize, strategy: TruncationStrategy, tail_chars: usize) -> String {
    let total = chars.len();
    let head_share = if strategy == TruncationStrategy::Head { 5 } else { 2 };
    let mut chosen = None;
    // Each count is checked: digit and thousands-separator changes can shorten the marker.
    for retained in (tail_chars.max(1)..=max_chars).rev() {
        let head_chars = (retained - tail_chars) * head_share / 5;
        let marker = if strategy == TruncationStrategy::Head && tail_chars == 0 {
            format!("\n\n[truncated: showing first {} of {} chars]", commas(retained), commas(total))
        } else {
            format!(
                "\n\n[truncated: {} chars omitted from the middle; showing first {} + last {} of {} chars]\n\n",
                commas(total - retained),
                commas(head_chars),
                commas(retained - head_chars),
                commas(total)
            )
        };
        if retained + marker.chars().count() <= max_chars {
            chosen = Some((retained, head_chars, marker));
            break;
        }
    }
    let (retained, head_chars, marker) = match chosen {
        Some(c) => c,
        None if tail_chars > 0 => return collect(last(chars, max_chars)),
        None => (max_chars, max_chars * head_share / 5, String::new()),
    };
    collect(&chars[..head_chars]) + &marker + &collect(&chars[total - (retained - head_chars)..])
}

/// A head and tail slice of `text` around a middle-elision marker (the spill preview).
pub(super) fn head_tail_preview(text: &str, preview_chars: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= preview_chars {
        return text.to_string();
    }
    let head = preview_chars / 2;
    let tail = preview_chars - head;
    let omitted = chars.len() - head - tail;
    format!("{}\n...[{} chars omitted]...\n{}", collect(&chars[..head]), commas(omitted), collect(last(&chars, tail)))
}

/// Python's `str.splitlines()`: every line boundary it knows, endings dropped.
pub(super) fn splitlines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut iter = text.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        let boundary =
            matches!(c, '\n' | '\r' | '\x0b' | '\x0c' | '\x1c' | '\x1d' | '\x1e' | '\u{85}' | '\u{2028}' | '\u{2029}');
        if !boundary {
            continue;
        }
        lines.push(&text[start..i]);
        let mut next = i + c.len_utf8();
        if c == '\r' && iter.peek().map(|(_, n)| *n) == Some('\n') {
            iter.next();
            next += 1;
        }
        start = next;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commas_group_thousands() {
        assert_eq!(commas(0), "0");
        assert_eq!(commas(999), "999");
        assert_eq!(commas(1000), "1,000");
        assert_eq!(commas(1234567), "1,234,567");
    }

    #[test]
    fn splitlines_matches_python() {
        assert_eq!(splitlines("a\nb\r\nc\rd\n"), vec!["a", "b", "c", "d"]);
        assert_eq!(splitlines(""), Vec::<&str>::new());
        assert_eq!(splitlines("\n\n"), vec!["", ""]);
    }

    #[test]
    fn format_like_python() {
        assert_eq!(py_format("a {x} {{x}} }}", &[("x", "1")]).unwrap(), "a 1 {x} }");
        assert!(py_format("{y}", &[("x", "1")]).is_err());
        assert!(py_format("{x", &[("x", "1")]).is_err());
    }

    #[test]
    fn repr_quotes_like_python() {
        assert_eq!(py_repr("run/c1.0"), "'run/c1.0'");
        assert_eq!(py_repr("it's"), "\"it's\"");
    }
}
