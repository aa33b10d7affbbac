//! The model a run uses: the agent's, one given to the run ([`RunBuilder::model`]), or one an
//! override put in place ([`Agent::override_model`]); the overrides and their guard.
//!
//! [`RunBuilder::model`]: crate::agent::RunBuilder::model
//! [`Agent::override_model`]: crate::Agent::override_model

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::agent::Agent;
use crate::context::ModelInfo;
use crate::error::UserError;
use crate::model::{DynStreamingModel, Model, SharedModel, StreamingModel};
use crate::search::ToolSearch;

/// A model with its streaming handle (when it streams), as a run holds it.
#[derive(Clone)]
pub(crate) struct ModelChoice {
    pub(crate) model: SharedModel,
    pub(crate) streaming: Option<Arc<dyn DynStreamingModel>>,
}

impl ModelChoice {
    pub(crate) fn plain<M: Model>(model: M) -> Self {
        ModelChoice { model: Arc::new(model), streaming: None }
    }

    pub(crate) fn streaming<M: StreamingModel>(model: M) -> Self {
        let model = Arc::new(model);
        let streaming: Arc<dyn DynStreamingModel> = model.clone();
        ModelChoice { model, streaming: Some(streaming) }
    }

    /// What the model says about itself, with a panic of its code reported as a `UserError`.
    pub(crate) fn info(&self) -> Result<ModelInfo, UserError> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.model.info())).map_err(|p| {
            UserError::new(format!(
                "the run's model panicked in `name`, `system` or `context_window` at the start of the run: {}",
                crate::error::panic_message(p)
            ))
        })
    }
}

/// The model a run uses, and what the run derives from it.
#[derive(Clone)]
pub(crate) struct RunModel {
    pub(crate) choice: ModelChoice,
    /// Shared with the agent when the run uses the agent's model.
    pub(crate) info: Arc<ModelInfo>,
}

/// The checks `AgentBuilder::build` makes against the agent's model, made against a model that
/// replaces it for a run: its tool search support, the native tools it must run and the output
/// mode it must honour.
pub(crate) fn check_run_model(
    info: &ModelInfo,
    tool_search: Option<&ToolSearch>,
    native: &[crate::native::NativeTool],
    output: &crate::run::OutputSpec,
) -> Result<(), UserError> {
    let refused = |e: UserError| {
        UserError::new(format!(
            "model '{}' given for this run (RunBuilder::model or Agent::override_model) cannot run this agent's configuration: {}",
            info.name, e.message
        ))
    };
    if let Some(config) = tool_search {
        config.check_model(info).map_err(refused)?;
    }
    crate::native::check_support(native, info).map_err(refused)?;
    crate::agent::output_mode::check_support(output, info).map_err(refused)
}

/// The overrides of one kind in place on an agent (its model, its dependencies), shared by its
/// clones: the newest one is used.
pub(crate) struct Overrides<T> {
    stack: Mutex<Vec<(u64, T)>>,
    next_id: AtomicU64,
}

impl<T> Default for Overrides<T> {
    fn default() -> Self {
        Overrides { stack: Mutex::new(Vec::new()), next_id: AtomicU64::new(0) }
    }
}

impl<T: Clone + Send + 'static> Overrides<T> {
    pub(crate) fn push(self: &Arc<Self>, value: T) -> OverrideGuard {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.stack.lock().unwrap_or_else(|p| p.into_inner()).push((id, value));
        OverrideGuard { overrides: self.clone(), id }
    }

    /// The value of the newest override in place, if any.
    pub(crate) fn current(&self) -> Option<T> {
        self.stack.lock().unwrap_or_else(|p| p.into_inner()).last().map(|(_, v)| v.clone())
    }
}

/// Removes an override by its id (what the guard needs, whatever the overridden value's type).
trait Remove: Send + Sync {
    fn remove(&self, id: u64);
}

impl<T: Send> Remove for Overrides<T> {
    fn remove(&self, id: u64) {
        self.stack.lock().unwrap_or_else(|p| p.into_inner()).retain(|(i, _)| *i != id);
    }
}

/// Keeps an override of an agent's model or dependencies in place; dropping it removes the
/// override. Returned by [`Agent::override_model`](crate::Agent::override_model),
/// [`Agent::override_model_streaming`](crate::Agent::override_model_streaming) and
/// [`Agent::override_deps`](crate::Agent::override_deps).
///
/// Overrides nest: the newest one in place is used, and dropping one (in any order) removes that
/// one only. A run takes its model and dependencies when it starts, so dropping the guard does
/// not change a run already under way.
#[must_use = "the override is removed as soon as the guard is dropped"]
pub struct OverrideGuard {
    overrides: Arc<dyn Remove>,
    id: u64,
}

impl std::fmt::Debug for OverrideGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OverrideGuard").field("id", &self.id).finish_non_exhaustive()
    }
}

impl Drop for OverrideGuard {
    fn drop(&mut self) {
        self.overrides.remove(self.id);
    }
}

