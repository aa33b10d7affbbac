//! [`ExternalToolset`]: tools executed outside the agent.

use std::collections::HashSet;
use std::sync::Arc;

use crate::context::RunContext;
use crate::error::UserError;
use crate::tool::{CallDeferred, Handler, Invocation, ToolDefinition, ToolError, ToolKind};
use crate::toolset::{Toolset, ToolsetTool};

/// Tools whose calls are executed outside the agent (by the client, another process, a queue),
/// given as definitions only, as Pydantic AI's `ExternalToolset`.
///
/// The definitions get the kind [`ToolKind::External`]. The arguments of a call are not validated
/// against the schema (a raw JSON string is only parsed), and the call ends the run with it in
/// [`DeferredToolRequests::calls`](crate::deferred::DeferredToolRequests::calls) (the agent needs
/// [`allow_deferred`](crate::AgentBuilder::allow_deferred)); resume the run with the result.
/// Arguments that are not JSON are not retried (the tools' retry budget is 0). The label is
/// `ExternalToolset`; a name given twice is reported by [`Toolset::check`] (and so by the agent
/// builder).
///
/// ```
/// use toolsmith::prelude::*;
/// use toolsmith::agent::Deferrable;
/// use toolsmith::toolset::ExternalToolset;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let schema = serde_json::json!({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]});
/// let browser = ExternalToolset::new(vec![ToolDefinition::new("open_page", schema).with_description("Open a page.")]);
/// let agent = Agent::builder(TestModel::default()).toolset(browser).allow_deferred().build()?;
/// let result = agent.run("go").run_sync()?;
/// let Deferrable::Deferred(requests) = result.output() else { panic!("expected deferred requests") };
/// assert_eq!(requests.calls[0].tool_name, "open_page");
/// # Ok(())
/// # }
/// ```
pub struct ExternalToolset<D> {
    defs: Vec<ToolDefinition>,
    handler: Handler<D>,
    label: Arc<str>,
    problem: Option<String>,
}

impl<D> std::fmt::Debug for ExternalToolset<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalToolset").field("defs", &self.defs).finish_non_exhaustive()
    }
}

impl<D: Clone + Send + Sync + 'static> ExternalToolset<D> {
    /// A toolset of these definitions.
    pub fn new(defs: impl IntoIterator<Item = ToolDefinition>) -> Self {
        let defs: Vec<ToolDefinition> = defs.into_iter().map(|d| d.with_kind(ToolKind::External)).collect();
        let mut seen = HashSet::new();
        let problem = defs.iter().find(|d| !seen.insert(d.name.as_str())).map(|d| {
            format!("ExternalToolset defines tool '{}' more than once: give each definition its own name.", d.name)
        });
        let handler: Handler<D> = Handler::Plain(Arc::new(|_args: std::borrow::Cow<'_, serde_json::Value>| {
            Invocation::Ready(Err(ToolError::CallDeferred(CallDeferred::default())))
        }));
        ExternalToolset { defs, handler, label: Arc::from("ExternalToolset"), problem }
    }
}

impl<D> ExternalToolset<D> {
    /// The definitions (with kind [`ToolKind::External`]).
    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.defs
    }
}

impl<D: Clone + Send + Sync + 'static> Toolset<D> for ExternalToolset<D> {
    fn label(&self) -> String {
        self.label.to_string()
    }

    fn check(&self) -> Result<(), UserError> {
        match &self.problem {
            Some(p) => Err(UserError::new(p.clone())),
            None => Ok(()),
        }
    }

    async fn get_tools(&self, _ctx: &RunContext<D>) -> Result<Vec<ToolsetTool<D>>, UserError> {
        Ok(self
            .defs
            .iter()
            .map(|def| ToolsetTool {
                def: Arc::new(def.clone()),
                max_retries: Some(0),
                requires_approval: false,
                toolset_timeout: None,
                toolset_label: self.label.clone(),
                validator: None,
                args_validator: None,
                handler: self.handler.clone(),
            })
            .collect())
    }
}
