//! The background tasks of a [`BackgroundTools`](super::BackgroundTools): started from a tool's
//! handler, each one's outcome queued for its conversation until a request delivers it.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::FutureExt;
use tokio::sync::{Notify, Semaphore};

use super::text;
use crate::error::{AgentRunError, panic_message};
use crate::messages::UserContent;
use crate::tool::{Invocation, ToolError, ToolResult};

tokio::task_local! {
    /// Set inside a background task: the call it runs is not scheduled again.
    static IN_BACKGROUND: ();
}

/// Whether the current code runs inside a background task.
pub(super) fn in_background() -> bool {
    IN_BACKGROUND.try_with(|_| ()).is_ok()
}

/// A background call still running, as [`BackgroundTools::running`](super::BackgroundTools::running) lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BackgroundTask {
    /// The task's id: the id of the tool call that started it.
    pub task_id: String,
    /// The tool.
    pub tool_name: String,
    /// The conversation whose next request gets its result.
    pub conversation_id: String,
}

/// How a finished call settles with the model.
pub(super) enum Settled {
    /// Its result: resets the tool's retry count.
    Returned(Vec<UserContent>),
    /// A failure the model is told about; `retry` when it counts toward the tool's retries.
    Failed { content: Vec<UserContent>, retry: bool },
    /// A failure that ends the run, as it would for a call in the foreground.
    Fatal(AgentRunError),
}

pub(super) struct Outcome {
    pub(super) task_id: String,
    pub(super) conversation: Arc<str>,
    pub(super) tool_name: String,
    pub(super) max_retries: u32,
    pub(super) settled: Settled,
}

struct Live {
    tool_name: String,
    conversation: Arc<str>,
    abort: Option<tokio::task::AbortHandle>,
}

#[derive(Default)]
struct State {
    live: HashMap<String, Live>,
    /// Outcomes in the order they finished.
    arrived: Vec<Outcome>,
    /// Per conversation and tool, the failures delivered since its last result.
    retries: HashMap<(Arc<str>, String), u32>,
}

/// What the clones of one capability share: every run's tasks and outcomes.
pub(super) struct Shared {
    state: Mutex<State>,
    arrived: Notify,
    limit: Option<Arc<Semaphore>>,
}

