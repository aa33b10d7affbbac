//! [`WrapperCapability`]: wrap one capability, change some hooks, pass the others on.
//!
//! The trait's hook methods are generated from the hook list (`hook_list.rs`), each passing the
//! call on to the wrapped capability; [`Wrapper`] makes a capability of an implementation.

use std::any::Any;
use std::future::Future;

use super::hook_list::hook_types::*;
use super::{BoxedCapability, Capability, CapabilityOrdering};

/// A capability that wraps another: every hook passes the call on to the wrapped capability
/// unless the implementation overrides it, and an override can still call the wrapped one
/// through [`WrapperCapability::wrapped`]. Hand [`WrapperCapability::into_capability`] (a
/// [`Wrapper`]) to an agent.
///
/// A wrapper is transparent by default: its [`name`](WrapperCapability::name), its
/// [ordering constraints](WrapperCapability::ordering) and its toolset are the wrapped
/// capability's. [`Capability::apply`] visits the wrapper (downcast it to its own type), then
/// what the wrapped capability visits. When the wrapped capability makes a fresh instance for a
/// run ([`Capability::for_run`]), the wrapper is cloned around it (hence `Clone`; keep per-run
/// state in the wrapped capability, or derive it from it on access).
///
/// Rust has no subclassing: a type implements this trait rather than deriving from a base
/// class, and the agent takes the [`Wrapper`] made from it, since the blanket
/// `Capability` impl a base class would give is not expressible next to the other capabilities.
///
/// ```
/// use serde_json::Value;
/// use toolsmith::capability::{BoxedCapability, Capability, ToolCallInfo, WrapperCapability};
/// use toolsmith::prelude::*;
///
/// /// Refuses `rm` everywhere: a strict guard.
/// struct RefuseRm;
/// impl Capability<()> for RefuseRm {
///     async fn before_tool_execute(&self, _: &RunContext<()>, call: ToolCallInfo<'_>, args: Value) -> Result<Value, ToolError> {
///         if call.def.name == "rm" { return Err(ModelRetry::new("`rm` is not allowed.").into()) }
///         Ok(args)
///     }
/// }
///
/// /// The guard, switched off for tools marked `trusted` (every other hook passes on).
/// #[derive(Clone)]
/// struct TrustedBypass(BoxedCapability<()>);
/// impl WrapperCapability<()> for TrustedBypass {
///     fn wrapped(&self) -> &BoxedCapability<()> { &self.0 }
///     fn wrapped_mut(&mut self) -> &mut BoxedCapability<()> { &mut self.0 }
///     async fn before_tool_execute(&self, ctx: &RunContext<()>, call: ToolCallInfo<'_>, args: Value) -> Result<Value, ToolError> {
///         if call.def.metadata.as_ref().is_some_and(|m| m["trusted"] == true) {
///             return Ok(args);
///         }
///         self.wrapped().before_tool_execute(ctx, call, args).await
///     }
/// }
///
/// # fn main() -> Result<(), UserError> {
/// let guard = TrustedBypass(BoxedCapability::new(RefuseRm)).into_capability();
/// assert_eq!(Capability::<()>::name(&guard), "RefuseRm");
/// let _agent = Agent::builder(TestModel::default()).capability(guard).build()?;
/// # Ok(())
/// # }
/// ```
pub trait WrapperCapability<D: Send + Sync + 'static>: Clone + Send + Sync + 'static {
    /// The wrapped capability.
    fn wrapped(&self) -> &BoxedCapability<D>;

    /// The wrapped capability, to replace it (with its instance for one run).
    fn wrapped_mut(&mut self) -> &mut BoxedCapability<D>;

    /// This wrapper as a capability to hand to an agent or a run.
    fn into_capability(self) -> Wrapper<Self>
    where
        Self: Sized,
    {
        Wrapper(self)
    }

    /// See [`Capability::name`]: the wrapped capability's by default.
    fn name(&self) -> String {
        self.wrapped().0.name()
    }

    /// See [`Capability::ordering`]: the wrapped capability's by default.
    fn ordering(&self) -> Option<CapabilityOrdering> {
        self.wrapped().0.ordering()
    }

    /// See [`Capability::toolset`]: the wrapped capability's by default.
    fn toolset(&self) -> Option<BoxedToolset<D>> {
        self.wrapped().0.toolset()
    }

