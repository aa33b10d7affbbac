//! Gemini's OpenAPI subset of JSON Schema.

use serde_json::{Map, Value, json};

const ALLOWED_KEYS: &[&str] = &[
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "anyOf",
    "items",
    "minimum",
    "maximum",
    "propertyOrdering",
];

/// Converts a JSON schema to the OpenAPI subset Gemini accepts for function parameters:
/// `$ref`s inlined (recursive ones cut to a plain object), `const` → one-value `enum`, enums as
/// strings, `oneOf` → `anyOf`, a `null` alternative (`["string", "null"]`, `anyOf` with
/// `{"type": "null"}`) → `nullable: true`, a single-schema `allOf` merged, unsupported
/// `format`s and bounds moved into the description, and every keyword Gemini does not know
/// (`additionalProperties`, `title`, `default`, `$schema`...) dropped.
///
/// ```
/// use serde_json::json;
/// let s = toolsmith::providers::gemini_schema(&json!({
///     "type": "object",
///     "additionalProperties": false,
///     "properties": {"unit": {"anyOf": [{"type": "string", "enum": ["c", "f"]}, {"type": "null"}]}},
/// }));
/// assert_eq!(s, json!({
///     "type": "object",
///     "properties": {"unit": {"type": "string", "enum": ["c", "f"], "nullable": true}},
/// }));
/// ```
pub fn gemini_schema(schema: &Value) -> Value {
    let defs = schema.get("$defs").or_else(|| schema.get("definitions")).cloned().unwrap_or(Value::Null);
    convert(schema, &defs, 0)
}

fn resolve<'a>(r: &str, defs: &'a Value) -> Option<&'a Value> {
    let name = r.rsplit('/').next()?;
    defs.get(name)
}

fn convert(v: &Value, defs: &Value, depth: usize) -> Value {
    let Value::Object(src) = v else { return v.clone() };
    if depth > 32 {
        return json!({"type": "object"});
    }
    let mut m = src.clone();
    if let Some(Value::String(r)) = m.remove("$ref") {
        match resolve(&r, defs) {
            Some(target) if depth < 8 => {
                let mut merged = target.as_object().cloned().unwrap_or_default();
                for (k, val) in m {
                    merged.insert(k, val);
                }
                return convert(&Value::Object(merged), defs, depth + 1);
            }
            _ => {
                return json!({"type": "object", "description": format!("(a {} object)", r.rsplit('/').next().unwrap_or("nested"))});
            }
        }
    }
    if let Some(Value::Array(all)) = m.remove("allOf") {
        if let [single] = all.as_slice()
            && let Some(obj) = single.as_object()
        {
            for (k, val) in obj {
                m.entry(k.clone()).or_insert_with(|| val.clone());
            }
            return convert(&Value::Object(m), defs, depth + 1);
        }
        m.insert("anyOf".into(), Value::Array(all));
    }
    if let Some(one) = m.remove("oneOf") {
        m.insert("anyOf".into(), one);
    }
    if let Some(c) = m.remove("const") {
        m.insert("enum".into(), Value::Array(vec![c]));
    }
    let mut notes: Vec<String> = Vec::new();
    // Type lists with null.
    if let Some(Value::Array(types)) = m.get("type").cloned() {
        let non_null: Vec<Value> = types.iter().filter(|t| t.as_str() != Some("null")).cloned().collect();
        if non_null.len() < types.len() {
            m.insert("nullable".into(), true.into());
        }
        match non_null.as_slice() {
            [one] => {
                m.insert("type".into(), one.clone());
            }
            [] => {
                m.remove("type");
            }
            many => {
                m.remove("type");
                m.insert("anyOf".into(), Value::Array(many.iter().map(|t| json!({"type": t})).collect()));
            }
        }
    }
    if let Some(Value::Array(any)) = m.remove("anyOf") {
        let non_null: Vec<&Value> =
            any.iter().filter(|s| s.get("type").and_then(Value::as_str) != Some("null")).collect();
        if non_null.len() < any.len() {
            m.insert("nullable".into(), true.into());
        }
        if let [one] = non_null.as_slice() {
            let inner = convert(one, defs, depth + 1);
            if let Value::Object(inner) = inner {
                for (k, val) in inner {
                    if k == "description" && m.contains_key("description") {
                        continue;
                    }
                    m.entry(k).or_insert(val);
                }
            }
        } else if !non_null.is_empty() {
            m.insert("anyOf".into(), Value::Array(non_null.iter().map(|s| convert(s, defs, depth + 1)).collect()));
        }
    }
    if let Some(Value::Array(values)) = m.get("enum").cloned()
        && values.iter().any(|x| !x.is_string())
    {
        let strings: Vec<Value> = values
            .iter()
            .map(|x| match x {
                Value::String(s) => Value::String(s.clone()),
                other => Value::String(other.to_string()),
            })
            .collect();
        m.insert("enum".into(), Value::Array(strings));
        m.insert("type".into(), "string".into());
    }
    if let Some(Value::String(f)) = m.get("format").cloned() {
        let ty = m.get("type").and_then(Value::as_str).unwrap_or("");
        let ok = match ty {
            "string" => f == "date-time" || f == "enum",
            "integer" => f == "int32" || f == "int64",
            "number" => f == "float" || f == "double",
            _ => false,
        };
        if !ok {
            m.remove("format");
            notes.push(format!("format: {f}"));
        }
    }
    for key in ["exclusiveMinimum", "exclusiveMaximum", "multipleOf"] {
        if let Some(val) = m.remove(key) {
            notes.push(format!("{key}: {val}"));
        }
    }
    if !notes.is_empty() {
        let joined = notes.join(", ");
        let d = match m.get("description").and_then(Value::as_str) {
            Some(d) if !d.is_empty() => format!("{d} ({joined})"),
            _ => format!("({joined})"),
        };
        m.insert("description".into(), d.into());
    }
    if let Some(Value::Object(props)) = m.get("properties").cloned() {
        let converted: Map<String, Value> =
            props.iter().map(|(k, s)| (k.clone(), convert(s, defs, depth + 1))).collect();
        m.insert("properties".into(), Value::Object(converted));
    }
    if let Some(items) = m.get("items").cloned() {
        match items {
            Value::Object(_) => {
                m.insert("items".into(), convert(&items, defs, depth + 1));
            }
            Value::Array(list) if !list.is_empty() => {
                m.insert("items".into(), convert(&list[0], defs, depth + 1));
            }
            _ => {
                m.remove("items");
            }
        }
    } else if let Some(Value::Array(prefix)) = m.get("prefixItems").cloned()
        && let Some(first) = prefix.first()
    {
        m.insert("items".into(), convert(first, defs, depth + 1));
    }
    m.retain(|k, _| ALLOWED_KEYS.contains(&k.as_str()));
    if m.get("type").and_then(Value::as_str) == Some("array") && !m.contains_key("items") {
        m.insert("items".into(), json!({"type": "string"}));
    }
    Value::Object(m)
}
