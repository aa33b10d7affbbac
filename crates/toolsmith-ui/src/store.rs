//! Where a conversation's history is kept between requests: the messages so far and the calls
//! its last run ended with, waiting for decisions.

use std::collections::HashMap;
use std::sync::Mutex;

use futures::future::BoxFuture;
use toolsmith::deferred::DeferredToolRequests;
use toolsmith::messages::ModelMessage;

use crate::error::UiError;

/// A conversation as the server keeps it.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Conversation {
    /// Every message so far.
    pub messages: Vec<ModelMessage>,
    /// The calls the last run ended with, waiting for approval (what decisions are bound to).
    pub pending: Option<DeferredToolRequests>,
}

impl Conversation {
    /// A conversation with these messages and pending calls.
    pub fn new(messages: Vec<ModelMessage>, pending: Option<DeferredToolRequests>) -> Self {
        Conversation { messages, pending }
    }
}

/// Keeps conversations by id (an application's database, say). Decisions a client sends are
/// bound to the `pending` calls loaded from here, not to anything the client says it was shown.
pub trait HistoryStore: Send + Sync + 'static {
    /// The conversation, if there is one.
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Conversation>, UiError>>;
    /// Replaces the conversation.
    fn save<'a>(&'a self, id: &'a str, conversation: Conversation) -> BoxFuture<'a, Result<(), UiError>>;
}

/// Conversations in memory (the default), for one process.
#[derive(Debug, Default)]
pub struct MemoryHistoryStore {
    conversations: Mutex<HashMap<String, Conversation>>,
}

impl MemoryHistoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Conversation>> {
        self.conversations.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl HistoryStore for MemoryHistoryStore {
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Conversation>, UiError>> {
        let found = self.lock().get(id).cloned();
        Box::pin(std::future::ready(Ok(found)))
    }

    fn save<'a>(&'a self, id: &'a str, conversation: Conversation) -> BoxFuture<'a, Result<(), UiError>> {
        self.lock().insert(id.to_string(), conversation);
        Box::pin(std::future::ready(Ok(())))
    }
}