impl<D: Clone + Send + Sync + 'static, O: Send + 'static> Agent<D, O> {
    /// Makes every run of this agent, and of its clones, use `model` instead of the agent's
    /// model (and instead of one given with [`RunBuilder::model`]) until the returned guard is
    /// dropped; the agent is not rebuilt. For tests: swap a provider's model for a
    /// [`TestModel`](crate::model::TestModel) or a [`FunctionModel`](crate::model::FunctionModel),
    /// as Pydantic AI's `agent.override(model=...)` does.
    ///
    /// The model is used without streaming, as with [`Agent::builder`]; see
    /// [`override_model_streaming`](Self::override_model_streaming). What the agent derives from
    /// its model is derived from this one for each run ([`RunBuilder::model`] says what), and a
    /// model that cannot run the agent's configuration fails the run at its start with
    /// [`AgentRunError::User`](crate::AgentRunError::User).
    ///
    /// The override is **agent-wide**, not task-local: it applies to runs started from any task
    /// or thread while the guard lives (Rust tasks inherit no context from the task that spawned
    /// them, so a task-local override would silently miss runs started in spawned tasks, where
    /// Pydantic AI's context-local one reaches them). Concurrent runs stay consistent: each run
    /// takes its model when it starts and keeps it to its end, whatever happens to the guard
    /// meanwhile. Overrides nest (the newest in place wins) and may be dropped in any order. Tests
    /// that run in parallel and must not see each other's override each build their own agent.
    ///
    /// ```
    /// use toolsmith::model::FunctionModel;
    /// use toolsmith::prelude::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), AgentRunError> {
    /// let agent = Agent::builder(TestModel::default()).build()?;
    /// let fake = FunctionModel::sync(|_, _| ModelResponse::text("from the override"));
    /// {
    ///     let _guard = agent.override_model(fake.clone());
    ///     assert_eq!(agent.run("hi").await?.output(), "from the override");
    ///     // Clones share the override.
    ///     assert_eq!(agent.clone().run("hi").await?.output(), "from the override");
    /// }
    /// // The guard dropped: the agent's own model again.
    /// assert_eq!(agent.run("hi").await?.output(), "success (no tool calls)");
    /// assert!(fake.last_model_request_parameters().is_some());
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// [`RunBuilder::model`]: crate::agent::RunBuilder::model
    /// [`Agent::builder`]: crate::Agent::builder
    pub fn override_model<M: Model>(&self, model: M) -> OverrideGuard {
        self.inner.overrides.push(ModelChoice::plain(model))
    }

    /// [`override_model`](Self::override_model) with a model that streams: runs with an event
    /// handler (or [`RunBuilder::stream`](crate::agent::RunBuilder::stream),
    /// [`RunBuilder::stream_output`](crate::agent::RunBuilder::stream_output)) see its deltas,
    /// as with [`Agent::builder_streaming`](crate::Agent::builder_streaming).
    ///
    /// ```
    /// use futures::{StreamExt, stream};
    /// use toolsmith::agent::AgentEvent;
    /// use toolsmith::model::{FunctionModel, StreamDelta};
    /// use toolsmith::prelude::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), AgentRunError> {
    /// // The agent's model does not stream; the override does.
    /// let agent = Agent::builder(TestModel::default()).build()?;
    /// let _guard = agent.override_model_streaming(FunctionModel::stream(|_, _| {
    ///     stream::iter([StreamDelta::text("stre"), StreamDelta::text("amed")])
    /// }));
    /// let (events, run) = agent.run("hi").stream();
    /// let (result, events) = tokio::join!(run, events.collect::<Vec<_>>());
    /// assert_eq!(result?.output(), "streamed");
    /// assert!(events.iter().any(|e| matches!(e, AgentEvent::Stream(_))));
    /// # Ok(())
    /// # }
    /// ```
    pub fn override_model_streaming<M: StreamingModel>(&self, model: M) -> OverrideGuard {
        self.inner.overrides.push(ModelChoice::streaming(model))
    }

    /// Makes every run of this agent, and of its clones, receive `deps` instead of the
    /// dependencies given to the run (or the agent's default ones) until the returned guard is
    /// dropped, as Pydantic AI's `agent.override(deps=...)`. Same semantics as
    /// [`override_model`](Self::override_model): agent-wide, taken by each run at its start,
    /// nesting.
    ///
    /// ```
    /// use toolsmith::prelude::*;
    ///
    /// #[tool]
    /// fn user(ctx: RunContext<String>) -> String { ctx.deps.clone() }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), AgentRunError> {
    /// let agent = Agent::builder(TestModel::default()).deps::<String>().tool(user).build()?;
    /// let _guard = agent.override_deps("test user".to_string());
    /// let result = agent.run("who?").deps("real user".to_string()).await?;
    /// assert!(result.output().contains("test user"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn override_deps(&self, deps: D) -> OverrideGuard {
        self.inner.deps_overrides.push(deps)
    }
}
