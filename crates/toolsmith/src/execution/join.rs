//! Running a step's calls concurrently, their results in call order.
//!
//! Most tools answer on their first poll: each call is polled once where it is made, and only
//! those still pending are handed to a [`FuturesUnordered`] that wakes each alone. The calls'
//! futures are `Unpin` and held in one vector: a call that finishes at once costs no allocation
//! of its own here and no task bookkeeping.

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::Poll;

use futures::StreamExt;
use futures::stream::FuturesUnordered;

/// Runs `futures` concurrently (each first polled in order, as `join_all` does) and returns
/// their outputs in the order given.
pub(super) async fn join_in_order<F: Future + Unpin>(futures: Vec<F>) -> Vec<F::Output> {
    let mut outputs: Vec<Option<F::Output>> = Vec::with_capacity(futures.len());
    let mut pending = FuturesUnordered::new();
    let mut futures = futures.into_iter();
    // The first poll of each, in order, with the task's own waker. (The closure holds its
    // places by unique reference: a shared one to the pending set would ask its futures to be
    // `Sync`.)
    let (started, outputs_at, waiting) = (&mut futures, &mut outputs, &mut pending);
    poll_fn(move |cx| {
        for mut future in started.by_ref() {
            let at = outputs_at.len();
            match Pin::new(&mut future).poll(cx) {
                Poll::Ready(output) => outputs_at.push(Some(output)),
                Poll::Pending => {
                    outputs_at.push(None);
                    waiting.push(async move { (at, future.await) });
                }
            }
        }
        Poll::Ready(())
    })
    .await;
    while let Some((at, output)) = pending.next().await {
        outputs[at] = Some(output);
    }
    outputs.into_iter().map(|o| o.expect("every future has finished")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A future that is pending `yields` times, then gives `value`.
    async fn after(yields: u8, value: usize, log: &std::sync::Mutex<Vec<usize>>) -> usize {
        for _ in 0..yields {
            tokio::task::yield_now().await;
        }
        log.lock().unwrap().push(value);
        value
    }

    proptest! {
        #[test]
        fn outputs_come_in_the_order_given_whatever_order_they_finish_in(yields in prop::collection::vec(0u8..4, 0..40)) {
            let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let log = std::sync::Mutex::new(Vec::new());
            let out = rt.block_on(join_in_order(yields.iter().enumerate().map(|(i, y)| Box::pin(after(*y, i, &log))).collect()));
            prop_assert_eq!(out, (0..yields.len()).collect::<Vec<_>>());
            // They ran concurrently: those with fewer yields finished first.
            let finished = log.into_inner().unwrap();
            let mut by_yields = finished.clone();
            by_yields.sort_by_key(|i| yields[*i]);
            prop_assert_eq!(finished.iter().map(|i| yields[*i]).collect::<Vec<_>>(), by_yields.iter().map(|i| yields[*i]).collect::<Vec<_>>());
        }
    }
}
