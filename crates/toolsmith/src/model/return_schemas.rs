//! Return schemas as a model is shown them: sent in a field of their own where the model's API
//! has one, appended to the description elsewhere, and only for the tools that ask for it
//! ([`ToolDefinition::include_return_schema`]).

use std::sync::Arc;

use serde_json::Value;

use super::ModelRequestParameters;
use crate::tool::ToolDefinition;

/// Prepares the return schemas of a request's function tools for a model: a tool whose
/// `include_return_schema` is `Some(true)` and that has a return schema keeps it when `native`
/// (the model takes it in a field of its own, [`Model::native_tool_return_schemas`](super::Model::native_tool_return_schemas)),
/// or has it appended to its description as `"Return schema:"` and the indented JSON (after a
/// blank line when the tool has a description); a tool that asks for its schema without having
/// one is logged as a warning. Every other tool's return schema is left for the model to ignore.
/// Only the tools that change are copied.
pub fn prepare_return_schemas(params: &mut ModelRequestParameters, native: bool) {
    for def in params.function_tools.iter_mut() {
        if def.include_return_schema != Some(true) {
            continue;
        }
        let empty = def.return_schema.as_deref().is_none_or(|s| s.as_object().is_some_and(|o| o.is_empty()));
        if empty {
            tracing::warn!(
                tool = %def.name,
                "the tool asks for its return schema to be shown (`include_return_schema`), but it has none: set `Tool::include_return_schema(false)` on it to silence this"
            );
            Arc::make_mut(def).return_schema = None;
            continue;
        }
        if native {
            continue;
        }
        let d: &mut ToolDefinition = Arc::make_mut(def);
        let schema = d.return_schema.take().unwrap_or_default();
        let text = format!("Return schema:\n\n{}", python_indent2(&schema));
        d.description = Some(match d.description.take().filter(|d| !d.is_empty()) {
            Some(description) => format!("{description}\n\n{text}"),
            None => text,
        });
    }
}

/// Python's `json.dumps(value, indent=2)`: two-space indent, `", "` and `": "` separators.
pub(crate) fn python_indent2(v: &Value) -> String {
    let mut out = String::new();
    write_value(v, 0, &mut out);
    out
}

fn write_value(v: &Value, depth: usize, out: &mut String) {
    let pad = |d: usize| "  ".repeat(d);
    match v {
        Value::Object(o) if !o.is_empty() => {
            out.push_str("{\n");
            for (i, (k, x)) in o.iter().enumerate() {
                out.push_str(&pad(depth + 1));
                write_string(k, out);
                out.push_str(": ");
                write_value(x, depth + 1, out);
                if i + 1 < o.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            out.push_str(&pad(depth));
            out.push('}');
        }
        Value::Array(a) if !a.is_empty() => {
            out.push_str("[\n");
            for (i, x) in a.iter().enumerate() {
                out.push_str(&pad(depth + 1));
                write_value(x, depth + 1, out);
                if i + 1 < a.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            out.push_str(&pad(depth));
            out.push(']');
        }
        Value::String(s) => write_string(s, out),
        other => out.push_str(&serde_json::to_string(other).unwrap_or_default()),
    }
}

/// A JSON string as Python writes it by default: non-ASCII characters as `\uXXXX` escapes.
fn write_string(s: &str, out: &mut String) {
    crate::pyjson::write_string(s, true, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indents_like_python() {
        let v = serde_json::json!({"properties": {"name": {"type": "string", "description": "Temp in °C"}}, "required": ["name"], "e": {}});
        assert_eq!(
            python_indent2(&v),
            "{\n  \"properties\": {\n    \"name\": {\n      \"type\": \"string\",\n      \"description\": \"Temp in \\u00b0C\"\n    }\n  },\n  \"required\": [\n    \"name\"\n  ],\n  \"e\": {}\n}"
        );
    }

    fn params(defs: Vec<ToolDefinition>) -> ModelRequestParameters {
        ModelRequestParameters { function_tools: defs.into_iter().map(Arc::new).collect(), ..Default::default() }
    }

    fn tool(name: &str, description: Option<&str>, include: Option<bool>) -> ToolDefinition {
        let mut d = ToolDefinition::new(name, serde_json::json!({"type": "object"}))
            .with_return_schema(serde_json::json!({"type": "string"}));
        d.description = description.map(String::from);
        d.include_return_schema = include;
        d
    }

    #[test]
    fn only_tools_that_ask_are_shown_their_schema_in_the_description_or_natively() {
        let text = "Return schema:\n\n{\n  \"type\": \"string\"\n}";
        let defs = vec![
            tool("a", Some("Greets."), Some(true)),
            tool("b", None, Some(true)),
            tool("c", Some(""), Some(true)),
            tool("d", Some("Left alone."), None),
            tool("e", Some("Opted out."), Some(false)),
        ];
        let mut p = params(defs.clone());
        prepare_return_schemas(&mut p, false);
        let shown: Vec<Option<&str>> = p.function_tools.iter().map(|d| d.description.as_deref()).collect();
        assert_eq!(
            shown,
            [
                Some(format!("Greets.\n\n{text}").as_str()),
                Some(text),
                Some(text),
                Some("Left alone."),
                Some("Opted out.")
            ]
        );
        assert!(p.function_tools[..3].iter().all(|d| d.return_schema.is_none()));
        // Natively: the descriptions stay, the schemas of the tools that ask stay for the adapter.
        let mut p = params(defs);
        prepare_return_schemas(&mut p, true);
        assert_eq!(p.function_tools[0].description.as_deref(), Some("Greets."));
        assert!(p.function_tools[0].return_schema.is_some());
    }

    #[test]
    fn asking_without_a_schema_sends_nothing() {
        let mut d = tool("a", Some("Does."), Some(true));
        d.return_schema = Some(Arc::new(serde_json::json!({})));
        let mut p = params(vec![d]);
        prepare_return_schemas(&mut p, false);
        assert_eq!(p.function_tools[0].description.as_deref(), Some("Does."));
        assert!(p.function_tools[0].return_schema.is_none());
    }
}
