//! The capability that makes a run's model requests and tool calls journaled steps.

use std::future::Future;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use toolsmith::AgentRunError;
use toolsmith::RunContext;
use toolsmith::capability::{
    Capability, CapabilityOrdering, HookStage, ModelRequestContext, ModelRequestNext, ToolCallInfo, ToolExecuteNext,
};
use toolsmith::messages::ModelResponse;
use toolsmith::model::{ModelError, ModelErrorKind};
use toolsmith::tool::{ToolError, ToolOutput};

use crate::codec;
use crate::journal::Journal;
use crate::spills;

/// Added to each durable run, outermost: a model request (with the hooks inside it) and a tool
/// call (its hooks, the tool, MCP calls included) each run once, as one journaled step.
pub(crate) struct Journaled {
    pub(crate) journal: Journal,
}

impl<D: Send + Sync + 'static> Capability<D> for Journaled {
    fn name(&self) -> String {
        "RestateJournal".into()
    }

    fn ordering(&self) -> Option<CapabilityOrdering> {
        // Outermost: everything inside is done once.
        Some(CapabilityOrdering::outermost())
    }

    fn hooks_stage(&self, stage: HookStage) -> bool {
        matches!(stage, HookStage::ModelRequest | HookStage::ToolExecute)
    }

    fn wrap_model_request<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        request: ModelRequestContext,
        next: ModelRequestNext<'a>,
    ) -> impl Future<Output = Result<ModelResponse, AgentRunError>> + Send + 'a {
        let step = self.journal.step(
            format!("model {}", ctx.run_step),
            move || next.run(request),
            codec::encode_model,
            codec::decode_model,
        );
        async move {
            step.await.unwrap_or_else(|e| {
                Err(AgentRunError::Model(ModelError::new(
                    ModelErrorKind::Other("DurableStepError".into()),
                    e.to_string(),
                )))
            })
        }
    }

    fn wrap_tool_execute<'a>(
        &'a self,
        ctx: &'a RunContext<D>,
        call: ToolCallInfo<'a>,
        args: Value,
        next: ToolExecuteNext<'a>,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send + 'a {
        // The key names the call within the run: its step, tool and id (quoted, so that no two
        // calls share a key whatever their names hold).
        let key = format!("tool {} {:?} {:?}", ctx.run_step, call.call.tool_name, call.call.tool_call_id);
        async move {
            let work = || async {
                // What a `JournaledStore` spills during the call goes into the step's entry.
                let spilled = Arc::new(Mutex::new(Vec::new()));
                let outcome = spills::STEP.scope(spilled.clone(), next.run(args)).await;
                codec::ToolRecord { outcome, ran: next.tool_ran(), spills: spills::take(&spilled) }
            };
            match self.journal.step(key, work, codec::encode_tool, codec::decode_tool).await {
                Ok(codec::ToolRecord { outcome, ran, spills }) => {
                    // A replayed call counts in the run's usage as it did when it ran.
                    if ran {
                        next.count_as_ran();
                    }
                    // A replayed call's spills are readable again.
                    for spill in spills {
                        let _ = spills::TURN.try_with(|turn| turn.add(spill));
                    }
                    outcome
                }
                Err(e) => {
                    Err(ToolError::Failed { kind: "DurableStepError".into(), message: e.to_string(), source: None })
                }
            }
        }
    }
}
