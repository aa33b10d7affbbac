//! The client side of MCP: what a server may ask of the client (sampling, elicitation, roots),
//! what it tells it (logs, progress, changes), and the server's resources and prompts.

pub(crate) mod elicitation;
pub(crate) mod handler;
pub(crate) mod notifications;
pub(crate) mod resources;
pub(crate) mod roots;
pub(crate) mod sampling;
pub(crate) mod structured;

use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

pub use elicitation::{Elicitation, ElicitationMode, ElicitationResponse};
pub use notifications::{McpLogLevel, McpNotification};
pub use resources::{
    McpPrompt, McpPromptArgument, McpPromptMessage, McpResource, McpResourceContents, McpResourceTemplate,
};
pub use roots::McpRoot;
pub use sampling::SamplingHandler;

use super::McpToolset;
use crate::model::Model;

/// What answers the server's requests and hears its notifications.
#[derive(Clone, Default)]
pub(crate) struct ClientOptions {
    pub(crate) sampling: Option<SamplingHandler>,
    pub(crate) elicitation: Option<elicitation::ElicitationFn>,
    pub(crate) notifications: Option<notifications::NotificationFn>,
    pub(crate) log_level: Option<McpLogLevel>,
    pub(crate) roots: Option<roots::SharedRoots>,
}

impl<D> McpToolset<D> {
    /// Answers the server's sampling requests (`sampling/createMessage`) with `model`: the
    /// request's messages (text, images, audio), system prompt, `maxTokens` and `temperature`
    /// become one model request, and the model's text is the answer. The client then
    /// advertises the `sampling` capability; without a model or a
    /// [handler](McpToolset::sampling_handler), it does not, and sampling requests are refused
    /// with an error.
    ///
    /// ```
    /// use toolsmith::prelude::*;
    /// use toolsmith::toolset::McpToolset;
    ///
    /// let everything: McpToolset = McpToolset::stdio("npx", ["-y", "@modelcontextprotocol/server-everything"])
    ///     .sampling_model(TestModel::new().custom_output_text("a summary"));
    /// ```
    pub fn sampling_model<M: Model>(self, model: M) -> Self {
        let handler = sampling::model_handler(model);
        self.configure(|s| s.client.sampling = Some(handler))
    }

    /// Answers the server's sampling requests (`sampling/createMessage`) with `handler`, which
    /// receives the request's params and returns the result, both as MCP JSON (an `Err` is sent
    /// to the server as an error). See [`McpToolset::sampling_model`] to answer with a model.
    pub fn sampling_handler<F, Fut>(self, handler: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, String>> + Send + 'static,
    {
        let handler: SamplingHandler = Arc::new(move |params| Box::pin(handler(params)));
        self.configure(|s| s.client.sampling = Some(handler))
    }

    /// Answers the server's elicitation requests (`elicitation/create`, a form to fill in or a
    /// URL to visit) with `handler`. An accepted form gets the requested schema's defaults for
    /// the fields the answer leaves out (SEP-1034). The client then advertises the
    /// `elicitation` capability (form and URL); without a handler it does not, and elicitation
    /// requests are refused at once with an error. A handler that does not answer within the
    /// [request timeout](McpToolset::request_timeout) is answered for, with an error.
    ///
    /// ```
    /// use toolsmith::toolset::{ElicitationMode, ElicitationResponse, McpToolset};
    ///
    /// let mcp: McpToolset = McpToolset::http("http://127.0.0.1:3001/mcp").elicitation_handler(|request| async move {
    ///     println!("{}: {}", request.server, request.message);
    ///     match request.mode {
    ///         // Take the form's defaults, with a name of our own.
    ///         ElicitationMode::Form { .. } => ElicitationResponse::accept(serde_json::json!({"name": "Ada"})),
    ///         _ => ElicitationResponse::Decline,
    ///     }
    /// });
    /// ```
    pub fn elicitation_handler<F, Fut>(self, handler: F) -> Self
    where
        F: Fn(Elicitation) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ElicitationResponse> + Send + 'static,
    {
        let handler = elicitation::boxed(handler);
        self.configure(|s| s.client.elicitation = Some(handler))
    }

    /// Gives the server's notifications to `callback`: log messages, progress of requests,
    /// updated resources and changed lists (see [`McpNotification`]). It is called on the
    /// session's task: it should return quickly (send the notification on a channel).
    ///
    /// ```
    /// use toolsmith::toolset::{McpNotification, McpToolset};
    ///
    /// let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<McpNotification>();
    /// let mcp: McpToolset = McpToolset::stdio("npx", ["-y", "@modelcontextprotocol/server-everything"])
    ///     .on_notification(move |note| {
    ///         let _ = tx.send(note);
    ///     });
    /// ```
    pub fn on_notification<F>(self, callback: F) -> Self
    where
        F: Fn(McpNotification) + Send + Sync + 'static,
    {
        let callback: notifications::NotificationFn = Arc::new(callback);
        self.configure(|s| s.client.notifications = Some(callback))
    }

    /// Asks the server to send log messages from `level` up (`logging/setLevel`, once each
    /// session is open, when the server has the `logging` capability); by default the server
    /// chooses. The messages go to [`McpToolset::on_notification`] and the `tracing` log.
    pub fn log_level(self, level: McpLogLevel) -> Self {
        self.configure(|s| s.client.log_level = Some(level))
    }
}
