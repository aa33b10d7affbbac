//! Custom search strategies: a function of yours ranks the deferred catalogue.
//!
//! The function receives the model's queries (as sent, blank ones included) and the deferred
//! tools' definitions in catalogue order, and returns tool names, best first. Names that are not
//! in the catalogue are dropped, repeats are dropped, and the list is cut to `max_results`; an
//! empty list is answered with the usual no-match message. A search whose queries are all blank
//! is answered with the usual retry without calling the function.
//!
//! ```
//! use toolsmith::search::{CustomSearch, SearchStrategy, ToolSearch};
//!
//! // Tools whose description contains one of the queries, as in Pydantic AI's example.
//! let strategy = SearchStrategy::Custom(CustomSearch::new(|queries, tools| {
//!     tools
//!         .iter()
//!         .filter(|t| {
//!             let d = t.description.as_deref().unwrap_or("").to_lowercase();
//!             queries.iter().any(|q| d.contains(&q.to_lowercase()))
//!         })
//!         .map(|t| t.name.clone())
//!         .collect()
//! }));
//! let config = ToolSearch::new().strategy(strategy);
//! # let _ = config;
//!
//! // An async one, e.g. a call to an embedding service.
//! let remote = CustomSearch::new_async(|queries, tools| async move {
//!     let _ = queries;
//!     tools.iter().take(3).map(|t| t.name.clone()).collect::<Vec<_>>()
//! });
//! # let _ = remote;
//! ```

use std::any::{Any, TypeId};
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

use crate::context::RunContext;
use crate::tool::ToolDefinition;

type SyncSearch = dyn Fn(&[String], &[ToolDefinition]) -> Vec<String> + Send + Sync;
type AsyncSearch = dyn Fn(Vec<String>, Arc<[ToolDefinition]>) -> BoxFuture<'static, Vec<String>> + Send + Sync;
/// A function of the run context (a `RunContext<D>` behind `Any`; `None` for another `D`).
type SyncCtxSearch = dyn Fn(&dyn Any, &[String], &[ToolDefinition]) -> Option<Vec<String>> + Send + Sync;
type AsyncCtxSearch = dyn Fn(Box<dyn Any + Send>, Vec<String>, Arc<[ToolDefinition]>) -> Option<BoxFuture<'static, Vec<String>>>
    + Send
    + Sync;

#[derive(Clone)]
pub(crate) enum SearchFn {
    Sync(Arc<SyncSearch>),
    Async(Arc<AsyncSearch>),
    SyncCtx(Arc<SyncCtxSearch>),
    AsyncCtx(Arc<AsyncCtxSearch>),
}

/// A search function of yours, sync or async: see the [module docs](self).
///
/// Two `CustomSearch` values are equal when they are clones of the same function.
#[derive(Clone)]
pub struct CustomSearch {
    pub(crate) f: SearchFn,
    label: Arc<str>,
    /// For a function of the run context: the dependency type it takes, and its name.
    context: Option<(TypeId, &'static str)>,
}

impl CustomSearch {
    /// A synchronous search function. It runs on the agent's blocking pool, so it may take its
    /// time (load an index, run a local model).
    pub fn new<F>(f: F) -> Self
    where
        F: Fn(&[String], &[ToolDefinition]) -> Vec<String> + Send + Sync + 'static,
    {
        CustomSearch { f: SearchFn::Sync(Arc::new(f)), label: Arc::from("sync"), context: None }
    }

    /// A synchronous search function that also gets the run context (the run's dependencies,
    /// messages, usage...), as Pydantic AI's does. `D` must be the agent's dependency type:
    /// another one is a [`UserError`](crate::UserError) when the agent is built. It runs on the
    /// agent's blocking pool.
    ///
    /// ```
    /// use toolsmith::RunContext;
    /// use toolsmith::search::{CustomSearch, SearchStrategy, ToolSearch};
    ///
    /// #[derive(Clone)]
    /// struct Deps { allowed_prefix: String }
    ///
    /// // Only the tools this user may see.
    /// let search = CustomSearch::with_context(|ctx: &RunContext<Deps>, _queries, tools| {
    ///     tools.iter().filter(|t| t.name.starts_with(&ctx.deps.allowed_prefix)).map(|t| t.name.clone()).collect()
    /// });
    /// let config = ToolSearch::new().strategy(SearchStrategy::Custom(search));
    /// # let _ = config;
    /// ```
    pub fn with_context<D, F>(f: F) -> Self
    where
        D: Send + Sync + 'static,
        F: Fn(&RunContext<D>, &[String], &[ToolDefinition]) -> Vec<String> + Send + Sync + 'static,
    {
        let f: Arc<SyncCtxSearch> =
            Arc::new(move |ctx, queries, tools| ctx.downcast_ref::<RunContext<D>>().map(|ctx| f(ctx, queries, tools)));
        CustomSearch {
            f: SearchFn::SyncCtx(f),
            label: Arc::from("sync"),
            context: Some((TypeId::of::<D>(), std::any::type_name::<D>())),
        }
    }

