//! What a tool returns: a value, or a [`ToolReturn`] with extra content and metadata.

use serde_json::Value;

use crate::messages::UserContent;

/// A rich tool result: the value the model sees as the tool's answer, content sent to the model
/// alongside it (text, images, documents) and metadata kept for the application.
///
/// ```
/// use toolsmith::prelude::*;
/// use toolsmith::messages::{BinaryContent, UserContent};
///
/// /// Click at coordinates and show a screenshot.
/// #[tool]
/// fn click(x: i64, y: i64) -> ToolReturn {
///     ToolReturn::new(format!("Clicked at ({x}, {y})"))
///         .with_content(vec![
///             UserContent::text("After:"),
///             BinaryContent::new(b"\x89PNG".to_vec(), "image/png").into(),
///         ])
///         .with_metadata(serde_json::json!({"x": x, "y": y}))
/// }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolReturn {
    /// The tool's answer, shown to the model as the tool return content.
    pub return_value: Value,
    /// Extra content, sent to the model in a user prompt after the step's tool returns.
    pub content: Option<Vec<UserContent>>,
    /// Metadata stored on the tool return part, not sent to the model.
    pub metadata: Option<Value>,
}

impl ToolReturn {
    /// A return with a value.
    pub fn new(return_value: impl serde::Serialize) -> Self {
        ToolReturn {
            return_value: serde_json::to_value(return_value).unwrap_or(Value::Null),
            content: None,
            metadata: None,
        }
    }

    /// Adds content sent to the model after the tool returns.
    pub fn with_content(mut self, content: Vec<UserContent>) -> Self {
        self.content = Some(content);
        self
    }

    /// Adds metadata kept on the tool return part.
    pub fn with_metadata(mut self, metadata: Value) -> Self {
        self.metadata = Some(metadata);
        self
    }
}

/// The successful result of a tool call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ToolOutput {
    /// A plain value.
    Value(Value),
    /// A rich return.
    Return(ToolReturn),
}

impl From<Value> for ToolOutput {
    fn from(v: Value) -> Self {
        ToolOutput::Value(v)
    }
}

impl From<ToolReturn> for ToolOutput {
    fn from(v: ToolReturn) -> Self {
        ToolOutput::Return(v)
    }
}
