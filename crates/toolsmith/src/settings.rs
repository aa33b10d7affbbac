//! [`ModelSettings`]: what a run asks of the model with each request, and [`ToolChoice`].
//!
//! Plain data, below the models and the run context that carry them; how a provider resolves a
//! tool choice for one request is [`resolve_tool_choice`](crate::model::resolve_tool_choice).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which tools the model may or must call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides (the default).
    Auto,
    /// No function tools (output tools stay available for structured output).
    None,
    /// The model must call a function tool. This excludes a final answer, so an agent rejects it.
    Required,
    /// The model must call one of these tools. Like `Required`, an agent rejects it as a static setting.
    Tools(Vec<String>),
    /// The model may call one of these tools or produce its output.
    ToolOrOutput(Vec<String>),
}

/// Settings passed to the model with each request.
///
/// ```
/// use toolsmith::model::{ModelSettings, ToolChoice};
/// let s = ModelSettings::new().temperature(0.0).tool_choice(ToolChoice::None);
/// assert_eq!(s.temperature, Some(0.0));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelSettings {
    /// The most tokens to generate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// How long one request may take (in JSON: seconds).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::serde_secs")]
    pub timeout: Option<Duration>,
    /// Whether the model may call several tools in one response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// Which tools the model may or must call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Random seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// Provider-specific settings, passed through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Box<Value>>,
}

impl ModelSettings {
    /// Empty settings.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the temperature.
    pub fn temperature(mut self, t: f64) -> Self {
        self.temperature = Some(t);
        self
    }

    /// Sets the token limit.
    pub fn max_tokens(mut self, n: u32) -> Self {
        self.max_tokens = Some(n);
        self
    }

    /// Sets how long one request may take.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets the tool choice.
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = Some(choice);
        self
    }

    /// These settings overridden by `other` where `other` sets a value; the provider settings
    /// of [`extra`](Self::extra) are merged key by key (nested objects too), so that one layer's
    /// provider setting does not erase another's.
    pub fn merged(&self, other: &ModelSettings) -> ModelSettings {
        ModelSettings {
            max_tokens: other.max_tokens.or(self.max_tokens),
            temperature: other.temperature.or(self.temperature),
            top_p: other.top_p.or(self.top_p),
            timeout: other.timeout.or(self.timeout),
            parallel_tool_calls: other.parallel_tool_calls.or(self.parallel_tool_calls),
            tool_choice: other.tool_choice.clone().or_else(|| self.tool_choice.clone()),
            seed: other.seed.or(self.seed),
            extra: match (&self.extra, &other.extra) {
                (Some(base), Some(over)) => Some(Box::new(merge_json(base, over))),
                (base, over) => over.clone().or_else(|| base.clone()),
            },
        }
    }
}

/// `over` merged into `base` key by key (objects in both are merged in turn; any other value of
/// `over` replaces `base`'s).
fn merge_json(base: &serde_json::Value, over: &serde_json::Value) -> serde_json::Value {
    match (base, over) {
        (serde_json::Value::Object(b), serde_json::Value::Object(o)) => {
            let mut out = b.clone();
            for (k, v) in o {
                let merged = match out.get(k) {
                    Some(existing) => merge_json(existing, v),
                    None => v.clone(),
                };
                out.insert(k.clone(), merged);
            }
            serde_json::Value::Object(out)
        }
        (_, over) => over.clone(),
    }
}
