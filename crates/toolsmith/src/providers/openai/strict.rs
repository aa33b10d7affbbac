//! OpenAI's strict-mode schemas.

use serde_json::{Map, Value, json};

const STRICT_INCOMPATIBLE_KEYS: &[&str] = &[
    "minLength",
    "maxLength",
    "patternProperties",
    "unevaluatedProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
];

const STRICT_FORMATS: &[&str] = &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];

/// OpenAI's strict-mode form of a JSON schema, as Pydantic AI makes it: every object closed
/// (`additionalProperties: false`) with every property required; `title`, `$schema`,
/// `discriminator` and `default` removed; keywords strict mode rejects (`minLength`,
/// `uniqueItems`, unsupported `format`s...) moved into the description as `key=value` notes;
/// `oneOf` turned into `anyOf`; a `$ref` with siblings wrapped in `anyOf`.
///
/// ```
/// use serde_json::json;
/// let s = toolsmith::providers::openai_strict_schema(&json!({
///     "type": "object",
///     "properties": {"a": {"type": "string", "minLength": 2}, "b": {"type": "integer"}},
///     "required": ["a"]
/// }));
/// assert_eq!(s, json!({
///     "type": "object",
///     "properties": {"a": {"type": "string", "description": "minLength=2"}, "b": {"type": "integer"}},
///     "required": ["a", "b"],
///     "additionalProperties": false
/// }));
/// ```
pub fn openai_strict_schema(schema: &Value) -> Value {
    let mut out = schema.clone();
    strictify(&mut out);
    out
}

fn strictify(v: &mut Value) {
    let Value::Object(m) = v else {
        if let Value::Array(items) = v {
            items.iter_mut().for_each(strictify);
        }
        return;
    };
    m.remove("title");
    m.remove("$schema");
    m.remove("discriminator");
    m.remove("default");
    if let Some(r) = m.get("$ref").cloned()
        && m.len() > 1
    {
        m.remove("$ref");
        let mut any = vec![json!({"$ref": r})];
        if let Some(Value::Array(existing)) = m.remove("anyOf") {
            any.extend(existing);
        }
        m.insert("anyOf".into(), Value::Array(any));
    }
    let mut notes = Vec::new();
    for key in STRICT_INCOMPATIBLE_KEYS {
        if let Some(value) = m.remove(*key) {
            notes.push(format!("{key}={}", note_value(&value)));
        }
    }
    if let Some(Value::String(f)) = m.get("format")
        && !STRICT_FORMATS.contains(&f.as_str())
    {
        let f = f.clone();
        m.remove("format");
        notes.push(format!("format={f}"));
    }
    if !notes.is_empty() {
        let joined = notes.join(", ");
        let description = match m.get("description").and_then(Value::as_str) {
            Some(d) if !d.is_empty() => format!("{d} ({joined})"),
            _ => joined,
        };
        m.insert("description".into(), Value::String(description));
    }
    if let Some(one) = m.remove("oneOf") {
        m.insert("anyOf".into(), one);
    }
    if m.get("type").and_then(Value::as_str) == Some("object") {
        let keys: Vec<Value> = match m.entry("properties").or_insert_with(|| Value::Object(Map::new())) {
            Value::Object(p) => p.keys().cloned().map(Value::String).collect(),
            _ => vec![],
        };
        m.insert("required".into(), Value::Array(keys));
        m.insert("additionalProperties".into(), Value::Bool(false));
    }
    for key in ["properties", "$defs", "definitions"] {
        if let Some(Value::Object(children)) = m.get_mut(key) {
            children.values_mut().for_each(strictify);
        }
    }
    for key in ["items", "prefixItems", "anyOf", "allOf", "not"] {
        if let Some(child) = m.get_mut(key) {
            strictify(child);
        }
    }
}

fn note_value(v: &Value) -> String {
    match v {
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
