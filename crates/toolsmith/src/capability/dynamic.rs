//! [`DynamicCapability`]: a capability built from the run context at the start of each run.

use std::sync::Arc;

use super::{BoxedCapability, Capability};
use crate::context::RunContext;

type Factory<D> = Arc<dyn Fn(&RunContext<D>) -> Option<BoxedCapability<D>> + Send + Sync>;

/// A capability made by a function of the run context, once per run (from
/// [`Capability::for_run`]): the capability it returns stands in its place for the whole run,
/// so its instructions, model settings and hooks apply as usual; `None` means no capability
/// for this run. Its position in the chain is the `DynamicCapability`'s.
///
/// Toolsets are collected when the agent is built, so the per-run capability's
/// [`Capability::toolset`] is not used; add toolsets with [`Toolset`](super::Toolset) instead.
///
/// ```
/// use toolsmith::capability::{BoxedCapability, DynamicCapability, Thinking};
/// use toolsmith::prelude::*;
///
/// #[derive(Clone)]
/// struct Deps { premium: bool }
///
/// // Premium users get deep thinking.
/// let thinking = DynamicCapability::new(|ctx: &RunContext<Deps>| {
///     ctx.deps.premium.then(|| BoxedCapability::new(Thinking::high()))
/// });
/// # let _ = thinking;
/// ```
pub struct DynamicCapability<D> {
    factory: Factory<D>,
}

impl<D> Clone for DynamicCapability<D> {
    fn clone(&self) -> Self {
        DynamicCapability { factory: self.factory.clone() }
    }
}

impl<D: Clone + Send + Sync + 'static> DynamicCapability<D> {
    /// From a function of the run context.
    pub fn new<F>(factory: F) -> Self
    where
        F: Fn(&RunContext<D>) -> Option<BoxedCapability<D>> + Send + Sync + 'static,
    {
        DynamicCapability { factory: Arc::new(factory) }
    }
}

/// What a [`DynamicCapability`] stands for in a run where its function returned `None`.
struct Nothing;

impl<D: Clone + Send + Sync + 'static> Capability<D> for Nothing {
    fn has_prepare_tools(&self) -> bool {
        false
    }
    fn hooks_stage(&self, _: super::HookStage) -> bool {
        false
    }
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for DynamicCapability<D> {
    fn for_run(&self, ctx: &RunContext<D>) -> Option<BoxedCapability<D>> {
        Some(match (self.factory)(ctx) {
            Some(cap) => cap.0.for_run(ctx).unwrap_or(cap),
            None => BoxedCapability::new(Nothing),
        })
    }
}
