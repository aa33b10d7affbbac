//! One question to the judging model, asked as Pydantic AI asks for a `Literal['yes', 'no',
//! 'unsure']` output: the `final_result` output tool, no text output, the instructions on the
//! request.

use std::sync::Arc;

use serde_json::{Value, json};

use super::JudgeAnswer;
use crate::context::RunContext;
use crate::messages::{ModelMessage, ModelRequest, ModelResponsePart};
use crate::model::{AnyModel, Model, ModelRequestParameters};
use crate::tool::{ToolDefinition, ToolKind};
use crate::usage::RunUsage;

/// A model and the instructions it is asked under.
#[derive(Clone)]
pub(super) struct Asker {
    model: AnyModel,
    instructions: Arc<str>,
}

impl Asker {
    pub(super) fn new(model: AnyModel, instructions: String) -> Self {
        Asker { model, instructions: instructions.into() }
    }

    /// The answer to `prompt`, or why there is none. The request, once answered, is added to the
    /// run's usage (as the harness's judge runs with the run's usage).
    pub(super) async fn ask<D>(&self, ctx: &RunContext<D>, prompt: String) -> Result<JudgeAnswer, String> {
        let mut output = ToolDefinition::new(
            "final_result",
            json!({
                "properties": {"response": {"enum": ["yes", "no", "unsure"], "type": "string"}},
                "required": ["response"],
                "type": "object"
            }),
        );
        output.description = Some("The final response which ends this conversation".into());
        output.kind = ToolKind::Output;
        let params = ModelRequestParameters {
            output_tools: vec![output],
            allow_text_output: false,
            instructions: Some(self.instructions.to_string()),
            ..ModelRequestParameters::default()
        };
        let mut request = ModelRequest::user_prompt(prompt);
        request.instructions = Some(self.instructions.to_string());
        let response =
            self.model.request(&[ModelMessage::Request(request)], None, &params).await.map_err(|e| e.to_string())?;
        let mut spent = RunUsage::default();
        spent.add_request(&response.usage);
        ctx.add_usage(&spent);
        for part in &response.parts {
            let ModelResponsePart::ToolCall(call) = part else { continue };
            if call.tool_name != "final_result" {
                continue;
            }
            let args = match &call.args {
                Value::String(s) => serde_json::from_str(s).map_err(|e| e.to_string())?,
                other => other.clone(),
            };
            return serde_json::from_value(args.get("response").cloned().unwrap_or(Value::Null))
                .map_err(|e| format!("the judge's answer is not yes, no or unsure: {e}"));
        }
        Err("the judge did not answer with its output tool".into())
    }
}
