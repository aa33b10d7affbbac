//! The bridge between a run's hooks and the Restate context: the steps a run asks for (model
//! requests and tool calls) are recorded in the invocation's journal **in the order they
//! finish**, each as soon as it has finished.
//!
//! A capability lives as long as the agent (`'static`) while the Restate context lives as long
//! as the handler call, so the hooks cannot hold the context. Instead they ask [`drive`], which
//! runs beside the agent run in the handler's task and owns the context.
//!
//! # Why completion order
//!
//! The calls of one response run in parallel and finish in any order. Recording them in call
//! order would keep a fast call that finished behind a slow earlier one out of the journal until
//! the slow one ended: a crash in between would run the finished call again. The Restate SDK
//! journals one `ctx.run` at a time, and a replay requires every `ctx.run` made before the last
//! one to have its result; so instead of one `ctx.run` per step, the journal holds a sequence of
//! **entries**, each a `ctx.run` named by its position (`steps 0`, `steps 1`, ...), made one after
//! the other:
//!
//! - [`Entry::Results`]: the steps that finished since the previous entry, by key, with their
//!   results. While the run is live, an entry is made as soon as one step has finished, holding
//!   every step finished by then; the steps that finish while it is being acknowledged go into
//!   the next one. A finished step waits at most for one acknowledgement round trip to Restate,
//!   whatever the other steps do.
//! - [`Entry::Live`]: the journal ended here when the invocation was (re)started, and the run
//!   went on past it: every step not found in an entry before this one was started then.
//!
//! # Replay
//!
//! When the invocation is retried after a crash, the run asks for the same steps again (a run is
//! deterministic given its steps' results). [`drive`] answers each from the entries: while some
//! step the run waits on has no recorded result, it makes the next entry. Restate returns a
//! recorded entry without calling its closure, and [`drive`] hands each recorded result to the
//! step it names (keeping those the run has not asked for yet). When the journal has no entry
//! there, Restate calls the closure: it records [`Entry::Live`], and the steps still waiting
//! start their work. A step whose result was journaled is never run again; a step that was
//! running (or had finished but was not yet acknowledged) when the process died runs again.
//!
//! Before making an entry while replaying, [`drive`] lets the run go as far as it can (it polls
//! the run until it waits, outside tokio's cooperative budget), so that an entry is made exactly
//! where the first execution made one.

use std::collections::HashMap;
use std::future::Future;
use std::pin::pin;
use std::task::Poll;

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use restate_sdk::context::{ContextSideEffects, ObjectContext, RunFuture};
use restate_sdk::errors::TerminalError;
use restate_sdk::serde::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

use crate::source::ReplaySource;

/// What a step leaves in the journal: its result, and when it finished (the run's clock).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Recorded {
    pub(crate) at: DateTime<Utc>,
    pub(crate) value: Value,
}

/// One step's result in an [`Entry::Results`].
#[derive(Debug, Serialize, Deserialize)]
struct StepResult {
    /// The step's key: unique within a run (`model <step>`, `tool <step> <name> <call id>`).
    step: String,
    #[serde(flatten)]
    recorded: Recorded,
}

/// One journal entry (one `ctx.run`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "entry", rename_all = "snake_case")]
enum Entry {
    /// The invocation went on past its journal here.
    Live,
    /// Steps that finished, in the order they finished.
    Results { steps: Vec<StepResult> },
}

