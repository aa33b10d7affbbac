//! [`BoxedCapability`]: a capability of any type behind one type, and the dyn-compatible
//! `DynCapability` (boxed futures) it holds. Their hook methods are generated from the hook
//! list (`hook_list.rs`).

use std::any::Any;
use std::sync::Arc;

use super::hook_list::hook_types::*;
use super::{Capability, CapabilityOrdering};

/// A capability of any type, behind one type (what [`Capability::for_run`] returns). It is a
/// capability itself, delegating everything to the boxed one. Cheap to clone.
///
/// ```
/// use toolsmith::capability::{BoxedCapability, Capability, SetToolMetadata, Thinking};
///
/// let caps: Vec<BoxedCapability<()>> = vec![
///     BoxedCapability::new(Thinking::high()),
///     BoxedCapability::new(SetToolMetadata::new(serde_json::json!({"team": "search"}))),
/// ];
/// assert_eq!(caps[0].name(), "Thinking");
/// ```
pub struct BoxedCapability<D>(pub(crate) Arc<dyn DynCapability<D>>);

impl<D> std::fmt::Debug for BoxedCapability<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("BoxedCapability").field(&self.0.name()).finish()
    }
}

impl<D> Clone for BoxedCapability<D> {
    fn clone(&self) -> Self {
        BoxedCapability(self.0.clone())
    }
}

impl<D: Sync + 'static> BoxedCapability<D> {
    /// Boxes a capability.
    pub fn new(capability: impl Capability<D>) -> Self {
        BoxedCapability(Arc::new(capability))
    }
}

/// The dyn-compatible form of [`Capability`]: the same methods, each future boxed.
pub(crate) trait DynCapability<D>: Send + Sync {
    fn name(&self) -> String;
    fn ordering(&self) -> Option<CapabilityOrdering>;
    fn apply(&self, visitor: &mut dyn FnMut(&dyn Any));
    fn for_run(&self, ctx: &RunContext<D>) -> Option<BoxedCapability<D>>;
    fn toolset(&self) -> Option<BoxedToolset<D>>;
    /// The members, if this is a [`CombinedCapability`](super::CombinedCapability) (or a
    /// `BoxedCapability` holding one).
    fn combined_members(&self) -> Option<Vec<BoxedCapability<D>>>;
    fn has_prepare_tools(&self) -> bool;
    fn wraps_event_stream(&self) -> bool;
    fn hooks_stage(&self, stage: HookStage) -> bool;
    for_each_hook!('a, dyn_hooks);
}

impl<D: Sync + 'static, C: Capability<D>> DynCapability<D> for C {
    fn name(&self) -> String {
        Capability::name(self)
    }
    fn ordering(&self) -> Option<CapabilityOrdering> {
        Capability::ordering(self)
    }
    fn apply(&self, visitor: &mut dyn FnMut(&dyn Any)) {
        Capability::apply(self, visitor)
    }
    fn for_run(&self, ctx: &RunContext<D>) -> Option<BoxedCapability<D>> {
        Capability::for_run(self, ctx)
    }
    fn toolset(&self) -> Option<BoxedToolset<D>> {
        Capability::toolset(self)
    }
    fn combined_members(&self) -> Option<Vec<BoxedCapability<D>>> {
        super::combined::members_of::<D>(self)
    }
    fn has_prepare_tools(&self) -> bool {
        Capability::has_prepare_tools(self)
    }
    fn wraps_event_stream(&self) -> bool {
        Capability::wraps_event_stream(self)
    }
    fn hooks_stage(&self, stage: HookStage) -> bool {
        Capability::hooks_stage(self, stage)
    }
    for_each_hook!('a, forward_hooks);
}

impl<D: Send + Sync + 'static> Capability<D> for BoxedCapability<D> {
    fn name(&self) -> String {
        self.0.name()
    }
    fn ordering(&self) -> Option<CapabilityOrdering> {
        self.0.ordering()
    }
    fn apply(&self, visitor: &mut dyn FnMut(&dyn Any)) {
        self.0.apply(visitor)
    }
    fn for_run(&self, ctx: &RunContext<D>) -> Option<BoxedCapability<D>> {
        self.0.for_run(ctx)
    }
    fn toolset(&self) -> Option<BoxedToolset<D>> {
        self.0.toolset()
    }
    fn has_prepare_tools(&self) -> bool {
        self.0.has_prepare_tools()
    }
    fn wraps_event_stream(&self) -> bool {
        self.0.wraps_event_stream()
    }
    fn hooks_stage(&self, stage: HookStage) -> bool {
        self.0.hooks_stage(stage)
    }
    delegate_hooks!(0);
}
