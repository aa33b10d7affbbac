//! JSON schemas for tool arguments, generated from Rust types.
//!
//! Schemas come from [`schemars`] and go through one normalising transform so that the default
//! output equals Pydantic AI's tool schema for the same signature: no `$schema`, no root `title`
//! (kept for a single struct parameter, as Pydantic keeps a model's title), definitions inlined,
//! no non-standard `format`s (`int64`, `double`, ...), and `Option<T>` fields optional but not
//! nullable.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

fn settings() -> SchemaSettings {
    let mut s = SchemaSettings::draft2020_12();
    s.meta_schema = None;
    s.inline_subschemas = true;
    s
}

/// The schema of a type, normalised; returns `(schema, description)` where the root
/// description has been taken out of the schema. With `keep_formats`, the numeric `format`s
/// stay (for the validator, which bounds values to the Rust type's range; [`strip_formats`]
/// then gives the schema the model sees).
fn normalised<T: JsonSchema>(keep_title: bool, keep_formats: bool) -> (Value, Option<String>) {
    let schema = settings().into_generator().into_root_schema_for::<T>();
    let mut value = schema.to_value();
    let mut description = None;
    if let Value::Object(map) = &mut value {
        map.remove("$schema");
        if !keep_title {
            map.remove("title");
        }
        if let Some(Value::String(d)) = map.remove("description") {
            description = Some(d);
        }
        if !map.contains_key("type") && map.get("properties").is_some() {
            map.insert("type".into(), Value::String("object".into()));
        }
    }
    normalise_with(&mut value, !keep_formats, 0);
    if let Value::Object(map) = &mut value
        && !map.contains_key("properties")
        && map.get("type").and_then(Value::as_str) == Some("object")
    {
        // Pydantic always lists `properties`, even when empty.
        let mut ordered = Map::new();
        for (k, v) in std::mem::take(map) {
            if k == "type" {
                ordered.insert("properties".into(), Value::Object(Map::new()));
            }
            ordered.insert(k, v);
        }
        *map = ordered;
    }
    (value, description)
}

/// The argument schema of a generated argument struct (no title).
pub fn args_schema<T: JsonSchema>() -> (Value, Option<String>) {
    normalised::<T>(false, false)
}

/// The schema of a single struct parameter: its own schema, with its title, and its doc
/// comment as the description.
pub fn model_schema<T: JsonSchema>() -> (Value, Option<String>) {
    normalised::<T>(true, false)
}

/// [`args_schema`] with the numeric `format`s kept (what `#[tool]` and [`Tool::new`] compile
/// their validators from).
///
/// [`Tool::new`]: crate::tool::Tool::new
#[doc(hidden)]
pub fn args_schema_with_formats<T: JsonSchema>() -> (Value, Option<String>) {
    normalised::<T>(false, true)
}

/// [`model_schema`] with the numeric `format`s kept.
#[doc(hidden)]
pub fn model_schema_with_formats<T: JsonSchema>() -> (Value, Option<String>) {
    normalised::<T>(true, true)
}

/// The schema of a tool's return type: normalised, with its title kept and keys in sorted order
/// (the order Pydantic prints a model's schema in).
pub fn return_schema<T: JsonSchema>() -> Value {
    let mut value = settings().into_generator().into_root_schema_for::<T>().to_value();
    if let Value::Object(map) = &mut value {
        map.remove("$schema");
        // schemars titles every root schema with the Rust type's name; Pydantic titles models only.
        if !map.contains_key("properties") {
            map.remove("title");
        }
    }
    normalise(&mut value);
    sort_keys(value)
}

/// Sorts the keywords of every schema object; the names under `properties` keep their order.
fn sort_keys(v: Value) -> Value {
    match v {
        Value::Object(o) => {
            let mut entries: Vec<(String, Value)> = o.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| {
                        let v = match (k.as_str(), v) {
                            ("properties" | "$defs" | "definitions", Value::Object(props)) => {
                                Value::Object(props.into_iter().map(|(name, p)| (name, sort_keys(p))).collect())
                            }
                            (_, v) => sort_keys(v),
                        };
                        (k, v)
                    })
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sort_keys).collect()),
        other => other,
    }
}

const NON_STANDARD_FORMATS: &[&str] = &[
    "int8", "int16", "int32", "int64", "int128", "uint", "uint8", "uint16", "uint32", "uint64", "uint128", "float",
    "double",
];

