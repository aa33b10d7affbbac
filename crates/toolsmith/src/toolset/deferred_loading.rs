//! [`DeferredLoadingToolset`]: tools hidden until found through tool search.

use std::sync::Arc;

use crate::context::RunContext;
use crate::error::UserError;
use crate::toolset::{ToolSelector, Toolset, ToolsetTool};

/// A toolset that sets [`defer_loading`](crate::ToolDefinition::defer_loading) on every tool, or
/// on the selected ones: the model does not see them until it finds them through tool search.
/// The label is `DeferredLoadingToolset(<wrapped label>)`.
///
/// ```
/// use toolsmith::prelude::*;
/// use toolsmith::toolset::ToolsetExt;
///
/// /// Add two integers.
/// #[tool]
/// fn add(x: i64, y: i64) -> i64 { x + y }
///
/// /// Subtract two integers.
/// #[tool]
/// fn sub(x: i64, y: i64) -> i64 { x - y }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let toolset = FunctionToolset::new().with_tools([add, sub]).defer_loading_for(["sub"]);
/// let tools = futures::executor::block_on(toolset.get_tools(&RunContext::detached()))?;
/// let flags: Vec<(&str, bool)> = tools.iter().map(|t| (t.def.name.as_str(), t.def.defer_loading)).collect();
/// assert_eq!(flags, [("add", false), ("sub", true)]);
/// # Ok(())
/// # }
/// ```
pub struct DeferredLoadingToolset<D, T> {
    inner: T,
    tools: ToolSelector<D>,
    derived: super::derived::Derived,
}

impl<D, T> DeferredLoadingToolset<D, T> {
    /// Wraps `inner`, deferring the loading of every tool.
    pub fn new(inner: T) -> Self {
        DeferredLoadingToolset { inner, tools: ToolSelector::All, derived: Default::default() }
    }

    /// Defers only the selected tools (names, or a predicate over the definition).
    pub fn for_tools(mut self, tools: impl Into<ToolSelector<D>>) -> Self {
        self.tools = tools.into();
        self
    }

    /// The wrapped toolset.
    pub fn inner(&self) -> &T {
        &self.inner
    }
}

impl<D, T: std::fmt::Debug> std::fmt::Debug for DeferredLoadingToolset<D, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeferredLoadingToolset").field("inner", &self.inner).field("tools", &self.tools).finish()
    }
}

impl<D: Clone + Send + Sync + 'static, T: Toolset<D>> Toolset<D> for DeferredLoadingToolset<D, T> {
    fn label(&self) -> String {
        format!("DeferredLoadingToolset({})", self.inner.label())
    }

    fn check(&self) -> Result<(), UserError> {
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

    /// The marked list is made once per list of the inner toolset (with a predicate selector,
    /// each step), so a large deferred catalogue costs nothing per step.
    async fn get_tools_shared(&self, ctx: &RunContext<D>) -> Result<Arc<[ToolsetTool<D>]>, UserError> {
        let inner = self.inner.get_tools_shared(ctx).await?;
        if !self.tools.is_static() {
            return Ok(self.apply(ctx, inner.to_vec()).into());
        }
        self.derived.get(std::slice::from_ref(&inner), || Ok(self.apply(ctx, inner.to_vec())))
    }
}

impl<D: Clone + Send + Sync + 'static, T> DeferredLoadingToolset<D, T> {
    fn apply(&self, ctx: &RunContext<D>, mut tools: Vec<ToolsetTool<D>>) -> Vec<ToolsetTool<D>> {
        for tool in &mut tools {
            if !tool.def.defer_loading && self.tools.matches(ctx, &tool.def) {
                Arc::make_mut(&mut tool.def).defer_loading = true;
            }
        }
        tools
    }
}
