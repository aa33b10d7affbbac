//! Toolsets: groups of tools that are collected together before each model request.
//!
//! A toolset answers [`Toolset::get_tools`] with the tools it offers for this step, each a
//! [`ToolsetTool`]: the definition after `prepare`, its options, and how to call it. Because
//! every tool carries its own handler, wrappers (prefixing, filtering, approval) only transform
//! the list.

mod approval_required;
mod boxed;
mod combined;
mod deferred_loading;
mod derived;
mod dynamic;
mod ext;
mod external;
mod filtered;
mod function;
#[cfg(feature = "mcp")]
mod mcp;
mod optional;
mod prefixed;
mod prepared;
mod renamed;
mod selector;
mod set_metadata;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;

pub use approval_required::{ApprovalRequiredFn, ApprovalRequiredToolset};
pub use boxed::BoxedToolset;
pub use combined::CombinedToolset;
pub use deferred_loading::DeferredLoadingToolset;
pub(crate) use deferred_loading::{Unlisted, exiting, listing};
pub use dynamic::DynamicToolset;
pub use ext::ToolsetExt;
pub use external::ExternalToolset;
pub use filtered::{FilterFn, FilteredToolset};
pub use function::FunctionToolset;
#[cfg(feature = "mcp")]
pub use mcp::{
    AuthorizationRequest, AuthorizationResponse, Authorizer, DEFAULT_CONNECT_TIMEOUT, DEFAULT_REQUEST_TIMEOUT,
    Elicitation, ElicitationMode, ElicitationResponse, FileTokenStore, InMemoryTokenStore, LoopbackAuthorizer, McpAuth,
    McpAuthError, McpCallResult, McpError, McpLogLevel, McpNotification, McpPrompt, McpPromptArgument,
    McpPromptMessage, McpResource, McpResourceContents, McpResourceTemplate, McpRoot, McpServerInfo, McpToolset,
    SamplingHandler, SessionMode, StoredAuth, TokenEndpointAuthMethod, TokenStore,
};
pub use optional::OptionalToolset;
pub use prefixed::PrefixedToolset;
pub use prepared::{AsyncToolsPrepareFn, PreparedToolset, ToolsPrepareFn};
pub use renamed::RenamedToolset;
pub use selector::{ToolPredicate, ToolSelector};
pub use set_metadata::SetMetadataToolset;

use crate::context::RunContext;
use crate::error::UserError;
use crate::tool::{ArgsValidatorFn, Handler, ToolDefinition};
use crate::validation::Validator;

/// A tool as offered by a toolset for one step.
#[non_exhaustive]
pub struct ToolsetTool<D> {
    /// The definition shown to the model (after `prepare`).
    pub def: Arc<ToolDefinition>,
    /// The retry budget, when the tool or its toolset sets one (else the agent's applies).
    pub max_retries: Option<u32>,
    /// Whether calls need approval.
    pub requires_approval: bool,
    /// A toolset-wide timeout in seconds, used when the tool sets none.
    pub toolset_timeout: Option<Duration>,
    /// The name of the toolset that offers the tool, for error messages.
    pub toolset_label: Arc<str>,
    pub(crate) validator: Option<Validator>,
    pub(crate) args_validator: Option<ArgsValidatorFn<D>>,
    pub(crate) handler: Handler<D>,
}

impl<D> ToolsetTool<D> {
    /// A tool with a definition, a handler and a validator (`None`: arguments are only parsed).
    pub fn new(
        def: ToolDefinition,
        handler: crate::tool::OwnedHandler<D>,
        validator: Option<Validator>,
        toolset_label: Arc<str>,
    ) -> Self
    where
        D: 'static,
    {
        ToolsetTool::with_handler(def, crate::tool::owned_handler(handler), validator, toolset_label)
    }

    /// [`ToolsetTool::new`] with a handler that can borrow its arguments.
    pub(crate) fn with_handler(
        def: ToolDefinition,
        handler: Handler<D>,
        validator: Option<Validator>,
        toolset_label: Arc<str>,
    ) -> Self {
        ToolsetTool {
            def: Arc::new(def),
            max_retries: None,
            requires_approval: false,
            toolset_timeout: None,
            toolset_label,
            validator,
            args_validator: None,
            handler,
        }
    }
}

impl<D> Clone for ToolsetTool<D> {
    fn clone(&self) -> Self {
        ToolsetTool {
            def: self.def.clone(),
            max_retries: self.max_retries,
            requires_approval: self.requires_approval,
            toolset_timeout: self.toolset_timeout,
            toolset_label: self.toolset_label.clone(),
            validator: self.validator.clone(),
            args_validator: self.args_validator.clone(),
            handler: self.handler.clone(),
        }
    }
}

impl<D> std::fmt::Debug for ToolsetTool<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolsetTool")
            .field("def", &self.def)
            .field("max_retries", &self.max_retries)
            .finish_non_exhaustive()
    }
}

