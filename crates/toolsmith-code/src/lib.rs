//! Code mode for toolsmith agents: the model writes one Python snippet that calls many tools,
//! run in the [Monty](https://github.com/pydantic/monty) sandbox in-process.
//!
//! [`CodeMode`] is a capability: the tools it chooses (all of them by default) leave the
//! model's tool list and become Python functions inside one `run_code` tool, with signatures and
//! docstrings rendered from their schemas as pydantic-ai-harness renders them. The model's
//! snippet runs in Monty, a sandboxed Python interpreter written in Rust: no container, no
//! Python install, no file system, network or environment access. Each function the snippet
//! calls goes through the run's own path for a tool call (validation with every error,
//! timeouts, the capabilities' hooks, usage counts), so one model request can look up twenty
//! orders, filter them and act on the ones that matter.
//!
//! ```
//! use toolsmith::prelude::*;
//! use toolsmith_code::CodeMode;
//!
//! /// Look up an order.
//! #[tool]
//! async fn get_order(order_id: i64) -> serde_json::Value {
//!     serde_json::json!({"id": order_id, "late": order_id % 2 == 0})
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use toolsmith::messages::{ModelMessage, ModelResponse, ModelResponsePart, ToolCallPart};
//!
//! // A scripted model: one snippet, then the answer.
//! let model = FunctionModel::sync(|messages: &[ModelMessage], _| {
//!     if messages.len() == 1 {
//!         let code = "import asyncio\norders = await asyncio.gather(*[get_order(order_id=i) for i in range(1, 5)])\n[o['id'] for o in orders if o['late']]";
//!         let call = ToolCallPart::new("run_code", serde_json::json!({"code": code}), "c1");
//!         ModelResponse::new(vec![ModelResponsePart::ToolCall(call)])
//!     } else {
//!         ModelResponse::text("done")
//!     }
//! });
//! let agent = Agent::builder(model).tool(get_order).capability(CodeMode::new()).build()?;
//! let result = agent.run("Which orders are late?").await?;
//! assert_eq!(result.usage().tool_calls, 5); // run_code and the four lookups
//! # Ok(())
//! # }
//! ```
//!
//! Limits ([`CodeModeLimits`]) bound each snippet's time, memory, recursion, printed output and
//! nested calls; a snippet over one fails with a message the model sees as a retry. The memory
//! limit needs [`SandboxAllocator`] as the application's global allocator.

mod convert;
mod description;
mod limits;
mod sandbox;
mod signature;
mod spec;
mod toolset;

use std::sync::Arc;

use toolsmith::capability::{Capability, CapabilityOrdering};
use toolsmith::toolset::{BoxedToolset, ToolSelector};

pub use limits::CodeModeLimits;
pub use spec::register;
pub use toolset::RUN_CODE_TOOL_NAME;

/// Monty's allocator, which counts the memory a snippet allocates: install it with
/// `#[global_allocator] static ALLOC: toolsmith_code::SandboxAllocator = toolsmith_code::SandboxAllocator;`
/// for [`CodeModeLimits::max_memory`] to apply.
pub use monty_alloc::LimitedAllocator as SandboxAllocator;

/// Runs the chosen tools as Python functions inside one `run_code` tool (see the
/// [crate documentation](crate)).
///
/// Tools that stay as they are: the output tool, tool search's `search_tools`, tools still
/// hidden in the deferred catalogue, local fallbacks of native tools and other code tools (a
/// tool whose metadata has `code_arg_name`). A tool whose name is not a Python identifier is
/// called by its name with `_` for the other characters.
pub struct CodeMode<D = ()> {
    tools: ToolSelector<D>,
    max_retries: u32,
    limits: CodeModeLimits,
    pause_for_approval: bool,
    paused: sandbox::PausedStore,
}

impl<D> Default for CodeMode<D> {
    fn default() -> Self {
        CodeMode {
            tools: ToolSelector::All,
            max_retries: 3,
            limits: CodeModeLimits::default(),
            pause_for_approval: false,
            paused: Default::default(),
        }
    }
}

impl<D> std::fmt::Debug for CodeMode<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeMode")
            .field("max_retries", &self.max_retries)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl<D> CodeMode<D> {
    /// Every tool inside `run_code`, the harness's defaults: 3 retries, [`CodeModeLimits::default`].
    pub fn new() -> Self {
        CodeMode::default()
    }

    /// Which tools go inside `run_code` (the others stay tools of their own).
    pub fn tools(mut self, tools: ToolSelector<D>) -> Self {
        self.tools = tools;
        self
    }

    /// The retries of `run_code` (syntax and runtime errors count); 3 by default.
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }

    /// The limits of each snippet.
    pub fn limits(mut self, limits: CodeModeLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Whether a call from the snippet to a tool that needs approval pauses the snippet: the run
    /// ends with the `run_code` call in its deferred requests (the waiting call's name, arguments
    /// and id in its metadata, under `code_mode`), and resuming the run with `run_code` approved
    /// runs the call and the rest of the snippet, with the state it had. The paused snippet is
    /// kept in this `CodeMode` (in memory, for resuming in the same process; the agent needs
    /// `allow_deferred`). Off by default, as in the harness: such a call raises inside the
    /// snippet.
    pub fn pause_for_approval(mut self, pause: bool) -> Self {
        self.pause_for_approval = pause;
        self
    }
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for CodeMode<D>
where
    ToolSelector<D>: Clone,
{
    fn ordering(&self) -> Option<CapabilityOrdering> {
        Some(CapabilityOrdering::outermost())
    }

    fn wrapper_toolset(&self, toolset: BoxedToolset<D>) -> Option<BoxedToolset<D>> {
        let config = toolset::Config {
            tools: self.tools.clone(),
            max_retries: self.max_retries,
            limits: self.limits.clone(),
            pause_for_approval: self.pause_for_approval,
            paused: self.paused.clone(),
        };
        Some(BoxedToolset::new(toolset::CodeModeToolset {
            inner: toolset,
            config: Arc::new(config),
            session: Arc::new(tokio::sync::Mutex::new(sandbox::Session::default())),
        }))
    }
}