impl Shared {
    pub(super) fn new(max_concurrent: Option<usize>) -> Self {
        Shared {
            state: Mutex::new(State::default()),
            arrived: Notify::new(),
            limit: max_concurrent.map(|n| Arc::new(Semaphore::new(n))),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts the call `invoke` makes as a background task on `runtime`.
    #[allow(clippy::too_many_arguments, reason = "the call's parts, each needed by the task")]
    pub(super) fn spawn(
        self: &Arc<Self>,
        runtime: &tokio::runtime::Handle,
        invoke: Box<dyn FnOnce() -> Invocation + Send>,
        task_id: String,
        tool_name: String,
        conversation: Arc<str>,
        max_retries: u32,
        timeout: Option<Duration>,
    ) {
        self.lock().live.insert(
            task_id.clone(),
            Live { tool_name: tool_name.clone(), conversation: conversation.clone(), abort: None },
        );
        let shared = self.clone();
        let permits = self.limit.clone();
        let id = task_id.clone();
        let handle = runtime.spawn(async move {
            // Waits for a free place under `max_concurrent` before the tool runs.
            let _permit = match permits {
                Some(s) => s.acquire_owned().await.ok(),
                None => None,
            };
            // The handler is called inside the task, where another `BackgroundTools` it passes
            // through runs the call in place rather than scheduling it again.
            let result = IN_BACKGROUND
                .scope((), async move {
                    let invocation = std::panic::catch_unwind(AssertUnwindSafe(invoke))
                        .unwrap_or_else(|p| Invocation::Ready(Err(ToolError::Panicked { message: panic_message(p) })));
                    run(invocation, timeout).await
                })
                .await;
            let settled = settle(&tool_name, &id, result);
            shared.finish(&id.clone(), Outcome { task_id: id, conversation, tool_name, max_retries, settled });
        });
        if let Some(live) = self.lock().live.get_mut(&task_id) {
            live.abort = Some(handle.abort_handle());
        }
    }

    /// Queues a finished task's outcome, unless it was cancelled meanwhile.
    fn finish(&self, task_id: &str, outcome: Outcome) {
        let mut state = self.lock();
        if state.live.remove(task_id).is_some() {
            state.arrived.push(outcome);
        }
        drop(state);
        self.arrived.notify_waiters();
    }

    pub(super) fn running(&self) -> Vec<BackgroundTask> {
        let mut tasks: Vec<BackgroundTask> = self
            .lock()
            .live
            .iter()
            .map(|(id, live)| BackgroundTask {
                task_id: id.clone(),
                tool_name: live.tool_name.clone(),
                conversation_id: live.conversation.to_string(),
            })
            .collect();
        tasks.sort_by(|a, b| a.task_id.cmp(&b.task_id));
        tasks
    }

    /// The finished tasks whose outcome waits for a request of their conversation.
    pub(super) fn undelivered(&self) -> Vec<BackgroundTask> {
        let state = self.lock();
        state
            .arrived
            .iter()
            .map(|o| BackgroundTask {
                task_id: o.task_id.clone(),
                tool_name: o.tool_name.clone(),
                conversation_id: o.conversation.to_string(),
            })
            .collect()
    }

    /// Drops everything kept for `conversation`: its running tasks (stopped), its outcomes and
    /// its retry counts. How many tasks and outcomes there were.
    pub(super) fn discard(&self, conversation: &str) -> usize {
        let mut state = self.lock();
        let running: Vec<String> =
            state.live.iter().filter(|(_, l)| &*l.conversation == conversation).map(|(id, _)| id.clone()).collect();
        for id in &running {
            if let Some(abort) = state.live.remove(id).and_then(|l| l.abort) {
                abort.abort();
            }
        }
        let before = state.arrived.len();
        state.arrived.retain(|o| &*o.conversation != conversation);
        state.retries.retain(|(c, _), _| &**c != conversation);
        let dropped = running.len() + before - state.arrived.len();
        drop(state);
        // A run waiting for these tasks goes on without them.
        self.arrived.notify_waiters();
        dropped
    }

    /// Stops a running task; the model is told it was cancelled.
    pub(super) fn cancel(&self, task_id: &str) -> bool {
        let mut state = self.lock();
        let Some(live) = state.live.remove(task_id) else { return false };
        if let Some(abort) = &live.abort {
            abort.abort();
        }
        let content = text::failure(&live.tool_name, task_id, "The task was cancelled.", "CancelledError");
        state.arrived.push(Outcome {
            task_id: task_id.to_string(),
            conversation: live.conversation,
            tool_name: live.tool_name,
            max_retries: u32::MAX,
            settled: Settled::Failed { content, retry: false },
        });
        drop(state);
        self.arrived.notify_waiters();
        true
    }

    /// The outcomes of `conversation` that have arrived, in the order they finished; at the end of
    /// a run with none yet but tasks still running, waits for the next.
    pub(super) async fn take(&self, conversation: &str, wait: bool) -> Vec<Outcome> {
        // Tasks ready to go on get their turn first (as the reference's event loop gives it
        // between nodes): a task that finishes without waiting is delivered now.
        if self.lock().live.values().any(|l| &*l.conversation == conversation) {
            tokio::task::yield_now().await;
        }
        loop {
            let notified = self.arrived.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = self.lock();
                let (mine, others): (Vec<Outcome>, Vec<Outcome>) =
                    std::mem::take(&mut state.arrived).into_iter().partition(|o| &*o.conversation == conversation);
                state.arrived = others;
                let running = state.live.values().any(|l| &*l.conversation == conversation);
                if !mine.is_empty() || !wait || !running {
                    return mine;
                }
            }
            notified.await;
        }
    }

    /// Outcomes taken but not delivered (the run ended with an error first), kept for a later run.
    pub(super) fn put_back(&self, outcomes: Vec<Outcome>) {
        let mut state = self.lock();
        let later = std::mem::take(&mut state.arrived);
        state.arrived = outcomes;
        state.arrived.extend(later);
    }

    /// Charges a delivered failure to its tool's retry count (an error once the count is spent),
    /// or resets the count for a result: the tool's count after it, when it settles one.
    pub(super) fn charge(&self, outcome: &Outcome) -> Result<Option<u32>, AgentRunError> {
        let mut state = self.lock();
        let key = (outcome.conversation.clone(), outcome.tool_name.clone());
        match &outcome.settled {
            Settled::Returned(_) => {
                state.retries.remove(&key);
                Ok(Some(0))
            }
            Settled::Failed { retry: true, .. } => {
                let count = state.retries.entry(key).or_insert(0);
                if *count >= outcome.max_retries {
                    return Err(AgentRunError::unexpected(
                        ToolError::RetriesExhausted {
                            tool: outcome.tool_name.clone(),
                            max_retries: outcome.max_retries,
                        }
                        .to_string(),
                    ));
                }
                *count += 1;
                Ok(Some(*count))
            }
            Settled::Failed { .. } | Settled::Fatal(_) => Ok(None),
        }
    }
}

/// Seconds as Python prints a float (`0.05`, `5.0`), as the core's timeout message has them.
fn py_float(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e16 { format!("{v:.1}") } else { format!("{v}") }
}

/// Runs the tool under its timeout, its panics caught.
async fn run(invocation: Invocation, timeout: Option<Duration>) -> ToolResult {
    let timed_out = || {
        let secs = timeout.map_or(0.0, |t| t.as_secs_f64());
        ToolError::Retry(crate::tool::ModelRetry::new(format!("Timed out after {} seconds.", py_float(secs))))
    };
    let running = async move {
        match invocation {
            Invocation::Ready(result) => result,
            Invocation::Async(fut) => AssertUnwindSafe(fut)
                .catch_unwind()
                .await
                .unwrap_or_else(|p| Err(ToolError::Panicked { message: panic_message(p) })),
            Invocation::Blocking(f) => match tokio::task::spawn_blocking(f).await {
                Ok(result) => result,
                Err(e) if e.is_panic() => Err(ToolError::Panicked { message: panic_message(e.into_panic()) }),
                Err(e) => Err(ToolError::Panicked { message: e.to_string() }),
            },
        }
    };
    match timeout {
        Some(t) => tokio::time::timeout(t, running).await.unwrap_or_else(|_| Err(timed_out())),
        None => running.await,
    }
}

/// How a call's result reaches the model (see the harness's `_format_background_failure`).
fn settle(tool_name: &str, task_id: &str, result: ToolResult) -> Settled {
    let failed = |message: &str, kind: &str, retry: bool| Settled::Failed {
        content: text::failure(tool_name, task_id, message, kind),
        retry,
    };
    match result {
        Ok(output) => Settled::Returned(text::result(tool_name, task_id, output)),
        Err(ToolError::Retry(retry)) => {
            let message = match &retry.content {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            failed(&message, "ModelRetry", true)
        }
        Err(ToolError::Validation(errors)) => {
            failed(&crate::validation::errors_for_model(&errors).to_string(), "ValidationError", true)
        }
        Err(ToolError::ApprovalRequired(_)) => failed(
            "ApprovalRequired was raised; background tools cannot defer a running task.",
            "ApprovalRequired",
            false,
        ),
        Err(ToolError::CallDeferred(_)) => {
            failed("CallDeferred was raised; background tools cannot defer a running task.", "CallDeferred", false)
        }
        Err(ToolError::Failed { kind, message, source }) => {
            Settled::Fatal(AgentRunError::ToolFailed { tool: tool_name.to_string(), kind, message, source })
        }
        Err(ToolError::Panicked { message }) => {
            Settled::Fatal(AgentRunError::ToolPanicked { tool: tool_name.to_string(), message })
        }
        Err(e @ ToolError::RetriesExhausted { .. }) => Settled::Fatal(AgentRunError::unexpected(e.to_string())),
    }
}