    /// See [`Capability::has_prepare_tools`]: `true` by default, since the wrapper may
    /// override `prepare_tools` (return `self.wrapped().has_prepare_tools()` if it does not).
    fn has_prepare_tools(&self) -> bool {
        true
    }

    /// See [`Capability::wraps_event_stream`]: the wrapped capability's by default (override
    /// it to say `true` if the wrapper overrides `wrap_event_stream`).
    fn wraps_event_stream(&self) -> bool {
        self.wrapped().0.wraps_event_stream()
    }

    /// See [`Capability::hooks_stage`]: `true` by default, since the wrapper may override any
    /// hook (return `self.wrapped().hooks_stage(stage)` for the stages it leaves alone).
    fn hooks_stage(&self, stage: HookStage) -> bool {
        let _ = stage;
        true
    }

    for_each_hook!('_, wrapper_hooks, defaults);
}

/// A [`WrapperCapability`] as a [`Capability`]: what
/// [`WrapperCapability::into_capability`] returns. Its hooks are the wrapper's.
#[derive(Clone, Debug)]
pub struct Wrapper<W>(pub W);

impl<D: Send + Sync + 'static, W: WrapperCapability<D>> Capability<D> for Wrapper<W> {
    fn name(&self) -> String {
        WrapperCapability::name(&self.0)
    }
    fn ordering(&self) -> Option<CapabilityOrdering> {
        WrapperCapability::ordering(&self.0)
    }
    fn apply(&self, visitor: &mut dyn FnMut(&dyn Any)) {
        visitor(&self.0);
        self.0.wrapped().0.apply(visitor);
    }
    fn for_run(&self, ctx: &RunContext<D>) -> Option<BoxedCapability<D>> {
        let fresh = self.0.wrapped().0.for_run(ctx)?;
        let mut wrapper = self.0.clone();
        *wrapper.wrapped_mut() = fresh;
        Some(BoxedCapability::new(Wrapper(wrapper)))
    }
    fn toolset(&self) -> Option<BoxedToolset<D>> {
        WrapperCapability::toolset(&self.0)
    }
    fn has_prepare_tools(&self) -> bool {
        WrapperCapability::has_prepare_tools(&self.0)
    }
    fn wraps_event_stream(&self) -> bool {
        WrapperCapability::wraps_event_stream(&self.0)
    }
    fn hooks_stage(&self, stage: HookStage) -> bool {
        WrapperCapability::hooks_stage(&self.0, stage)
    }
    for_each_hook!('_, wrapper_hooks, forward);
}

/// The hook methods of [`WrapperCapability`] (`defaults`: each passes the call on to the
/// wrapped capability) and of [`Wrapper`]'s `Capability` impl (`forward`: each calls the
/// wrapper's).
macro_rules! wrapper_hooks {
    (sync [defaults] $(fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty;)*) => {
        $(#[doc = concat!("See [`Capability::", stringify!($name), "`]: the wrapped capability's by default.")]
        fn $name(&self $(, $arg: $ty)*) -> $ret {
            self.wrapped().0.$name($($arg),*)
        })*
    };
    (async [defaults] $(fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty;)*) => {
        $(#[doc = concat!("See [`Capability::", stringify!($name), "`]: the wrapped capability's by default.")]
        fn $name(&self $(, $arg: $ty)*) -> impl Future<Output = $ret> + Send {
            async move { self.wrapped().0.$name($($arg),*).await }
        })*
    };
    (wrap [defaults] $(fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty;)*) => {
        $(#[doc = concat!("See [`Capability::", stringify!($name), "`]: the wrapped capability's by default.")]
        fn $name<'a>(&'a self $(, $arg: $ty)*) -> impl Future<Output = $ret> + Send + 'a {
            self.wrapped().0.$name($($arg),*)
        })*
    };
    (sync [forward] $(fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty;)*) => {
        $(fn $name(&self $(, $arg: $ty)*) -> $ret {
            WrapperCapability::$name(&self.0 $(, $arg)*)
        })*
    };
    (async [forward] $(fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty;)*) => {
        $(fn $name(&self $(, $arg: $ty)*) -> impl Future<Output = $ret> + Send {
            WrapperCapability::$name(&self.0 $(, $arg)*)
        })*
    };
    (wrap [forward] $(fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty;)*) => {
        $(fn $name<'a>(&'a self $(, $arg: $ty)*) -> impl Future<Output = $ret> + Send + 'a {
            WrapperCapability::$name(&self.0 $(, $arg)*)
        })*
    };
}
use wrapper_hooks;
