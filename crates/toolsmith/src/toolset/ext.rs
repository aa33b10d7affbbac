//! [`ToolsetExt`]: fluent adaptors for every toolset.

use std::future::Future;

use serde_json::Value;

use crate::context::RunContext;
use crate::tool::ToolDefinition;
use crate::toolset::{
    ApprovalRequiredToolset, DeferredLoadingToolset, FilteredToolset, OptionalToolset, PrefixedToolset,
    PreparedToolset, RenamedToolset, SetMetadataToolset, ToolSelector, Toolset,
};

/// Fluent adaptors that wrap a toolset, implemented for every [`Toolset`].
///
/// Wrappers apply from the inside out: in `toolset.filtered(f).approval_required_for([..]).prefixed("p")`
/// the filter and the approval list see the original names and the model sees `p_{name}`.
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
/// let toolset = FunctionToolset::new()
///     .with_tools([add, sub])
///     .filtered(|_ctx, def| def.name != "sub")
///     .with_metadata(serde_json::json!({"group": "maths"}))
///     .prefixed("calc");
/// assert_eq!(toolset.label(), "PrefixedToolset(SetMetadataToolset(FilteredToolset(FunctionToolset)))");
/// let tools = futures::executor::block_on(toolset.get_tools(&RunContext::detached()))?;
/// assert_eq!(tools.len(), 1);
/// assert_eq!(tools[0].def.name, "calc_add");
/// # Ok(())
/// # }
/// ```
pub trait ToolsetExt<D: Clone + Send + Sync + 'static>: Toolset<D> + Sized {
    /// Shows every tool as `{prefix}_{name}` (see [`PrefixedToolset`]).
    fn prefixed(self, prefix: impl Into<String>) -> PrefixedToolset<Self> {
        PrefixedToolset::new(self, prefix)
    }

    /// Keeps the tools for which `filter` holds (see [`FilteredToolset`]).
    fn filtered<F>(self, filter: F) -> FilteredToolset<D, Self>
    where
        F: Fn(&RunContext<D>, &ToolDefinition) -> bool + Send + Sync + 'static,
    {
        FilteredToolset::new(self, filter)
    }

    /// Renames tools with pairs `(new name, original name)` (see [`RenamedToolset`]).
    fn renamed<I, N, O>(self, name_map: I) -> RenamedToolset<Self>
    where
        I: IntoIterator<Item = (N, O)>,
        N: Into<String>,
        O: Into<String>,
    {
        RenamedToolset::new(self, name_map)
    }

    /// Passes the definitions through a `prepare_tools` function before every model request
    /// (see [`PreparedToolset`]).
    fn prepared<F>(self, prepare: F) -> PreparedToolset<D, Self>
    where
        F: Fn(&RunContext<D>, Vec<ToolDefinition>) -> Option<Vec<ToolDefinition>> + Send + Sync + 'static,
    {
        PreparedToolset::new(self, prepare)
    }

    /// Like [`ToolsetExt::prepared`], with an asynchronous function.
    fn prepared_async<F, Fut>(self, prepare: F) -> PreparedToolset<D, Self>
    where
        F: Fn(RunContext<D>, Vec<ToolDefinition>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<Vec<ToolDefinition>>> + Send + 'static,
    {
        PreparedToolset::new_async(self, prepare)
    }

    /// Every call needs approval (see [`ApprovalRequiredToolset`]).
    fn approval_required(self) -> ApprovalRequiredToolset<D, Self> {
        ApprovalRequiredToolset::new(self)
    }

    /// Calls of the named tools need approval (see [`ApprovalRequiredToolset`]).
    fn approval_required_for<I, S>(self, names: I) -> ApprovalRequiredToolset<D, Self>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ApprovalRequiredToolset::new(self).for_tools(ToolSelector::names(names))
    }

    /// The calls for which `f(ctx, definition, arguments)` holds need approval (see
    /// [`ApprovalRequiredToolset`]).
    fn approval_required_when<F>(self, f: F) -> ApprovalRequiredToolset<D, Self>
    where
        F: Fn(&RunContext<D>, &ToolDefinition, &Value) -> bool + Send + Sync + 'static,
    {
        ApprovalRequiredToolset::new(self).when(f)
    }

    /// The run goes on without this toolset's tools when it is unavailable (see
    /// [`OptionalToolset`]).
    fn optional(self) -> OptionalToolset<D, Self> {
        OptionalToolset::new(self)
    }

    /// Hides every tool until it is found through tool search (see [`DeferredLoadingToolset`]).
    fn defer_loading(self) -> DeferredLoadingToolset<D, Self> {
        DeferredLoadingToolset::new(self)
    }

    /// Hides the named tools until they are found through tool search (see
    /// [`DeferredLoadingToolset`]).
    fn defer_loading_for<I, S>(self, names: I) -> DeferredLoadingToolset<D, Self>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        DeferredLoadingToolset::new(self).for_tools(ToolSelector::names(names))
    }

    /// Merges a JSON object into every tool's metadata (see [`SetMetadataToolset`]).
    fn with_metadata(self, metadata: Value) -> SetMetadataToolset<D, Self> {
        SetMetadataToolset::new(self, metadata)
    }
}

impl<D: Clone + Send + Sync + 'static, T: Toolset<D>> ToolsetExt<D> for T {}
