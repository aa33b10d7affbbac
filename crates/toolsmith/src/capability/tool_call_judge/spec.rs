//! [`ToolCallJudge`] and [`ApprovalReviewer`] from a spec's arguments, with the harness's names.

use serde::Deserialize;
use serde_json::Value;

use super::{ApprovalReviewer, DEFAULT_DENIAL_MESSAGE, Decision, ToolCallJudge};
use crate::model::AnyModel;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JudgeArgs {
    model: String,
    question: String,
    #[serde(default)]
    tools: Option<Value>,
    #[serde(default)]
    include_conversation: bool,
    #[serde(default = "window")]
    conversation_window: usize,
    #[serde(default)]
    on_uncertain: Decision,
    #[serde(default)]
    denial_message: Option<String>,
    #[serde(default)]
    id: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReviewerArgs {
    model: String,
    question: String,
    #[serde(default)]
    tools: Option<Vec<String>>,
    #[serde(default)]
    include_conversation: bool,
    #[serde(default = "window")]
    conversation_window: usize,
    #[serde(default)]
    id: Option<String>,
}

fn window() -> usize {
    4_000
}

/// Resolves a spec's `model` name.
pub type ModelResolver<'a> = &'a dyn Fn(&str) -> Result<AnyModel, String>;

impl<D: Clone + Send + Sync + 'static> ToolCallJudge<D> {
    /// From a spec's arguments (the harness's `from_spec`): `model` (a name `models` resolves),
    /// `question`, `tools` (`all`, a list of names or a metadata mapping), `include_conversation`,
    /// `conversation_window`, `on_uncertain` (`block`, `allow`, `ask`), `denial_message`, `id`.
    pub fn from_spec_with(args: &Value, models: ModelResolver<'_>) -> Result<Self, String> {
        let a: JudgeArgs =
            serde_json::from_value(args.clone()).map_err(|e| format!("invalid arguments for ToolCallJudge: {e}"))?;
        let _ = a.id;
        let model = models(&a.model)?;
        let mut judge = ToolCallJudge::new(model, a.question)
            .map_err(|e| e.to_string())?
            .include_conversation(a.include_conversation)
            .conversation_window(a.conversation_window)
            .map_err(|e| e.to_string())?
            .on_uncertain(a.on_uncertain)
            .denial_message(a.denial_message.unwrap_or_else(|| DEFAULT_DENIAL_MESSAGE.into()))
            .map_err(|e| e.to_string())?;
        if let Some(tools) = a.tools {
            judge = judge.tools(crate::capability::tool_output_limits::spec_selector(&tools)?);
        }
        Ok(judge)
    }
}

impl ApprovalReviewer {
    /// From a spec's arguments (the harness's `from_spec`): `model`, `question`, `tools` (a list
    /// of names), `include_conversation`, `conversation_window`, `id`.
    pub fn from_spec_with(args: &Value, models: ModelResolver<'_>) -> Result<Self, String> {
        let a: ReviewerArgs =
            serde_json::from_value(args.clone()).map_err(|e| format!("invalid arguments for ApprovalReviewer: {e}"))?;
        let _ = a.id;
        let model = models(&a.model)?;
        let mut reviewer = ApprovalReviewer::new(model, a.question)
            .map_err(|e| e.to_string())?
            .include_conversation(a.include_conversation)
            .conversation_window(a.conversation_window)
            .map_err(|e| e.to_string())?;
        if let Some(tools) = a.tools {
            reviewer = reviewer.tools(tools);
        }
        Ok(reviewer)
    }
}
