//! [`SetMetadataToolset`]: metadata merged into the tools' definitions.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::context::RunContext;
use crate::error::UserError;
use crate::toolset::{ToolSelector, Toolset, ToolsetTool};

/// A toolset that merges a JSON object into the [`metadata`](crate::ToolDefinition::metadata) of
/// every tool's definition (or of the selected tools'): its keys replace the same keys, other
/// keys are kept; a definition without metadata (or with metadata that is not an object) gets
/// a copy of the object. Metadata is not sent to the model: it is for `prepare` functions,
/// filters, capabilities and tool search. The label is `SetMetadataToolset(<wrapped label>)`;
/// metadata that is not a JSON object is reported by [`Toolset::check`].
///
/// ```
/// use toolsmith::prelude::*;
/// use toolsmith::toolset::ToolsetExt;
/// use serde_json::json;
///
/// /// Add two integers.
/// #[tool(metadata = r#"{"team": "maths", "cost": 1}"#)]
/// fn add(x: i64, y: i64) -> i64 { x + y }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let toolset = FunctionToolset::new().with_tool(add).with_metadata(json!({"cost": 2, "safe": true}));
/// let tools = futures::executor::block_on(toolset.get_tools(&RunContext::detached()))?;
/// assert_eq!(tools[0].def.metadata, Some(json!({"team": "maths", "cost": 2, "safe": true})));
/// # Ok(())
/// # }
/// ```
pub struct SetMetadataToolset<D, T> {
    inner: T,
    metadata: Map<String, Value>,
    tools: ToolSelector<D>,
    problem: Option<String>,
    derived: super::derived::Derived,
}

impl<D, T> SetMetadataToolset<D, T> {
    /// Wraps `inner`, merging `metadata` (a JSON object) into every tool's metadata.
    pub fn new(inner: T, metadata: Value) -> Self {
        let (metadata, problem) = match metadata {
            Value::Object(m) => (m, None),
            other => (Map::new(), Some(format!("SetMetadataToolset needs a JSON object of metadata, got {other}"))),
        };
        SetMetadataToolset { inner, metadata, tools: ToolSelector::All, problem, derived: Default::default() }
    }

    /// Sets the metadata of the selected tools only (names, or a predicate over the definition).
    pub fn for_tools(mut self, tools: impl Into<ToolSelector<D>>) -> Self {
        self.tools = tools.into();
        self
    }

    /// The wrapped toolset.
    pub fn inner(&self) -> &T {
        &self.inner
    }
}

impl<D, T: std::fmt::Debug> std::fmt::Debug for SetMetadataToolset<D, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SetMetadataToolset")
            .field("inner", &self.inner)
            .field("metadata", &self.metadata)
            .field("tools", &self.tools)
            .finish()
    }
}

impl<D: Clone + Send + Sync + 'static, T: Toolset<D>> Toolset<D> for SetMetadataToolset<D, T> {
    fn label(&self) -> String {
        format!("SetMetadataToolset({})", self.inner.label())
    }

    fn check(&self) -> Result<(), UserError> {
        if let Some(p) = &self.problem {
            return Err(UserError::new(p.clone()));
        }
        self.inner.check()
    }

    async fn enter(&self) -> Result<(), UserError> {
        self.inner.enter().await
    }

    async fn exit(&self) {
        self.inner.exit().await
    }

    async fn get_tools(&self, ctx: &RunContext<D>) -> Result<Vec<ToolsetTool<D>>, UserError> {
        Ok(self.apply(ctx, self.inner.get_tools(ctx).await?))
    }

    async fn get_tools_shared(&self, ctx: &RunContext<D>) -> Result<Arc<[ToolsetTool<D>]>, UserError> {
        let inner = self.inner.get_tools_shared(ctx).await?;
        if self.metadata.is_empty() {
            return Ok(inner);
        }
        if !self.tools.is_static() {
            return Ok(self.apply(ctx, inner.to_vec()).into());
        }
        self.derived.get(std::slice::from_ref(&inner), || Ok(self.apply(ctx, inner.to_vec())))
    }
}

impl<D: Clone + Send + Sync + 'static, T> SetMetadataToolset<D, T> {
    fn apply(&self, ctx: &RunContext<D>, mut tools: Vec<ToolsetTool<D>>) -> Vec<ToolsetTool<D>> {
        if self.metadata.is_empty() {
            return tools;
        }
        for tool in &mut tools {
            if !self.tools.matches(ctx, &tool.def) {
                continue;
            }
            match &mut Arc::make_mut(&mut tool.def).metadata {
                Some(Value::Object(existing)) => {
                    for (k, v) in &self.metadata {
                        existing.insert(k.clone(), v.clone());
                    }
                }
                other => *other = Some(Value::Object(self.metadata.clone())),
            }
        }
        tools
    }
}
