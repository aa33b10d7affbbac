//! The bridge between a run's hooks and the Restate context: each step the run asks for
//! becomes one `ctx.run` entry of the invocation's journal.
//!
//! A capability lives as long as the agent (`'static`) while the Restate context lives as long
//! as the handler call, so the hooks cannot hold the context. Instead they send each step to
//! [`drive`], which runs beside the agent run in the handler's task and owns the context:
//!
//! 1. the hook sends the step's name and three one-shot channels;
//! 2. `drive` creates the `ctx.run` entries in the order the steps arrive, one at a time (the
//!    SDK journals one `ctx.run` at a time), so that the journal's order is the run's order;
//! 3. when the step is new, Restate calls the closure, which tells the hook to do the work and
//!    waits for its encoded result; Restate records it and acknowledges it;
//! 4. when the step is replayed, Restate returns the recorded result without calling the
//!    closure: the hook never does the work and decodes the result instead.
//!
//! The hook that does the work keeps its own result (not the decoded one) once the journal has
//! acknowledged it: a step counts as done only when it is durable.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use chrono::{DateTime, Utc};
use restate_sdk::context::{ContextSideEffects, ObjectContext, RunFuture};
use restate_sdk::errors::{HandlerError, TerminalError};
use restate_sdk::serde::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{Notify, mpsc, oneshot};

use crate::source::ReplaySource;

/// What a step leaves in the journal: its result, and when it finished (the run's clock).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Recorded {
    pub(crate) at: DateTime<Utc>,
    pub(crate) value: Value,
}

struct StepRequest {
    name: String,
    /// Fired when the step is new and its work must be done.
    execute: Option<oneshot::Sender<()>>,
    /// The work's encoded result.
    result: oneshot::Receiver<Recorded>,
    /// The journaled result (the new one once acknowledged, or the replayed one).
    done: oneshot::Sender<Result<Recorded, TerminalError>>,
}

/// Why a step has no result.
#[derive(Debug)]
pub(crate) enum StepError {
    /// The handler stopped driving the journal (the invocation is ending).
    Closed,
    /// Restate answered the step with a failure.
    Journal(TerminalError),
    /// The recorded result does not decode as this step's kind.
    Decode(String),
}

impl std::fmt::Display for StepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StepError::Closed => f.write_str("the durable invocation stopped before the step was journaled"),
            StepError::Journal(e) => write!(f, "Restate failed the journaled step: {}", e.message()),
            StepError::Decode(e) => write!(f, "the journaled step's result does not decode: {e}"),
        }
    }
}

/// The hooks' side: sends steps to [`drive`].
#[derive(Clone)]
pub(crate) struct Journal {
    tx: mpsc::UnboundedSender<StepRequest>,
    source: Arc<ReplaySource>,
}

/// The handler's side: the steps to journal, in the order they were asked for.
pub(crate) struct Steps(mpsc::UnboundedReceiver<StepRequest>);

impl Journal {
    pub(crate) fn new(source: Arc<ReplaySource>) -> (Journal, Steps) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Journal { tx, source }, Steps(rx))
    }

    /// Runs `work` as a journaled step named `name`, or replays its recorded result.
    ///
    /// The step is sent when this function is called, before its future is first polled, so
    /// steps that start in a deterministic order (the calls of one response, started in call
    /// order) are journaled in that order.
    pub(crate) fn step<'a, T, W, Fut>(
        &'a self,
        name: String,
        work: W,
        encode: fn(&T) -> Value,
        decode: fn(Value) -> Result<T, String>,
    ) -> impl Future<Output = Result<T, StepError>> + Send + 'a
    where
        T: Send + 'a,
        W: FnOnce() -> Fut + Send + 'a,
        Fut: Future<Output = T> + Send + 'a,
    {
        let (execute_tx, execute_rx) = oneshot::channel();
        let (result_tx, result_rx) = oneshot::channel();
        let (done_tx, done_rx) = oneshot::channel();
        let sent =
            self.tx.send(StepRequest { name, execute: Some(execute_tx), result: result_rx, done: done_tx }).is_ok();
        async move {
            if !sent {
                return Err(StepError::Closed);
            }
            if execute_rx.await.is_ok() {
                // A new step: do the work, hand its result to the journal and wait for the
                // acknowledgement.
                let output = work().await;
                let at = Utc::now();
                let _ = result_tx.send(Recorded { at, value: encode(&output) });
                return match done_rx.await {
                    Ok(Ok(recorded)) => {
                        self.source.advance(recorded.at);
                        Ok(output)
                    }
                    Ok(Err(e)) => Err(StepError::Journal(e)),
                    Err(_) => Err(StepError::Closed),
                };
            }
            // Replayed: Restate did not call the closure.
            match done_rx.await {
                Ok(Ok(recorded)) => {
                    self.source.advance(recorded.at);
                    decode(recorded.value).map_err(StepError::Decode)
                }
                Ok(Err(e)) => Err(StepError::Journal(e)),
                Err(_) => Err(StepError::Closed),
            }
        }
    }
}

/// Drives `run` to its end while journaling, through `ctx`, the steps it asks for.
///
/// The SDK journals one `ctx.run` at a time, so the entries are made one after the other, in
/// the order the steps arrived. The work need not wait for that: the journal is a prefix of the
/// run, so once one step has turned out to be new (Restate called its closure), every later
/// step is new too, and their work is started at once (the calls of one response run in
/// parallel); each entry then records its work's result in turn.
pub(crate) async fn drive<F: Future>(ctx: &ObjectContext<'_>, steps: Steps, run: F) -> F::Output {
    let Steps(mut rx) = steps;
    let mut run = pin!(run);
    let live = Arc::new(Live { flag: AtomicBool::new(false), flipped: Notify::new() });
    let mut queue: VecDeque<StepRequest> = VecDeque::new();
    let mut current = None;
    loop {
        if live.flag.load(Ordering::Acquire) {
            for waiting in &mut queue {
                if let Some(execute) = waiting.execute.take() {
                    let _ = execute.send(());
                }
            }
        }
        if current.is_none() {
            current = queue.pop_front().map(|request| Box::pin(journal_step(ctx, request, live.clone())));
        }
        tokio::select! {
            biased;
            Some(request) = rx.recv() => queue.push_back(request),
            () = live.flipped.notified(), if !live.flag.load(Ordering::Acquire) => {}
            () = async { if let Some(step) = current.as_mut() { step.await } }, if current.is_some() => current = None,
            output = &mut run => return output,
        }
    }
}

/// Whether the run has gone past its journal (its steps are new).
struct Live {
    flag: AtomicBool,
    flipped: Notify,
}

/// One `ctx.run` entry for a step; its outcome goes back to the hook.
fn journal_step<'ctx>(
    ctx: &ObjectContext<'ctx>,
    request: StepRequest,
    live: Arc<Live>,
) -> impl Future<Output = ()> + 'ctx {
    let StepRequest { name, execute, result, done } = request;
    let entry = ctx
        .run(move || async move {
            // Restate calls the closure: this step, and every later one, is new.
            if !live.flag.swap(true, Ordering::AcqRel) {
                live.flipped.notify_one();
            }
            if let Some(execute) = execute {
                let _ = execute.send(());
            }
            match result.await {
                Ok(recorded) => Ok(Json(recorded)),
                // The run dropped the step (it was cancelled): nothing to record.
                Err(_) => Err(HandlerError::from(TerminalError::new("the step was cancelled before it finished"))),
            }
        })
        .name(name);
    async move {
        let _ = done.send(entry.await.map(|Json(recorded)| recorded));
    }
}
