//! The per-step tool manager: which tools are visible, and how a response's tool calls become
//! the next request (validation, retry budgets, timeouts, concurrent segments split at
//! sequential barriers, usage limits, the end strategy, deferrals).

use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::Value;

use crate::capability::{Capabilities, HookStage, OutputInfo, OutputKind, ToolCallInfo};
use crate::context::RunContext;
use crate::deferred::{
    DeferredKind, DeferredToolRequests, ExternalResult, PendingCall, PendingRecords, ResumeRefusal, check_bound,
};
use crate::error::{AgentRunError, UserError};
use crate::messages::{
    ModelRequestPart, RetryCause, RetryInfo, ToolCallPart, ToolOutcome, ToolReturnPart, UserContent, UserPromptPart,
};
use crate::run::{AgentEvent, RunOutput, RunState};
use crate::search::{self, SEARCH_TOOL_NAME, bridge};
use crate::tool::pool::PoolTimeout;
use crate::tool::{ArgsCheck, Invocation, ModelRetry, ToolDefinition, ToolError, ToolKind, ToolOutput, ToolReturn};
use crate::toolset::{DynToolset, ToolsetTool, Unlisted};
use crate::usage::UsageLimits;
use rustc_hash::{FxHashMap, FxHashSet};

mod call;
mod config;
mod index;
mod join;
mod layout;
mod nested;
mod output;
mod plan;
mod prepared_toolset;
mod prompted;
mod resume;
mod running;
mod step;

#[cfg(feature = "mcp-server")]
pub(crate) use call::bound_output;
use call::*;
pub(crate) use index::ToolIndex;
use index::*;
use join::join_in_order;
pub(crate) use layout::Reload;
use resume::Settled;
pub(crate) use resume::{Consume, Resolution, Resume, ResumeBinding, results_mismatch};
use running::{Exec, ToolRun, counted};
pub(crate) use step::{CallSource, process_tool_calls, repeated_ids};

pub(crate) use config::StepConfig;
pub use config::{EndStrategy, ParallelMode};
pub(crate) use layout::LayoutCache;
pub use nested::NestedCalls;
pub(crate) use nested::StepSource;
pub(crate) use output::{describe_refusal, output_budget_exceeded, output_failure, settle_output};
pub(crate) use prepared_toolset::{CapabilityPrepared, PrepareFailure};
pub(crate) use prompted::{explain_forced_output, join_instructions};

const FINAL_PROCESSED: &str = "Final result processed.";
const OUTPUT_NOT_USED: &str = "Output tool not used - a final result was already processed.";
const TOOL_NOT_EXECUTED: &str = "Tool not executed - a final result was already processed.";
const OUTPUT_NOT_FINAL: &str = "Output tool processed, but its value will not be the final result of the agent run.";
const OUTPUT_FAILED: &str = "Output tool not used - output failed validation.";
const RETRY_WINS: &str = "Output not used as the final result - addressing tool retries from this round first.";

/// What a step ended with.
pub(crate) enum StepOutcome {
    /// A final output was found.
    Final(RunOutput),
    /// Calls are waiting for approval or external execution.
    Deferred(DeferredToolRequests),
    /// The next request is ready.
    Continue,
}

/// Formats seconds as Python prints a float (`0.05`, `5.0`).
pub(crate) fn py_float(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e16 { format!("{v:.1}") } else { format!("{v}") }
}

/// Sorts a step's parts (or contents) by their call's index, stably. They usually come in
/// order: checked first, which spares the sort's copy of a few hundred bytes a part.
fn sort_by_index<T>(items: &mut [(usize, T)]) {
    if !items.is_sorted_by_key(|(i, _)| *i) {
        items.sort_by_key(|(i, _)| *i);
    }
}

fn exceeded(tool: &str, max: u32) -> AgentRunError {
    AgentRunError::unexpected(ToolError::RetriesExhausted { tool: tool.to_string(), max_retries: max }.to_string())
}
