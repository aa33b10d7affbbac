//! [`ReinjectSystemPrompt`]: put the agent's system prompt back into a history that lost it.

use std::sync::{Arc, OnceLock};

use super::{Capability, HookStage, ModelRequestContext};
use crate::context::RunContext;
use crate::error::AgentRunError;
use crate::messages::{ModelMessage, ModelRequest, ModelRequestPart, SystemPromptPart};

/// A capability that makes sure the agent's system prompts head the first request of every
/// model request's messages.
///
/// An agent sends its system prompts only when a run starts without a message history. A
/// history rebuilt from a store that does not keep system prompts (a UI frontend, a database,
/// a compaction step) loses them; with this capability they are put back, at the head of the
/// first request. By default a history that already has any system prompt is left as it is
/// (the prompts there stay authoritative); with
/// [`replace_existing`](ReinjectSystemPrompt::replace_existing) every system prompt of the
/// history is removed first and the agent's prompts are always the ones sent, which is what a
/// server wants when the history comes from an untrusted client.
///
/// Only what is sent changes; the run's message history is left as it was given. The prompts
/// are the agent's (given to the capability when the agent is built), or the ones set with
/// [`with_prompts`](ReinjectSystemPrompt::with_prompts).
///
/// ```
/// use toolsmith::capability::ReinjectSystemPrompt;
/// use toolsmith::prelude::*;
///
/// # fn main() -> Result<(), UserError> {
/// let agent = Agent::builder(TestModel::default())
///     .system_prompt("You are a support agent for ACME.")
///     .capability(ReinjectSystemPrompt::new().replace_existing(true))
///     .build()?;
/// # let _ = agent;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct ReinjectSystemPrompt {
    replace_existing: bool,
    explicit: Option<Arc<[String]>>,
    bound: OnceLock<Arc<[String]>>,
}

impl ReinjectSystemPrompt {
    /// Reinjects the agent's system prompts when the history has none.
    pub fn new() -> Self {
        Self::default()
    }

    /// `true`: remove every system prompt of the history, then put the agent's first (the
    /// default is `false`: leave a history that has a system prompt unchanged).
    pub fn replace_existing(mut self, replace: bool) -> Self {
        self.replace_existing = replace;
        self
    }

    /// Reinjects these prompts instead of the agent's.
    pub fn with_prompts<I: IntoIterator<Item = S>, S: Into<String>>(mut self, prompts: I) -> Self {
        self.explicit = Some(prompts.into_iter().map(Into::into).collect());
        self
    }

    /// Gives the capability the agent's system prompts (the first agent wins).
    pub(crate) fn bind(&self, prompts: &Arc<[String]>) {
        let _ = self.bound.set(prompts.clone());
    }

    fn prompts(&self) -> &[String] {
        self.explicit.as_deref().or_else(|| self.bound.get().map(|p| &**p)).unwrap_or(&[])
    }

