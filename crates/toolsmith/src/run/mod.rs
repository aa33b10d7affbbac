//! What the layers of a run share: its events, its output and the output's specification, and
//! its mutable state. Below the capabilities, the step executor and the agent, which all use
//! them; the public types are re-exported from [`agent`](crate::agent).

mod events;
mod output;
pub(crate) mod partial;
mod state;

pub use crate::output_mode::{DEFAULT_PROMPTED_OUTPUT_TEMPLATE, OutputMode, OutputObject};
pub(crate) use crate::output_mode::{OutputOptions, strip_markdown_fences};
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini", feature = "bedrock"))]
pub(crate) use events::report_provider_retry;
pub use events::{AgentEvent, EventStream};
pub(crate) use events::{EventSink, with_provider_retries};
pub use output::{OUTPUT_TOOL_NAME, OutputSpec, RunOutput};
pub(crate) use state::RunState;
pub(crate) use state::{guard_sink, no_retries};
