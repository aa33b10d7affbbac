//! How structured output reaches the model: through the `final_result` output tool, the
//! provider's JSON-schema response format, or instructions that describe the schema.

use serde_json::Value;

/// The name of the output tool.
pub const OUTPUT_TOOL_NAME: &str = "final_result";

/// How the model is asked for structured output (see
/// [`AgentBuilder::output_mode`](crate::AgentBuilder::output_mode)).
///
/// ```
/// use toolsmith::agent::OutputMode;
///
/// assert_eq!(OutputMode::default(), OutputMode::Tool);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum OutputMode {
    /// The model calls the `final_result` output tool (forced with `tool_choice` where the
    /// provider takes it).
    #[default]
    Tool,
    /// The provider's JSON-schema response format (OpenAI's `response_format` / `text.format`,
    /// Gemini's `responseJsonSchema`, Anthropic's `output_format`): the model answers with JSON
    /// text. Only for models that support it ([`Model::native_output_support`](crate::model::Model::native_output_support)).
    Native,
    /// The schema is described in the instructions and the model's text is parsed as JSON:
    /// works with any model.
    Prompted,
}

/// The structured output as a response format or prompted instructions describe it (Pydantic
/// AI's `OutputObjectDefinition`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct OutputObject {
    /// The output's name (the schema's title, or the output type's name).
    pub name: String,
    /// What the output is, when known.
    pub description: Option<String>,
    /// The output's JSON schema (an object's: another output is the `response` field of one).
    pub json_schema: Value,
    /// Whether the provider should enforce the schema strictly; `None` leaves it to the adapter.
    pub strict: Option<bool>,
}

/// What the builder was told about the output's mode, name, description, strictness and
/// template (applied to the output when the agent is built, whichever came first).
#[derive(Debug, Clone, Default)]
pub(crate) struct OutputOptions {
    pub(crate) mode: OutputMode,
    pub(crate) name: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) strict: Option<bool>,
    pub(crate) template: Option<String>,
}

impl OutputOptions {
    pub(crate) fn is_default(&self) -> bool {
        self.mode == OutputMode::Tool
            && self.name.is_none()
            && self.description.is_none()
            && self.strict.is_none()
            && self.template.is_none()
    }
}

/// Pydantic AI's default template of the prompted output instructions; `{schema}` stands for
/// the output's JSON schema.
pub const DEFAULT_PROMPTED_OUTPUT_TEMPLATE: &str = "\nAlways respond with a JSON object that's compatible with this schema:\n\n{schema}\n\nDon't include any text or Markdown fencing before or after.\n";

impl OutputObject {
    /// The instructions that ask for this output: `template` with `{schema}` replaced by the
    /// schema (its title and description set to the output's name and description); a template
    /// without `{schema}` is followed by it.
    ///
    /// ```
    /// use toolsmith::agent::{DEFAULT_PROMPTED_OUTPUT_TEMPLATE, OutputObject};
    ///
    /// let object = OutputObject::new("Num", serde_json::json!({"type": "object"}));
    /// let text = object.instructions(DEFAULT_PROMPTED_OUTPUT_TEMPLATE);
    /// assert!(text.contains(r#"{"type": "object", "title": "Num"}"#));
    /// ```
    pub fn instructions(&self, template: &str) -> String {
        let mut schema = self.json_schema.clone();
        if let Some(m) = schema.as_object_mut() {
            if !self.name.is_empty() {
                m.insert("title".into(), Value::String(self.name.clone()));
            }
            if let Some(d) = &self.description {
                m.insert("description".into(), Value::String(d.clone()));
            }
        }
        let template =
            if template.contains("{schema}") { template.to_string() } else { format!("{template}\n\n{{schema}}") };
        template.replace("{schema}", &python_json(&schema))
    }

    /// An output object of this name and schema, without description or strictness.
    pub fn new(name: impl Into<String>, json_schema: Value) -> Self {
        OutputObject { name: name.into(), description: None, json_schema, strict: None }
    }
}

/// JSON as Python's `json.dumps` writes it by default, so that the instructions are the
/// reference's to the byte.
pub(crate) fn python_json(value: &Value) -> String {
    crate::pyjson::dumps(value)
}

/// The JSON object inside a Markdown fence (```` ```json ````), as Pydantic AI finds it; the
/// text itself when it starts with `{` or holds no fenced object.
pub(crate) fn strip_markdown_fences(text: &str) -> &str {
    if text.starts_with('{') {
        return text;
    }
    fenced_object(text).unwrap_or(text)
}

/// Pydantic AI's ```` ```(?:\w+)?\r?\n(\{.*?\})\s*(?:\r?\n?```|\Z) ```` (dot matching newlines).
fn fenced_object(text: &str) -> Option<&str> {
    static FENCE: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let re =
        FENCE.get_or_init(|| regex::Regex::new(r"(?s)```(?:\w+)?\r?\n(\{.*?\})\s*(?:\r?\n?```|\z)").ok()).as_ref()?;
    re.captures(text).and_then(|c| c.get(1)).map(|m| m.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_are_stripped_like_the_reference() {
        assert_eq!(strip_markdown_fences("```json\n{\"a\": 1}\n```"), "{\"a\": 1}");
        assert_eq!(strip_markdown_fences("Here:\n```\n{\"a\": 1}\n```\nbye"), "{\"a\": 1}");
        assert_eq!(strip_markdown_fences("{\"a\": 1}"), "{\"a\": 1}");
        assert_eq!(strip_markdown_fences("not json"), "not json");
    }

    #[test]
    fn python_json_escapes_like_json_dumps() {
        let v = serde_json::json!({"a": ["é", 1, null, true], "b\"": "x\ny"});
        assert_eq!(python_json(&v), r#"{"a": ["\u00e9", 1, null, true], "b\"": "x\ny"}"#.replace("x\ny", "x\\ny"));
    }
}
