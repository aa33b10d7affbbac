//! The bounded pool synchronous tools run on.
//!
//! A synchronous tool cannot be stopped: when its timeout passes, the model is answered at once
//! but the thread runs on, holding its slot of the pool until the function returns. The pool
//! counts such calls, so that a later call that cannot even start within its own timeout because
//! every slot is held is reported as what it is (a pool exhausted by tools still running after
//! their timeout) rather than as a timeout of a tool that never ran.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::tool::ToolResult;

const RUNNING: u8 = 0;
const FINISHED: u8 = 1;
const OVERDUE: u8 = 2;

/// A bound on the synchronous tool calls that run at once, shared by the agents given one
/// [`ThreadExecutor`](crate::capability::ThreadExecutor).
#[derive(Debug)]
pub(crate) struct BlockingPool {
    permits: Arc<Semaphore>,
    size: usize,
    overdue: Arc<AtomicUsize>,
}

/// Why a call on the pool did not finish before its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PoolTimeout {
    /// It started and is still running (it keeps its slot until it returns).
    Running,
    /// It never started: every slot was held, `overdue` of them by calls still running after
    /// their timeout.
    Waiting {
        /// The pool's size.
        size: usize,
        /// Calls still running after their timeout.
        overdue: usize,
    },
}

impl BlockingPool {
    /// A pool of `size` slots (at least one).
    pub(crate) fn new(size: usize) -> Arc<Self> {
        let size = size.max(1);
        Arc::new(BlockingPool { permits: Arc::new(Semaphore::new(size)), size, overdue: Arc::default() })
    }

    /// How many slots the pool has.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// How many calls are still running after their timeout.
    pub(crate) fn overdue(&self) -> usize {
        self.overdue.load(Ordering::Acquire)
    }

    /// Runs `f` on a pool thread, with the caller's tracing subscriber and span. `Err(panic
    /// message)` inside when it panicked; [`PoolTimeout`] when the deadline passed first.
    pub(crate) async fn run(
        &self,
        f: Box<dyn FnOnce() -> ToolResult + Send + 'static>,
        deadline: Option<Instant>,
    ) -> Result<Result<ToolResult, Box<dyn std::any::Any + Send>>, PoolTimeout> {
        let acquire = self.permits.clone().acquire_owned();
        let permit = match deadline {
            Some(d) => match tokio::time::timeout_at(d, acquire).await {
                Ok(p) => p,
                Err(_) => return Err(PoolTimeout::Waiting { size: self.size, overdue: self.overdue() }),
            },
            None => acquire.await,
        };
        // The semaphore is never closed.
        let permit = permit.ok();
        let state = Arc::new(AtomicU8::new(RUNNING));
        let (done_state, overdue) = (state.clone(), self.overdue.clone());
        let dispatch = tracing::dispatcher::get_default(Clone::clone);
        let span = tracing::Span::current();
        let handle = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                tracing::dispatcher::with_default(&dispatch, || span.in_scope(f))
            }));
            if done_state.compare_exchange(RUNNING, FINISHED, Ordering::AcqRel, Ordering::Acquire).is_err() {
                // Marked overdue by the caller: this slot is free again.
                overdue.fetch_sub(1, Ordering::AcqRel);
            }
            result
        });
        let joined = match deadline {
            Some(d) => match tokio::time::timeout_at(d, handle).await {
                Ok(j) => j,
                Err(_) => {
                    // Counted before the state changes, so the thread's decrement never
                    // comes first.
                    self.overdue.fetch_add(1, Ordering::AcqRel);
                    if state.compare_exchange(RUNNING, OVERDUE, Ordering::AcqRel, Ordering::Acquire).is_err() {
                        self.overdue.fetch_sub(1, Ordering::AcqRel);
                    }
                    return Err(PoolTimeout::Running);
                }
            },
            None => handle.await,
        };
        Ok(match joined {
            Ok(result) => result,
            Err(e) if e.is_panic() => Err(e.into_panic()),
            Err(e) => Err(Box::new(e.to_string())),
        })
    }
}
