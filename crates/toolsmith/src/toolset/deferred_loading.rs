//! [`DeferredLoadingToolset`]: tools hidden until found through tool search.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::context::RunContext;
use crate::error::UserError;
use crate::toolset::{ToolSelector, Toolset, ToolsetTool};

/// A toolset that sets [`defer_loading`](crate::ToolDefinition::defer_loading) on every tool, or
/// on the selected ones: the model does not see them until it finds them through tool search.
/// The label is `DeferredLoadingToolset(<wrapped label>)`.
///
/// ```
/// use toolsmith::prelude::*;
/// use toolsmith::toolset::ToolsetExt;
///
/// /// Add two integers.
/// #[tool]
/// fn add(x: i64, y: i64) -> i64 { x + y }
///
/// /// Subtract two integers.
/// #[tool]
/// fn sub(x: i64, y: i64) -> i64 { x - y }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let toolset = FunctionToolset::new().with_tools([add, sub]).defer_loading_for(["sub"]);
/// let tools = futures::executor::block_on(toolset.get_tools(&RunContext::detached()))?;
/// let flags: Vec<(&str, bool)> = tools.iter().map(|t| (t.def.name.as_str(), t.def.defer_loading)).collect();
/// assert_eq!(flags, [("add", false), ("sub", true)]);
/// # Ok(())
/// # }
/// ```
pub struct DeferredLoadingToolset<D, T> {
    inner: T,
    tools: ToolSelector<D>,
    derived: super::derived::Derived,
    /// Set by [`connect_on_search`](Self::connect_on_search).
    lazy: Option<Lazy>,
}

/// What a toolset that waits for the first search knows.
#[derive(Default)]
struct Lazy {
    /// Whether the wrapped toolset is listed (it is, from the first search on).
    listed: Arc<AtomicBool>,
    /// The runs that entered it, each when it first listed it: they exit it when they end.
    runs: Mutex<std::collections::HashSet<Arc<str>>>,
}

impl<D, T> DeferredLoadingToolset<D, T> {
    /// Wraps `inner`, deferring the loading of every tool.
    pub fn new(inner: T) -> Self {
        DeferredLoadingToolset { inner, tools: ToolSelector::All, derived: Default::default(), lazy: None }
    }

    /// Defers only the selected tools (names, or a predicate over the definition).
    pub fn for_tools(mut self, tools: impl Into<ToolSelector<D>>) -> Self {
        self.tools = tools.into();
        self
    }

    /// Leaves the wrapped toolset alone until the model first searches: a run neither enters it
    /// (an MCP server is not started or connected) nor lists its tools before the model's first
    /// `search_tools` call, which lists them and searches them with the others. A server that
    /// is never needed is never started, and one that is down fails only the search that needs
    /// it (or nothing, under [`optional`](crate::toolset::ToolsetExt::optional)).
    ///
    /// A run that lists it enters it then (an MCP toolset's session opens) and exits it when the
    /// run ends, as runs do with other toolsets; later runs list it from their first step.
    /// Every tool must be deferred (not with
    /// [`for_tools`](Self::for_tools): a [`UserError`] at `build()`). Where the step's search is
    /// not the library's own (a provider's native tool search, bridge mode) the toolset is listed
    /// at the first step, as without this setting.
    ///
    /// ```
    /// use toolsmith::prelude::*;
    /// use toolsmith::toolset::ToolsetExt;
    ///
    /// /// Add two integers.
    /// #[tool]
    /// fn add(x: i64, y: i64) -> i64 { x + y }
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// // Stands for an MCP toolset: `McpToolset::stdio(...).defer_loading().connect_on_search()`.
    /// let lazy = FunctionToolset::new().with_tool(add).defer_loading().connect_on_search();
    /// let model = FunctionModel::sync(|_messages, info| {
    ///     // Before any search: only `search_tools`.
    ///     let names: Vec<&str> = info.function_tools.iter().map(|d| d.name.as_str()).collect();
    ///     assert_eq!(names, ["search_tools"]);
    ///     ModelResponse::text("no search needed")
    /// });
    /// let agent = Agent::builder(model).toolset(lazy).build()?;
    /// assert_eq!(agent.run("hi").run_sync()?.output(), "no search needed");
    /// # Ok(())
    /// # }
    /// ```
    pub fn connect_on_search(mut self) -> Self {
        self.lazy = Some(Lazy::default());
        self
    }

    /// The wrapped toolset.
    pub fn inner(&self) -> &T {
        &self.inner
    }
}

impl<D, T: std::fmt::Debug> std::fmt::Debug for DeferredLoadingToolset<D, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeferredLoadingToolset").field("inner", &self.inner).field("tools", &self.tools).finish()
    }
}

