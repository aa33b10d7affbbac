//! The three error families: configuration mistakes ([`UserError`]), what the model did wrong
//! (never an error: it becomes retry feedback to the model), and what ends a run
//! ([`AgentRunError`]); and [`ModelRetry`], which asks the model to try again from a tool, an
//! output validator or a capability.

pub(crate) mod model_error;

use std::fmt;

use serde_json::Value;

/// A configuration mistake: reported by `build()`, by registration, or by a run whose settings
/// are impossible. The message says what is wrong and what to do.
///
/// ```
/// use toolsmith::prelude::*;
///
/// /// Looks a word up.
/// #[tool]
/// fn lookup(word: String) -> String {
///     word
/// }
///
/// // Two tools of the same name: the model could not tell them apart.
/// let err = Agent::builder(TestModel::default()).tool(lookup).tool(lookup).build().unwrap_err();
/// assert!(err.message.contains("lookup"), "{err}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
#[non_exhaustive]
pub struct UserError {
    /// What is wrong, and what to do about it.
    pub message: String,
    /// Why a resume with deferred tool results was refused, when that is the mistake (boxed:
    /// every run's result has room for an error, and this is its largest part).
    pub refusal: Option<Box<ResumeRefusal>>,
    /// When a toolset could not do its work (not a configuration mistake): a run reports it as
    /// [`AgentRunError::ToolsetUnavailable`]. The toolset's methods return [`UserError`]; this
    /// is how one of them says "unavailable".
    pub unavailable: Option<Box<ToolsetUnavailable>>,
}

/// A toolset that could not do its work: an MCP server that would not start, answer or stay
/// connected. Not a configuration mistake: the same agent may work on the next run. A toolset
/// marked [`optional`](crate::toolset::ToolsetExt::optional) is left out of the run instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("toolset '{toolset}' is unavailable: {message}")]
#[non_exhaustive]
pub struct ToolsetUnavailable {
    /// The toolset (for an MCP server, its name in messages).
    pub toolset: String,
    /// What failed (with the last lines the server wrote to stderr, once, when there are any).
    pub message: String,
}

impl ToolsetUnavailable {
    /// `toolset` could not do its work, because of `message`.
    pub fn new(toolset: impl Into<String>, message: impl Into<String>) -> Self {
        ToolsetUnavailable { toolset: toolset.into(), message: message.into() }
    }
}

impl From<ToolsetUnavailable> for UserError {
    fn from(unavailable: ToolsetUnavailable) -> Self {
        UserError { message: unavailable.to_string(), refusal: None, unavailable: Some(Box::new(unavailable)) }
    }
}

impl UserError {
    /// A user error with a message.
    pub fn new(message: impl Into<String>) -> Self {
        UserError { message: message.into(), refusal: None, unavailable: None }
    }
}

impl From<UserError> for AgentRunError {
    /// A configuration mistake, or a toolset's report that it is unavailable.
    fn from(e: UserError) -> Self {
        match e.unavailable {
            Some(unavailable) => AgentRunError::ToolsetUnavailable(*unavailable),
            None => AgentRunError::User(e),
        }
    }
}

impl From<ResumeRefusal> for UserError {
    fn from(refusal: ResumeRefusal) -> Self {
        UserError { message: refusal.to_string(), refusal: Some(Box::new(refusal)), unavailable: None }
    }
}

