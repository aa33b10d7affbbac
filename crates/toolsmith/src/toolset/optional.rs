//! [`OptionalToolset`]: a toolset the run goes on without when it is unavailable.

use std::marker::PhantomData;

use crate::context::RunContext;
use crate::error::UserError;
use crate::toolset::{Toolset, ToolsetTool};

/// A toolset whose unavailability does not end the run: when it cannot start or list its tools
/// (an MCP server that will not start, answer or stay connected:
/// [`AgentRunError::ToolsetUnavailable`](crate::AgentRunError::ToolsetUnavailable) otherwise),
/// the run goes on without its tools, and the failure is logged (`tracing` warning) with the
/// reason. It is tried again at the next run, and at each step of this one. Configuration
/// mistakes still end the run.
///
/// ```
/// use toolsmith::prelude::*;
/// use toolsmith::toolset::{Toolset, ToolsetExt, ToolsetTool};
/// use toolsmith::ToolsetUnavailable;
///
/// /// A toolset whose server is down.
/// struct Down;
///
/// impl Toolset<()> for Down {
///     fn label(&self) -> String {
///         "crm".into()
///     }
///     async fn get_tools(&self, _ctx: &RunContext<()>) -> Result<Vec<ToolsetTool<()>>, UserError> {
///         Err(ToolsetUnavailable::new("crm", "could not connect: connection refused").into())
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = Agent::builder(TestModel::default()).toolset(Down).build()?;
/// match agent.run("hi").await.unwrap_err() {
///     AgentRunError::ToolsetUnavailable(e) => assert_eq!(e.toolset, "crm"),
///     other => panic!("{other}"),
/// }
/// // Optional: the run answers without its tools.
/// let agent = Agent::builder(TestModel::default()).toolset(Down.optional()).build()?;
/// assert_eq!(agent.run("hi").await?.output(), "success (no tool calls)");
/// # Ok(())
/// # }
/// ```
pub struct OptionalToolset<D, T> {
    inner: T,
    _deps: PhantomData<fn(D)>,
}

impl<D, T> OptionalToolset<D, T> {
    /// Wraps `inner`.
    pub fn new(inner: T) -> Self {
        OptionalToolset { inner, _deps: PhantomData }
    }

    /// The wrapped toolset.
    pub fn inner(&self) -> &T {
        &self.inner
    }
}

impl<D, T: std::fmt::Debug> std::fmt::Debug for OptionalToolset<D, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OptionalToolset").field("inner", &self.inner).finish()
    }
}

/// `Ok` for an unavailable toolset (logged), the error itself otherwise.
fn tolerated<T>(label: &str, result: Result<T, UserError>, absent: T) -> Result<T, UserError> {
    match result {
        Err(e) if e.unavailable.is_some() => {
            tracing::warn!(toolset = label, reason = %e, "an optional toolset is unavailable: the run goes on without its tools");
            Ok(absent)
        }
        other => other,
    }
}

impl<D: Clone + Send + Sync + 'static, T: Toolset<D>> Toolset<D> for OptionalToolset<D, T> {
    fn label(&self) -> String {
        self.inner.label()
    }

    fn check(&self) -> Result<(), UserError> {
        self.inner.check()
    }

    async fn enter(&self) -> Result<(), UserError> {
        tolerated(&self.inner.label(), self.inner.enter().await, ())
    }

    async fn exit(&self) {
        self.inner.exit().await
    }

    async fn get_tools(&self, ctx: &RunContext<D>) -> Result<Vec<ToolsetTool<D>>, UserError> {
        tolerated(&self.inner.label(), self.inner.get_tools(ctx).await, Vec::new())
    }
}
