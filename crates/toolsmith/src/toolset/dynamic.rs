//! [`DynamicToolset`]: a toolset built anew for every model request.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

use crate::context::RunContext;
use crate::error::UserError;
use crate::tool::Tool;
use crate::toolset::{DynToolset, FunctionToolset, Toolset, ToolsetTool};

type SyncFactory<D> = Arc<dyn Fn(&RunContext<D>) -> Option<Box<dyn DynToolset<D>>> + Send + Sync>;
type AsyncFactory<D> = Arc<dyn Fn(RunContext<D>) -> BoxFuture<'static, Option<Box<dyn DynToolset<D>>>> + Send + Sync>;

enum Factory<D> {
    Sync(SyncFactory<D>),
    Async(AsyncFactory<D>),
}

/// A toolset made by a function of the run context, called before every model request (each
/// run step), as Pydantic AI's `DynamicToolset` with `per_run_step=True`.
///
/// The function returns a toolset (any [`Toolset`], wrappers included) or `None` for no tools in
/// this step; the toolset's configuration problems ([`Toolset::check`]) are reported as a
/// [`UserError`] when it is made, since the agent builder cannot see it. The tools keep the label
/// of the toolset that made them; this toolset's label is `DynamicToolset`.
///
/// ```
/// use toolsmith::prelude::*;
/// use toolsmith::toolset::DynamicToolset;
///
/// /// Add two integers.
/// #[tool]
/// fn add(x: i64, y: i64) -> i64 { x + y }
///
/// /// Multiply two integers.
/// #[tool]
/// fn mul(x: i64, y: i64) -> i64 { x * y }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // Advanced users get multiplication too.
/// let toolset = DynamicToolset::from_tools(|ctx: &RunContext<bool>| {
///     let mut tools: Vec<Tool<bool>> = vec![add.into()];
///     if ctx.deps {
///         tools.push(mul.into());
///     }
///     tools
/// });
/// let agent = Agent::builder(TestModel::default()).deps::<bool>().toolset(toolset).build()?;
/// assert_eq!(agent.run("go").deps(false).run_sync()?.output(), r#"{"add":0}"#);
/// assert_eq!(agent.run("go").deps(true).run_sync()?.output(), r#"{"add":0,"mul":0}"#);
/// # Ok(())
/// # }
/// ```
pub struct DynamicToolset<D> {
    factory: Factory<D>,
}

impl<D> std::fmt::Debug for DynamicToolset<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicToolset").finish_non_exhaustive()
    }
}

impl<D: Clone + Send + Sync + 'static> DynamicToolset<D> {
    /// A toolset made by a synchronous function of the run context.
    pub fn new<F, T>(f: F) -> Self
    where
        F: Fn(&RunContext<D>) -> Option<T> + Send + Sync + 'static,
        T: Toolset<D>,
    {
        DynamicToolset {
            factory: Factory::Sync(Arc::new(move |ctx: &RunContext<D>| {
                f(ctx).map(|t| Box::new(t) as Box<dyn DynToolset<D>>)
            })),
        }
    }

    /// A toolset made by an asynchronous function of the run context (it receives its own copy
    /// of the context).
    pub fn new_async<F, Fut, T>(f: F) -> Self
    where
        F: Fn(RunContext<D>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<T>> + Send + 'static,
        T: Toolset<D>,
    {
        DynamicToolset {
            factory: Factory::Async(Arc::new(move |ctx| {
                let fut = f(ctx);
                Box::pin(async move { fut.await.map(|t| Box::new(t) as Box<dyn DynToolset<D>>) })
            })),
        }
    }

    /// A [`FunctionToolset`] of the tools a function of the run context returns.
    pub fn from_tools<F>(f: F) -> Self
    where
        F: Fn(&RunContext<D>) -> Vec<Tool<D>> + Send + Sync + 'static,
    {
        Self::new(move |ctx| Some(FunctionToolset::new().with_tools(f(ctx))))
    }
}

impl<D: Clone + Send + Sync + 'static> Toolset<D> for DynamicToolset<D> {
    fn label(&self) -> String {
        "DynamicToolset".to_string()
    }

    async fn get_tools(&self, ctx: &RunContext<D>) -> Result<Vec<ToolsetTool<D>>, UserError> {
        let toolset = match &self.factory {
            Factory::Sync(f) => f(ctx),
            Factory::Async(f) => f(ctx.clone()).await,
        };
        match toolset {
            None => Ok(Vec::new()),
            Some(toolset) => {
                toolset.check()?;
                toolset.get_tools_boxed(ctx).await
            }
        }
    }
}
