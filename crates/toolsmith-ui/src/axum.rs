//! axum handlers (feature `axum`): an agent served over AG-UI and the Vercel AI data stream, as
//! server-sent events.
//!
//! Each request runs the agent in a task of its own. The response streams the run's events; a
//! client that goes away (the browser tab closed, the request aborted) drops the response, which
//! cancels the run. The conversation's history lives in a [`HistoryStore`] (in memory by
//! default), saved when a run ends and before its last events are sent; approval decisions are
//! bound to the calls the stored conversation waits on, so a client cannot approve a call that
//! is not pending, or approve it with other arguments than the run would use; an approval whose
//! run was cut short is not run again (its deferral was used: the core refuses a second resume).
//! A conversation the store holds goes on from the stored history: the client's copy of the
//! earlier messages is not read (only its new message, decisions and results); the client's
//! messages are the history only of a conversation the store does not know.
//! A new message while calls wait closes them out as interrupted. One run per conversation at a
//! time. Dependencies are made per request, from its headers and input; with
//! [`conversation_scope`](UiServerBuilder::conversation_scope), conversations are kept per user
//! (or any scope the headers tell), so one user's decisions never reach another's calls.
//!
//! ```no_run
//! use toolsmith::prelude::*;
//! use toolsmith_ui::axum::UiServer;
//!
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let agent = Agent::builder(FunctionModel::sync(|_, _| ModelResponse::text("Hello!"))).allow_deferred().build()?;
//! let app = UiServer::builder(agent).build().router(); // POST /ag-ui, POST /vercel-ai
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
//! axum::serve(listener, app).await?;
//! # Ok(())
//! # }
//! ```

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use toolsmith::agent::{AgentEvent, Deferrable};
use toolsmith::deferred::DeferredToolRequests;
use toolsmith::{Agent, AgentRunError};

use crate::ag_ui::{AgUiStream, RunAgentInput};
use crate::error::UiError;
use crate::input::UiRunInput;
use crate::store::{Conversation, HistoryStore, MemoryHistoryStore};
use crate::vercel_ai::{STREAM_HEADER, SdkVersion, VercelAiStream, VercelRequest};

type DepsFn<D> = dyn Fn(&HeaderMap, &UiRunInput) -> D + Send + Sync;
type ScopeFn = dyn Fn(&HeaderMap) -> Option<String> + Send + Sync;

/// Serves an agent over both protocols.
pub struct UiServer<D, O> {
    inner: Arc<Inner<D, O>>,
}

impl<D, O> Clone for UiServer<D, O> {
    fn clone(&self) -> Self {
        UiServer { inner: self.inner.clone() }
    }
}

impl<D, O> std::fmt::Debug for UiServer<D, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UiServer").field("sdk_version", &self.inner.sdk_version).finish_non_exhaustive()
    }
}

struct Inner<D, O> {
    agent: Agent<D, Deferrable<O>>,
    store: Arc<dyn HistoryStore>,
    deps: Arc<DepsFn<D>>,
    scope: Option<Arc<ScopeFn>>,
    sdk_version: SdkVersion,
    running: Mutex<HashSet<String>>,
}

/// Builds a [`UiServer`].
#[must_use]
pub struct UiServerBuilder<D, O> {
    agent: Agent<D, Deferrable<O>>,
    store: Arc<dyn HistoryStore>,
    deps: Arc<DepsFn<D>>,
    scope: Option<Arc<ScopeFn>>,
    sdk_version: SdkVersion,
}

impl<D, O> std::fmt::Debug for UiServerBuilder<D, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UiServerBuilder").field("sdk_version", &self.sdk_version).finish_non_exhaustive()
    }
}