/// Applies the normalising rules to a schema in place (recursively), down to
/// [`MAX_HISTORY_DEPTH`](crate::messages::MAX_HISTORY_DEPTH) levels (a schema nested deeper is
/// refused where a tool is made: what lies past that depth is left as it is, never walked).
pub fn normalise(value: &mut Value) {
    normalise_with(value, true, 0);
}

/// Takes the non-standard numeric `format`s out of a schema normalised with them kept: the
/// result is what [`normalise`] gives.
pub(crate) fn strip_formats(value: &mut Value) {
    visit(value, &mut |map| {
        if let Some(Value::String(f)) = map.get("format")
            && NON_STANDARD_FORMATS.contains(&f.as_str())
        {
            map.remove("format");
        }
    });
}

/// Calls `f` on every schema object that normalising visits.
fn visit(value: &mut Value, f: &mut impl FnMut(&mut Map<String, Value>)) {
    let Value::Object(map) = value else { return };
    f(map);
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        props.values_mut().for_each(|p| visit(p, f));
    }
    for key in ["items", "additionalProperties", "not", "if", "then", "else", "contains"] {
        if let Some(v) = map.get_mut(key) {
            visit(v, f);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(items)) = map.get_mut(key) {
            items.iter_mut().for_each(|v| visit(v, f));
        }
    }
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = map.get_mut(key) {
            defs.values_mut().for_each(|v| visit(v, f));
        }
    }
}

/// How deep (in schema objects, each one or two levels of JSON) normalising goes.
const MAX_SCHEMA_DEPTH: usize = crate::messages::MAX_HISTORY_DEPTH;

fn normalise_with(value: &mut Value, strip_formats: bool, depth: usize) {
    let Value::Object(map) = value else { return };
    if depth >= MAX_SCHEMA_DEPTH {
        return;
    }
    let depth = depth + 1;
    if strip_formats
        && let Some(Value::String(f)) = map.get("format")
        && NON_STANDARD_FORMATS.contains(&f.as_str())
    {
        map.remove("format");
    }
    let required: Vec<String> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(|v| v.as_str().map(String::from)).collect())
        .unwrap_or_default();
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            if let Value::Object(p) = prop {
                p.remove("title");
                if !required.contains(name) {
                    strip_null(p);
                }
            }
            normalise_with(prop, strip_formats, depth);
        }
    }
    for key in ["items", "additionalProperties", "not", "if", "then", "else", "contains"] {
        if let Some(v) = map.get_mut(key) {
            normalise_with(v, strip_formats, depth);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(items)) = map.get_mut(key) {
            items.iter_mut().for_each(|v| normalise_with(v, strip_formats, depth));
        }
    }
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = map.get_mut(key) {
            defs.values_mut().for_each(|v| normalise_with(v, strip_formats, depth));
        }
    }
}

/// Makes an optional property's schema non-nullable: `["integer", "null"]` becomes
/// `"integer"`, and `anyOf: [X, {"type": "null"}]` becomes `X`.
fn strip_null(p: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = p.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let t = types.remove(0);
            p.insert("type".into(), t);
        }
        return;
    }
    let single = match p.get_mut("anyOf") {
        Some(Value::Array(items)) => {
            items.retain(|s| s.get("type").and_then(Value::as_str) != Some("null"));
            if items.len() == 1 { Some(items.remove(0)) } else { None }
        }
        _ => None,
    };
    if let Some(Value::Object(inner)) = single {
        p.remove("anyOf");
        for (k, v) in inner {
            p.entry(k).or_insert(v);
        }
    }
    if p.get("default") == Some(&Value::Null) {
        p.remove("default");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[allow(dead_code)]
    #[derive(JsonSchema)]
    #[schemars(deny_unknown_fields)]
    struct Args {
        /// first addend
        x: i64,
        y: Option<f64>,
        c: std::collections::HashMap<String, Vec<f64>>,
    }

    #[test]
    fn args_schema_matches_pydantic_shape() {
        let (schema, description) = args_schema::<Args>();
        assert_eq!(description, None);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "x": {"description": "first addend", "type": "integer"},
                    "y": {"type": "number"},
                    "c": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "number"}}}
                },
                "required": ["x", "c"],
                "additionalProperties": false
            })
        );
    }

    #[allow(dead_code)]
    #[derive(JsonSchema)]
    #[schemars(deny_unknown_fields)]
    struct Empty {}

    #[test]
    fn empty_struct_lists_empty_properties() {
        let (schema, _) = args_schema::<Empty>();
        assert_eq!(schema, json!({"type": "object", "properties": {}, "additionalProperties": false}));
    }
}
