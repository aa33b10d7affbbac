//! [`PrefixTools`]: prefix the names of the tools a capability contributes.

use std::any::Any;
use std::sync::Arc;

use super::hook_list::hook_types::*;
use super::{BoxedCapability, Capability, CapabilityOrdering, DynCapability};
use crate::toolset::PrefixedToolset;

/// A capability that wraps another and shows the tools of the wrapped capability's
/// [`Capability::toolset`] as `{prefix}_{name}`. Only those tools are renamed; the agent's
/// other tools are not. Every hook of the wrapped capability still runs (its `prepare_tools`
/// sees the prefixed names, like every other `prepare_tools`). [`Capability::prefix_tools`]
/// is the shorthand.
///
/// Its [`Capability::name`] is `PrefixTools`; its ordering constraints are the wrapped
/// capability's.
///
/// ```
/// use toolsmith::capability::{PrefixTools, Toolset};
/// use toolsmith::prelude::*;
///
/// /// Look up a word.
/// #[tool]
/// fn define(word: String) -> String { word }
///
/// # fn main() -> Result<(), UserError> {
/// let dictionary = Toolset::new(FunctionToolset::new().with_tool(define));
/// let agent = Agent::builder(TestModel::default())
///     .capability(PrefixTools::new("dict", dictionary))
///     .build()?;
/// let result = agent.run("hi").run_sync().map_err(|e| UserError::new(e.to_string()))?;
/// assert_eq!(result.output(), r#"{"dict_define":"a"}"#);
/// # Ok(())
/// # }
/// ```
pub struct PrefixTools<D> {
    prefix: String,
    inner: Arc<dyn DynCapability<D>>,
}

impl<D> Clone for PrefixTools<D> {
    fn clone(&self) -> Self {
        PrefixTools { prefix: self.prefix.clone(), inner: self.inner.clone() }
    }
}

impl<D: Sync + 'static> PrefixTools<D> {
    /// Wraps `capability`, prefixing its tools with `prefix` and an underscore.
    pub fn new(prefix: impl Into<String>, capability: impl Capability<D>) -> Self {
        PrefixTools { prefix: prefix.into(), inner: BoxedCapability::new(capability).0 }
    }

    /// The prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for PrefixTools<D> {
    fn name(&self) -> String {
        "PrefixTools".into()
    }
    fn ordering(&self) -> Option<CapabilityOrdering> {
        self.inner.ordering()
    }
    fn apply(&self, visitor: &mut dyn FnMut(&dyn Any)) {
        self.inner.apply(visitor)
    }
    fn for_run(&self, ctx: &RunContext<D>) -> Option<BoxedCapability<D>> {
        let inner = self.inner.for_run(ctx)?;
        Some(BoxedCapability::new(PrefixTools { prefix: self.prefix.clone(), inner: inner.0 }))
    }
    fn toolset(&self) -> Option<BoxedToolset<D>> {
        let toolset = self.inner.toolset()?;
        Some(BoxedToolset::new(PrefixedToolset::new(toolset, self.prefix.clone())))
    }
    fn has_prepare_tools(&self) -> bool {
        self.inner.has_prepare_tools()
    }
    fn wraps_event_stream(&self) -> bool {
        self.inner.wraps_event_stream()
    }
    fn hooks_stage(&self, stage: HookStage) -> bool {
        self.inner.hooks_stage(stage)
    }
    delegate_hooks!(inner);
}
