//! [`ApprovalRequiredToolset`]: calls that need a human's approval.

use std::sync::Arc;

use serde_json::Value;

use crate::context::RunContext;
use crate::error::UserError;
use crate::tool::{ApprovalRequired, Handler, Invocation, ToolDefinition, ToolError};
use crate::toolset::{ToolSelector, Toolset, ToolsetTool};

/// Decides, from a call's arguments, whether that call needs approval.
pub type ApprovalRequiredFn<D> = Arc<dyn Fn(&RunContext<D>, &ToolDefinition, &Value) -> bool + Send + Sync>;

/// A toolset whose calls (of every tool, of the selected tools, or those a predicate over the
/// arguments picks) need a human's approval, as Pydantic AI's `ApprovalRequiredToolset`.
///
/// The call is validated and executed as usual; the tool's handler is wrapped so that, unless
/// the call was approved (`ctx.tool_call_approved`), it answers
/// [`ToolError::ApprovalRequired`] instead of running the tool. The run then ends with the call
/// in [`DeferredToolRequests::approvals`](crate::deferred::DeferredToolRequests::approvals)
/// (the agent needs [`allow_deferred`](crate::AgentBuilder::allow_deferred)); resuming it with
/// an approval runs the tool. This differs from [`Tool::requires_approval`](crate::Tool::requires_approval),
/// which defers the call without executing anything.
///
/// Tool selectors are evaluated before each model request, on the definitions this wrapper
/// receives (unprefixed if a prefix is applied on top). The label is
/// `ApprovalRequiredToolset(<wrapped label>)`.
///
/// ```
/// use toolsmith::prelude::*;
/// use toolsmith::agent::Deferrable;
/// use toolsmith::toolset::ToolsetExt;
///
/// /// Delete a file.
/// #[tool]
/// fn delete_file(path: String) -> String { format!("deleted {path}") }
///
/// /// Read a file.
/// #[tool]
/// fn read_file(path: String) -> String { format!("contents of {path}") }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let toolset = FunctionToolset::new().with_tools([delete_file, read_file]).approval_required_for(["delete_file"]);
/// let agent = Agent::builder(TestModel::default()).toolset(toolset).allow_deferred().build()?;
/// let result = agent.run("go").run_sync()?;
/// let Deferrable::Deferred(requests) = result.output() else { panic!("expected deferred requests") };
/// assert_eq!(requests.approvals.len(), 1);
/// assert_eq!(requests.approvals[0].tool_name, "delete_file");
/// # Ok(())
/// # }
/// ```
pub struct ApprovalRequiredToolset<D, T> {
    inner: T,
    tools: ToolSelector<D>,
    when: Option<ApprovalRequiredFn<D>>,
    derived: super::derived::Derived,
}

impl<D, T> ApprovalRequiredToolset<D, T> {
    /// Wraps `inner`: every call of every tool needs approval.
    pub fn new(inner: T) -> Self {
        ApprovalRequiredToolset { inner, tools: ToolSelector::All, when: None, derived: Default::default() }
    }

    /// Limits the wrapper to the selected tools (names, or a predicate over the definition).
    pub fn for_tools(mut self, tools: impl Into<ToolSelector<D>>) -> Self {
        self.tools = tools.into();
        self
    }

    /// Asks for approval only for the calls for which `f(ctx, definition, arguments)` holds (the
    /// arguments are the validated ones).
    pub fn when<F>(mut self, f: F) -> Self
    where
        F: Fn(&RunContext<D>, &ToolDefinition, &Value) -> bool + Send + Sync + 'static,
    {
        self.when = Some(Arc::new(f));
        self
    }

    /// The wrapped toolset.
    pub fn inner(&self) -> &T {
        &self.inner
    }
}

impl<D, T: std::fmt::Debug> std::fmt::Debug for ApprovalRequiredToolset<D, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalRequiredToolset")
            .field("inner", &self.inner)
            .field("tools", &self.tools)
            .field("when", &self.when.as_ref().map(|_| ".."))
            .finish()
    }
}

fn approval_required() -> Invocation {
    Invocation::Ready(Err(ToolError::ApprovalRequired(ApprovalRequired::default())))
}

impl<D: Clone + Send + Sync + 'static, T: Toolset<D>> Toolset<D> for ApprovalRequiredToolset<D, T> {
    fn label(&self) -> String {
        format!("ApprovalRequiredToolset({})", self.inner.label())
    }

    fn check(&self) -> Result<(), UserError> {
        self.inner.check()
    }

    async fn enter(&self) -> Result<(), UserError> {
        self.inner.enter().await
    }

    async fn exit(&self) {
        self.inner.exit().await
    }

    async fn get_tools(&self, ctx: &RunContext<D>) -> Result<Vec<ToolsetTool<D>>, UserError> {
        Ok(self.apply(ctx, self.inner.get_tools(ctx).await?))
    }

    async fn get_tools_shared(&self, ctx: &RunContext<D>) -> Result<Arc<[ToolsetTool<D>]>, UserError> {
        let inner = self.inner.get_tools_shared(ctx).await?;
        if !self.tools.is_static() {
            return Ok(self.apply(ctx, inner.to_vec()).into());
        }
        self.derived.get(std::slice::from_ref(&inner), || Ok(self.apply(ctx, inner.to_vec())))
    }
}

impl<D: Clone + Send + Sync + 'static, T> ApprovalRequiredToolset<D, T> {
    fn apply(&self, ctx: &RunContext<D>, mut tools: Vec<ToolsetTool<D>>) -> Vec<ToolsetTool<D>> {
        for tool in &mut tools {
            if !self.tools.matches(ctx, &tool.def) {
                continue;
            }
            let inner = tool.handler.clone();
            let handler: Handler<D> = match &self.when {
                None => {
                    Handler::contextual(move |ctx: RunContext<D>, args: std::borrow::Cow<'_, serde_json::Value>| {
                        if ctx.tool_call_approved { inner.call(|| ctx, args) } else { approval_required() }
                    })
                }
                Some(when) => {
                    let when = when.clone();
                    let def = tool.def.clone();
                    Handler::contextual(move |ctx: RunContext<D>, args: std::borrow::Cow<'_, serde_json::Value>| {
                        if !ctx.tool_call_approved && when(&ctx, &def, &args) {
                            approval_required()
                        } else {
                            inner.call(|| ctx, args)
                        }
                    })
                }
            };
            tool.handler = handler;
        }
        tools
    }
}
