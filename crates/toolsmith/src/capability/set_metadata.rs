//! [`SetToolMetadata`]: merge metadata into the definitions of selected tools.

use serde_json::{Map, Value};

use super::{Capability, HookStage};
use crate::context::RunContext;
use crate::error::AgentRunError;
use crate::tool::ToolDefinition;
use crate::toolset::ToolSelector;

/// A capability that merges a JSON object into the `metadata` of the function tool definitions
/// it selects (every tool unless [`for_tools`](Self::for_tools) says otherwise; keys it sets
/// replace the tool's own).
///
/// Pydantic AI's `SetToolMetadata(tools=..., **metadata)` takes the metadata as keyword
/// arguments; here it is one JSON object, and the selector a method.
///
/// ```
/// use toolsmith::capability::SetToolMetadata;
/// use toolsmith::toolset::ToolSelector;
///
/// let everywhere = SetToolMetadata::<()>::new(serde_json::json!({"team": "search"}));
/// let some = SetToolMetadata::<()>::new(serde_json::json!({"audited": true}))
///     .for_tools(ToolSelector::names(["delete_file", "send_email"]));
/// # let _ = (everywhere, some);
/// ```
#[derive(Debug, Clone)]
pub struct SetToolMetadata<D = ()> {
    metadata: Map<String, Value>,
    tools: ToolSelector<D>,
}

impl<D> SetToolMetadata<D> {
    /// Metadata to merge into every tool; a value that is not an object merges nothing.
    pub fn new(metadata: Value) -> Self {
        SetToolMetadata { metadata: metadata.as_object().cloned().unwrap_or_default(), tools: ToolSelector::All }
    }

    /// Merges the metadata into the selected tools only.
    pub fn for_tools(mut self, tools: impl Into<ToolSelector<D>>) -> Self {
        self.tools = tools.into();
        self
    }
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for SetToolMetadata<D> {
    fn hooks_stage(&self, _: HookStage) -> bool {
        false
    }
    async fn prepare_tools(
        &self,
        ctx: &RunContext<D>,
        tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        Ok(tools
            .into_iter()
            .map(|mut d| {
                if !self.tools.matches(ctx, &d) {
                    return d;
                }
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
