//! What can go wrong between a protocol request and a run.

/// A request the adapters refuse, with what is wrong in it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UiError {
    /// The body is not a request of the protocol.
    #[error("malformed {protocol} request: {message}")]
    Malformed {
        /// `AG-UI` or `Vercel AI`.
        protocol: &'static str,
        /// What the parser said.
        message: String,
    },
    /// A decision for a call that does not wait for approval (unknown, already answered, or an
    /// external call).
    #[error("tool call '{tool_call_id}' is not waiting for approval")]
    NotPending {
        /// The call the decision names.
        tool_call_id: String,
    },
    /// A decision for a call whose arguments are not those the call was made with: the client
    /// approved something else than what the run would execute.
    #[error("the approval of tool call '{tool_call_id}' was given for other arguments than the call's")]
    ArgumentsChanged {
        /// The call.
        tool_call_id: String,
    },
    /// A result for a call that waits for approval (it would answer the call without running it).
    #[error("tool call '{tool_call_id}' waits for approval: the request cannot give its result")]
    ResultForApproval {
        /// The call.
        tool_call_id: String,
    },
    /// A pending call was given no decision or result.
    #[error("tool call '{tool_call_id}' is waiting and the request neither decides nor answers it")]
    Undecided {
        /// The call.
        tool_call_id: String,
    },
    /// Decisions came while nothing waits for approval in this conversation.
    #[error("the request answers approvals but conversation '{conversation}' is not waiting for any")]
    NothingPending {
        /// The conversation (AG-UI thread, Vercel chat).
        conversation: String,
    },
    /// The request has no new message to answer and no decision.
    #[error("the request has neither a new user message nor approval decisions")]
    NoInput,
    /// The history store failed.
    #[error("history store: {message}")]
    Store {
        /// What the store said.
        message: String,
    },
    /// The request belongs to no conversation scope (see the axum server's
    /// `conversation_scope`).
    #[error("the request is not signed in to any conversation scope")]
    Unauthorized,
    /// A run of this conversation is still going on.
    #[error("conversation '{conversation}' already has a run going on")]
    Busy {
        /// The conversation.
        conversation: String,
    },
}