/// A group of tools: the agent asks it for its tools before each model request, so a toolset
/// can show different tools from step to step (by the run's dependencies, its history...).
///
/// [`FunctionToolset`] holds Rust functions, [`McpToolset`] an MCP
/// server's tools; [`ToolsetExt`] filters, renames, prefixes and wraps any toolset. Implement
/// the trait for tools of your own:
///
/// ```
/// use toolsmith::prelude::*;
/// use toolsmith::toolset::ToolsetTool;
///
/// /// Deletes a user.
/// #[tool]
/// fn delete_user(id: u64) -> String {
///     format!("deleted {id}")
/// }
///
/// /// Tools shown only when the run's dependencies say the user is an admin.
/// struct AdminTools(FunctionToolset<bool>);
///
/// impl Toolset<bool> for AdminTools {
///     fn label(&self) -> String {
///         "AdminTools".into()
///     }
///
///     async fn get_tools(&self, ctx: &RunContext<bool>) -> Result<Vec<ToolsetTool<bool>>, UserError> {
///         if ctx.deps { self.0.get_tools(ctx).await } else { Ok(Vec::new()) }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let admin = AdminTools(FunctionToolset::new().with_tools([delete_user]));
/// let agent = Agent::builder(TestModel::default()).deps::<bool>().toolset(admin).build()?;
/// assert_eq!(agent.run("clean up").deps(true).await?.usage().tool_calls, 1);
/// assert_eq!(agent.run("clean up").deps(false).await?.usage().tool_calls, 0);
/// # Ok(())
/// # }
/// ```
pub trait Toolset<D>: Send + Sync + 'static {
    /// A short name used in error messages (e.g. `FunctionToolset`).
    fn label(&self) -> String;

    /// The tools offered for this step.
    fn get_tools(&self, ctx: &RunContext<D>) -> impl Future<Output = Result<Vec<ToolsetTool<D>>, UserError>> + Send;

    /// Configuration problems, reported by the agent builder.
    fn check(&self) -> Result<(), UserError> {
        Ok(())
    }

    /// The tools offered for this step as a shared list.
    ///
    /// The agent calls this rather than [`get_tools`](Self::get_tools). A toolset whose tools
    /// do not change from step to step can return the same list (the same `Arc`) every time:
    /// the agent then recognises it by identity and skips the per-step work that grows with
    /// the number of tools, which matters with thousands of deferred tools.
    /// [`FunctionToolset`] does so when none of its tools has a `prepare` function. The
    /// default wraps [`get_tools`](Self::get_tools) in a new list.
    fn get_tools_shared(
        &self,
        ctx: &RunContext<D>,
    ) -> impl Future<Output = Result<Arc<[ToolsetTool<D>]>, UserError>> + Send {
        self.get_tools(ctx).map(|tools| tools.map(Arc::from))
    }

    /// Called when a run starts, before the first `get_tools` (open connections here).
    fn enter(&self) -> impl Future<Output = Result<(), UserError>> + Send {
        async { Ok(()) }
    }

    /// Called when a run ends, successfully or not (close connections here).
    fn exit(&self) -> impl Future<Output = ()> + Send {
        async {}
    }
}

/// The dyn-compatible form of [`Toolset`].
pub(crate) trait DynToolset<D>: Send + Sync {
    fn label(&self) -> String;
    fn check(&self) -> Result<(), UserError>;
    fn enter_boxed<'a>(&'a self) -> BoxFuture<'a, Result<(), UserError>>
    where
        D: 'a;
    fn exit_boxed<'a>(&'a self) -> BoxFuture<'a, ()>
    where
        D: 'a;
    fn get_tools_boxed<'a>(&'a self, ctx: &'a RunContext<D>) -> BoxFuture<'a, Result<Vec<ToolsetTool<D>>, UserError>>;
    fn get_tools_shared_boxed<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
    ) -> BoxFuture<'a, Result<Arc<[ToolsetTool<D>]>, UserError>>;
}

impl<D, T: Toolset<D>> DynToolset<D> for T {
    fn label(&self) -> String {
        Toolset::label(self)
    }
    fn check(&self) -> Result<(), UserError> {
        Toolset::check(self)
    }
    fn enter_boxed<'a>(&'a self) -> BoxFuture<'a, Result<(), UserError>>
    where
        D: 'a,
    {
        Box::pin(Toolset::enter(self))
    }
    fn exit_boxed<'a>(&'a self) -> BoxFuture<'a, ()>
    where
        D: 'a,
    {
        Box::pin(Toolset::exit(self))
    }
    fn get_tools_boxed<'a>(&'a self, ctx: &'a RunContext<D>) -> BoxFuture<'a, Result<Vec<ToolsetTool<D>>, UserError>> {
        Box::pin(self.get_tools(ctx))
    }
    fn get_tools_shared_boxed<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
    ) -> BoxFuture<'a, Result<Arc<[ToolsetTool<D>]>, UserError>> {
        Box::pin(self.get_tools_shared(ctx))
    }
}
