//! [`PreparedToolset`]: a `prepare_tools` function over a toolset's whole list of definitions.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

use crate::context::RunContext;
use crate::error::UserError;
use crate::tool::ToolDefinition;
use crate::toolset::{Toolset, ToolsetTool};

/// A synchronous `prepare_tools` function.
pub type ToolsPrepareFn<D> =
    Arc<dyn Fn(&RunContext<D>, Vec<ToolDefinition>) -> Option<Vec<ToolDefinition>> + Send + Sync>;

/// An asynchronous `prepare_tools` function.
pub type AsyncToolsPrepareFn<D> =
    Arc<dyn Fn(RunContext<D>, Vec<ToolDefinition>) -> BoxFuture<'static, Option<Vec<ToolDefinition>>> + Send + Sync>;

enum Prepare<D> {
    Sync(ToolsPrepareFn<D>),
    Async(AsyncToolsPrepareFn<D>),
}

/// A toolset whose definitions pass through a `prepare_tools` function before every model
/// request.
///
/// The function receives copies of the definitions (schemas are shared, not copied) and returns
/// the ones to show: it may edit them (descriptions, schemas, `strict`, metadata…), drop them or
/// reorder them, or return `None` to show no tool of this toolset for this step. It may not add
/// tools or rename them: a definition whose name the toolset does not define is a [`UserError`].
/// Each returned definition is matched back to its tool by name (a name returned twice keeps its
/// first position and its last definition). The label is `PreparedToolset(<wrapped label>)`.
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
/// // Strict schemas, and `sub` first.
/// let toolset = FunctionToolset::new().with_tools([add, sub]).prepared(|_ctx: &RunContext, mut defs: Vec<ToolDefinition>| {
///     for def in &mut defs {
///         def.strict = Some(true);
///     }
///     defs.reverse();
///     Some(defs)
/// });
/// let model = FunctionModel::sync(|_messages, info| {
///     let names: Vec<&str> = info.function_tools.iter().map(|d| d.name.as_str()).collect();
///     assert_eq!(names, ["sub", "add"]);
///     assert!(info.function_tools.iter().all(|d| d.strict == Some(true)));
///     ModelResponse::text("ok")
/// });
/// let agent = Agent::builder(model).toolset(toolset).build()?;
/// assert_eq!(agent.run("go").run_sync()?.output(), "ok");
/// # Ok(())
/// # }
/// ```
pub struct PreparedToolset<D, T> {
    inner: T,
    prepare: Prepare<D>,
}

impl<D, T> PreparedToolset<D, T> {
    /// Wraps `inner` with a synchronous `prepare_tools` function.
    pub fn new<F>(inner: T, prepare: F) -> Self
    where
        F: Fn(&RunContext<D>, Vec<ToolDefinition>) -> Option<Vec<ToolDefinition>> + Send + Sync + 'static,
    {
        PreparedToolset { inner, prepare: Prepare::Sync(Arc::new(prepare)) }
    }

    /// Wraps `inner` with an asynchronous `prepare_tools` function (it receives its own copy of
    /// the run context).
    pub fn new_async<F, Fut>(inner: T, prepare: F) -> Self
    where
        F: Fn(RunContext<D>, Vec<ToolDefinition>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<Vec<ToolDefinition>>> + Send + 'static,
    {
        PreparedToolset { inner, prepare: Prepare::Async(Arc::new(move |ctx, defs| Box::pin(prepare(ctx, defs)))) }
    }

    /// The wrapped toolset.
    pub fn inner(&self) -> &T {
        &self.inner
    }
}

impl<D, T: std::fmt::Debug> std::fmt::Debug for PreparedToolset<D, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedToolset").field("inner", &self.inner).finish_non_exhaustive()
    }
}

impl<D: Clone + Send + Sync + 'static, T: Toolset<D>> Toolset<D> for PreparedToolset<D, T> {
    fn label(&self) -> String {
        format!("PreparedToolset({})", self.inner.label())
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
        let tools = self.inner.get_tools(ctx).await?;
        let defs: Vec<ToolDefinition> = tools.iter().map(|t| (*t.def).clone()).collect();
        let prepared = match &self.prepare {
            Prepare::Sync(f) => f(ctx, defs),
            Prepare::Async(f) => f(ctx.clone(), defs).await,
        };
        match prepared {
            None => Ok(Vec::new()),
            Some(defs) => match_back(tools, defs),
        }
    }
}

/// Pairs each prepared definition with the tool of the same name, in the prepared order.
///
/// No map is built: the search starts after the previous match, so definitions returned in the
/// original order (the usual case: edits and removals) are matched in one pass.
pub(crate) fn match_back<D>(
    tools: Vec<ToolsetTool<D>>,
    defs: Vec<ToolDefinition>,
) -> Result<Vec<ToolsetTool<D>>, UserError> {
    // Reuses the list's allocation (`Option<ToolsetTool>` has the same layout).
    let mut slots: Vec<Option<ToolsetTool<D>>> = tools.into_iter().map(Some).collect();
    let mut out: Vec<ToolsetTool<D>> = Vec::with_capacity(defs.len());
    let mut cursor = 0;
    let n = slots.len();
    for def in defs {
        let found =
            (0..n).map(|k| (cursor + k) % n).find(|&i| slots[i].as_ref().is_some_and(|t| t.def.name == def.name));
        match found {
            Some(i) => {
                let mut tool = slots[i].take().expect("slot checked above");
                tool.def = Arc::new(def);
                out.push(tool);
                cursor = (i + 1) % n;
            }
            None => match out.iter_mut().find(|t| t.def.name == def.name) {
                Some(tool) => tool.def = Arc::new(def),
                None => {
                    return Err(UserError::new(format!(
                        "Prepare function cannot add or rename tools: it returned a definition for '{}', which the toolset does not define. Use `FunctionToolset::add` to add a tool or `RenamedToolset` to rename one.",
                        def.name
                    )));
                }
            },
        }
    }
    Ok(out)
}