/// Why a step has no result.
#[derive(Debug)]
pub(crate) enum StepError {
    /// The handler stopped driving the journal (the invocation is ending).
    Closed,
    /// Restate answered the entry with a failure.
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

/// A step the run asks for.
struct StepRequest {
    key: String,
    answer: oneshot::Sender<Answer>,
}

/// How [`drive`] answers a step.
enum Answer {
    /// Its result, from the journal: the work is not done.
    Replayed(Recorded),
    /// It is new: do the work and report it as [`Finished`].
    Run,
    /// The journal failed.
    Failed(TerminalError),
}

/// A new step's result, waiting to be journaled.
struct Finished {
    key: String,
    recorded: Recorded,
    journaled: oneshot::Sender<Result<(), TerminalError>>,
}

/// The hooks' side: asks [`drive`] for steps.
#[derive(Clone)]
pub(crate) struct Journal {
    requests: mpsc::UnboundedSender<StepRequest>,
    finished: mpsc::UnboundedSender<Finished>,
    source: Arc<ReplaySource>,
}

/// The handler's side: what the hooks asked for and what their work produced.
pub(crate) struct Steps {
    requests: mpsc::UnboundedReceiver<StepRequest>,
    finished: mpsc::UnboundedReceiver<Finished>,
}

/// Where a turn's journal stands: whether the invocation has gone past what was journaled
/// before it started, and the position of the next entry. One per turn, across its runs.
#[derive(Debug, Default)]
pub(crate) struct Cursor {
    pub(crate) live: bool,
    next_entry: u32,
}

impl Cursor {
    /// A turn's cursor; `live` when the turn's first journal entry was new.
    pub(crate) fn new(live: bool) -> Self {
        Cursor { live, next_entry: 0 }
    }
}

impl Journal {
    pub(crate) fn new(source: Arc<ReplaySource>) -> (Journal, Steps) {
        let (requests, requests_rx) = mpsc::unbounded_channel();
        let (finished, finished_rx) = mpsc::unbounded_channel();
        (Journal { requests, finished, source }, Steps { requests: requests_rx, finished: finished_rx })
    }

    /// Runs `work` as the journaled step `key`, or replays its recorded result.
    ///
    /// A new step's own result is returned once the journal has acknowledged it: a step counts
    /// as done only when it is durable.
    pub(crate) fn step<'a, T, W, Fut>(
        &'a self,
        key: String,
        work: W,
        encode: fn(&T) -> Value,
        decode: fn(Value) -> Result<T, String>,
    ) -> impl Future<Output = Result<T, StepError>> + Send + 'a
    where
        T: Send + 'a,
        W: FnOnce() -> Fut + Send + 'a,
        Fut: Future<Output = T> + Send + 'a,
    {
        let (answer_tx, answer_rx) = oneshot::channel();
        let sent = self.requests.send(StepRequest { key: key.clone(), answer: answer_tx }).is_ok();
        async move {
            if !sent {
                return Err(StepError::Closed);
            }
            match answer_rx.await {
                Err(_) => Err(StepError::Closed),
                Ok(Answer::Failed(e)) => Err(StepError::Journal(e)),
                Ok(Answer::Replayed(recorded)) => {
                    self.source.advance(recorded.at);
                    decode(recorded.value).map_err(StepError::Decode)
                }
                Ok(Answer::Run) => {
                    let output = work().await;
                    let at = Utc::now();
                    let (journaled, ack) = oneshot::channel();
                    let recorded = Recorded { at, value: encode(&output) };
                    if self.finished.send(Finished { key, recorded, journaled }).is_err() {
                        return Err(StepError::Closed);
                    }
                    match ack.await {
                        Ok(Ok(())) => {
                            self.source.advance(at);
                            Ok(output)
                        }
                        Ok(Err(e)) => Err(StepError::Journal(e)),
                        Err(_) => Err(StepError::Closed),
                    }
                }
            }
        }
    }
}

/// The entry being made: its `ctx.run`, and the steps it records (empty for an entry made to
/// read the journal).
struct Pending<'ctx> {
    entry: BoxFuture<'ctx, Result<Entry, TerminalError>>,
    acks: Vec<oneshot::Sender<Result<(), TerminalError>>>,
}