/// Why a run resumed with [`DeferredToolResults`](crate::deferred::DeferredToolResults) was
/// refused before anything ran: the results do not apply to the calls the message history
/// holds. An approval approves one call, the one it was given for (its id, tool and
/// arguments, as the run's [`DeferredToolRequests`](crate::deferred::DeferredToolRequests)
/// listed it); a history edited since, or results of the wrong kind, are refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResumeRefusal {
    /// The last response of the history holds a tool call id more than once: results are
    /// matched to calls by id, so one decision would apply to several calls.
    #[error(
        "the message history's last response holds tool call id '{tool_call_id}' {count} times: deferred tool results are matched to calls by id and cannot apply to more than one call; resume with the message history the `DeferredToolRequests` came from"
    )]
    DuplicateCallId {
        /// The repeated id.
        tool_call_id: String,
        /// How many calls have it.
        count: usize,
    },
    /// A pending call is not the one the run ended with: another tool, or other arguments,
    /// under its id.
    #[error(
        "tool call '{tool_call_id}' changed after the run ended: it was `{pending_tool}` with arguments {pending_args}, the message history now has `{found_tool}` with arguments {found_args}; a decision applies only to the call it was made for: resume with the message history the `DeferredToolRequests` came from"
    )]
    CallChanged {
        /// The call's id.
        tool_call_id: String,
        /// The tool the call named when the run ended.
        pending_tool: String,
        /// Its arguments then.
        pending_args: Value,
        /// The tool the history's call names.
        found_tool: String,
        /// The history's arguments.
        found_args: Value,
    },
    /// The history holds an unanswered call that was not pending when the run ended.
    #[error(
        "the message history has an unanswered call '{tool_call_id}' to `{tool_name}` that was not among the run's `DeferredToolRequests`: results can only be given for the calls the run ended with; resume with the message history the requests came from"
    )]
    NotPending {
        /// The call's id.
        tool_call_id: String,
        /// The tool it calls.
        tool_name: String,
    },
    /// A call that was pending when the run ended is no longer unanswered in the history: it
    /// was removed, or given a result.
    #[error(
        "tool call '{tool_call_id}' to `{tool_name}` was pending when the run ended, but the message history has no unanswered call with that id: resume with the message history the `DeferredToolRequests` came from"
    )]
    NoLongerPending {
        /// The call's id.
        tool_call_id: String,
        /// The tool it called.
        tool_name: String,
    },
    /// A result was given for a call that already has one in the message history.
    #[error(
        "Tool call '{tool_call_id}' already has a result in the message history; remove it from the deferred tool results."
    )]
    AlreadyAnswered {
        /// The call's id.
        tool_call_id: String,
    },
    /// The results do not answer exactly the calls of the history's last response: a call has
    /// no result, or a result names an id no call has.
    #[error(
        "Tool call results need to be provided for all deferred tool calls, and only for them: the message history's last response expects results for [{}], the deferred tool results answer [{}]",
        quoted(.expected),
        quoted(.given)
    )]
    ResultsMismatch {
        /// The ids of the calls that need a result (those already answered in the history
        /// included), sorted.
        expected: Vec<String>,
        /// The ids the results answer (and those the history already answers), sorted.
        given: Vec<String>,
    },
    /// A result was given for a call that waits for approval (a tool that requires approval, or
    /// a call that raised `ApprovalRequired`): only a decision answers it, else a made-up result
    /// would be recorded as the tool's return. Results matched to the history by id alone
    /// ([`trust_history`](crate::deferred::DeferredToolResults::trust_history)) are taken as
    /// given, as Pydantic AI takes them.
    #[error("Tool call '{tool_call_id}' waits for approval, not a result: give a decision in `approvals`.")]
    ResultForApproval {
        /// The call's id.
        tool_call_id: String,
    },
    /// A decision was given for a call that waits for an external result.
    #[error("Tool call '{tool_call_id}' waits for an external result, not an approval: give its result in `calls`.")]
    ApprovalForExternal {
        /// The call's id.
        tool_call_id: String,
    },
    /// The results were built by hand (not from the run's `DeferredToolRequests`) and the
    /// agent has no record of the history's pending calls (another process, another agent, or
    /// a history edited since): nothing says which calls the decisions were made for.
    #[error(
        "these deferred tool results are not bound to the calls the run ended with, and this agent has no record of the message history's pending calls ({}): build them from the run's `DeferredToolRequests` (`requests.results()` or `requests.build_results(...)`) so that each decision applies to the call that was shown, or call `.trust_history()` on them to match calls by id alone",
        quoted(.tool_call_ids)
    )]
    Unverified {
        /// The ids of the history's pending calls.
        tool_call_ids: Vec<String>,
    },
    /// The deferral these results answer was already resumed by another run: the calls a run
    /// ended with are answered once, whether the results are the same or not (see
    /// [`DeferralStore`](crate::deferred::DeferralStore)).
    #[error(
        "the deferred tool calls [{}] were already answered by an earlier resume of this message history (deferral {deferral_id}{}): an approval or a result is used once; continue from the message history that resume returned",
        quoted(.tool_call_ids),
        by_run.as_ref().map(|r| format!(", run {r}")).unwrap_or_default()
    )]
    AlreadyResumed {
        /// The deferral's identity ([`DeferralId`](crate::deferred::DeferralId) as text).
        deferral_id: String,
        /// The ids of the calls it holds, sorted.
        tool_call_ids: Vec<String>,
        /// The run that resumed it, when the store knows.
        by_run: Option<String>,
    },
    /// The agent's [`DeferralStore`](crate::deferred::DeferralStore) could not say whether the
    /// deferral was answered before: nothing runs, as this resume cannot be shown to be the
    /// first.
    #[error(
        "the store of answered deferrals failed for deferral {deferral_id}: {message}; nothing ran, resume again once it works"
    )]
    StoreFailed {
        /// The deferral's identity.
        deferral_id: String,
        /// The store's error.
        message: String,
    },
}

