//! The run's toolset with each tool's handler able to start its call in the background: the
//! handler answers at once and the call runs as a task, when the step prepared the tool for it.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::tasks::{self, Shared};
use super::{Mode, text};
use crate::context::RunContext;
use crate::error::UserError;
use crate::tool::{Handler, Invocation, ToolOutput};
use crate::toolset::{BoxedToolset, Toolset, ToolsetTool};

pub(super) struct BackgroundToolset<D> {
    pub(super) inner: BoxedToolset<D>,
    pub(super) shared: Arc<Shared>,
    pub(super) modes: Arc<Mutex<HashMap<String, Mode>>>,
    pub(super) flags: Arc<Mutex<HashMap<String, bool>>>,
}

impl<D: Clone + Send + Sync + 'static> Toolset<D> for BackgroundToolset<D> {
    fn label(&self) -> String {
        format!("BackgroundTools({})", self.inner.label())
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
        let mut tools = self.inner.get_tools_shared(ctx).await?.to_vec();
        for tool in tools.iter_mut().filter(|t| !t.def.sequential) {
            tool.handler = self.handler(tool);
        }
        Ok(tools)
    }
}

impl<D: Clone + Send + Sync + 'static> BackgroundToolset<D> {
    /// `tool`'s handler, starting the call as a task when the step prepared the tool for the
    /// background (and, for an optional one, the model asked for it).
    fn handler(&self, tool: &ToolsetTool<D>) -> Handler<D> {
        let (original, shared, modes, flags) =
            (tool.handler.clone(), self.shared.clone(), self.modes.clone(), self.flags.clone());
        let name = tool.def.name.clone();
        let timeout = tool.def.timeout.or(tool.toolset_timeout);
        Handler::contextual(move |ctx: RunContext<D>, args: Cow<'_, Value>| {
            let mode = modes.lock().unwrap_or_else(|p| p.into_inner()).get(&name).copied();
            let id = ctx.tool_call_id.clone().unwrap_or_default();
            let background = match mode {
                Some(Mode::Always) => true,
                Some(Mode::Optional) => flags.lock().unwrap_or_else(|p| p.into_inner()).remove(&id).unwrap_or(false),
                None => false,
            };
            let runtime = tokio::runtime::Handle::try_current().ok();
            let (true, Some(runtime), false) = (background, runtime, tasks::in_background()) else {
                return original.call(|| ctx, args);
            };
            let (conversation, max_retries) = (ctx.conversation_id.clone(), ctx.max_retries);
            let (args, original) = (args.into_owned(), original.clone());
            let invoke = Box::new(move || original.call(|| ctx, Cow::Owned(args)));
            shared.spawn(&runtime, invoke, id.clone(), name.clone(), conversation, max_retries, timeout);
            Invocation::Ready(Ok(ToolOutput::Value(Value::String(text::started(&name, &id)))))
        })
    }
}
