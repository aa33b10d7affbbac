//! [`ToolDefinition`]: what the model is shown about a tool.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The kind of a tool definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ToolKind {
    /// A tool executed by the agent.
    #[default]
    Function,
    /// A tool whose arguments are the run's structured output.
    Output,
    /// A tool executed outside the agent; calls end the run as deferred requests.
    External,
    /// A tool that needs approval before it is executed.
    Unapproved,
}

/// The definition of a tool, as sent to the model.
///
/// Definitions are plain data: cheap to clone (the schema is shared) and safe to edit in a
/// `prepare` function, which always receives its own copy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolDefinition {
    /// The tool's name, unique among the tools shown to the model.
    pub name: String,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON schema of the tool's arguments (an object schema).
    pub parameters_json_schema: Arc<Value>,
    /// Whether the model should follow the schema strictly (provider strict mode), when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    /// Whether the tool must run alone: calls before it finish first, calls after it wait.
    #[serde(default)]
    pub sequential: bool,
    /// The kind of tool.
    #[serde(default)]
    pub kind: ToolKind,
    /// Free-form metadata, not sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// How long one call may run before it is answered with a timeout retry (in JSON: seconds).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::serde_secs")]
    pub timeout: Option<Duration>,
    /// Whether the tool is hidden until found through tool search.
    #[serde(default)]
    pub defer_loading: bool,
    /// The JSON schema of the tool's return value, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub return_schema: Option<Arc<Value>>,
    /// The key wrapping a non-object argument schema, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outer_typed_dict_key: Option<String>,
    /// Whether the model is shown the return schema: `Some(true)` sends it (in a field of its
    /// own where the model's API has one, else appended to the description), `Some(false)`
    /// never (the [`IncludeToolReturnSchemas`](crate::capability::IncludeToolReturnSchemas)
    /// capability leaves it so), `None` only if that capability selects the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_return_schema: Option<bool>,
    /// The name of a provider-native tool that replaces this one where the provider has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unless_native: Option<String>,
    /// The name of a provider-native tool this one is sent alongside.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with_native: Option<String>,
}

impl ToolDefinition {
    /// A function tool definition with the given name and argument schema.
    ///
    /// The schema may be given as a `Value` or, to share one without copying it, an
    /// `Arc<Value>`.
    pub fn new(name: impl Into<String>, parameters_json_schema: impl Into<Arc<Value>>) -> Self {
        ToolDefinition {
            name: name.into(),
            description: None,
            parameters_json_schema: parameters_json_schema.into(),
            strict: None,
            sequential: false,
            kind: ToolKind::Function,
            metadata: None,
            timeout: None,
            defer_loading: false,
            return_schema: None,
            outer_typed_dict_key: None,
            include_return_schema: None,
            unless_native: None,
            with_native: None,
        }
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets strict mode.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = Some(strict);
        self
    }

    /// Sets the kind.
    pub fn with_kind(mut self, kind: ToolKind) -> Self {
        self.kind = kind;
        self
    }

    /// Sets the metadata.
    pub fn with_metadata(mut self, metadata: Value) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// Sets the return schema (what the tool returns, shown to the model only for tools whose
    /// [`include_return_schema`](Self::include_return_schema) is `Some(true)`).
    pub fn with_return_schema(mut self, schema: impl Into<Arc<Value>>) -> Self {
        self.return_schema = Some(schema.into());
        self
    }

    /// A Python-like signature for documentation and bridge-mode descriptions, such as
    /// `add(x: int, y: int) -> int` (required parameters first; optional ones with `= ...`).
    ///
    /// ```
    /// use toolsmith::tool::ToolDefinition;
    /// let def = ToolDefinition::new("search", serde_json::json!({
    ///     "type": "object",
    ///     "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "default": 5},
    ///                    "tags": {"type": "array", "items": {"type": "string"}}},
    ///     "required": ["query"]
    /// }));
    /// assert_eq!(def.render_signature(), "search(query: str, limit: int = 5, tags: list[str] = ...)");
    /// ```
    pub fn render_signature(&self) -> String {
        let schema = &*self.parameters_json_schema;
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut params = Vec::new();
        if let Some(Value::Object(props)) = schema.get("properties") {
            let (req, opt): (Vec<_>, Vec<_>) = props.iter().partition(|(k, _)| required.contains(&k.as_str()));
            for (name, prop) in req {
                params.push(format!("{name}: {}", type_name(prop)));
            }
            for (name, prop) in opt {
                let default = prop.get("default").map(|d| d.to_string()).unwrap_or_else(|| "...".into());
                params.push(format!("{name}: {} = {default}", type_name(prop)));
            }
        }
        let ret = self.return_schema.as_deref().map(|r| format!(" -> {}", type_name(r))).unwrap_or_default();
        format!("{}({}){ret}", self.name, params.join(", "))
    }

    /// The argument schema, for editing (copied first if it is shared).
    pub fn parameters_mut(&mut self) -> &mut Value {
        Arc::make_mut(&mut self.parameters_json_schema)
    }

    /// The error for a definition whose schemas or metadata nest arrays and objects deeper than
    /// [`MAX_HISTORY_DEPTH`](crate::messages::MAX_HISTORY_DEPTH) (only one built in memory can:
    /// what serde_json parses stops at 128 levels), measured without recursion: such a value is
    /// refused before the schema transforms, token counts and request writers walk it.
    pub(crate) fn too_deep(&self) -> Option<String> {
        use crate::messages::MAX_HISTORY_DEPTH;
        let values = [Some(&*self.parameters_json_schema), self.return_schema.as_deref(), self.metadata.as_ref()];
        values.into_iter().flatten().any(|v| crate::validation::depth::too_deep(v, MAX_HISTORY_DEPTH).is_some()).then(
            || {
                format!(
                    "the definition of tool '{}' nests arrays and objects more than {MAX_HISTORY_DEPTH} levels deep: toolsmith sends and writes values up to that depth",
                    self.name
                )
            },
        )
    }
}

/// A Python-like name for a JSON schema type.
fn type_name(schema: &Value) -> String {
    if let Some(Value::Array(options)) = schema.get("anyOf").or_else(|| schema.get("oneOf")) {
        return options.iter().map(type_name).collect::<Vec<_>>().join(" | ");
    }
    if let Some(Value::Array(values)) = schema.get("enum") {
        return format!("Literal[{}]", values.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", "));
    }
    let one = |t: &str| -> String {
        match t {
            "string" => "str".into(),
            "integer" => "int".into(),
            "number" => "float".into(),
            "boolean" => "bool".into(),
            "null" => "None".into(),
            "array" => match schema.get("items") {
                Some(items) => format!("list[{}]", type_name(items)),
                None => "list".into(),
            },
            "object" => match schema.get("title").and_then(Value::as_str) {
                Some(title) => title.to_string(),
                None => match schema.get("additionalProperties") {
                    Some(v @ Value::Object(_)) => format!("dict[str, {}]", type_name(v)),
                    _ => "dict".into(),
                },
            },
            other => other.to_string(),
        }
    };
    match schema.get("type") {
        Some(Value::String(t)) => one(t),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).map(one).collect::<Vec<_>>().join(" | "),
        _ => "Any".into(),
    }
}
