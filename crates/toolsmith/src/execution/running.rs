//! A call's tool run as a future written out by hand rather than an `async fn`: its state is
//! the call's address and the tool's boxed future (a timer or the blocking pool's wait boxed
//! beside it when the call has them), so it is `Unpin` and small. A step keeps its calls' runs
//! side by side in one vector instead of pinning each in a box of its own.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::CatchUnwind;

use super::*;
use crate::tool::ToolResult;

type Panic = Box<dyn std::any::Any + Send>;

/// The tool's handler called (its panic caught), then its future polled to the end under the
/// call's timeout, panics caught: what the tool returned, without the retry budget's reading
/// (see [`counted`]).
pub(super) struct ToolRun<'a, D> {
    r: &'a Ready<'a, D>,
    state: State<'a>,
}

enum State<'a> {
    /// Answered when the handler was called; taken when polled.
    Done(Option<ToolResult>),
    Async(CatchUnwind<AssertUnwindSafe<BoxFuture<'static, ToolResult>>>),
    /// Under a timeout: the timer is boxed with the future (a call without one holds no timer).
    Timed(BoxFuture<'static, Result<Result<ToolResult, Panic>, tokio::time::error::Elapsed>>),
    Blocking(BoxFuture<'a, Result<Result<ToolResult, Panic>, PoolTimeout>>),
}

impl<'a, D: Clone + Send + Sync + 'static> ToolRun<'a, D> {
    /// Calls the tool's handler now: a result known at once is kept, what is left to run is
    /// polled by the future.
    pub(super) fn start(inner: &'a StepConfig<D>, r: &'a Ready<'a, D>, args: Cow<'_, Value>) -> Self {
        let handler = &r.tool.handler;
        let state = match std::panic::catch_unwind(AssertUnwindSafe(move || handler.call(|| r.context(), args))) {
            Ok(Invocation::Ready(result)) => State::Done(Some(result)),
            Err(p) => State::Done(Some(Err(ToolError::Panicked { message: panic_message(p) }))),
            Ok(Invocation::Async(fut)) => {
                let fut = AssertUnwindSafe(fut).catch_unwind();
                match deadline(r) {
                    Some(d) => State::Timed(Box::pin(tokio::time::timeout_at(d, fut))),
                    None => State::Async(fut),
                }
            }
            Ok(Invocation::Blocking(f)) => State::Blocking(Box::pin(inner.blocking.run(f, deadline(r)))),
        };
        ToolRun { r, state }
    }
}

/// A timeout too large for the clock is no deadline.
fn deadline<D>(r: &Ready<'_, D>) -> Option<tokio::time::Instant> {
    r.timeout.and_then(|t| tokio::time::Instant::now().checked_add(t))
}

fn timed_out<D>(r: &Ready<'_, D>) -> ToolError {
    let secs = r.timeout.map_or(0.0, |t| t.as_secs_f64());
    ToolError::Retry(ModelRetry::new(format!("Timed out after {} seconds.", py_float(secs))))
}

fn unwound(result: Result<ToolResult, Panic>) -> ToolResult {
    result.unwrap_or_else(|p| Err(ToolError::Panicked { message: panic_message(p) }))
}

impl<D> Future for ToolRun<'_, D> {
    type Output = ToolResult;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<ToolResult> {
        let this = self.get_mut();
        let r = this.r;
        Poll::Ready(match &mut this.state {
            State::Done(result) => result.take().expect("a tool run is not polled after it has finished"),
            State::Async(fut) => unwound(std::task::ready!(Pin::new(fut).poll(cx))),
            State::Timed(fut) => match std::task::ready!(fut.as_mut().poll(cx)) {
                Ok(result) => unwound(result),
                Err(_) => Err(timed_out(r)),
            },
            State::Blocking(fut) => match std::task::ready!(fut.as_mut().poll(cx)) {
                Ok(result) => unwound(result),
                Err(PoolTimeout::Waiting { size, overdue }) if overdue > 0 => Err(ToolError::Failed {
                    kind: "BlockingPoolExhausted".into(),
                    message: format!(
                        "`{}` could not start within its timeout: the blocking pool's {size} threads are busy, {overdue} of them with synchronous tools still running after their timeout (a synchronous tool cannot be stopped). Make long tools async, or give the agent a larger pool (`AgentBuilder::blocking_threads`, `ThreadExecutor::new`)",
                        r.call.tool_name
                    ),
                    source: None,
                }),
                Err(_) => Err(timed_out(r)),
            },
        })
    }
}

/// What the tool returned, read against the retry budget: a successful output bounded in depth
/// (see [`bound_output`]) and noted as run (`true`, what `tool_calls` counts); the tool's own
/// retry with its budget spent becomes the error that ends the run.
pub(super) fn counted<D>(r: &Ready<'_, D>, mut result: ToolResult) -> (ToolResult, bool) {
    match &mut result {
        Ok(output) => {
            bound_output(output);
            return (result, true);
        }
        Err(ToolError::Retry(_)) if r.retry >= r.max_retries => {
            let tool = r.call.tool_name.clone();
            return (Err(ToolError::RetriesExhausted { tool, max_retries: r.max_retries }), false);
        }
        Err(_) => {}
    }
    (result, false)
}

/// One call of a step in flight: its tool run where no capability has execute hooks, else the
/// hooks' chain around it (boxed).
pub(super) enum Exec<'a, D> {
    Direct(ToolRun<'a, D>),
    Hooked(BoxFuture<'a, (ToolResult, bool)>),
}

impl<D> Future for Exec<'_, D> {
    type Output = (ToolResult, bool);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            Exec::Direct(run) => {
                let result = std::task::ready!(Pin::new(&mut *run).poll(cx));
                Poll::Ready(counted(run.r, result))
            }
            Exec::Hooked(fut) => fut.as_mut().poll(cx),
        }
    }
}