impl<D, O> UiServerBuilder<D, O> {
    /// Where conversations are kept ([`MemoryHistoryStore`] by default).
    pub fn store(mut self, store: impl HistoryStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// Makes each request's dependencies from its headers (a user from a session cookie, say)
    /// and its input (AG-UI's `state` and `forwardedProps`, the conversation's id).
    pub fn deps(mut self, deps: impl Fn(&HeaderMap, &UiRunInput) -> D + Send + Sync + 'static) -> Self {
        self.deps = Arc::new(deps);
        self
    }

    /// Whose conversations a request may reach, from its headers (the signed-in user, say):
    /// conversations are kept per scope, so the same conversation id sent by two users names
    /// two conversations, and one user's decisions never reach another's calls. A request for
    /// which it gives `None` is refused (401). Without it, a conversation is reached by its id
    /// alone.
    pub fn conversation_scope(mut self, scope: impl Fn(&HeaderMap) -> Option<String> + Send + Sync + 'static) -> Self {
        self.scope = Some(Arc::new(scope));
        self
    }

    /// The Vercel AI SDK version the `/vercel-ai` route speaks (v6 by default: approvals).
    pub fn sdk_version(mut self, version: SdkVersion) -> Self {
        self.sdk_version = version;
        self
    }

    /// The server.
    pub fn build(self) -> UiServer<D, O> {
        UiServer {
            inner: Arc::new(Inner {
                agent: self.agent,
                store: self.store,
                deps: self.deps,
                scope: self.scope,
                sdk_version: self.sdk_version,
                running: Mutex::default(),
            }),
        }
    }
}

/// One protocol's stream, as server-sent event frames.
trait Frames: Send {
    fn client_answered(&mut self, ids: Vec<String>);
    fn start(&mut self) -> Vec<String>;
    fn event(&mut self, event: &AgentEvent) -> Vec<String>;
    fn finish(&mut self, result: Result<Option<&DeferredToolRequests>, &AgentRunError>) -> Vec<String>;
}

impl Frames for AgUiStream {
    fn client_answered(&mut self, ids: Vec<String>) {
        AgUiStream::client_answered(self, ids);
    }
    fn start(&mut self) -> Vec<String> {
        AgUiStream::start(self).iter().map(|e| e.to_sse()).collect()
    }
    fn event(&mut self, event: &AgentEvent) -> Vec<String> {
        AgUiStream::event(self, event).iter().map(|e| e.to_sse()).collect()
    }
    fn finish(&mut self, result: Result<Option<&DeferredToolRequests>, &AgentRunError>) -> Vec<String> {
        AgUiStream::finish(self, result).iter().map(|e| e.to_sse()).collect()
    }
}

impl Frames for VercelAiStream {
    fn client_answered(&mut self, ids: Vec<String>) {
        VercelAiStream::client_answered(self, ids);
    }
    fn start(&mut self) -> Vec<String> {
        VercelAiStream::start(self).iter().map(|c| c.to_sse()).collect()
    }
    fn event(&mut self, event: &AgentEvent) -> Vec<String> {
        VercelAiStream::event(self, event).iter().map(|c| c.to_sse()).collect()
    }
    fn finish(&mut self, result: Result<Option<&DeferredToolRequests>, &AgentRunError>) -> Vec<String> {
        VercelAiStream::finish(self, result).iter().map(|c| c.to_sse()).collect()
    }
}

impl<D: Default + 'static, O> UiServer<D, O> {
    /// A server for `agent`, each request with `D::default()` as its dependencies.
    pub fn builder(agent: Agent<D, Deferrable<O>>) -> UiServerBuilder<D, O> {
        UiServerBuilder {
            agent,
            store: Arc::new(MemoryHistoryStore::new()),
            deps: Arc::new(|_, _| D::default()),
            scope: None,
            sdk_version: SdkVersion::V6,
        }
    }
}