    /// The messages to send instead of `messages`, or `None` to send them as they are.
    pub(crate) fn reinject(&self, messages: &[ModelMessage]) -> Option<Vec<ModelMessage>> {
        let is_system = |p: &ModelRequestPart| matches!(p, ModelRequestPart::SystemPrompt(_));
        let has_system =
            messages.iter().any(|m| matches!(m, ModelMessage::Request(r) if r.parts.iter().any(is_system)));
        let prompts = self.prompts();
        if !self.replace_existing && (has_system || prompts.is_empty()) {
            return None;
        }
        if !has_system && prompts.is_empty() {
            return None;
        }
        let mut out: Vec<ModelMessage> = Vec::with_capacity(messages.len() + 1);
        for m in messages {
            match m {
                ModelMessage::Request(r) if self.replace_existing && r.parts.iter().any(is_system) => {
                    let mut r = r.clone();
                    r.parts.retain(|p| !is_system(p));
                    // A request that held only system prompts is dropped with them.
                    if !r.parts.is_empty() {
                        out.push(ModelMessage::Request(r));
                    }
                }
                other => out.push(other.clone()),
            }
        }
        let parts = prompts.iter().map(|p| ModelRequestPart::SystemPrompt(SystemPromptPart::new(p)));
        match out.iter_mut().find_map(|m| match m {
            ModelMessage::Request(r) => Some(r),
            ModelMessage::Response(_) => None,
        }) {
            Some(first) => {
                first.parts.splice(0..0, parts);
            }
            None if prompts.is_empty() => {}
            None => out.insert(0, ModelMessage::Request(ModelRequest::new(parts.collect()))),
        }
        Some(out)
    }
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for ReinjectSystemPrompt {
    fn hooks_stage(&self, stage: HookStage) -> bool {
        stage == HookStage::ModelRequest
    }
    fn has_prepare_tools(&self) -> bool {
        false
    }

    async fn before_model_request(
        &self,
        _ctx: &RunContext<D>,
        mut request: ModelRequestContext,
    ) -> Result<ModelRequestContext, AgentRunError> {
        if let Some(messages) = self.reinject(&request.messages) {
            request.messages = Arc::new(messages);
        }
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::{ModelResponse, UserPromptPart};

    fn system_prompts(messages: &[ModelMessage]) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        for (i, m) in messages.iter().enumerate() {
            if let ModelMessage::Request(r) = m {
                for p in &r.parts {
                    if let ModelRequestPart::SystemPrompt(s) = p {
                        out.push((i, s.content.clone()));
                    }
                }
            }
        }
        out
    }

    fn history(with_system: Option<&str>) -> Vec<ModelMessage> {
        let mut first = Vec::new();
        if let Some(s) = with_system {
            first.push(ModelRequestPart::SystemPrompt(SystemPromptPart::new(s)));
        }
        first.push(ModelRequestPart::UserPrompt(UserPromptPart::new("hello")));
        vec![
            ModelMessage::Request(ModelRequest::new(first)),
            ModelMessage::Response(ModelResponse::text("hi")),
            ModelMessage::Request(ModelRequest::user_prompt("again")),
        ]
    }

    fn bound(prompts: &[&str]) -> ReinjectSystemPrompt {
        let r = ReinjectSystemPrompt::new();
        r.bind(&prompts.iter().map(|p| p.to_string()).collect::<Vec<_>>().into());
        r
    }

    #[test]
    fn adds_missing_prompts_at_the_head_of_the_first_request() {
        let out = bound(&["be brief", "be kind"]).reinject(&history(None)).unwrap();
        assert_eq!(system_prompts(&out), [(0, "be brief".into()), (0, "be kind".into())]);
        let ModelMessage::Request(r) = &out[0] else { panic!("first message is a request") };
        assert!(matches!(r.parts[2], ModelRequestPart::UserPrompt(_)));
        assert_eq!(out.len(), 3);
    }

    #[test]
    fn leaves_existing_prompts_by_default() {
        assert!(bound(&["server"]).reinject(&history(Some("client"))).is_none());
    }

    #[test]
    fn replace_existing_strips_and_prepends() {
        let mut h = history(Some("client"));
        h.push(ModelMessage::Request(ModelRequest::new(vec![ModelRequestPart::SystemPrompt(SystemPromptPart::new(
            "injected later",
        ))])));
        let out = bound(&["server"]).replace_existing(true).reinject(&h).unwrap();
        assert_eq!(system_prompts(&out), [(0, "server".into())]);
        // The request that held only a system prompt is gone.
        assert_eq!(out.len(), 3);
    }

    #[test]
    fn without_prompts_nothing_changes_unless_replacing() {
        assert!(bound(&[]).reinject(&history(None)).is_none());
        let out = bound(&[]).replace_existing(true).reinject(&history(Some("client"))).unwrap();
        assert!(system_prompts(&out).is_empty());
    }

    #[test]
    fn explicit_prompts_win_over_the_agent() {
        let r = ReinjectSystemPrompt::new().with_prompts(["explicit"]);
        r.bind(&vec!["agent".to_string()].into());
        assert_eq!(system_prompts(&r.reinject(&history(None)).unwrap()), [(0, "explicit".into())]);
    }

    #[test]
    fn a_history_of_responses_gets_a_request_first() {
        let out = bound(&["server"]).reinject(&[ModelMessage::Response(ModelResponse::text("hi"))]).unwrap();
        assert_eq!(system_prompts(&out), [(0, "server".into())]);
        assert_eq!(out.len(), 2);
    }
}