/// What [`drive`] keeps between events.
#[derive(Default)]
struct Book {
    /// Replaying: results read from the journal whose steps the run has not asked for yet.
    recorded: HashMap<String, Recorded>,
    /// Replaying: steps the run waits on whose results have not been read yet.
    waiting: Vec<StepRequest>,
    /// Live: steps finished and not yet in an entry, in the order they finished.
    ready: Vec<Finished>,
    /// The journal failed: every later step fails the same way.
    failed: Option<TerminalError>,
}

impl Book {
    fn route(&mut self, cursor: &Cursor, request: StepRequest) {
        let answer = if let Some(e) = &self.failed {
            Answer::Failed(e.clone())
        } else if let Some(recorded) = self.recorded.remove(&request.key) {
            Answer::Replayed(recorded)
        } else if cursor.live {
            Answer::Run
        } else {
            self.waiting.push(request);
            return;
        };
        let _ = request.answer.send(answer);
    }

    fn read(&mut self, cursor: &mut Cursor, entry: Entry) {
        match entry {
            Entry::Live => {
                cursor.live = true;
                for request in self.waiting.drain(..) {
                    let _ = request.answer.send(Answer::Run);
                }
            }
            Entry::Results { steps } => {
                for StepResult { step, recorded } in steps {
                    match self.waiting.iter().position(|w| w.key == step) {
                        Some(i) => {
                            let _ = self.waiting.swap_remove(i).answer.send(Answer::Replayed(recorded));
                        }
                        None => {
                            self.recorded.insert(step, recorded);
                        }
                    }
                }
            }
        }
    }

    fn fail(&mut self, e: TerminalError) {
        for request in self.waiting.drain(..) {
            let _ = request.answer.send(Answer::Failed(e.clone()));
        }
        self.failed = Some(e);
    }
}

/// Drives `run` to its end while journaling, through `ctx`, the steps it asks for (see the
/// module's documentation).
pub(crate) async fn drive<'ctx, F: Future>(
    ctx: &ObjectContext<'ctx>,
    cursor: &mut Cursor,
    steps: Steps,
    run: F,
) -> F::Output {
    let Steps { mut requests, mut finished } = steps;
    // Polled until it waits each time round, whatever tokio's cooperative budget says: an entry
    // is made only once the run has done all it can with what it was given.
    let mut run = pin!(tokio::task::unconstrained(run));
    let mut book = Book::default();
    let mut pending: Option<Pending<'ctx>> = None;
    loop {
        if let Poll::Ready(output) = futures::poll!(run.as_mut()) {
            settle(pending).await;
            return output;
        }
        while let Ok(request) = requests.try_recv() {
            book.route(cursor, request);
        }
        while let Ok(done) = finished.try_recv() {
            book.ready.push(done);
        }
        if pending.is_none() {
            pending = next_entry(ctx, cursor, &mut book);
        }
        tokio::select! {
            biased;
            Some(request) = requests.recv() => book.route(cursor, request),
            Some(done) = finished.recv() => book.ready.push(done),
            result = async {
                match pending.as_mut() {
                    Some(p) => p.entry.as_mut().await,
                    None => std::future::pending().await,
                }
            }, if pending.is_some() => {
                let acks = pending.take().map(|p| p.acks).unwrap_or_default();
                match result {
                    Ok(entry) => {
                        for ack in acks {
                            let _ = ack.send(Ok(()));
                        }
                        book.read(cursor, entry);
                    }
                    Err(e) => {
                        for ack in acks {
                            let _ = ack.send(Err(e.clone()));
                        }
                        book.fail(e);
                    }
                }
            }
            output = &mut run => {
                settle(pending).await;
                return output;
            }
        }
    }
}

/// Completes the entry being made when the run ends (a step the run dropped, say), so that the
/// journal holds no `ctx.run` without its result: a replay of a journal with one in the middle
/// cannot go on.
async fn settle(pending: Option<Pending<'_>>) {
    if let Some(Pending { entry, acks }) = pending {
        let outcome = entry.await.map(|_| ());
        for ack in acks {
            let _ = ack.send(outcome.clone());
        }
    }
}

