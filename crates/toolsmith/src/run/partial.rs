//! Partial JSON: the value a stream's JSON so far stands for, as Pydantic's parser reads it in
//! `trailing-strings` mode (open objects and arrays closed, an unfinished string kept as far as
//! it goes, an unfinished number, literal or key dropped).

use serde_json::{Map, Number, Value};

/// The value `text` (the start of a JSON document) stands for, or `None` when nothing usable has
/// arrived yet or the text is not the start of a JSON document.
pub(crate) fn parse_partial(text: &str) -> Option<Value> {
    let text = text.trim_start();
    if text.is_empty() {
        return None;
    }
    let value =
        jiter::JsonValue::parse_with_config(text.as_bytes(), false, jiter::PartialMode::TrailingStrings).ok()?;
    Some(to_value(value))
}

fn to_value(value: jiter::JsonValue<'_>) -> Value {
    use jiter::JsonValue as J;
    match value {
        J::Null => Value::Null,
        J::Bool(b) => Value::Bool(b),
        J::Int(i) => Value::Number(i.into()),
        J::Float(f) => Number::from_f64(f).map_or(Value::Null, Value::Number),
        J::Str(s) => Value::String(s.into_owned()),
        J::Array(items) => Value::Array(std::sync::Arc::unwrap_or_clone(items).into_iter().map(to_value).collect()),
        J::Object(fields) => {
            let mut map = Map::new();
            for (k, v) in std::sync::Arc::unwrap_or_clone(fields).into_iter() {
                map.insert(k.into_owned(), to_value(v));
            }
            Value::Object(map)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn open_structures_close_and_trailing_strings_stay() {
        assert_eq!(parse_partial(r#"{"name": "Par"#), Some(json!({"name": "Par"})));
        assert_eq!(parse_partial(r#"{"name": "Paris", "pop"#), Some(json!({"name": "Paris"})));
        assert_eq!(
            parse_partial(r#"{"name": "Paris", "tags": ["a", "b"#),
            Some(json!({"name": "Paris", "tags": ["a", "b"]}))
        );
        assert_eq!(parse_partial(r#"{"n": 12"#), Some(json!({"n": 12})));
        assert_eq!(parse_partial(r#"{"ok": tr"#), Some(json!({})));
        assert_eq!(parse_partial("  "), None);
        assert_eq!(parse_partial("nonsense"), None);
    }

    proptest! {
        /// Every prefix of a JSON document reads as something or nothing, never a panic; the
        /// whole document reads as itself.
        #[test]
        fn every_prefix_of_a_document_parses(v in crate::test_support::arb_json()) {
            let text = serde_json::to_string(&v).unwrap();
            for (i, _) in text.char_indices() {
                let _ = parse_partial(&text[..i]);
            }
            prop_assert_eq!(parse_partial(&text), Some(v));
        }
    }
}