    /// An async search function that also gets the run context (see
    /// [`with_context`](Self::with_context)); its future runs on the agent's runtime.
    pub fn with_context_async<D, F, Fut>(f: F) -> Self
    where
        D: Send + Sync + 'static,
        F: Fn(RunContext<D>, Vec<String>, Arc<[ToolDefinition]>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        let f: Arc<AsyncCtxSearch> = Arc::new(move |ctx, queries, tools| {
            let ctx = ctx.downcast::<RunContext<D>>().ok()?;
            Some(Box::pin(f(*ctx, queries, tools)) as BoxFuture<'static, Vec<String>>)
        });
        CustomSearch {
            f: SearchFn::AsyncCtx(f),
            label: Arc::from("async"),
            context: Some((TypeId::of::<D>(), std::any::type_name::<D>())),
        }
    }

    /// The dependency type a function of the run context takes, if it is one, by name.
    pub(crate) fn context_type(&self) -> Option<(TypeId, &'static str)> {
        self.context
    }

    /// An async search function; its future runs on the agent's runtime.
    pub fn new_async<F, Fut>(f: F) -> Self
    where
        F: Fn(Vec<String>, Arc<[ToolDefinition]>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        CustomSearch {
            f: SearchFn::Async(Arc::new(move |q, t| Box::pin(f(q, t)) as BoxFuture<'static, Vec<String>>)),
            label: Arc::from("async"),
            context: None,
        }
    }

    /// Names the function, for `Debug` output and the CLI.
    pub fn named(mut self, label: impl Into<String>) -> Self {
        self.label = Arc::from(label.into());
        self
    }

    /// The function's label: the name given with [`named`](Self::named), else `sync` or `async`.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Runs the function to completion on the calling thread (an async one with a local
    /// executor): for tools such as the evaluation, outside an agent run. A function of the run
    /// context has none here: `None`.
    pub(crate) fn call_blocking(&self, queries: &[String], tools: &Arc<[ToolDefinition]>) -> Option<Vec<String>> {
        match &self.f {
            SearchFn::Sync(f) => Some(f(queries, tools)),
            SearchFn::Async(f) => Some(futures::executor::block_on(f(queries.to_vec(), tools.clone()))),
            SearchFn::SyncCtx(_) | SearchFn::AsyncCtx(_) => None,
        }
    }
}

impl fmt::Debug for CustomSearch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CustomSearch({})", self.label)
    }
}

impl PartialEq for CustomSearch {
    fn eq(&self, other: &Self) -> bool {
        match (&self.f, &other.f) {
            (SearchFn::Sync(a), SearchFn::Sync(b)) => Arc::ptr_eq(a, b),
            (SearchFn::Async(a), SearchFn::Async(b)) => Arc::ptr_eq(a, b),
            (SearchFn::SyncCtx(a), SearchFn::SyncCtx(b)) => Arc::ptr_eq(a, b),
            (SearchFn::AsyncCtx(a), SearchFn::AsyncCtx(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Eq for CustomSearch {}

/// What a custom function returned, made safe to show: catalogue names only, no repeats, at
/// most `max_results`.
pub(crate) fn clean(names: Vec<String>, known: impl Fn(&str) -> bool, max_results: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        if out.len() >= max_results {
            break;
        }
        if known(&n) && !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn clean_keeps_known_unique_names_up_to_the_limit() {
        let names = ["b", "zz", "a", "b", "c"].map(String::from).to_vec();
        assert_eq!(clean(names.clone(), |n| n.len() == 1, 10), ["b", "a", "c"]);
        assert_eq!(clean(names, |n| n.len() == 1, 2), ["b", "a"]);
    }

    #[test]
    fn sync_and_async_functions_run_and_compare_by_identity() {
        let tools: Arc<[ToolDefinition]> = Arc::from(vec![ToolDefinition::new("a", json!({}))]);
        let sync = CustomSearch::new(|q, t| q.iter().map(|q| format!("{q}:{}", t.len())).collect());
        assert_eq!(sync.call_blocking(&["x".into()], &tools).unwrap(), ["x:1"]);
        let asynchronous = CustomSearch::new_async(|q, t| async move { vec![format!("{}/{}", q.len(), t[0].name)] });
        assert_eq!(asynchronous.call_blocking(&["x".into(), "y".into()], &tools).unwrap(), ["2/a"]);
        assert_eq!(sync, sync.clone());
        assert_ne!(sync, asynchronous);
        assert_eq!(format!("{:?}", asynchronous.clone().named("embeddings")), "CustomSearch(embeddings)");
    }
}
