//! The run's toolset with the capabilities' `prepare_tools` applied, for a run whose capabilities
//! wrap the toolset: a `wrapper_toolset` wraps what `prepare_tools` left, so a tool it removed is
//! neither listed nor callable through the wrapper.

use std::sync::{Arc, Mutex};

use crate::capability::Capabilities;
use crate::context::RunContext;
use crate::error::{AgentRunError, UserError};
use crate::toolset::{BoxedToolset, Toolset, ToolsetTool};

use super::ToolIndex;

/// Where a `prepare_tools` failure waits for the step that listed the tools: a toolset reports
/// [`UserError`]s, a capability may fail with any [`AgentRunError`] (a panic, a retry), which the
/// step returns as it was.
#[derive(Clone, Default)]
pub(crate) struct PrepareFailure(Arc<Mutex<Option<AgentRunError>>>);

impl PrepareFailure {
    /// The capability's error behind `listed`, the toolsets' failure to list their tools.
    pub(crate) fn explain(&self, listed: AgentRunError) -> AgentRunError {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take().unwrap_or(listed)
    }
}

/// `inner`'s tools through the capabilities' `prepare_tools`.
pub(crate) struct CapabilityPrepared<D> {
    inner: BoxedToolset<D>,
    caps: Capabilities<D>,
    failure: PrepareFailure,
}

impl<D> CapabilityPrepared<D> {
    pub(crate) fn new(inner: BoxedToolset<D>, caps: Capabilities<D>, failure: PrepareFailure) -> Self {
        CapabilityPrepared { inner, caps, failure }
    }
}

impl<D: Clone + Send + Sync + 'static> Toolset<D> for CapabilityPrepared<D> {
    fn label(&self) -> String {
        self.inner.0.label()
    }

    fn check(&self) -> Result<(), UserError> {
        self.inner.0.check()
    }

    async fn enter(&self) -> Result<(), UserError> {
        self.inner.0.enter_boxed().await
    }

    async fn exit(&self) {
        self.inner.0.exit_boxed().await
    }

    async fn get_tools(&self, ctx: &RunContext<D>) -> Result<Vec<ToolsetTool<D>>, UserError> {
        let tools = self.inner.0.get_tools_shared_boxed(ctx).await?.to_vec();
        match ToolIndex::prepared(tools, &self.caps, ctx).await {
            Ok(tools) => Ok(tools),
            Err(e) => {
                let reported = UserError::new(e.to_string());
                *self.failure.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(e);
                Err(reported)
            }
        }
    }
}
