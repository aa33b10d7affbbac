//! The text a model is shown for a retry, exactly as Pydantic AI words it
//! (`RetryPromptPart.model_response()`): what every adapter sends, and what an application can
//! show or log.

use serde_json::Value;

use super::{RetryFeedbackPart, RetryPromptPart, ToolOutcome, ToolReturnPart};

const FIX: &str = "\n\nFix the errors and try again.";

/// The retry text of `content`: a tool's message as it is, other feedback after "Validation
/// feedback:", a list of validation errors as JSON (without their `ctx`), then the request to
/// fix them.
pub(crate) fn retry_text(content: &Value, for_tool: bool) -> String {
    let description = match content {
        Value::String(s) if for_tool => s.clone(),
        Value::String(s) => format!("Validation feedback:\n{s}"),
        Value::Array(errors) => {
            let cleaned: Vec<Value> = errors
                .iter()
                .map(|e| match e {
                    Value::Object(m) => Value::Object(
                        m.iter().filter(|(k, _)| *k != "ctx").map(|(k, v)| (k.clone(), v.clone())).collect(),
                    ),
                    other => other.clone(),
                })
                .collect();
            let json = serde_json::to_string_pretty(&cleaned).unwrap_or_else(|_| "[]".into());
            let n = errors.len();
            format!("{n} validation error{}:\n```json\n{json}\n```", if n == 1 { "" } else { "s" })
        }
        other if for_tool => other.to_string(),
        other => format!("Validation feedback:\n{other}"),
    };
    format!("{description}{FIX}")
}

impl RetryPromptPart {
    /// The text the model is shown for this retry, as Pydantic AI's
    /// `RetryPromptPart.model_response()` writes it.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::messages::RetryPromptPart;
    ///
    /// let part: RetryPromptPart = serde_json::from_value(json!({"content": "too big", "tool_name": "pay"})).unwrap();
    /// assert_eq!(part.model_response(), "too big\n\nFix the errors and try again.");
    /// ```
    pub fn model_response(&self) -> String {
        retry_text(&self.content, self.tool_name.is_some())
    }
}

impl RetryFeedbackPart {
    /// The text the model is shown for this feedback (see [`RetryPromptPart::model_response`]).
    pub fn model_response(&self) -> String {
        retry_text(&self.content, false)
    }
}

impl ToolReturnPart {
    /// For a retried call, the text the model is shown (see
    /// [`RetryPromptPart::model_response`]); `None` for any other outcome.
    pub fn retry_text(&self) -> Option<String> {
        (self.outcome == ToolOutcome::Retried).then(|| retry_text(&self.content, true))
    }
}
