//! What the step executor needs of an agent.

use std::sync::Arc;

use crate::execution::LayoutCache;
use crate::run::OutputSpec;
use crate::search::ToolSearch;
use crate::search::bridge::{BridgeCache, BridgeConfig};
use crate::tool::pool::BlockingPool;

/// What to do with the other calls of a response once a final result is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum EndStrategy {
    /// Stop at once: other function calls are not executed.
    Early,
    /// Execute the function calls of the response, then stop (the default).
    #[default]
    Graceful,
    /// Execute every call, output tools included.
    Exhaustive,
}

/// How a response's tool calls are executed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ParallelMode {
    /// Concurrently, split at sequential tools (the default).
    #[default]
    Parallel,
    /// One after another, in the model's order.
    Sequential,
}

/// An agent's settings for its steps: retry budgets, timeouts, the end strategy, parallelism,
/// the output, tool search and bridge mode, and what is derived from the toolsets' lists.
pub(crate) struct StepConfig<D> {
    pub(crate) retries: u32,
    pub(crate) output_retries: u32,
    pub(crate) end_strategy: EndStrategy,
    pub(crate) parallel_mode: ParallelMode,
    pub(crate) output: OutputSpec,
    /// The bounded pool for synchronous tools.
    pub(crate) blocking: Arc<BlockingPool>,
    pub(crate) tool_search: Option<ToolSearch>,
    pub(crate) tool_layout: LayoutCache<D>,
    pub(crate) bridge: Option<BridgeConfig>,
    pub(crate) bridge_cache: BridgeCache,
}
