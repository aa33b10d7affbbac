//! Capabilities: hooks around every stage of a run.
//!
//! A [`Capability`] observes or changes a run at each stage: the run itself, each node of the
//! run ([`AgentNode`]), each model request, the validation and the execution of each tool call,
//! the validation and the processing of the output, the run's event stream, and the tool
//! definitions offered each step (`prepare_tools`). Every hook has a default that does nothing,
//! so a capability implements only what it needs.
//!
//! Several capabilities combine with the first one outermost: `before_*` hooks run in list order,
//! `after_*` and `on_*_error` hooks in reverse order, `wrap_*` hooks nest (the first wraps the
//! others), and `prepare_tools` runs in list order, each on the previous one's result. A
//! capability may constrain its place with [`Capability::ordering`] (see [`CapabilityOrdering`]);
//! the agent builder sorts the list to satisfy every constraint, keeping the order the
//! capabilities were added in wherever the constraints leave a choice.
//!
//! Application code that needs a few hooks uses [`Hooks`] (closures, no trait impl);
//! [`DynamicCapability`] builds a capability from the run context at the start of each run;
//! [`CombinedCapability`] hands out several capabilities as one, and [`WrapperCapability`]
//! changes some hooks of another capability and passes the others on. The
//! built-ins: [`Toolset`], [`PrepareTools`], [`PrepareOutputTools`], [`HandleDeferredToolCalls`],
//! [`IncludeToolReturnSchemas`], [`PrefixTools`], [`SetToolMetadata`], [`ThreadExecutor`],
//! [`ProcessHistory`], [`ReinjectSystemPrompt`], [`ProcessEventStream`], [`Thinking`] and
//! [`Instrumentation`]. Most of them can also be written in a JSON or YAML spec (see [`spec`]).
//!
//! Return values decide what happens next: an `Err(ToolError::Retry(..))` from a tool hook is an
//! ordinary retry of that tool, and from an output hook a retry of the output; an
//! `Err(AgentRunError::Retry(..))` (`ModelRetry::new(..).into()`) from a model-request hook asks
//! the model to try again, the response it gave staying in the history; an `on_*_error` hook
//! recovers by returning `Ok(value)` or passes the error on by returning it.
//!
//! ```
//! use toolsmith::capability::{Capability, ToolCallInfo};
//! use toolsmith::prelude::*;
//! use toolsmith::tool::ToolOutput;
//! use serde_json::Value;
//!
//! /// Refuses to run `delete_file` on paths outside `/tmp`.
//! struct Guard;
//!
//! impl<D: Clone + Send + Sync + 'static> Capability<D> for Guard {
//!     async fn before_tool_execute(&self, _ctx: &RunContext<D>, call: ToolCallInfo<'_>, args: Value) -> Result<Value, ToolError> {
//!         let path = args.get("path").and_then(Value::as_str).unwrap_or_default();
//!         if call.def.name == "delete_file" && !path.starts_with("/tmp/") {
//!             return Err(ModelRetry::new("Only files under /tmp may be deleted.").into());
//!         }
//!         Ok(args)
//!     }
//! }
//! ```

#[macro_use]
mod hook_list;

pub mod background_tools;
mod boxed;
mod chain;
mod combined;
mod compact_retry_history;
mod dynamic;
mod handle_deferred;
mod hooks;
mod instrumentation;
mod native_fallbacks;
mod native_or_local;
mod native_tool;
mod next;
mod ordering;
#[cfg(feature = "otel")]
pub mod otel;
mod prefix_tools;
mod prepare_output_tools;
mod prepare_tools;
mod process_event_stream;
mod process_history;
mod reinject_system_prompt;
mod repair_tool_arguments;
mod return_schemas;
mod set_metadata;
pub mod spec;
mod thinking;
mod thread_executor;
pub mod tool_call_judge;
pub mod tool_output_limits;
mod tool_search;
mod toolset;
mod trait_def;
mod types;
mod wrapper;

pub use background_tools::BackgroundTools;
pub use boxed::BoxedCapability;
pub(crate) use boxed::DynCapability;
pub(crate) use chain::{Capabilities, OutputStage};
pub use combined::CombinedCapability;
pub use compact_retry_history::CompactRetryHistory;
pub use dynamic::DynamicCapability;
pub use handle_deferred::HandleDeferredToolCalls;
pub use hooks::{Hooks, OwnedOutput, OwnedToolCall};
pub use instrumentation::{EventMode, Instrumentation, InstrumentationSettings, InstrumentationVersion};
pub use native_fallbacks::{CodeExecution, ImageGeneration, Mcp, WebFetch, WebSearch};
pub use native_or_local::{LocalTool, NativeOrLocalTool};
pub use next::{ModelRequestNext, NodeNext, OutputNext, RunNext, ToolExecuteNext, ToolValidateNext};
pub use ordering::{CapabilityOrdering, CapabilityPosition};
pub use prefix_tools::PrefixTools;
pub use prepare_output_tools::PrepareOutputTools;
pub use prepare_tools::PrepareTools;
pub use process_event_stream::ProcessEventStream;
pub use process_history::ProcessHistory;
pub use reinject_system_prompt::ReinjectSystemPrompt;
pub use repair_tool_arguments::{RepairCounts, RepairToolArguments};
pub use return_schemas::IncludeToolReturnSchemas;
pub use set_metadata::SetToolMetadata;
pub use spec::{CapabilityRegistry, CapabilitySpec, LoadedSpec, SpecArgs, SpecError};
pub use thinking::{Thinking, ThinkingEffort, ThinkingFormat};
pub use thread_executor::ThreadExecutor;
pub use tool_call_judge::{ApprovalReviewer, ToolCallJudge};
pub use tool_output_limits::ToolOutputLimits;
pub use toolset::Toolset;
pub use trait_def::Capability;
pub use types::{
    AgentNode, Delivery, DeliveryPoint, EventBoxStream, HookStage, ModelRequestContext, NodeResult, OutputInfo,
    OutputKind, ToolCallInfo,
};
pub use wrapper::{Wrapper, WrapperCapability};