impl<D: Clone + Send + Sync + 'static, T: Toolset<D>> Toolset<D> for DeferredLoadingToolset<D, T> {
    fn label(&self) -> String {
        format!("DeferredLoadingToolset({})", self.inner.label())
    }

    fn check(&self) -> Result<(), UserError> {
        if self.lazy.is_some() && !matches!(self.tools, ToolSelector::All) {
            return Err(UserError::new(format!(
                "{}: connect_on_search needs every tool of the toolset deferred (the others would be listed before any search): drop `for_tools`, or `connect_on_search`",
                self.label()
            )));
        }
        self.inner.check()
    }

    async fn enter(&self) -> Result<(), UserError> {
        if self.lazy.is_some() {
            return Ok(());
        }
        self.inner.enter().await
    }

    async fn exit(&self) {
        let Some(lazy) = &self.lazy else { return self.inner.exit().await };
        let entered = EXITING_RUN
            .try_with(|run| lazy.runs.lock().unwrap_or_else(|p| p.into_inner()).remove(run))
            .unwrap_or(false);
        if entered {
            self.inner.exit().await
        }
    }

    async fn get_tools(&self, ctx: &RunContext<D>) -> Result<Vec<ToolsetTool<D>>, UserError> {
        if self.waits_for_search() {
            return Ok(Vec::new());
        }
        self.enter_lazily(ctx).await?;
        Ok(self.apply(ctx, self.inner.get_tools(ctx).await?))
    }

    /// The marked list is made once per list of the inner toolset (with a predicate selector,
    /// each step), so a large deferred catalogue costs nothing per step.
    async fn get_tools_shared(&self, ctx: &RunContext<D>) -> Result<Arc<[ToolsetTool<D>]>, UserError> {
        if self.waits_for_search() {
            return Ok(Arc::new([]));
        }
        self.enter_lazily(ctx).await?;
        let inner = self.inner.get_tools_shared(ctx).await?;
        if !self.tools.is_static() {
            return Ok(self.apply(ctx, inner.to_vec()).into());
        }
        self.derived.get(std::slice::from_ref(&inner), || Ok(self.apply(ctx, inner.to_vec())))
    }
}

impl<D, T> DeferredLoadingToolset<D, T> {
    /// Whether the toolset is not to be listed yet: it waits for the first search of a step
    /// that can search it (outside a step, it is listed).
    fn waits_for_search(&self) -> bool {
        match &self.lazy {
            Some(lazy) if !lazy.listed.load(Ordering::Acquire) => UNLISTED
                .try_with(|unlisted| unlisted.lock().unwrap_or_else(|p| p.into_inner()).push(lazy.listed.clone()))
                .is_ok(),
            _ => false,
        }
    }

    /// A run's first listing of a toolset that waited for the first search enters it (the
    /// run exits it at its end). Outside a run's step, nothing is entered.
    async fn enter_lazily(&self, ctx: &RunContext<D>) -> Result<(), UserError>
    where
        T: Toolset<D>,
        D: Clone + Send + Sync + 'static,
    {
        let Some(lazy) = &self.lazy else { return Ok(()) };
        if UNLISTED.try_with(|_| ()).is_err() {
            return Ok(());
        }
        let first = lazy.runs.lock().unwrap_or_else(|p| p.into_inner()).insert(ctx.run_id.clone());
        if first && let Err(e) = self.inner.enter().await {
            lazy.runs.lock().unwrap_or_else(|p| p.into_inner()).remove(&ctx.run_id);
            return Err(e);
        }
        Ok(())
    }
}

tokio::task_local! {
    /// The toolsets of the step being listed that wait for the first search.
    static UNLISTED: Mutex<Vec<Arc<AtomicBool>>>;
    /// The run whose toolsets are being exited.
    static EXITING_RUN: Arc<str>;
}

/// Exits a run's toolset (`exit`): a toolset that waited for the first search exits what the
/// run entered.
pub(crate) async fn exiting<F: std::future::Future>(run_id: Arc<str>, exit: F) -> F::Output {
    EXITING_RUN.scope(run_id, exit).await
}

/// Toolsets that wait for the first search ([`DeferredLoadingToolset::connect_on_search`]) and
/// did not list their tools for a step: what the step's search lists when the model searches.
#[derive(Clone, Default)]
pub(crate) struct Unlisted(Vec<Arc<AtomicBool>>);

impl Unlisted {
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// From now on these toolsets list their tools.
    pub(crate) fn list_from_now(&self) {
        for listed in &self.0 {
            listed.store(true, Ordering::Release);
        }
    }
}

/// Polls `listing` (a step's listing of its toolsets) and says which toolsets waited for the
/// first search.
pub(crate) async fn listing<F: std::future::Future>(listing: F) -> (F::Output, Unlisted) {
    UNLISTED
        .scope(Mutex::new(Vec::new()), async {
            let out = listing.await;
            let unlisted = UNLISTED.with(|u| std::mem::take(&mut *u.lock().unwrap_or_else(|p| p.into_inner())));
            (out, Unlisted(unlisted))
        })
        .await
}

impl<D: Clone + Send + Sync + 'static, T> DeferredLoadingToolset<D, T> {
    fn apply(&self, ctx: &RunContext<D>, mut tools: Vec<ToolsetTool<D>>) -> Vec<ToolsetTool<D>> {
        for tool in &mut tools {
            if !tool.def.defer_loading && self.tools.matches(ctx, &tool.def) {
                Arc::make_mut(&mut tool.def).defer_loading = true;
            }
        }
        tools
    }
}
