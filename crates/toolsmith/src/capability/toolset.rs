//! [`Toolset`]: a capability that contributes a toolset.

use super::{Capability, HookStage};
use crate::toolset::BoxedToolset;

/// A capability that adds a toolset to the agent (its tools come after the agent's own tools
/// and toolsets). On its own it is the same as
/// [`AgentBuilder::toolset`](crate::AgentBuilder::toolset); it is useful where a capability is
/// expected: wrapped in [`PrefixTools`](super::PrefixTools), registered by name for
/// [specs](super::spec), or combined with hooks.
///
/// The toolset is collected when the agent is built, so a `Toolset` returned by a per-run
/// [`Capability::for_run`] (or a [`DynamicCapability`](super::DynamicCapability)) adds no tools.
///
/// ```
/// use toolsmith::capability::{Capability, Toolset};
/// use toolsmith::prelude::*;
///
/// /// Echo the message back.
/// #[tool]
/// fn echo(message: String) -> String { message }
///
/// # fn main() -> Result<(), UserError> {
/// let agent = Agent::builder(TestModel::default())
///     .capability(Toolset::new(FunctionToolset::new().with_tool(echo)).prefix_tools("util"))
///     .build()?;
/// let result = agent.run("hi").run_sync().map_err(|e| UserError::new(e.to_string()))?;
/// assert_eq!(result.output(), r#"{"util_echo":"a"}"#);
/// # Ok(())
/// # }
/// ```
pub struct Toolset<D> {
    toolset: BoxedToolset<D>,
}

impl<D: Clone + Send + Sync + 'static> Toolset<D> {
    /// A capability contributing `toolset`.
    pub fn new(toolset: impl crate::toolset::Toolset<D>) -> Self {
        Toolset { toolset: BoxedToolset::new(toolset) }
    }
}

impl<D> Clone for Toolset<D> {
    fn clone(&self) -> Self {
        Toolset { toolset: self.toolset.clone() }
    }
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for Toolset<D> {
    fn hooks_stage(&self, _: HookStage) -> bool {
        false
    }
    fn has_prepare_tools(&self) -> bool {
        false
    }

    fn toolset(&self) -> Option<BoxedToolset<D>> {
        Some(self.toolset.clone())
    }
}
