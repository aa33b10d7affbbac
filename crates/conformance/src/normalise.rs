//! The normalised result of SCENARIOS.md: dropped keys, `id:N` tool-call ids.

use std::collections::HashMap;

use serde_json::{Map, Value};

const DROPPED: &[&str] = &[
    "timestamp",
    "run_id",
    "conversation_id",
    "usage",
    "model_name",
    "model_id",
    "provider_name",
    "provider_url",
    "provider_details",
    "provider_response_id",
    "finish_reason",
    "state",
    "content_file_digests",
];

/// Normalises one serialised message.
pub fn message(mut value: Value) -> Value {
    if let Value::Object(map) = &mut value {
        map.remove("metadata");
        clean(map, true);
    }
    value
}

/// Removes dropped and null keys, leaving verbatim values alone.
fn clean(map: &mut Map<String, Value>, top: bool) {
    map.retain(|k, v| !DROPPED.contains(&k.as_str()) && !v.is_null());
    let _ = top;
    let part_kind = map.get("part_kind").and_then(Value::as_str).map(String::from);
    for (key, v) in map.iter_mut() {
        match key.as_str() {
            "args" | "metadata" => {}
            "content"
                if part_kind.as_deref() == Some("tool-return") || part_kind.as_deref() == Some("retry-feedback") => {}
            "content" if part_kind.as_deref() == Some("user-prompt") => {
                if let Value::Array(items) = v {
                    for item in items {
                        if let Value::Object(o) = item {
                            o.retain(|_, x| !x.is_null());
                        }
                    }
                }
            }
            _ => clean_value(v),
        }
    }
}

fn clean_value(v: &mut Value) {
    match v {
        Value::Object(o) => clean(o, false),
        Value::Array(items) => items.iter_mut().for_each(clean_value),
        _ => {}
    }
}

/// Maps raw tool-call ids to `id:N` in order of first appearance.
#[derive(Default)]
pub struct Ids {
    map: HashMap<String, usize>,
}

impl Ids {
    /// The normalised form of a raw id.
    pub fn id(&mut self, raw: &str) -> String {
        let n = self.map.len() + 1;
        format!("id:{}", self.map.entry(raw.to_string()).or_insert(n))
    }

    /// Replaces every `tool_call_id` in a value (walking in document order).
    pub fn replace(&mut self, v: &mut Value) {
        match v {
            Value::Object(o) => {
                for (k, x) in o.iter_mut() {
                    if k == "tool_call_id" {
                        if let Value::String(s) = x {
                            *s = self.id(s);
                        }
                    } else if k != "args" && k != "content" && k != "metadata" {
                        self.replace(x);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|x| self.replace(x)),
            _ => {}
        }
    }
}

/// Sorts the elements of Python set literals in a message: `{'b', 'a'}` becomes `{'a', 'b'}`.
pub fn sort_set_literals(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(start) = rest.find("{'") {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        match after.find("'}") {
            Some(end) => {
                let inner = &after[1..end + 1];
                let mut items: Vec<&str> = inner.split(", ").collect();
                if items.iter().all(|i| i.starts_with('\'') && i.ends_with('\'')) {
                    items.sort();
                    out.push('{');
                    out.push_str(&items.join(", "));
                    out.push('}');
                } else {
                    out.push_str(&after[..end + 2]);
                }
                rest = &after[end + 2..];
            }
            None => {
                out.push_str(after);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}