fn quoted(ids: &[String]) -> String {
    ids.iter().map(|i| format!("'{i}'")).collect::<Vec<_>>().join(", ")
}

/// Why a run ended without an output.
///
/// Match on the variant for what to do; [`kind`](AgentRunError::kind) names it, and
/// [`source`](std::error::Error::source) leads to the underlying error (the provider's HTTP
/// answer, the tool's own error value).
///
/// ```
/// use toolsmith::prelude::*;
///
/// /// Charges a card.
/// #[tool]
/// fn charge(cents: u64) -> Result<String, ToolError> {
///     Err(ToolError::failed(format!("the payment service is down ({cents} not charged)")))
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let agent = Agent::builder(TestModel::default()).tool(charge).build().unwrap();
/// match agent.run("charge 5 euros").await {
///     Ok(result) => println!("{}", result.output()),
///     Err(AgentRunError::ToolFailed { tool, message, .. }) => {
///         assert_eq!(tool, "charge");
///         assert!(message.starts_with("the payment service is down"));
///     }
///     Err(AgentRunError::UsageLimitExceeded { message }) => eprintln!("over budget: {message}"),
///     Err(other) => eprintln!("{}: {other}", other.kind()),
/// }
/// # }
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum AgentRunError {
    /// A configuration mistake (see [`UserError`]).
    #[error(transparent)]
    User(UserError),
    /// A toolset could not do its work (an MCP server that would not start or answer): which
    /// toolset, and why. Mark a toolset [`optional`](crate::toolset::ToolsetExt::optional) for
    /// the run to go on without it.
    #[error(transparent)]
    ToolsetUnavailable(ToolsetUnavailable),
    /// The model did something the run cannot recover from, such as exhausting a retry budget.
    ///
    /// ```
    /// use toolsmith::prelude::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// // Empty answers, and no output retry left.
    /// let model = FunctionModel::new(|_messages, _info| async { Ok(ModelResponse::new(vec![])) });
    /// let agent = Agent::builder(model).output_retries(0).build().unwrap();
    /// match agent.run("hi").await.unwrap_err() {
    ///     AgentRunError::UnexpectedModelBehavior { message, detail } => {
    ///         assert_eq!(message, "Exceeded maximum output retries (0)");
    ///         assert_eq!(detail.as_deref(), Some("the model's last answer was empty (no text and no tool call)"));
    ///     }
    ///     other => panic!("unexpected {other}"),
    /// }
    /// # }
    /// ```
    #[error("{message}{}", detail.as_ref().map(|d| format!(": {d}")).unwrap_or_default())]
    UnexpectedModelBehavior {
        /// What happened.
        message: String,
        /// What the model's last answer held that made it happen, when known (shown after the
        /// message).
        detail: Option<String>,
    },
    /// A usage limit was crossed.
    #[error("{message}")]
    UsageLimitExceeded {
        /// Which limit, and by how much.
        message: String,
    },
    /// A tool failed with an error that is not a retry.
    #[error("tool '{tool}' failed: {message}")]
    ToolFailed {
        /// The tool.
        tool: String,
        /// The error's type name.
        kind: String,
        /// The error's message.
        message: String,
        /// The error the tool failed with, when it returned an error value (see
        /// [`ToolError::caused_by`](crate::tool::ToolError::caused_by)).
        #[source]
        source: Option<SharedError>,
    },
    /// A tool panicked; the panic was caught and the agent stays usable.
    #[error(
        "tool '{tool}' panicked: {message}. The run was stopped; fix the tool or return an error instead of panicking"
    )]
    ToolPanicked {
        /// The tool.
        tool: String,
        /// The panic message.
        message: String,
    },
    /// A capability's hook panicked (or one of its other methods, such as `for_run`); the panic
    /// was caught, the run stopped, and the agent stays usable.
    ///
    /// ```
    /// use toolsmith::prelude::*;
    /// use toolsmith::capability::Hooks;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let hooks = Hooks::new().named("Audit").before_run(|_ctx| async { panic!("audit log unavailable") });
    /// let agent = Agent::builder(TestModel::default()).capability(hooks).build().unwrap();
    /// match agent.run("hi").await.unwrap_err() {
    ///     AgentRunError::CapabilityPanicked { capability, hook, message } => {
    ///         assert_eq!((capability.as_str(), hook.as_str()), ("Audit", "before_run"));
    ///         assert_eq!(message, "audit log unavailable");
    ///     }
    ///     other => panic!("unexpected {other}"),
    /// }
    /// # }
    /// ```
    #[error(
        "capability '{capability}' panicked in `{hook}`: {message}. The run was stopped; fix the capability or return an error from the hook instead of panicking"
    )]
    CapabilityPanicked {
        /// The capability's name ([`Capability::name`](crate::capability::Capability::name)).
        capability: String,
        /// The hook or method that panicked (`before_run`, `wrap_tool_execute`, `for_run`, ...).
        hook: String,
        /// The panic message.
        message: String,
    },
    /// A capability's hook ran past the timeout the capability set for it
    /// ([`Capability::hook_timeout`](crate::capability::Capability::hook_timeout),
    /// [`Hooks::timeout`](crate::capability::Hooks::timeout)); the hook was dropped and the run
    /// stopped.
    #[error("capability '{capability}' hook `{hook}` timed out after {timeout:?}")]
    HookTimeout {
        /// The capability's name ([`Capability::name`](crate::capability::Capability::name)).
        capability: String,
        /// The hook (`before_model_request`, `wrap_tool_execute`, ...).
        hook: String,
        /// The timeout it ran past.
        timeout: std::time::Duration,
    },
    /// The model panicked while answering a request (or while streaming its answer); the
    /// panic was caught, the run stopped, and the agent stays usable.
    #[error(
        "model '{model}' panicked: {message}. The run was stopped; fix the model or return a `ModelError` instead of panicking"
    )]
    ModelPanicked {
        /// The model's name ([`Model::name`](crate::model::Model::name)).
        model: String,
        /// The panic message.
        message: String,
    },
    /// Other code the run called panicked (an event handler, a toolset, ...); the panic was
    /// caught, the run stopped, and the agent stays usable.
    #[error("{during} panicked: {message}. The run was stopped")]
    Panicked {
        /// What was running: `the event handler`, `toolset 'files' (get_tools)`, ...
        during: String,
        /// The panic message.
        message: String,
    },
    /// A capability asked the model to try again: a [`ModelRetry`] from a
    /// model-request or output hook (`Err(ModelRetry::new("...").into())`). The run answers it
    /// with a retry prompt (counted against the output retries); it ends a run only where no
    /// retry is possible, such as in `before_run`.
    #[error("{0}")]
    Retry(ModelRetry),
    /// The model (or its provider) failed: its [`ModelError`](model_error::ModelError) says
    /// how ([`kind`](model_error::ModelError::kind)), and for an HTTP error answer carries the
    /// status, the provider's error type and message, the request id and the wait it asked for
    /// ([`AgentRunError::model_error`], [`AgentRunError::status`]).
    ///
    /// ```
    /// use toolsmith::prelude::*;
    /// use toolsmith::model::{ModelErrorKind, ModelHttpError};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let model = FunctionModel::new(|_, _| async {
    ///     Err(ModelHttpError::new(503, "openai", "gpt-4o", r#"{"error": {"message": "overloaded"}}"#).into())
    /// });
    /// let agent = Agent::builder(model).build().unwrap();
    /// match agent.run("hi").await.unwrap_err() {
    ///     AgentRunError::Model(e) => {
    ///         assert_eq!(e.kind, ModelErrorKind::Http);
    ///         assert_eq!(e.status(), Some(503));
    ///         assert_eq!(e.http.unwrap().provider_message(), "overloaded");
    ///     }
    ///     other => panic!("unexpected {other}"),
    /// }
    /// # }
    /// ```
    #[error(transparent)]
    Model(model_error::ModelError),
}

