//! What one snippet may use: time, memory, recursion, printed output, nested tool calls and
//! the session's host interactions, with the harness's defaults.

use std::sync::Mutex;
use std::time::Duration;

use toolsmith::UserError;

/// Limits on the snippets `run_code` runs. The defaults are the harness's: 30 seconds of
/// execution and 256 MiB of memory a snippet, 100 nested tool calls a snippet, 1,000 host
/// interactions (calls, name lookups, future resolutions) a session, Monty's recursion depth of
/// 1,000 and its 10 MiB of printed output.
///
/// A snippet over a limit stops with an error the model sees as a retry (a runaway recursion
/// raises a `RecursionError` the code can catch, as in Python); the host goes on.
///
/// The memory limit is counted by Monty's allocator, [`SandboxAllocator`](crate::SandboxAllocator),
/// which the application installs as its global allocator (`#[global_allocator]`); without it,
/// memory cannot be measured in-process and only the other limits apply (the time limit still
/// ends a snippet that allocates without end). The allocator counts the whole process against
/// the limit while a snippet runs, and ends the process if an allocation overshoots it by more
/// than 4 MiB before the interpreter's next check: size the limit with the host's own use in
/// mind.
///
/// ```
/// use std::time::Duration;
/// use toolsmith_code::CodeModeLimits;
///
/// let limits = CodeModeLimits::default().max_duration(Duration::from_secs(5)).max_tool_calls(20);
/// assert_eq!(limits.max_duration, Some(Duration::from_secs(5)));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CodeModeLimits {
    /// Execution time of one snippet (time waiting for tools does not count); `None`: no limit.
    pub max_duration: Option<Duration>,
    /// Memory in bytes a snippet may allocate (with [`SandboxAllocator`](crate::SandboxAllocator)
    /// installed); `None`: no limit.
    pub max_memory: Option<usize>,
    /// Depth of Python function calls.
    pub max_recursion_depth: usize,
    /// Bytes of printed output a snippet may write.
    pub max_output_bytes: usize,
    /// Tool calls one snippet may make.
    pub max_tool_calls: u32,
    /// Host interactions of one session (across its snippets, until a restart).
    pub max_suspensions: usize,
}

impl Default for CodeModeLimits {
    fn default() -> Self {
        CodeModeLimits {
            max_duration: Some(Duration::from_secs(30)),
            max_memory: Some(256 * 1024 * 1024),
            max_recursion_depth: 1000,
            max_output_bytes: 10 * 1024 * 1024,
            max_tool_calls: 100,
            max_suspensions: 1000,
        }
    }
}

impl CodeModeLimits {
    /// No time or memory limit (the other limits stay, as the harness's `'unlimited'` does).
    pub fn unlimited() -> Self {
        CodeModeLimits { max_duration: None, max_memory: None, ..CodeModeLimits::default() }
    }

    /// Sets the execution time of one snippet.
    pub fn max_duration(mut self, limit: Duration) -> Self {
        self.max_duration = Some(limit);
        self
    }

    /// Sets the memory a snippet may allocate, in bytes.
    pub fn max_memory(mut self, bytes: usize) -> Self {
        self.max_memory = Some(bytes);
        self
    }

    /// Sets the depth of Python function calls.
    pub fn max_recursion_depth(mut self, depth: usize) -> Self {
        self.max_recursion_depth = depth;
        self
    }

    /// Sets the bytes of printed output a snippet may write.
    pub fn max_output_bytes(mut self, bytes: usize) -> Self {
        self.max_output_bytes = bytes;
        self
    }

    /// Sets the tool calls one snippet may make.
    pub fn max_tool_calls(mut self, calls: u32) -> Self {
        self.max_tool_calls = calls;
        self
    }

    /// Sets the host interactions of one session.
    pub fn max_suspensions(mut self, suspensions: usize) -> Self {
        self.max_suspensions = suspensions;
        self
    }

    /// The configuration mistakes: a limit of zero.
    pub(crate) fn check(&self) -> Result<(), UserError> {
        let zero = |what: &str| Err(UserError::new(format!("CodeMode: `{what}` must be greater than zero")));
        if self.max_duration.is_some_and(|d| d.is_zero()) {
            return zero("max_duration");
        }
        if self.max_memory == Some(0) {
            return zero("max_memory");
        }
        if self.max_recursion_depth == 0 {
            return zero("max_recursion_depth");
        }
        if self.max_tool_calls == 0 {
            return zero("max_tool_calls");
        }
        if self.max_suspensions == 0 {
            return zero("max_suspensions");
        }
        Ok(())
    }
}

/// The snippets running now, and the smallest memory limit among them: the allocator's limit
/// is the process's, armed while any runs.
static ARMED: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// Arms [`SandboxAllocator`](crate::SandboxAllocator)'s limit while a snippet runs (nothing
/// when it is not the global allocator, or without a memory limit).
pub(crate) struct MemoryArm(Option<usize>);

impl MemoryArm {
    pub(crate) fn new(limit: Option<usize>) -> Self {
        let Some(bytes) = limit else { return MemoryArm(None) };
        let mut armed = ARMED.lock().unwrap_or_else(|e| e.into_inner());
        armed.push(bytes);
        let smallest = armed.iter().copied().min();
        if monty_alloc::set_limit(smallest, false).is_err() {
            armed.pop();
            return MemoryArm(None);
        }
        MemoryArm(Some(bytes))
    }
}

impl Drop for MemoryArm {
    fn drop(&mut self) {
        let Some(bytes) = self.0 else { return };
        let mut armed = ARMED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = armed.iter().position(|&b| b == bytes) {
            armed.swap_remove(i);
        }
        let _ = monty_alloc::set_limit(armed.iter().copied().min(), false);
    }
}