impl<D, O> UiServer<D, O>
where
    D: Clone + Send + Sync + 'static,
    O: Send + Sync + 'static,
{
    /// `POST /ag-ui` (AG-UI) and `POST /vercel-ai` (the Vercel AI data stream).
    pub fn router(&self) -> Router {
        Router::new()
            .route("/ag-ui", post(|State(s): State<Self>, headers: HeaderMap, body: Bytes| async move { s.ag_ui(headers, body).await }))
            .route(
                "/vercel-ai",
                post(|State(s): State<Self>, headers: HeaderMap, body: Bytes| async move { s.vercel_ai(headers, body).await }),
            )
            .with_state(self.clone())
    }

    /// Answers an AG-UI request (a `RunAgentInput` body) with the run's events.
    pub async fn ag_ui(&self, headers: HeaderMap, body: Bytes) -> Response {
        let request = match RunAgentInput::from_json(&body) {
            Ok(r) => r,
            Err(e) => return refusal(e),
        };
        match request.to_run_input() {
            Ok(input) => self.serve(&headers, input, Box::new(AgUiStream::for_request(&request)), None).await,
            Err(e) => refusal(e),
        }
    }

    /// Answers a Vercel AI chat request with the UI message stream.
    pub async fn vercel_ai(&self, headers: HeaderMap, body: Bytes) -> Response {
        let input = match VercelRequest::from_json(&body).and_then(|r| r.to_run_input()) {
            Ok(input) => input,
            Err(e) => return refusal(e),
        };
        let stream = VercelAiStream::builder().sdk_version(self.inner.sdk_version).build();
        self.serve(&headers, input, Box::new(stream), Some(STREAM_HEADER)).await
    }

    async fn serve(
        &self,
        headers: &HeaderMap,
        input: UiRunInput,
        mut frames: Box<dyn Frames>,
        extra: Option<(&'static str, &'static str)>,
    ) -> Response {
        let id = match &self.inner.scope {
            None => input.conversation_id.clone(),
            Some(scope) => match scope(headers) {
                // The scope's length first: no scope and id can be read as another pair.
                Some(scope) => format!("{}:{scope}:{}", scope.len(), input.conversation_id),
                None => return refusal(UiError::Unauthorized),
            },
        };
        let Some(claim) = Claim::take(&self.inner, &id) else {
            return refusal(UiError::Busy { conversation: input.conversation_id.clone() });
        };
        let (mut history, pending) = match self.inner.store.load(&id).await {
            Ok(Some(c)) => (c.messages, c.pending),
            Ok(None) => (input.history.clone(), None),
            Err(e) => return refusal(e),
        };
        let results = match &pending {
            Some(p) if input.answers(p) => match input.deferred_results(p) {
                Ok(r) => Some(r),
                Err(e) => return refusal(e),
            },
            _ if !input.decisions.is_empty() => {
                return refusal(UiError::NothingPending { conversation: input.conversation_id.clone() });
            }
            _ => None,
        };
        if results.is_none() && input.prompt.is_none() {
            return refusal(UiError::NoInput);
        }
        if let Some(r) = &results {
            frames.client_answered(r.calls.keys().cloned().collect());
        }
        let deps = (self.inner.deps)(headers, &input);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        for frame in frames.start() {
            let _ = tx.send(frame);
        }
        let frames = Arc::new(Mutex::new(frames));
        let inner = self.inner.clone();
        let task = tokio::spawn(async move {
            let _claim = claim;
            let (sink, sink_tx) = (frames.clone(), tx.clone());
            let handler = move |event: AgentEvent| {
                for frame in lock(&sink).event(&event) {
                    let _ = sink_tx.send(frame);
                }
            };
            let run = match results {
                Some(results) => inner.agent.resume().deferred_tool_results(results),
                // A new message while calls wait: they are closed out as interrupted (the
                // person wrote instead of deciding), and the conversation goes on.
                None => {
                    history = toolsmith::messages::repair_messages(history, true);
                    inner.agent.run(input.prompt.unwrap_or_default())
                }
            };
            let result = run.message_history(history).deps(deps).event_handler(handler).await;
            let tail = match &result {
                Ok(r) => {
                    let saved = Conversation::new(r.all_messages().to_vec(), r.deferred().cloned());
                    match inner.store.save(&id, saved).await {
                        Ok(()) => lock(&frames).finish(Ok(r.deferred())),
                        Err(e) => {
                            lock(&frames).finish(Err(&AgentRunError::User(toolsmith::UserError::new(e.to_string()))))
                        }
                    }
                }
                Err(e) => lock(&frames).finish(Err(e)),
            };
            for frame in tail {
                let _ = tx.send(frame);
            }
        });
        // Dropped with the response body: a client that goes away cancels the run.
        let abort = AbortOnDrop(task.abort_handle());
        let body = futures::stream::poll_fn(move |cx| {
            let _ = &abort;
            rx.poll_recv(cx).map(|frame| frame.map(Ok::<_, Infallible>))
        });
        let mut response = Response::new(Body::from_stream(body));
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, header::HeaderValue::from_static("text/event-stream"));
        headers.insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-cache"));
        // Proxies that buffer responses (nginx) pass server-sent events on at once.
        headers.insert("x-accel-buffering", header::HeaderValue::from_static("no"));
        if let Some((name, value)) = extra {
            headers.insert(name, header::HeaderValue::from_static(value));
        }
        response
    }
}

fn lock<T: ?Sized>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A refused request: the status its error calls for and `{"error": "..."}`.
fn refusal(e: UiError) -> Response {
    let status = match &e {
        UiError::Malformed { .. } | UiError::NoInput => StatusCode::BAD_REQUEST,
        UiError::Store { .. } => StatusCode::INTERNAL_SERVER_ERROR,
        UiError::Unauthorized => StatusCode::UNAUTHORIZED,
        _ => StatusCode::CONFLICT,
    };
    (status, axum::Json(serde_json::json!({ "error": e.to_string() }))).into_response()
}

/// A conversation's run going on; released when the run's task ends (or is cancelled).
struct Claim<D, O> {
    inner: Arc<Inner<D, O>>,
    id: String,
}

impl<D, O> Claim<D, O> {
    fn take(inner: &Arc<Inner<D, O>>, id: &str) -> Option<Self> {
        lock(&inner.running).insert(id.to_string()).then(|| Claim { inner: inner.clone(), id: id.to_string() })
    }
}

impl<D, O> Drop for Claim<D, O> {
    fn drop(&mut self) {
        lock(&self.inner.running).remove(&self.id);
    }
}

struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
