//! What the model reads about a background call: the started message, the instructions, and
//! the framed result or failure, in the harness's words.

use std::sync::LazyLock;

use serde_json::{Value, json};

use crate::messages::{TextContent, UserContent};
use crate::tool::{ToolOutput, ToolReturn};

/// The instructions the harness adds to every request.
pub const INSTRUCTIONS: &str = "Some tools reply that a call is running in the background. This means that exact call is pending. Do not repeat or poll it. Its result will arrive automatically in a later message. Continue only with independent work. If none remains, end your response; the run will resume when the result arrives.";

/// The `origin` in the metadata of a delivered result's text.
pub const RESULT_ORIGIN: &str = "pydantic-ai-harness.background_tools.result.v1";

/// The argument a tool marked `{"background": "optional"}` gets, for the model to choose.
pub const RUN_IN_BACKGROUND: &str = "run_in_background";

/// The schema of [`RUN_IN_BACKGROUND`].
pub(super) fn flag_schema() -> Value {
    json!({
        "type": "boolean",
        "description": "Set to true to keep working and get the result later as a follow-up message.",
    })
}

/// The tool's immediate answer.
pub(super) fn started(tool_name: &str, task_id: &str) -> String {
    format!(
        "Tool '{tool_name}' is running in background (task {task_id}). This call is pending. Do not repeat or poll it; its result will arrive automatically. Continue independent work, or end your response."
    )
}

fn tags(tool_name: &str, task_id: &str, failed: bool) -> (String, &'static str) {
    let outcome = if failed { " outcome=\"failed\"" } else { "" };
    (
        format!(
            "<tool_result tool_name=\"{}\" tool_call_id=\"{}\"{outcome}>",
            crate::pyjson::html_escape(tool_name),
            crate::pyjson::html_escape(task_id)
        ),
        "</tool_result>",
    )
}

static CLOSING_TAG: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"(?i)<(\s*/\s*tool_result[\s/>])").unwrap_or_else(|_| unreachable!("a valid pattern"))
});

/// A closing `</tool_result>` tag in a tool's output made harmless (its `<` escaped), so the
/// output cannot end its own frame.
pub(super) fn escape_body(text: &str) -> String {
    // The tag's next character is matched too (the regex crate has no look-ahead); two tags
    // cannot share it, so one pass finds them all.
    CLOSING_TAG.replace_all(text, "&lt;$1").into_owned()
}

fn completion(text: String, task_id: &str) -> UserContent {
    UserContent::TextContent(
        TextContent::new(text).with_metadata(json!({"origin": RESULT_ORIGIN, "tool_call_id": task_id})),
    )
}

/// A value as a model is shown a tool's return: a string as it is, anything else as compact JSON.
fn response_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A finished call's output, framed as the call's result. A rich return's metadata is not sent;
/// its content follows the frame.
pub(super) fn result(tool_name: &str, task_id: &str, output: ToolOutput) -> Vec<UserContent> {
    let (value, extra) = match output {
        ToolOutput::Value(v) => (v, None),
        ToolOutput::Return(ToolReturn { return_value, content, .. }) => (return_value, content),
    };
    let (open, close) = tags(tool_name, task_id, false);
    let text = format!("{open}\n{}\n{close}", escape_body(&response_text(&value)));
    let extra = extra.unwrap_or_default();
    if extra.iter().all(|c| matches!(c, UserContent::Text(_))) {
        let mut joined = text;
        for item in extra {
            if let UserContent::Text(t) = item {
                joined.push('\n');
                joined.push_str(&t);
            }
        }
        return vec![completion(joined, task_id)];
    }
    let mut out = vec![completion(text, task_id)];
    out.extend(extra);
    out
}

/// A failure the model is told about, framed as the call's failed result.
pub(super) fn failure(tool_name: &str, task_id: &str, message: &str, kind: &str) -> Vec<UserContent> {
    let body = if message.is_empty() { kind.to_string() } else { escape_body(message) };
    let (open, close) = tags(tool_name, task_id, true);
    vec![completion(format!("{open}\n{body}\n{close}"), task_id)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closing_tags_in_output_are_escaped() {
        assert_eq!(escape_body("a </tool_result> b"), "a &lt;/tool_result> b");
        assert_eq!(escape_body("< / TOOL_RESULT attr>"), "&lt; / TOOL_RESULT attr>");
        assert_eq!(escape_body("</tool_result></tool_result>"), "&lt;/tool_result>&lt;/tool_result>");
        assert_eq!(escape_body("<tool_result> </tool_results>"), "<tool_result> </tool_results>");
        assert_eq!(escape_body("</tool_result"), "</tool_result");
    }

    #[test]
    fn names_are_escaped_in_the_frame() {
        let (open, _) = tags("a\"b", "<id>", true);
        assert_eq!(open, "<tool_result tool_name=\"a&quot;b\" tool_call_id=\"&lt;id&gt;\" outcome=\"failed\">");
    }
}
