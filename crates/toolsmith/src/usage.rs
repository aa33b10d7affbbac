//! Token and request usage, and limits on them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Usage of one model request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RequestUsage {
    /// Input (prompt) tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Output (completion) tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Tokens written to the provider's cache.
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// Tokens read from the provider's cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Provider-specific counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Box<Value>>,
}

impl RequestUsage {
    /// Usage with input and output token counts.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        RequestUsage { input_tokens, output_tokens, ..Default::default() }
    }
}

/// Usage of a whole run (or of a conversation: usages add up, counter by counter).
///
/// ```
/// use toolsmith::usage::{RequestUsage, RunUsage};
///
/// let mut first = RunUsage::default();
/// first.add_request(&RequestUsage::new(100, 20));
/// let mut second = RunUsage::default();
/// second.add_request(&RequestUsage::new(150, 30));
/// let total = first.clone() + second;
/// assert_eq!((total.requests, total.input_tokens, total.output_tokens), (2, 250, 50));
/// first += total;
/// assert_eq!(first.total_tokens(), 420);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunUsage {
    /// Model requests made.
    pub requests: u32,
    /// Successful tool executions.
    pub tool_calls: u32,
    /// Input tokens over all requests.
    pub input_tokens: u64,
    /// Output tokens over all requests.
    pub output_tokens: u64,
    /// Cache writes over all requests.
    pub cache_write_tokens: u64,
    /// Cache reads over all requests.
    pub cache_read_tokens: u64,
}

impl RunUsage {
    /// Adds one request's usage.
    pub fn add_request(&mut self, usage: &RequestUsage) {
        self.requests += 1;
        self.input_tokens += usage.input_tokens;
        self.output_tokens += usage.output_tokens;
        self.cache_write_tokens += usage.cache_write_tokens;
        self.cache_read_tokens += usage.cache_read_tokens;
    }

    /// Input plus output tokens.
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

impl std::ops::AddAssign<&RunUsage> for RunUsage {
    /// Adds every counter of `other` (saturating: a counter stops at its type's maximum).
    fn add_assign(&mut self, other: &RunUsage) {
        let RunUsage { requests, tool_calls, input_tokens, output_tokens, cache_write_tokens, cache_read_tokens } =
            other;
        self.requests = self.requests.saturating_add(*requests);
        self.tool_calls = self.tool_calls.saturating_add(*tool_calls);
        self.input_tokens = self.input_tokens.saturating_add(*input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(*output_tokens);
        self.cache_write_tokens = self.cache_write_tokens.saturating_add(*cache_write_tokens);
        self.cache_read_tokens = self.cache_read_tokens.saturating_add(*cache_read_tokens);
    }
}

impl std::ops::AddAssign for RunUsage {
    /// Adds every counter of `other`.
    fn add_assign(&mut self, other: RunUsage) {
        *self += &other;
    }
}

impl std::ops::Add for RunUsage {
    type Output = RunUsage;

    /// The sum of both usages, counter by counter.
    fn add(mut self, other: RunUsage) -> RunUsage {
        self += &other;
        self
    }
}

impl std::ops::Add<&RunUsage> for RunUsage {
    type Output = RunUsage;

    /// The sum of both usages, counter by counter.
    fn add(mut self, other: &RunUsage) -> RunUsage {
        self += other;
        self
    }
}

impl std::iter::Sum for RunUsage {
    /// The usages added up (a conversation's runs).
    fn sum<I: Iterator<Item = RunUsage>>(iter: I) -> RunUsage {
        iter.fold(RunUsage::default(), |total, u| total + u)
    }
}

/// Limits that end a run with [`AgentRunError::UsageLimitExceeded`](crate::AgentRunError) when crossed.
///
/// ```
/// use toolsmith::usage::UsageLimits;
/// let limits = UsageLimits::new().request_limit(5).tool_calls_limit(20);
/// assert_eq!(limits.request_limit, Some(5));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UsageLimits {
    /// The most model requests a run may make (Pydantic AI's default is 50).
    pub request_limit: Option<u32>,
    /// The most successful tool calls a run may make.
    pub tool_calls_limit: Option<u32>,
    /// The most input tokens a run may use.
    pub input_tokens_limit: Option<u64>,
    /// The most output tokens a run may use.
    pub output_tokens_limit: Option<u64>,
    /// The most tokens (input + output) a run may use.
    pub total_tokens_limit: Option<u64>,
}

impl Default for UsageLimits {
    fn default() -> Self {
        UsageLimits { request_limit: Some(50), ..UsageLimits::unlimited() }
    }
}

impl UsageLimits {
    /// The default limits: 50 requests, nothing else.
    pub fn new() -> Self {
        UsageLimits::default()
    }

    /// No limits at all.
    pub fn unlimited() -> Self {
        UsageLimits {
            request_limit: None,
            tool_calls_limit: None,
            input_tokens_limit: None,
            output_tokens_limit: None,
            total_tokens_limit: None,
        }
    }

    /// Sets the request limit.
    pub fn request_limit(mut self, n: u32) -> Self {
        self.request_limit = Some(n);
        self
    }

    /// Sets the tool call limit.
    pub fn tool_calls_limit(mut self, n: u32) -> Self {
        self.tool_calls_limit = Some(n);
        self
    }

    /// Sets the input token limit.
    pub fn input_tokens_limit(mut self, n: u64) -> Self {
        self.input_tokens_limit = Some(n);
        self
    }

    /// Sets the output token limit.
    pub fn output_tokens_limit(mut self, n: u64) -> Self {
        self.output_tokens_limit = Some(n);
        self
    }

    /// Sets the total token limit.
    pub fn total_tokens_limit(mut self, n: u64) -> Self {
        self.total_tokens_limit = Some(n);
        self
    }
}
