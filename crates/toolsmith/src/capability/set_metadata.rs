//! [`SetToolMetadata`]: merge metadata into every tool definition.

use serde_json::{Map, Value};

use super::Capability;
use crate::context::RunContext;
use crate::error::AgentRunError;
use crate::tool::ToolDefinition;

/// A capability that merges a JSON object into the `metadata` of every function tool
/// definition (keys it sets replace the tool's own).
///
/// ```
/// use toolsmith::capability::SetToolMetadata;
/// let cap = SetToolMetadata::new(serde_json::json!({"team": "search"}));
/// # let _ = cap;
/// ```
#[derive(Debug, Clone)]
pub struct SetToolMetadata {
    metadata: Map<String, Value>,
}

impl SetToolMetadata {
    /// Metadata to merge; a value that is not an object merges nothing.
    pub fn new(metadata: Value) -> Self {
        SetToolMetadata { metadata: metadata.as_object().cloned().unwrap_or_default() }
    }
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for SetToolMetadata {
    async fn prepare_tools(
        &self,
        _ctx: &RunContext<D>,
        tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        Ok(tools
            .into_iter()
            .map(|mut d| {
                let mut m = match d.metadata.take() {
                    Some(Value::Object(m)) => m,
                    _ => Map::new(),
                };
                for (k, v) in &self.metadata {
                    m.insert(k.clone(), v.clone());
                }
                d.metadata = Some(Value::Object(m));
                d
            })
            .collect())
    }
}
