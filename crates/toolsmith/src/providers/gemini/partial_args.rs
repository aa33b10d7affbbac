//! Function-call arguments streamed as typed leaf values addressed by JSON paths: Gemini's
//! `functionCall.partialArgs` (`streamFunctionCallArguments`, Gemini 3 on Vertex AI).
//!
//! Each entry is `{"jsonPath": "$.location", "stringValue": "Bos", "willContinue": true}` (or
//! `numberValue`, `boolValue`, `nullValue`); a string whose entry says `willContinue` goes on in
//! the next entry for the same path. [`PartialArgs`] builds the arguments object from the
//! entries (the authoritative result) and, alongside, the JSON text of that object as fragments
//! (what [`ModelStreamEvent::ToolCallArgsDelta`](crate::model::ModelStreamEvent) carries), as
//! long as the entries come in document order. An entry that goes back into a member already
//! written (which a text stream cannot express) stops the fragments; the final arguments are
//! still complete.

use std::collections::HashSet;

use serde_json::{Map, Value};

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// Parses the RFC 9535 paths models send: `$`, then `.name`, `[N]`, `['name']` or `["name"]`
/// steps. Anything else (wildcards, filters, slices) is not a single member: `None`.
fn parse_path(path: &str) -> Option<Vec<Seg>> {
    let mut chars = path.trim().strip_prefix('$')?.chars().peekable();
    let mut segs = Vec::new();
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                let mut name = String::new();
                while let Some(&n) = chars.peek() {
                    if n == '.' || n == '[' {
                        break;
                    }
                    name.push(n);
                    chars.next();
                }
                if name.is_empty() || name == "*" {
                    return None;
                }
                segs.push(Seg::Key(name));
            }
            '[' => match chars.peek().copied() {
                Some(q @ ('\'' | '"')) => {
                    chars.next();
                    let mut name = String::new();
                    loop {
                        match chars.next()? {
                            '\\' => match chars.next()? {
                                'n' => name.push('\n'),
                                't' => name.push('\t'),
                                'r' => name.push('\r'),
                                other => name.push(other),
                            },
                            c if c == q => break,
                            c => name.push(c),
                        }
                    }
                    if chars.next()? != ']' {
                        return None;
                    }
                    segs.push(Seg::Key(name));
                }
                _ => {
                    let mut digits = String::new();
                    loop {
                        match chars.next()? {
                            ']' => break,
                            d if d.is_ascii_digit() => digits.push(d),
                            _ => return None,
                        }
                    }
                    segs.push(Seg::Index(digits.parse().ok()?));
                }
            },
            _ => return None,
        }
    }
    Some(segs)
}

/// The value of one entry: `stringValue`, `numberValue`, `boolValue` or `nullValue`.
fn leaf(entry: &Value) -> Option<Value> {
    if let Some(s) = entry.get("stringValue") {
        return s.as_str().map(|s| Value::String(s.to_string()));
    }
    if let Some(n) = entry.get("numberValue") {
        // A double on the wire: whole numbers go back as integers, as the model meant them.
        let n = n.as_f64()?;
        if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
            return Some(Value::from(n as i64));
        }
        return Some(serde_json::Number::from_f64(n).map(Value::Number).unwrap_or(Value::Null));
    }
    if let Some(b) = entry.get("boolValue") {
        return b.as_bool().map(Value::Bool);
    }
    if entry.get("nullValue").is_some() {
        return Some(Value::Null);
    }
    None
}

/// JSON text of a string's content, without the quotes.
fn escaped(s: &str) -> String {
    let quoted = Value::String(s.to_string()).to_string();
    quoted[1..quoted.len() - 1].to_string()
}

#[derive(Debug)]
struct Frame {
    /// The step leading to this container (none for the root).
    seg: Option<Seg>,
    array: bool,
    count: usize,
    keys: HashSet<String>,
}

impl Frame {
    fn new(seg: Option<Seg>, array: bool) -> Self {
        Frame { seg, array, count: 0, keys: HashSet::new() }
    }

    /// Writes the separator and key for a new member at `seg`; `false` when `seg` does not
    /// come next in this container (a written key again, an index out of order, a wrong kind).
    fn open_member(&mut self, seg: &Seg, out: &mut String) -> bool {
        match (seg, self.array) {
            (Seg::Key(k), false) if !self.keys.contains(k) => {
                if self.count > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                self.keys.insert(k.clone());
            }
            (Seg::Index(i), true) if *i == self.count => {
                if self.count > 0 {
                    out.push(',');
                }
            }
            _ => return false,
        }
        self.count += 1;
        true
    }

