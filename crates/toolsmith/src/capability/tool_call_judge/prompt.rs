//! The judge's prompt, as the harness builds it: the call as JSON in a `<tool_call>` block, and
//! optionally the conversation, with the framework's tags neutralised.

use serde_json::Value;

use crate::messages::{ModelMessage, ModelRequestPart, ModelResponsePart, ToolOutcome, UserPromptContent};

/// The framing tags Pydantic AI writes into prompt text.
const FRAMING_TAGS: &[&str] = &[
    "system",
    "tool_result",
    "assistant_thinking",
    "context",
    "context_diff",
    "validation_errors",
    "retry_feedback",
    "conversation_summary",
];

/// The blocks the judge's prompt is made of.
const BLOCK_TAGS: &[&str] = &["tool_call", "conversation"];

/// Whether the `<` at `chars[at]` opens or closes one of `tags`. `block` also takes backslashes
/// before the slash and a `"` or `\` right after the name (JSON escapes).
fn is_tag_opener(chars: &[char], at: usize, tags: &[&str], block: bool) -> bool {
    let mut i = at + 1;
    let skip_ws = |i: &mut usize| {
        while *i < chars.len() && chars[*i].is_whitespace() {
            *i += 1;
        }
    };
    skip_ws(&mut i);
    let mut j = i;
    if block {
        while j < chars.len() && chars[j] == '\\' {
            j += 1;
        }
    }
    if j < chars.len() && chars[j] == '/' {
        i = j + 1;
        skip_ws(&mut i);
    }
    tags.iter().any(|tag| {
        let end = i + tag.chars().count();
        if end > chars.len() || !chars[i..end].iter().zip(tag.chars()).all(|(a, b)| a.to_ascii_lowercase() == b) {
            return false;
        }
        match chars.get(end) {
            None => true,
            Some(c) => c.is_whitespace() || *c == '/' || *c == '>' || (block && (*c == '"' || *c == '\\')),
        }
    })
}

/// Escapes the `<` of every opening or closing framework tag as `&lt;`, leaving the rest.
pub(super) fn neutralize_tags(text: &str) -> String {
    if !text.contains('<') {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, c) in chars.iter().enumerate() {
        if *c == '<' && (is_tag_opener(&chars, i, FRAMING_TAGS, false) || is_tag_opener(&chars, i, BLOCK_TAGS, true)) {
            out.push_str("&lt;");
        } else {
            out.push(*c);
        }
    }
    out
}

/// JSON as Python's `json.dumps(..., ensure_ascii=False)` writes it (`", "` and `": "`).
pub(super) fn py_json(value: &Value) -> String {
    crate::pyjson::dumps_unicode(value)
}

fn compact(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

fn prompt_text(content: &UserPromptContent) -> String {
    match content {
        UserPromptContent::Text(s) => s.clone(),
        other => other.text().replace('\n', " "),
    }
}

/// The conversation as lines: what was asked, said, called and returned (no instructions, system
/// prompts or thinking).
fn render_transcript(messages: &[ModelMessage]) -> String {
    let mut lines = Vec::new();
    for message in messages {
        match message {
            ModelMessage::Request(r) => {
                for part in &r.parts {
                    match part {
                        ModelRequestPart::UserPrompt(u) => {
                            let text = prompt_text(&u.content);
                            if !text.is_empty() {
                                lines.push(format!("user: {text}"));
                            }
                        }
                        ModelRequestPart::ToolReturn(t) if t.outcome == ToolOutcome::Retried => {
                            lines.push(format!("retry ({}): {}", t.tool_name, compact(&t.content)));
                        }
                        ModelRequestPart::ToolReturn(t) => {
                            lines.push(format!("tool {} returned: {}", t.tool_name, compact(&t.content)));
                        }
                        ModelRequestPart::RetryPrompt(r) => {
                            lines.push(format!(
                                "retry ({}): {}",
                                r.tool_name.as_deref().unwrap_or("output"),
                                compact(&r.content)
                            ));
                        }
                        _ => {}
                    }
                }
            }
            ModelMessage::Response(r) => {
                for part in &r.parts {
                    match part {
                        ModelResponsePart::Text(t) if !t.content.is_empty() => {
                            lines.push(format!("assistant: {}", t.content));
                        }
                        ModelResponsePart::ToolCall(c) => {
                            lines.push(format!("assistant called tool {} with {}", c.tool_name, compact(&c.args)));
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    lines.join("\n")
}

/// The prompt: the call, and the conversation clamped to its last `window` tokens (4 characters
/// a token) when asked for.
pub(super) fn tool_call_prompt(
    messages: &[ModelMessage],
    tool_name: &str,
    args: &Value,
    include_conversation: bool,
    window: usize,
) -> String {
    let payload = py_json(&serde_json::json!({"tool_name": tool_name, "arguments": args}));
    let tool_call = format!("<tool_call>\n{}\n</tool_call>", neutralize_tags(&payload));
    if !include_conversation {
        return tool_call;
    }
    let transcript = neutralize_tags(&render_transcript(messages));
    let max_chars = window.saturating_mul(4);
    let count = transcript.chars().count();
    let transcript = if count > max_chars { transcript.chars().skip(count - max_chars).collect() } else { transcript };
    format!("<conversation>\n{transcript}\n</conversation>\n\n{tool_call}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_neutralised_as_the_harness_does() {
        assert_eq!(
            neutralize_tags("a <tool_call> b </ Tool_Call> <toolbox>"),
            "a &lt;tool_call> b &lt;/ Tool_Call> <toolbox>"
        );
        assert_eq!(neutralize_tags(r#"<\/conversation"x"#), r#"&lt;\/conversation"x"#);
        assert_eq!(neutralize_tags("<system>x</system> <systemic>"), "&lt;system>x&lt;/system> <systemic>");
        assert_eq!(neutralize_tags("1 < 2"), "1 < 2");
    }

    #[test]
    fn python_json_spacing() {
        assert_eq!(py_json(&serde_json::json!({"a": [1, {"b": "é"}]})), r#"{"a": [1, {"b": "é"}]}"#);
    }
}
