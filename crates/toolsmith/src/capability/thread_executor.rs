//! [`ThreadExecutor`]: a bounded pool for synchronous (blocking) tools.

use std::sync::{Arc, OnceLock};

use super::{Capability, HookStage};
use crate::tool::pool::BlockingPool;

/// A capability that bounds how many synchronous tool calls run at once on the blocking
/// thread pool, with a bound that can be shared between agents: clones of one
/// `ThreadExecutor` share its permits, so several agents given clones of it never run more
/// than `max_threads` blocking calls together. Without it each agent has its own bound,
/// [`AgentBuilder::blocking_threads`](crate::AgentBuilder::blocking_threads) (default 16), or
/// the process-wide executor installed with [`ThreadExecutor::install_default`].
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
    pool: Arc<BlockingPool>,
}

impl ThreadExecutor {
    /// At most `max_threads` blocking calls at once (at least one).
    pub fn new(max_threads: usize) -> Self {
        ThreadExecutor { pool: BlockingPool::new(max_threads) }
    }

    /// The bound.
    pub fn max_threads(&self) -> usize {
        self.pool.size()
    }

    /// How many synchronous tool calls are still running after their timeout. A synchronous
    /// function cannot be stopped: its model was answered with a timeout, but its thread holds a
    /// slot of the pool until the function returns. While every slot is held so, a call that
    /// cannot start within its own timeout ends the run with a `BlockingPoolExhausted` error
    /// naming this count, rather than a timeout of a tool that never ran.
    pub fn running_past_timeout(&self) -> usize {
        self.pool.overdue()
    }

    pub(crate) fn pool(&self) -> Arc<BlockingPool> {
        self.pool.clone()
    }

    /// Makes this executor the bound of every agent built afterwards that sets none of its own
    /// (no `ThreadExecutor` capability, no
    /// [`AgentBuilder::blocking_threads`](crate::AgentBuilder::blocking_threads)): all those
    /// agents then share its permits. Set once per process; a second call is refused and gives
    /// the executor back. Agents built before keep their own bound.
    ///
    /// ```standalone_crate
    /// use toolsmith::capability::ThreadExecutor;
    ///
    /// ThreadExecutor::new(8).install_default().expect("the first executor installed");
    /// assert_eq!(ThreadExecutor::installed_default().map(|e| e.max_threads()), Some(8));
    /// assert!(ThreadExecutor::new(2).install_default().is_err());
    /// ```
    pub fn install_default(self) -> Result<(), ThreadExecutor> {
        DEFAULT.set(self)
    }

    /// The executor [`ThreadExecutor::install_default`] installed, if any.
    pub fn installed_default() -> Option<ThreadExecutor> {
        DEFAULT.get().cloned()
    }
}

/// The process-wide executor.
static DEFAULT: OnceLock<ThreadExecutor> = OnceLock::new();

impl<D: Clone + Send + Sync + 'static> Capability<D> for ThreadExecutor {
    fn hooks_stage(&self, _: HookStage) -> bool {
        false
    }
    fn has_prepare_tools(&self) -> bool {
        false
    }
}