    fn close(&self) -> char {
        if self.array { ']' } else { '}' }
    }
}

/// The arguments of one streamed call, assembled from its `partialArgs` entries.
#[derive(Debug, Default)]
pub(crate) struct PartialArgs {
    value: Option<Value>,
    /// The path of the string that continues in the next entry.
    continuing: Option<Vec<Seg>>,
    /// Open containers of the JSON text, root first (empty before the first fragment).
    stack: Vec<Frame>,
    /// Whether the text has a string left open (the `continuing` one).
    open_string: bool,
    /// Set once an entry cannot be written as more text: no more fragments.
    diverged: bool,
}

impl PartialArgs {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Applies the entries of one `partialArgs` list; returns the JSON text they add (empty
    /// when nothing can be added).
    pub(crate) fn apply(&mut self, entries: &[Value]) -> String {
        let mut out = String::new();
        for entry in entries {
            let Some(path) = entry.get("jsonPath").and_then(Value::as_str).and_then(parse_path) else {
                tracing::warn!(entry = %entry, "a partial argument without a usable JSON path is ignored");
                continue;
            };
            let Some(value) = leaf(entry) else {
                tracing::warn!(entry = %entry, "a partial argument without a value is ignored");
                continue;
            };
            if path.is_empty() {
                // The whole arguments at once.
                self.value = Some(value);
                self.diverged = true;
                continue;
            }
            let will_continue = entry.get("willContinue").and_then(Value::as_bool) == Some(true);
            let append = self.continuing.as_ref() == Some(&path) && value.is_string();
            self.set(&path, &value, append);
            if !self.diverged {
                match self.write(&path, &value, append, will_continue) {
                    Some(text) => out.push_str(&text),
                    None => self.diverged = true,
                }
            }
            self.continuing = (will_continue && value.is_string()).then_some(path);
        }
        out
    }

    /// Replaces the arguments with a complete object sent by the provider (no more fragments).
    pub(crate) fn replace(&mut self, args: Value) {
        self.value = Some(args);
        self.diverged = true;
    }

    /// Closes the JSON text (the last fragment) and returns it with the assembled arguments.
    pub(crate) fn finish(mut self) -> (String, Value) {
        let mut out = String::new();
        if !self.diverged {
            if self.open_string {
                out.push('"');
            }
            while let Some(frame) = self.stack.pop() {
                out.push(frame.close());
            }
        }
        (out, self.value.unwrap_or_else(|| Value::Object(Map::new())))
    }

    fn set(&mut self, path: &[Seg], value: &Value, append: bool) {
        let mut node = self.value.get_or_insert_with(|| Value::Object(Map::new()));
        for seg in path {
            node = match seg {
                Seg::Key(k) => {
                    if !node.is_object() {
                        *node = Value::Object(Map::new());
                    }
                    let Value::Object(map) = node else { return };
                    map.entry(k.clone()).or_insert(Value::Null)
                }
                Seg::Index(i) => {
                    if !node.is_array() {
                        *node = Value::Array(Vec::new());
                    }
                    let Value::Array(items) = node else { return };
                    if items.len() <= *i {
                        items.resize(*i + 1, Value::Null);
                    }
                    &mut items[*i]
                }
            };
        }
        match (node, value) {
            (Value::String(existing), Value::String(more)) if append => existing.push_str(more),
            (node, value) => *node = value.clone(),
        }
    }

    /// The text for one entry, or `None` when it cannot follow the text written so far.
    fn write(&mut self, path: &[Seg], value: &Value, append: bool, will_continue: bool) -> Option<String> {
        let mut out = String::new();
        if append && self.open_string {
            if let Value::String(s) = value {
                out.push_str(&escaped(s));
            }
            if !will_continue {
                out.push('"');
                self.open_string = false;
            }
            return Some(out);
        }
        if self.stack.is_empty() {
            out.push('{');
            self.stack.push(Frame::new(None, false));
        }
        if self.open_string {
            out.push('"');
            self.open_string = false;
        }
        let (parent, last) = path.split_at(path.len() - 1);
        // Close the containers that are not on the way to this entry.
        let common = self.stack[1..].iter().zip(parent).take_while(|(f, s)| f.seg.as_ref() == Some(*s)).count();
        while self.stack.len() > common + 1 {
            let frame = self.stack.pop()?;
            out.push(frame.close());
        }
        // Open the containers on the way.
        for (i, seg) in parent.iter().enumerate().skip(common) {
            let next_is_index = matches!(path[i + 1], Seg::Index(_));
            if !self.stack.last_mut()?.open_member(seg, &mut out) {
                return None;
            }
            out.push(if next_is_index { '[' } else { '{' });
            self.stack.push(Frame::new(Some(seg.clone()), next_is_index));
        }
        if !self.stack.last_mut()?.open_member(&last[0], &mut out) {
            return None;
        }
        match value {
            Value::String(s) => {
                out.push('"');
                out.push_str(&escaped(s));
                if will_continue {
                    self.open_string = true;
                } else {
                    out.push('"');
                }
            }
            other => out.push_str(&other.to_string()),
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(batches: &[Value]) -> (String, Value) {
        let mut p = PartialArgs::new();
        let mut text = String::new();
        for b in batches {
            text.push_str(&p.apply(b.as_array().unwrap()));
        }
        let (tail, value) = p.finish();
        text.push_str(&tail);
        (text, value)
    }

    #[test]
    fn paths_parse() {
        assert_eq!(parse_path("$"), Some(vec![]));
        assert_eq!(
            parse_path("$.foo.bar[0].data"),
            Some(vec![Seg::Key("foo".into()), Seg::Key("bar".into()), Seg::Index(0), Seg::Key("data".into())])
        );
        assert_eq!(parse_path("$['a b'][\"c\\\"d\"]"), Some(vec![Seg::Key("a b".into()), Seg::Key("c\"d".into())]));
        assert_eq!(parse_path("$.a[*]"), None);
        assert_eq!(parse_path("a.b"), None);
    }

    #[test]
    fn strings_continue_across_entries_and_types_are_kept() {
        let (text, value) = run(&[
            json!([{"jsonPath": "$.location", "stringValue": "Boston", "willContinue": true}]),
            json!([{"jsonPath": "$.location", "stringValue": ", \"MA\""}]),
            json!([{"jsonPath": "$.brightness", "numberValue": 50.0}, {"jsonPath": "$.ratio", "numberValue": 0.5}]),
            json!([{"jsonPath": "$.on", "boolValue": true}, {"jsonPath": "$.note", "nullValue": "NULL_VALUE"}]),
        ]);
        let expected = json!({"location": "Boston, \"MA\"", "brightness": 50, "ratio": 0.5, "on": true, "note": null});
        assert_eq!(value, expected);
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), expected, "{text}");
    }

    #[test]
    fn nested_objects_and_arrays_are_written_in_order() {
        let (text, value) = run(&[json!([
            {"jsonPath": "$.user.name", "stringValue": "Ann"},
            {"jsonPath": "$.user.tags[0]", "stringValue": "a", "willContinue": true},
            {"jsonPath": "$.user.tags[0]", "stringValue": "b"},
            {"jsonPath": "$.user.tags[1]", "stringValue": "c"},
            {"jsonPath": "$.items[0].id", "numberValue": 1},
            {"jsonPath": "$.items[1].id", "numberValue": 2},
            {"jsonPath": "$.done", "boolValue": false},
        ])]);
        let expected =
            json!({"user": {"name": "Ann", "tags": ["ab", "c"]}, "items": [{"id": 1}, {"id": 2}], "done": false});
        assert_eq!(value, expected);
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), expected, "{text}");
    }

    #[test]
    fn out_of_order_entries_stop_the_text_but_not_the_arguments() {
        let mut p = PartialArgs::new();
        let first = p.apply(
            json!([{"jsonPath": "$.a.x", "numberValue": 1}, {"jsonPath": "$.b", "numberValue": 2}]).as_array().unwrap(),
        );
        assert_eq!(first, "{\"a\":{\"x\":1},\"b\":2");
        assert_eq!(p.apply(json!([{"jsonPath": "$.a.y", "numberValue": 3}]).as_array().unwrap()), "");
        let (tail, value) = p.finish();
        assert_eq!(tail, "");
        assert_eq!(value, json!({"a": {"x": 1, "y": 3}, "b": 2}));
    }

    #[test]
    fn no_entries_give_an_empty_object() {
        assert_eq!(run(&[]), (String::new(), json!({})));
    }
}
