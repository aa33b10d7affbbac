//! [`FilteredToolset`]: only the tools a predicate accepts.

use std::sync::Arc;

use crate::context::RunContext;
use crate::error::UserError;
use crate::tool::ToolDefinition;
use crate::toolset::{Toolset, ToolsetTool};

/// The predicate of a [`FilteredToolset`].
pub type FilterFn<D> = Arc<dyn Fn(&RunContext<D>, &ToolDefinition) -> bool + Send + Sync>;

/// A toolset that offers only the tools for which a predicate over the run context and the
/// definition holds; the predicate runs before every model request. The label is
/// `FilteredToolset(<wrapped label>)`; the tools keep their own toolset label.
///
/// ```
/// use toolsmith::prelude::*;
/// use toolsmith::toolset::ToolsetExt;
///
/// /// Read a file.
/// #[tool]
/// fn read_file(path: String) -> String { format!("contents of {path}") }
///
/// /// Delete a file.
/// #[tool]
/// fn delete_file(path: String) -> String { format!("deleted {path}") }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // Dependencies say whether the user may write.
/// let toolset = FunctionToolset::<bool>::new()
///     .with_tools([read_file, delete_file])
///     .filtered(|ctx: &RunContext<bool>, def: &ToolDefinition| ctx.deps || !def.name.starts_with("delete"));
/// let agent = Agent::builder(TestModel::default()).deps::<bool>().toolset(toolset).build()?;
/// let result = agent.run("go").deps(false).run_sync()?;
/// assert_eq!(result.output(), r#"{"read_file":"contents of a"}"#);
/// # Ok(())
/// # }
/// ```
pub struct FilteredToolset<D, T> {
    inner: T,
    filter: FilterFn<D>,
}

impl<D, T> FilteredToolset<D, T> {
    /// Wraps `inner`, keeping the tools for which `filter` holds.
    pub fn new<F>(inner: T, filter: F) -> Self
    where
        F: Fn(&RunContext<D>, &ToolDefinition) -> bool + Send + Sync + 'static,
    {
        FilteredToolset { inner, filter: Arc::new(filter) }
    }

    /// The wrapped toolset.
    pub fn inner(&self) -> &T {
        &self.inner
    }
}

impl<D, T: std::fmt::Debug> std::fmt::Debug for FilteredToolset<D, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FilteredToolset").field("inner", &self.inner).finish_non_exhaustive()
    }
}

impl<D: Clone + Send + Sync + 'static, T: Toolset<D>> Toolset<D> for FilteredToolset<D, T> {
    fn label(&self) -> String {
        format!("FilteredToolset({})", self.inner.label())
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
        let mut tools = self.inner.get_tools(ctx).await?;
        tools.retain(|t| (self.filter)(ctx, &t.def));
        Ok(tools)
    }
}
