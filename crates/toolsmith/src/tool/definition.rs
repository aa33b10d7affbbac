//! [`ToolDefinition`]: what the model is shown about a tool.

use std::sync::Arc;

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
    /// A per-tool timeout in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<f64>,
    /// Whether the tool is hidden until found through tool search.
    #[serde(default)]
    pub defer_loading: bool,
    /// The JSON schema of the tool's return value, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub return_schema: Option<Arc<Value>>,
    /// The key wrapping a non-object argument schema, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outer_typed_dict_key: Option<String>,
}

impl ToolDefinition {
    /// A function tool definition with the given name and argument schema.
    pub fn new(name: impl Into<String>, parameters_json_schema: Value) -> Self {
        ToolDefinition {
            name: name.into(),
            description: None,
            parameters_json_schema: Arc::new(parameters_json_schema),
            strict: None,
            sequential: false,
            kind: ToolKind::Function,
            metadata: None,
            timeout: None,
            defer_loading: false,
            return_schema: None,
            outer_typed_dict_key: None,
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

    /// The argument schema, for editing (copied first if it is shared).
    pub fn parameters_mut(&mut self) -> &mut Value {
        Arc::make_mut(&mut self.parameters_json_schema)
    }
}
