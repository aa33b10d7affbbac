//! [`ThreadExecutor`]: a bounded pool for synchronous (blocking) tools.

use std::sync::Arc;

use tokio::sync::Semaphore;

use super::Capability;

/// A capability that bounds how many synchronous tool calls run at once on the blocking
/// thread pool, with a bound that can be shared between agents: clones of one
/// `ThreadExecutor` share its permits, so several agents given clones of it never run more
/// than `max_threads` blocking calls together. Without it each agent has its own bound,
/// [`AgentBuilder::blocking_threads`](crate::AgentBuilder::blocking_threads) (default 16).
///
/// Async tools are not affected. The pool is taken when the agent is built (from the first
/// `ThreadExecutor` in the capability chain, wrappers included), so one returned by a per-run
/// [`Capability::for_run`] has no effect. The threads themselves are Tokio's blocking pool
/// (reused between calls, so a long-running server does not accumulate threads); running
/// tools on an executor of your own would need an engine hook (see the capability section of
/// `docs/ARCHITECTURE.md`).
///
/// ```
/// use toolsmith::capability::ThreadExecutor;
/// use toolsmith::prelude::*;
///
/// /// Hash a file (blocking I/O).
/// #[tool]
/// fn hash_file(path: String) -> String { path }
///
/// # fn main() -> Result<(), UserError> {
/// let pool = ThreadExecutor::new(4);
/// let a = Agent::builder(TestModel::default()).tool(hash_file).capability(pool.clone()).build()?;
/// let b = Agent::builder(TestModel::default()).tool(hash_file).capability(pool.clone()).build()?;
/// // `a` and `b` together run at most four `hash_file` calls at a time.
/// # let _ = (a, b);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ThreadExecutor {
    permits: Arc<Semaphore>,
    max_threads: usize,
}

impl ThreadExecutor {
    /// At most `max_threads` blocking calls at once (at least one).
    pub fn new(max_threads: usize) -> Self {
        let max_threads = max_threads.max(1);
        ThreadExecutor { permits: Arc::new(Semaphore::new(max_threads)), max_threads }
    }

    /// The bound.
    pub fn max_threads(&self) -> usize {
        self.max_threads
    }

    pub(crate) fn semaphore(&self) -> Arc<Semaphore> {
        self.permits.clone()
    }
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for ThreadExecutor {
    fn has_prepare_tools(&self) -> bool {
        false
    }
}