impl AgentRunError {
    /// The error's name: the variant's (`UnexpectedModelBehavior`, `UsageLimitExceeded`,
    /// `HookTimeout`, ...), `UserError`, the tool's error type for
    /// [`ToolFailed`](AgentRunError::ToolFailed) (`ToolError` unless the tool named it), and
    /// the [`ModelErrorKind`](model_error::ModelErrorKind) name for
    /// [`Model`](AgentRunError::Model) (`ModelHttpError`, `ModelApiError`, ...).
    pub fn kind(&self) -> &str {
        match self {
            AgentRunError::User(_) => "UserError",
            AgentRunError::ToolsetUnavailable(_) => "ToolsetUnavailable",
            AgentRunError::UnexpectedModelBehavior { .. } => "UnexpectedModelBehavior",
            AgentRunError::UsageLimitExceeded { .. } => "UsageLimitExceeded",
            AgentRunError::ToolFailed { kind, .. } => kind,
            AgentRunError::ToolPanicked { .. } => "ToolPanicked",
            AgentRunError::CapabilityPanicked { .. } => "CapabilityPanicked",
            AgentRunError::HookTimeout { .. } => "HookTimeout",
            AgentRunError::ModelPanicked { .. } => "ModelPanicked",
            AgentRunError::Panicked { .. } => "Panicked",
            AgentRunError::Retry(_) => "ModelRetry",
            AgentRunError::Model(e) => e.kind.name(),
        }
    }

