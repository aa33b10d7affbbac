//! Mapping helpers shared by the provider adapters: retry texts, tool returns, media, return
//! schemas, tool filtering for `tool_choice`, and provider-specific settings.
// Each helper is used by some providers; with only some features on, the others are unused.
#![cfg_attr(not(all(feature = "openai", feature = "anthropic", feature = "gemini")), allow(dead_code))]

use serde_json::{Map, Value};

use crate::messages::{ModelMessage, RetryFeedbackPart, RetryPromptPart, ToolOutcome, ToolReturnPart};
use crate::model::{ModelError, ModelRequestParameters, ModelSettings, ResolvedToolChoice, resolve_tool_choice};
use crate::tool::ToolDefinition;

const FIX: &str = "\n\nFix the errors and try again.";

/// The text a model is shown for a retry, exactly as Pydantic AI words it
/// (`RetryPromptPart.model_response()`).
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
        other => {
            if for_tool {
                other.to_string()
            } else {
                format!("Validation feedback:\n{other}")
            }
        }
    };
    format!("{description}{FIX}")
}

/// The text of a tool return as the model sees it: the value (strings as they are, other JSON
/// compact) for a success; the retry text for a retried call; the message for a denial or a
/// failure.
pub(crate) fn tool_return_text(part: &ToolReturnPart) -> String {
    match part.outcome {
        ToolOutcome::Retried => retry_text(&part.content, true),
        _ => part.content_text(),
    }
}

/// Whether a tool return reports an error (for providers with an error flag).
pub(crate) fn tool_return_is_error(part: &ToolReturnPart) -> bool {
    !matches!(part.outcome, ToolOutcome::Success)
}

/// The user-message text of retry feedback.
pub(crate) fn feedback_text(part: &RetryFeedbackPart) -> String {
    retry_text(&part.content, false)
}

/// The text of an old-format retry prompt.
pub(crate) fn retry_prompt_text(part: &RetryPromptPart) -> String {
    retry_text(&part.content, part.tool_name.is_some())
}

/// A `data:` URL.
pub(crate) fn data_url(media_type: &str, base64: &str) -> String {
    format!("data:{media_type};base64,{base64}")
}

/// A media type guessed from a URL's extension, when the content has none.
pub(crate) fn guess_media_type(url: &str) -> Option<&'static str> {
    let path = url.split(['?', '#']).next().unwrap_or(url).to_ascii_lowercase();
    let ext = path.rsplit('.').next()?;
    Some(match ext {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "txt" => "text/plain",
        "md" => "text/markdown",
        "csv" => "text/csv",
        "html" | "htm" => "text/html",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "ogg" => "audio/ogg",
        "flac" => "audio/flac",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        "mov" => "video/quicktime",
        _ => return None,
    })
}

/// A short file extension for a media type (used for file names some APIs require).
pub(crate) fn extension_for(media_type: &str) -> &str {
    media_type.rsplit('/').next().unwrap_or("bin")
}

/// The return schema worth showing the model: an object, array, enum or union schema. A bare
/// scalar (`{"type": "string"}`, which every `String`-returning tool has) says nothing useful
/// and would only lengthen every request.
pub(crate) fn informative_return_schema(def: &ToolDefinition) -> Option<&Value> {
    let schema = def.return_schema.as_deref()?;
    let obj = schema.as_object()?;
    let informative = ["properties", "items", "enum", "anyOf", "oneOf", "allOf", "const", "$ref", "prefixItems"]
        .iter()
        .any(|k| obj.contains_key(*k))
        || matches!(obj.get("type").and_then(Value::as_str), Some("object" | "array"));
    informative.then_some(schema)
}

/// The description sent for a tool: its own, with its return schema appended (when
/// informative, see [`informative_return_schema`]) for providers without a field for it.
pub(crate) fn description_with_return_schema(def: &ToolDefinition) -> Option<String> {
    match informative_return_schema(def) {
        None => def.description.clone(),
        Some(schema) => {
            let schema = serde_json::to_string(schema).unwrap_or_default();
            let base = def.description.clone().unwrap_or_default();
            let sep = if base.is_empty() { "" } else { "\n\n" };
            Some(format!("{base}{sep}Return schema:\n{schema}"))
        }
    }
}

/// Every tool definition of the request (function tools, then output tools).
pub(crate) fn all_tools(params: &ModelRequestParameters) -> Vec<&ToolDefinition> {
    params.all_tools().collect()
}

/// The tools whose names are in `names`, in the request's order.
pub(crate) fn only<'a>(
    tools: &[&'a ToolDefinition],
    names: &std::collections::BTreeSet<String>,
) -> Vec<&'a ToolDefinition> {
    tools.iter().copied().filter(|t| names.contains(&t.name)).collect()
}

/// Resolves `tool_choice`; a configuration mistake becomes a `UserError` model error (which
/// the agent reports as a [`UserError`](crate::UserError)).
pub(crate) fn tool_choice(
    settings: Option<&ModelSettings>,
    params: &ModelRequestParameters,
) -> Result<ResolvedToolChoice, ModelError> {
    resolve_tool_choice(settings, params).map_err(|e| ModelError::new("UserError", e.message))
}

