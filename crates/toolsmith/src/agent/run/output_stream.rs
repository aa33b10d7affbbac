//! [`OutputStream`]: a run's output as it streams, then its final output.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::BoxFuture;

use super::RunResult;
use crate::agent::AgentEvent;
use crate::agent::output::Converter;
use crate::error::AgentRunError;

/// A run's output as the model streams it (see
/// [`RunBuilder::stream_output`](super::RunBuilder::stream_output)): each item is the output so
/// far, validated as partial output and converted to the agent's output type (a partial output
/// that fails validation or conversion is skipped), and the last item is the run's final output
/// (or the error the run ended with). Polling the stream drives the run; [`OutputStream::result`]
/// gives the whole [`RunResult`] once it ended.
#[must_use = "a stream does nothing until it is polled"]
pub struct OutputStream<'a, O> {
    rx: tokio::sync::mpsc::UnboundedReceiver<AgentEvent>,
    run: Option<BoxFuture<'a, Result<RunResult<O>, AgentRunError>>>,
    convert: Converter<O>,
    result: Option<Result<RunResult<O>, AgentRunError>>,
    final_given: bool,
}

// The outputs are never pinned: only the run future is, behind its box.
impl<O> Unpin for OutputStream<'_, O> {}

impl<O> std::fmt::Debug for OutputStream<'_, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputStream").field("running", &self.run.is_some()).finish_non_exhaustive()
    }
}

impl<'a, O> OutputStream<'a, O> {
    pub(super) fn new(
        rx: tokio::sync::mpsc::UnboundedReceiver<AgentEvent>,
        run: BoxFuture<'a, Result<RunResult<O>, AgentRunError>>,
        convert: Converter<O>,
    ) -> Self {
        OutputStream { rx, run: Some(run), convert, result: None, final_given: false }
    }

    /// The run's result: runs it to the end if the stream was not drained (the partial outputs
    /// still to come are dropped).
    pub async fn result(mut self) -> Result<RunResult<O>, AgentRunError> {
        if let Some(run) = self.run.take() {
            return run.await;
        }
        self.result.take().unwrap_or_else(|| {
            Err(AgentRunError::User(crate::error::UserError::new("the run's result was already taken")))
        })
    }

    /// The next partial output among the events received, if any.
    fn next_partial(&mut self, cx: &mut Context<'_>) -> Poll<Option<O>> {
        loop {
            let event = if self.run.is_some() {
                match self.rx.poll_recv(cx) {
                    Poll::Ready(Some(e)) => e,
                    Poll::Ready(None) => return Poll::Ready(None),
                    Poll::Pending => return Poll::Pending,
                }
            } else {
                match self.rx.try_recv() {
                    Ok(e) => e,
                    Err(_) => return Poll::Ready(None),
                }
            };
            if let AgentEvent::PartialOutput { output } = event
                && let Ok(Ok(o)) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (self.convert)(output)))
            {
                return Poll::Ready(Some(o));
            }
        }
    }
}

impl<O: Clone> futures::Stream for OutputStream<'_, O> {
    type Item = Result<O, AgentRunError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Poll::Ready(Some(o)) = this.next_partial(cx) {
                return Poll::Ready(Some(Ok(o)));
            }
            match this.run.as_mut() {
                Some(run) => match run.as_mut().poll(cx) {
                    Poll::Ready(result) => {
                        this.run = None;
                        this.result = Some(result);
                        // The events the run sent before it ended come first.
                        continue;
                    }
                    Poll::Pending => return Poll::Pending,
                },
                None => {
                    if this.final_given {
                        return Poll::Ready(None);
                    }
                    this.final_given = true;
                    return Poll::Ready(this.result.as_ref().map(|r| match r {
                        Ok(result) => Ok(result.output().clone()),
                        Err(e) => Err(e.clone()),
                    }));
                }
            }
        }
    }
}