    /// The error's message without its type.
    pub fn message(&self) -> String {
        match self {
            AgentRunError::ToolFailed { message, .. } => message.clone(),
            other => other.to_string(),
        }
    }

    /// The model's error, when the model (or its provider) failed.
    pub fn model_error(&self) -> Option<&model_error::ModelError> {
        match self {
            AgentRunError::Model(e) => Some(e),
            _ => None,
        }
    }

    /// The HTTP status of the provider's error answer, when the run ended with one.
    pub fn status(&self) -> Option<u16> {
        self.model_error().and_then(model_error::ModelError::status)
    }

    /// Whether this is a capability's request to retry the model (see [`AgentRunError::Retry`]).
    pub fn is_retry(&self) -> bool {
        matches!(self, AgentRunError::Retry(_))
    }

    /// Whether the run ended because code it called panicked (a tool, a capability, the model,
    /// ...).
    pub fn is_panic(&self) -> bool {
        matches!(
            self,
            AgentRunError::ToolPanicked { .. }
                | AgentRunError::CapabilityPanicked { .. }
                | AgentRunError::ModelPanicked { .. }
                | AgentRunError::Panicked { .. }
        )
    }

    pub(crate) fn unexpected(message: impl Into<String>) -> Self {
        AgentRunError::UnexpectedModelBehavior { message: message.into(), detail: None }
    }

    pub(crate) fn unexpected_because(message: impl Into<String>, detail: impl Into<String>) -> Self {
        AgentRunError::UnexpectedModelBehavior { message: message.into(), detail: Some(detail.into()) }
    }
}

impl From<ModelRetry> for AgentRunError {
    fn from(retry: ModelRetry) -> Self {
        AgentRunError::Retry(retry)
    }
}

/// An error value shared by clones of the error that carries it: the cause of a tool's failure
/// ([`AgentRunError::ToolFailed`], [`ToolError::Failed`](crate::tool::ToolError::Failed)).
///
/// It dereferences to the error itself, which the carrier's
/// [`source`](std::error::Error::source) also returns, so it can be downcast to its type.
#[derive(Clone)]
pub struct SharedError(std::sync::Arc<dyn std::error::Error + Send + Sync>);

impl SharedError {
    /// Shares `error`.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        SharedError(std::sync::Arc::new(error))
    }
}

impl From<Box<dyn std::error::Error + Send + Sync>> for SharedError {
    fn from(error: Box<dyn std::error::Error + Send + Sync>) -> Self {
        SharedError(error.into())
    }
}

impl std::ops::Deref for SharedError {
    type Target = dyn std::error::Error + Send + Sync;

    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl fmt::Debug for SharedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for SharedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

/// Ask the model to try again: the message is sent back to the model as the tool's answer, and
/// the call counts against the tool's retry budget.
///
/// ```
/// use toolsmith::prelude::*;
///
/// /// Look something up.
/// #[tool]
/// fn lookup(query: String) -> Result<String, ModelRetry> {
///     if query.is_empty() {
///         return Err(ModelRetry::new("The query must not be empty."));
///     }
///     Ok(format!("found {query}"))
/// }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRetry {
    /// What the model is told: a string, or a structured value such as a list of errors.
    pub content: Value,
}

impl ModelRetry {
    /// A retry with a text message.
    pub fn new(message: impl Into<String>) -> Self {
        ModelRetry { content: Value::String(message.into()) }
    }

    /// A retry whose content is any JSON value.
    pub fn with_content(content: Value) -> Self {
        ModelRetry { content }
    }

    /// The message as text (JSON for structured content).
    pub fn message(&self) -> String {
        match &self.content {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
}

impl fmt::Display for ModelRetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

/// The message of a caught panic (its `&str` or `String` payload).
pub(crate) fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}