/// Deep-merges the provider-specific `extra` settings into a request body (objects merge,
/// anything else replaces).
pub(crate) fn merge_extra(body: &mut Value, extra: Option<&Value>) {
    fn merge(target: &mut Value, patch: &Value) {
        match (target, patch) {
            (Value::Object(t), Value::Object(p)) => {
                for (k, v) in p {
                    match t.get_mut(k) {
                        Some(existing) if existing.is_object() && v.is_object() => merge(existing, v),
                        _ => {
                            t.insert(k.clone(), v.clone());
                        }
                    }
                }
            }
            (t, p) => *t = p.clone(),
        }
    }
    if let Some(extra @ Value::Object(_)) = extra {
        merge(body, extra);
    }
}

/// Inserts `value` under `key` when it is `Some`.
pub(crate) fn put<T: Into<Value>>(map: &mut Map<String, Value>, key: &str, value: Option<T>) {
    if let Some(v) = value {
        map.insert(key.to_string(), v.into());
    }
}

/// A model error for content a provider cannot take.
pub(crate) fn unsupported(provider: &str, what: &str, instead: &str) -> ModelError {
    ModelError::new("UserError", format!("{provider} does not accept {what}: {instead}"))
}

/// The arguments of a tool call as a JSON object (raw strings parsed; invalid JSON kept under
/// no key so the provider still gets an object).
pub(crate) fn args_object(args: &Value) -> Value {
    match args {
        Value::Object(_) => args.clone(),
        Value::String(raw) if raw.trim().is_empty() => Value::Object(Map::new()),
        Value::String(raw) => match serde_json::from_str::<Value>(raw) {
            Ok(v @ Value::Object(_)) => v,
            _ => Value::Object(Map::new()),
        },
        Value::Null => Value::Object(Map::new()),
        _ => Value::Object(Map::new()),
    }
}

/// The arguments of a tool call as JSON text (raw strings kept as they are).
pub(crate) fn args_string(args: &Value) -> String {
    match args {
        Value::String(raw) if raw.trim().is_empty() => "{}".to_string(),
        Value::String(raw) => raw.clone(),
        Value::Null => "{}".to_string(),
        other => other.to_string(),
    }
}

/// The instructions of a request: the parameters', else the latest request's.
pub(crate) fn instructions(messages: &[ModelMessage], params: &ModelRequestParameters) -> Option<String> {
    params
        .instructions
        .clone()
        .or_else(|| messages.iter().rev().find_map(|m| m.as_request().and_then(|r| r.instructions.clone())))
        .filter(|s| !s.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn retry_texts_match_pydantic() {
        assert_eq!(retry_text(&json!("bad"), true), "bad\n\nFix the errors and try again.");
        assert_eq!(retry_text(&json!("bad"), false), "Validation feedback:\nbad\n\nFix the errors and try again.");
        let errs = json!([{"type": "missing", "loc": ["a"], "msg": "Field required", "input": {}, "ctx": {"x": 1}}]);
        let t = retry_text(&errs, true);
        assert!(t.starts_with("1 validation error:\n```json\n[\n  {\n    \"type\": \"missing\""), "{t}");
        assert!(!t.contains("ctx"));
    }

    #[test]
    fn extra_is_deep_merged() {
        let mut body = json!({"generationConfig": {"temperature": 0.5}});
        merge_extra(&mut body, Some(&json!({"generationConfig": {"thinkingConfig": {"thinkingBudget": 0}}})));
        assert_eq!(body, json!({"generationConfig": {"temperature": 0.5, "thinkingConfig": {"thinkingBudget": 0}}}));
    }
}

/// Conversation turns for APIs that want alternating roles: consecutive blocks of one role
/// are merged into one turn, empty ones dropped.
#[derive(Default)]
pub(crate) struct Turns {
    turns: Vec<(&'static str, Vec<Value>)>,
}

impl Turns {
    pub(crate) fn push(&mut self, role: &'static str, blocks: Vec<Value>) {
        if blocks.is_empty() {
            return;
        }
        match self.turns.last_mut() {
            Some((r, existing)) if *r == role => existing.extend(blocks),
            _ => self.turns.push((role, blocks)),
        }
    }

    /// The turns as `{"role": .., content_key: [..]}` objects.
    pub(crate) fn into_json(self, content_key: &str) -> Vec<Value> {
        self.turns
            .into_iter()
            .map(|(role, blocks)| {
                let mut turn = Map::new();
                turn.insert("role".into(), role.into());
                turn.insert(content_key.into(), Value::Array(blocks));
                Value::Object(turn)
            })
            .collect()
    }
}

/// The provider's own blocks kept in a response's `provider_details[key]` as
/// `{"after_part": N, field: block}` entries, to be replayed in place.
pub(crate) fn replayed_blocks(details: Option<&Value>, key: &str, field: &str) -> Vec<(usize, Value)> {
    details
        .and_then(|d| d.get(key))
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|i| Some((i.get("after_part")?.as_u64()? as usize, i.get(field)?.clone())))
                .collect()
        })
        .unwrap_or_default()
}
