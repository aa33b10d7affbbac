//! [`IncludeToolReturnSchemas`]: tell the model what tools return.

use serde_json::Value;

use super::Capability;
use crate::context::RunContext;
use crate::error::AgentRunError;
use crate::tool::ToolDefinition;

/// A capability that shows the model the JSON schema of what each tool returns, for all tools or
/// the named ones. Models whose API has no field for it (all of them today) get the schema
/// appended to the description, as `"Return schema:\n\n"` followed by the indented JSON, after a
/// blank line when the tool has a description.
///
/// ```
/// use toolsmith::capability::IncludeToolReturnSchemas;
/// let all = IncludeToolReturnSchemas::all();
/// let some = IncludeToolReturnSchemas::for_tools(["get_user"]);
/// # let _ = (all, some);
/// ```
#[derive(Debug, Clone, Default)]
pub struct IncludeToolReturnSchemas {
    tools: Option<Vec<String>>,
}

impl IncludeToolReturnSchemas {
    /// For every tool.
    pub fn all() -> Self {
        IncludeToolReturnSchemas { tools: None }
    }

    /// For the named tools only.
    pub fn for_tools<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Self {
        IncludeToolReturnSchemas { tools: Some(names.into_iter().map(Into::into).collect()) }
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
                out.push_str(&serde_json::to_string(k).unwrap_or_default());
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
        other => out.push_str(&serde_json::to_string(other).unwrap_or_default()),
    }
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for IncludeToolReturnSchemas {
    async fn prepare_tools(
        &self,
        _ctx: &RunContext<D>,
        tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        Ok(tools
            .into_iter()
            .map(|mut d| {
                let wanted = self.tools.as_ref().is_none_or(|names| names.contains(&d.name));
                if wanted && let Some(schema) = d.return_schema.take() {
                    let text = format!("Return schema:\n\n{}", python_indent2(&schema));
                    // After the description and a blank line, or alone without one.
                    d.description = Some(match d.description.take().filter(|d| !d.is_empty()) {
                        Some(description) => format!("{description}\n\n{text}"),
                        None => text,
                    });
                }
                d
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indents_like_python() {
        let v = serde_json::json!({"properties": {"name": {"type": "string"}}, "required": ["name"], "e": {}});
        assert_eq!(
            python_indent2(&v),
            "{\n  \"properties\": {\n    \"name\": {\n      \"type\": \"string\"\n    }\n  },\n  \"required\": [\n    \"name\"\n  ],\n  \"e\": {}\n}"
        );
    }

    #[tokio::test]
    async fn the_schema_follows_a_description_after_a_blank_line_or_stands_alone() {
        let schema = serde_json::json!({"type": "string"});
        let tool = |description: Option<&str>| {
            let mut d = ToolDefinition::new("t", serde_json::json!({"type": "object"}));
            d.description = description.map(String::from);
            d.return_schema = Some(std::sync::Arc::new(schema.clone()));
            d
        };
        let ctx = RunContext::with_deps(());
        let cap = IncludeToolReturnSchemas::all();
        let shown = cap.prepare_tools(&ctx, vec![tool(Some("Greets.")), tool(None), tool(Some(""))]).await.unwrap();
        let text = "Return schema:\n\n{\n  \"type\": \"string\"\n}";
        assert_eq!(shown[0].description.as_deref(), Some(format!("Greets.\n\n{text}").as_str()));
        assert_eq!(shown[1].description.as_deref(), Some(text));
        assert_eq!(shown[2].description.as_deref(), Some(text));
        assert!(shown.iter().all(|d| d.return_schema.is_none()));
    }
}
