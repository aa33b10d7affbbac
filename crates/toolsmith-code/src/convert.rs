//! Values across the sandbox's edge: JSON tool results into Python objects, the snippet's
//! result back to JSON (what has no JSON form, as its `repr`), tool failures as Python
//! exceptions.

use monty_types::{ExcType, MontyException, MontyObject};
use serde_json::{Map, Number, Value};
use toolsmith::ToolError;
use toolsmith::validation::{ErrorDetail, LocItem};

/// A JSON value as the Python value `json.loads` makes of it.
pub(crate) fn to_python(value: &Value) -> MontyObject {
    match value {
        Value::Null => MontyObject::None,
        Value::Bool(b) => MontyObject::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => MontyObject::Int(i),
            None => MontyObject::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => MontyObject::String(s.clone()),
        Value::Array(items) => MontyObject::List(items.iter().map(to_python).collect()),
        Value::Object(map) => MontyObject::dict(
            map.iter().map(|(k, v)| (MontyObject::String(k.clone()), to_python(v))).collect::<Vec<_>>(),
        ),
    }
}

/// A Python value as JSON: containers item by item, what JSON cannot hold (a type, a
/// function, an exception, a non-finite float, a key that is not a string) as its `repr`.
pub(crate) fn to_json(value: &MontyObject) -> Value {
    match value {
        MontyObject::None => Value::Null,
        MontyObject::Bool(b) => Value::Bool(*b),
        MontyObject::Int(i) => Value::from(*i),
        MontyObject::BigInt(b) => {
            b.to_string().parse::<Number>().map(Value::Number).unwrap_or_else(|_| Value::String(b.to_string()))
        }
        MontyObject::Float(f) => {
            Number::from_f64(*f).map(Value::Number).unwrap_or_else(|| Value::String(value.py_repr()))
        }
        MontyObject::String(s) => Value::String(s.clone()),
        MontyObject::List(items) | MontyObject::Tuple(items) => Value::Array(items.iter().map(to_json).collect()),
        MontyObject::Dict(pairs) => {
            let mut map = Map::new();
            for (k, v) in pairs.iter() {
                let key = match k {
                    MontyObject::String(s) => s.clone(),
                    other => match to_json(other) {
                        Value::String(s) => s,
                        Value::Null => "null".into(),
                        Value::Bool(b) => b.to_string(),
                        Value::Number(n) => n.to_string(),
                        _ => other.py_repr(),
                    },
                };
                if map.insert(key, to_json(v)).is_some() {
                    // Two keys wrote the same JSON key: the mapping's repr loses nothing.
                    return Value::String(value.py_repr());
                }
            }
            Value::Object(map)
        }
        other => Value::String(other.py_repr()),
    }
}

/// The exception a snippet sees where a tool it called failed.
pub(crate) fn to_exception(tool: &str, error: &ToolError) -> MontyException {
    let (kind, message) = match error {
        ToolError::Retry(retry) => (
            ExcType::Exception,
            match &retry.content {
                Value::String(s) => s.clone(),
                other => toolsmith::pyjson::dumps_unicode(other),
            },
        ),
        ToolError::Validation(errors) => (ExcType::ValueError, validation_text(tool, errors)),
        ToolError::ApprovalRequired(_) | ToolError::CallDeferred(_) => (
            ExcType::RuntimeError,
            format!(
                "Tool '{tool}' raised {} inside code mode, but no `HandleDeferredToolCalls` capability resolved it. Add a handler capability on the agent so deferred and approval-required calls can be resolved inline.",
                if matches!(error, ToolError::ApprovalRequired(_)) { "ApprovalRequired" } else { "CallDeferred" }
            ),
        ),
        ToolError::Failed { message, .. } => (ExcType::RuntimeError, message.clone()),
        ToolError::Panicked { message } => (ExcType::RuntimeError, format!("Tool '{tool}' panicked: {message}")),
        other => (ExcType::RuntimeError, other.to_string()),
    };
    MontyException::new(kind, Some(message))
}

/// Pydantic's `str(ValidationError)`: the count, then each error's location, message, type and
/// input.
fn validation_text(tool: &str, errors: &[ErrorDetail]) -> String {
    let n = errors.len();
    let mut out = format!("{n} validation error{} for {tool}", if n == 1 { "" } else { "s" });
    for e in errors {
        let loc: Vec<String> = e
            .loc
            .iter()
            .map(|l| match l {
                LocItem::Key(k) => k.clone(),
                LocItem::Index(i) => i.to_string(),
            })
            .collect();
        out.push('\n');
        if !loc.is_empty() {
            out.push_str(&loc.join("."));
            out.push_str("\n  ");
        } else {
            out.push_str("  ");
        }
        out.push_str(&format!(
            "{} [type={}, input_value={}, input_type={}]\n    For further information visit https://errors.pydantic.dev/2.14/v/{}",
            e.msg,
            e.kind,
            toolsmith::pyjson::repr(&e.input),
            python_type(&e.input),
            e.kind
        ));
    }
    out
}

fn python_type(v: &Value) -> &'static str {
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
