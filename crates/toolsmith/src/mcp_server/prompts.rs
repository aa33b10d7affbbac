//! Prompts served from functions: a name, its arguments, and a function that writes the
//! messages from the arguments the client gives.

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Value, json};

use crate::messages::UserContent;

/// One message of a prompt: who says it and what.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PromptMessage {
    /// `true` for the assistant, `false` for the user.
    pub assistant: bool,
    /// Text, an image or audio ([`BinaryContent`](crate::messages::BinaryContent)), or an MCP
    /// content block as [`UserContent::Other`] (an embedded resource, say).
    pub content: UserContent,
}

impl PromptMessage {
    /// A message from the user.
    pub fn user(content: impl Into<UserContent>) -> Self {
        PromptMessage { assistant: false, content: content.into() }
    }

    /// A message from the assistant.
    pub fn assistant(content: impl Into<UserContent>) -> Self {
        PromptMessage { assistant: true, content: content.into() }
    }
}

type RenderFn =
    Arc<dyn Fn(HashMap<String, String>) -> BoxFuture<'static, Result<Vec<PromptMessage>, String>> + Send + Sync>;

/// A prompt template: the client lists it, then gets it with arguments.
///
/// ```
/// use toolsmith::mcp_server::{Prompt, PromptMessage};
///
/// let review = Prompt::new("review", |args| async move {
///     Ok(vec![PromptMessage::user(format!("Review this code:\n{}", args["code"]))])
/// })
/// .description("Asks for a code review")
/// .argument("code", "The code to review", true);
/// ```
#[derive(Clone)]
pub struct Prompt {
    pub(super) name: String,
    pub(super) description: Option<String>,
    pub(super) arguments: Vec<(String, String, bool)>,
    pub(super) render: RenderFn,
}

impl std::fmt::Debug for Prompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prompt").field("name", &self.name).field("arguments", &self.arguments).finish_non_exhaustive()
    }
}

impl Prompt {
    /// A prompt written by `render` from the arguments given (its error is the message the
    /// client gets).
    pub fn new<F, Fut>(name: impl Into<String>, render: F) -> Self
    where
        F: Fn(HashMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<PromptMessage>, String>> + Send + 'static,
    {
        Prompt {
            name: name.into(),
            description: None,
            arguments: Vec::new(),
            render: Arc::new(move |args| Box::pin(render(args))),
        }
    }

    /// A description shown to the client.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Declares an argument; a required one missing from a request is refused before `render`.
    pub fn argument(mut self, name: impl Into<String>, description: impl Into<String>, required: bool) -> Self {
        self.arguments.push((name.into(), description.into(), required));
        self
    }

    pub(super) fn listing(&self) -> Value {
        let arguments: Vec<Value> = self
            .arguments
            .iter()
            .map(
                |(name, description, required)| json!({"name": name, "description": description, "required": required}),
            )
            .collect();
        json!({"name": self.name, "description": self.description.clone().unwrap_or_default(), "arguments": arguments})
    }

    /// The `prompts/get` result for these arguments.
    pub(super) async fn get(&self, args: HashMap<String, String>) -> Result<Value, String> {
        if let Some((missing, _, _)) =
            self.arguments.iter().find(|(name, _, required)| *required && !args.contains_key(name))
        {
            return Err(format!("missing required argument `{missing}`"));
        }
        let messages: Vec<Value> = (self.render)(args)
            .await?
            .into_iter()
            .filter_map(|m| {
                let content = super::convert::content_block(m.content)?;
                Some(json!({"role": if m.assistant { "assistant" } else { "user" }, "content": content}))
            })
            .collect();
        let mut result = json!({"messages": messages});
        if let Some(d) = &self.description {
            result["description"] = json!(d);
        }
        Ok(result)
    }
}