/// The entry to make now, if any: live, the steps finished so far; replaying, one to read the
/// journal when the run waits on a step whose result has not been read.
fn next_entry<'ctx>(ctx: &ObjectContext<'ctx>, cursor: &mut Cursor, book: &mut Book) -> Option<Pending<'ctx>> {
    if book.failed.is_some() {
        return None;
    }
    let (content, acks) = if cursor.live {
        if book.ready.is_empty() {
            return None;
        }
        let mut steps = Vec::with_capacity(book.ready.len());
        let mut acks = Vec::with_capacity(book.ready.len());
        for Finished { key, recorded, journaled } in book.ready.drain(..) {
            steps.push(StepResult { step: key, recorded });
            acks.push(journaled);
        }
        (Entry::Results { steps }, acks)
    } else {
        if book.waiting.is_empty() {
            return None;
        }
        // Restate calls the closure only when the journal has no entry here.
        (Entry::Live, Vec::new())
    };
    let name = format!("steps {}", cursor.next_entry);
    cursor.next_entry += 1;
    let run = ctx.run(move || async move { Ok(Json(content)) }).name(name);
    Some(Pending { entry: Box::pin(async move { run.await.map(|Json(entry)| entry) }), acks })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_read_back_as_written() {
        let at = DateTime::from_timestamp(1_000, 0).unwrap();
        let entry = Entry::Results {
            steps: vec![StepResult { step: "tool 1 charge c2".into(), recorded: Recorded { at, value: json!(1) } }],
        };
        let text = serde_json::to_value(&entry).unwrap();
        assert_eq!(text["entry"], "results");
        assert_eq!(text["steps"][0]["step"], "tool 1 charge c2");
        let back: Entry = serde_json::from_value(text).unwrap();
        assert!(matches!(back, Entry::Results { steps } if steps[0].recorded.value == json!(1)));
        let live: Entry = serde_json::from_value(serde_json::to_value(Entry::Live).unwrap()).unwrap();
        assert!(matches!(live, Entry::Live));
    }

    #[test]
    fn a_replayed_result_goes_to_its_step_in_any_order() {
        let mut cursor = Cursor::default();
        let mut book = Book::default();
        let at = DateTime::from_timestamp(1_000, 0).unwrap();
        let (a_tx, mut a_rx) = oneshot::channel();
        let (b_tx, mut b_rx) = oneshot::channel();
        book.route(&cursor, StepRequest { key: "a".into(), answer: a_tx });
        book.route(&cursor, StepRequest { key: "b".into(), answer: b_tx });
        assert_eq!(book.waiting.len(), 2);
        // `b` finished first, then `c`, which the run has not asked for yet.
        book.read(
            &mut cursor,
            Entry::Results {
                steps: vec![
                    StepResult { step: "b".into(), recorded: Recorded { at, value: json!("b") } },
                    StepResult { step: "c".into(), recorded: Recorded { at, value: json!("c") } },
                ],
            },
        );
        assert!(matches!(b_rx.try_recv(), Ok(Answer::Replayed(r)) if r.value == json!("b")));
        assert!(a_rx.try_recv().is_err(), "a waits");
        let (c_tx, mut c_rx) = oneshot::channel();
        book.route(&cursor, StepRequest { key: "c".into(), answer: c_tx });
        assert!(matches!(c_rx.try_recv(), Ok(Answer::Replayed(r)) if r.value == json!("c")));
        // The journal ends: `a` runs, and so does every later step.
        book.read(&mut cursor, Entry::Live);
        assert!(cursor.live);
        assert!(matches!(a_rx.try_recv(), Ok(Answer::Run)));
        let (d_tx, mut d_rx) = oneshot::channel();
        book.route(&cursor, StepRequest { key: "d".into(), answer: d_tx });
        assert!(matches!(d_rx.try_recv(), Ok(Answer::Run)));
    }
}
