//! Mapping helpers shared by the provider adapters: retry texts, tool returns, media, return
//! schemas, tool filtering for `tool_choice`, and provider-specific settings.
// Each helper is used by some providers; with only some features on, the others are unused.
#![cfg_attr(not(all(feature = "openai", feature = "anthropic", feature = "gemini")), allow(dead_code))]

use std::borrow::Cow;
use std::collections::HashSet;

use serde_json::{Map, Value, json};

use crate::messages::{
    ModelMessage, ModelRequest, ModelRequestPart, ModelResponse, ModelResponsePart, RetryFeedbackPart, RetryPromptPart,
    ToolCallPart, ToolOutcome, ToolReturnPart,
};
use crate::model::{ModelError, ModelRequestParameters, ModelSettings, ResolvedToolChoice, resolve_tool_choice};
use crate::search::native::{self, ANTHROPIC_BLOCKS, OPENAI_ITEMS};
use crate::search::{SEARCH_TOOL_KIND, SEARCH_TOOL_NAME, discovered_in};
use crate::tool::ToolDefinition;

pub(crate) use crate::messages::retry_text;

/// A request's parts as the items of the OpenAI-shaped APIs (Chat Completions messages and
/// Responses input items share them): system and user messages, retry feedback as a user
/// message, and tool results (returns and tool retry prompts) as `tool_result(call_id, text)`
/// shapes them.
///
/// A tool return that holds files (only where the API takes them in a tool result: the history
/// went through [`move_tool_files`](crate::messages::move_tool_files) otherwise) is given to
/// `tool_result` as the content `user_content` makes of its items: text and files in order.
pub(crate) fn openai_request_items(
    parts: &[crate::messages::ModelRequestPart],
    user_content: impl Fn(&crate::messages::UserPromptContent) -> Result<Value, ModelError>,
    tool_result: impl Fn(&str, Value) -> Value,
    out: &mut Vec<Value>,
) -> Result<(), ModelError> {
    use crate::messages::{ModelRequestPart, ReturnItem, UserContent, UserPromptContent};
    for part in parts {
        out.push(match part {
            ModelRequestPart::SystemPrompt(p) => json!({"role": "system", "content": p.content}),
            ModelRequestPart::UserPrompt(p) => json!({"role": "user", "content": user_content(&p.content)?}),
            ModelRequestPart::ToolReturn(p) => match p.items() {
                Some((items, _)) => {
                    let items = items
                        .into_iter()
                        .map(|i| match i {
                            ReturnItem::Text(t) => UserContent::Text(t),
                            ReturnItem::File(m) => UserContent::Media(m),
                        })
                        .collect();
                    tool_result(&p.tool_call_id, user_content(&UserPromptContent::Parts(items))?)
                }
                None => tool_result(&p.tool_call_id, tool_return_text(p).into()),
            },
            ModelRequestPart::RetryFeedback(p) => json!({"role": "user", "content": feedback_text(p)}),
            ModelRequestPart::RetryPrompt(p) => match &p.tool_call_id {
                Some(id) if p.tool_name.is_some() => tool_result(id, retry_prompt_text(p).into()),
                _ => json!({"role": "user", "content": retry_prompt_text(p)}),
            },
        });
    }
    Ok(())
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

/// Appends `tools` to the body's `tools` list (made when missing).
pub(crate) fn push_tools(body: &mut Map<String, Value>, tools: Vec<Value>) {
    if tools.is_empty() {
        return;
    }
    match body.entry("tools").or_insert_with(|| Value::Array(Vec::new())) {
        Value::Array(list) => list.extend(tools),
        other => *other = Value::Array(tools),
    }
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
    resolve_tool_choice(settings, params).map_err(|e| ModelError::new(crate::model::ModelErrorKind::User, e.message))
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
    ModelError::new(crate::model::ModelErrorKind::User, format!("{provider} does not accept {what}: {instead}"))
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

/// A tool call's `arguments` as a provider sent them, for a
/// [`ToolCallPart`](crate::messages::ToolCallPart): JSON text (a string) as it is, an object as
/// the arguments; anything else (a number, an array, `true`) as its JSON text, which argument
/// validation refuses with an error the model gets as a retry (the run goes on, and the history
/// keeps arguments Pydantic AI reads: a string or an object). Absent or null: none (`{}`).
pub(crate) fn call_args(raw: Option<&Value>) -> Value {
    match raw {
        None | Some(Value::Null) => Value::String(String::new()),
        Some(Value::String(s)) => Value::String(s.clone()),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(other) => Value::String(other.to_string()),
    }
}

/// A streamed piece of a tool call's `arguments` as text: a string as it is, any other value
/// (an object, or what validation will refuse) as its JSON text; `None` for absent or null.
pub(crate) fn call_args_delta(raw: Option<&Value>) -> Option<std::borrow::Cow<'_, str>> {
    match raw? {
        Value::Null => None,
        Value::String(s) => Some(std::borrow::Cow::Borrowed(s)),
        other => Some(std::borrow::Cow::Owned(other.to_string())),
    }
}

/// A tool's parameter schema as a provider takes it: without the `$schema` keyword, at the root
/// and in every subschema (a property named `$schema` stays). MCP servers send it
/// (`"http://json-schema.org/draft-07/schema#"` from zod, for one) and Anthropic (so Bedrock's
/// Claude models too) refuses a schema that names another draft than its own; Pydantic AI's
/// schema transformers drop it for OpenAI, Anthropic, Gemini and Bedrock alike.
pub(crate) fn provider_schema(schema: &Value) -> Value {
    let mut schema = schema.clone();
    strip_schema_keyword(&mut schema, 0);
    schema
}

/// Removes `$schema` from `schema` and the subschemas it holds.
fn strip_schema_keyword(schema: &mut Value, depth: usize) {
    if depth > crate::validation::MAX_NESTING {
        return;
    }
    let Value::Object(map) = schema else { return };
    map.remove("$schema");
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            // Keywords whose value is a schema (an array of them for draft-07 tuple `items`).
            "items"
            | "additionalItems"
            | "additionalProperties"
            | "unevaluatedItems"
            | "unevaluatedProperties"
            | "contains"
            | "propertyNames"
            | "not"
            | "if"
            | "then"
            | "else" => match value {
                Value::Array(items) => items.iter_mut().for_each(|s| strip_schema_keyword(s, depth + 1)),
                other => strip_schema_keyword(other, depth + 1),
            },
            // Keywords whose value is an array of schemas.
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(items) = value {
                    items.iter_mut().for_each(|s| strip_schema_keyword(s, depth + 1));
                }
            }
            // Keywords whose value maps names to schemas.
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                if let Value::Object(schemas) = value {
                    schemas.values_mut().for_each(|s| strip_schema_keyword(s, depth + 1));
                }
            }
            _ => {}
        }
    }
}

/// The Claude models that refuse sampling settings (`temperature`, `top_p`, `top_k`) with a
/// 400, by name prefix: Pydantic AI's `anthropic_disallows_sampling_settings`.
const ANTHROPIC_NO_SAMPLING: &[&str] = &[
    "claude-fable-5",
    "claude-mythos-5",
    "claude-opus-4-7",
    "claude-opus-4-8",
    "claude-opus-5",
    "claude-sonnet-5",
    "claude-haiku-5-5",
];

/// The sampling settings [`anthropic_refuses_sampling`] models refuse, by their Messages API
/// names.
#[cfg(feature = "anthropic")]
pub(crate) const ANTHROPIC_SAMPLING: &[&str] = &["temperature", "top_p", "top_k"];

/// Whether a Claude model (its Anthropic name, `claude-opus-4-7`...) refuses sampling settings.
#[cfg(any(feature = "anthropic", feature = "bedrock"))]
pub(crate) fn anthropic_refuses_sampling(model: &str) -> bool {
    ANTHROPIC_NO_SAMPLING.iter().any(|p| model.starts_with(p))
}

/// The most a Claude model (its Anthropic name) can write in one answer, where Pydantic AI's
/// profile knows it (`anthropic_max_output_tokens`): a larger `max_tokens` is refused with a
/// 400, and lowered to it.
#[cfg(any(feature = "anthropic", feature = "bedrock"))]
pub(crate) fn anthropic_max_output_tokens(model: &str) -> Option<u32> {
    const MAX_128K: &[&str] = &[
        "claude-fable-5",
        "claude-mythos-5",
        "claude-opus-4-6",
        "claude-opus-4-7",
        "claude-opus-4-8",
        "claude-opus-5",
        "claude-sonnet-4-6",
        "claude-sonnet-5",
        "claude-haiku-5-5",
    ];
    const MAX_64K: &[&str] = &["claude-haiku-4-5", "claude-opus-4-5", "claude-sonnet-4-5"];
    if MAX_128K.iter().any(|p| model.starts_with(p)) {
        Some(128_000)
    } else if MAX_64K.iter().any(|p| model.starts_with(p)) {
        Some(64_000)
    } else {
        None
    }
}

/// Takes the `keys` out of `map`, with a warning naming them and the model that refuses them;
/// returns what was taken out.
#[cfg(any(feature = "anthropic", feature = "bedrock"))]
pub(crate) fn drop_refused_sampling(
    map: &mut Map<String, Value>,
    keys: &[&'static str],
    model: &str,
) -> Vec<&'static str> {
    let dropped: Vec<&'static str> = keys.iter().copied().filter(|k| map.remove(*k).is_some()).collect();
    if !dropped.is_empty() {
        tracing::warn!(model, ?dropped, "the model refuses sampling parameters: these settings are not sent");
    }
    dropped
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

/// Refuses a request whose history nests deeper than a history is written
/// ([`MAX_HISTORY_DEPTH`](crate::messages::MAX_HISTORY_DEPTH)), or whose tools' schemas or
/// output schema nest deeper than that, before an adapter maps it: the mapping, the schema
/// transforms and the request body's writer recurse once per level of a value. (Only values
/// built in memory nest so deep: what serde_json parses stops at 128 levels.)
pub(crate) fn check_depth(messages: &[ModelMessage], params: &ModelRequestParameters) -> Result<(), ModelError> {
    use crate::messages::MAX_HISTORY_DEPTH;
    let refused = |what: String| {
        Err(ModelError::new(
            crate::model::ModelErrorKind::User,
            format!(
                "{what} nests arrays and objects more than {MAX_HISTORY_DEPTH} levels deep: toolsmith sends and writes values up to that depth"
            ),
        ))
    };
    if let Some(i) = crate::messages::first_too_deep(messages) {
        return refused(format!("the message history (in message {i})"));
    }
    if let Some(problem) = params.all_tools().find_map(ToolDefinition::too_deep) {
        return Err(ModelError::new(crate::model::ModelErrorKind::User, problem));
    }
    if let Some(output) = &params.output_object
        && crate::validation::depth::too_deep(&output.json_schema, MAX_HISTORY_DEPTH).is_some()
    {
        return refused(format!("the output schema '{}'", output.name));
    }
    Ok(())
}

/// Replays the server-side tool searches a provider cannot take as they are (another
/// provider's, or its own when its native search is off for this request) as the local search
/// would have written them: a `search_tools` call (`{"queries": [...]}`) where the search was in
/// the response, and its return (`{"discovered_tools": [{"name": ...}]}`, `tool_kind:
/// "tool-search"`) first in the next request. `native` tells the responses whose searches the
/// target replays as they are (its own, when its native search is on for this request).
///
/// With `|_| false`, every native search is rewritten.
///
/// Every provider accepts that shape: an ordinary function call answered by the next turn
/// (Anthropic turns such a return into `tool_reference` blocks when its native search is on).
/// Rebuilding another provider's server blocks instead is not possible: they carry ids only
/// that provider's server issues. A history without such searches is borrowed as it is.
pub(crate) fn localize_native_searches<'a>(
    messages: &'a [ModelMessage],
    native: impl Fn(&ModelResponse) -> bool,
) -> Cow<'a, [ModelMessage]> {
    let foreign = |m: &ModelMessage| match m {
        ModelMessage::Response(r) if !native(r) => native::native_searches(r.provider_details.as_deref()),
        _ => None,
    };
    if !messages.iter().any(|m| foreign(m).is_some()) {
        return Cow::Borrowed(messages);
    }
    let mut out: Vec<ModelMessage> = Vec::with_capacity(messages.len() + 1);
    let mut returns: Vec<ModelRequestPart> = Vec::new();
    for message in messages {
        let searches = foreign(message);
        match message {
            ModelMessage::Request(request) if !returns.is_empty() => {
                let mut request = request.clone();
                request.parts.splice(0..0, returns.drain(..));
                out.push(request.into());
                continue;
            }
            _ if !returns.is_empty() => out.push(ModelRequest::new(std::mem::take(&mut returns)).into()),
            _ => {}
        }
        let (ModelMessage::Response(response), Some((searches, rest))) = (message, searches) else {
            out.push(message.clone());
            continue;
        };
        let mut response = response.clone();
        let old = std::mem::take(&mut response.parts);
        let n = old.len();
        let call = |s: &native::NativeSearch| {
            let mut c = ToolCallPart::new(SEARCH_TOOL_NAME, json!({"queries": s.queries}), s.call_id.clone());
            c.tool_kind = Some(SEARCH_TOOL_KIND.into());
            ModelResponsePart::ToolCall(c)
        };
        for (i, part) in old.into_iter().enumerate() {
            response.parts.extend(searches.iter().filter(|s| s.after_part == i).map(call));
            response.parts.push(part);
        }
        response.parts.extend(searches.iter().filter(|s| s.after_part >= n).map(call));
        response.provider_details = rebase(rest, &searches).map(Box::new);
        returns.extend(searches.iter().map(|s| {
            let mut r = ToolReturnPart::success(
                SEARCH_TOOL_NAME,
                json!({"discovered_tools": s.names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>()}),
                &s.call_id,
            );
            r.tool_kind = Some(SEARCH_TOOL_KIND.into());
            ModelRequestPart::ToolReturn(r)
        }));
        out.push(response.into());
    }
    if !returns.is_empty() {
        out.push(ModelRequest::new(returns).into());
    }
    Cow::Owned(out)
}

/// The details left once the searches are taken out, their entries' `after_part` moved past the
/// calls inserted before them; `None` when nothing is left.
fn rebase(mut rest: Value, searches: &[native::NativeSearch]) -> Option<Value> {
    for (key, _) in [ANTHROPIC_BLOCKS, OPENAI_ITEMS] {
        for entry in rest.get_mut(key).and_then(Value::as_array_mut).into_iter().flatten() {
            if let Some(at) = entry.get("after_part").and_then(Value::as_u64) {
                let shift = searches.iter().filter(|s| s.after_part as u64 <= at).count() as u64;
                entry["after_part"] = (at + shift).into();
            }
        }
    }
    rest.as_object().is_some_and(|m| !m.is_empty()).then_some(rest)
}

/// The tools for a provider without native search: those not deferred, and the deferred ones
/// the history discovered (with the local search or a provider's), which the model may call.
pub(crate) fn tools_without_native_search<'a>(
    params: &'a ModelRequestParameters,
    messages: &[ModelMessage],
) -> Vec<&'a ToolDefinition> {
    let discovered = if params.all_tools().any(|t| t.defer_loading) { discovered_in(messages) } else { HashSet::new() };
    all_tools(params).into_iter().filter(|t| !t.defer_loading || discovered.contains(&t.name)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::ModelResponse;

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

    fn anthropic_search_response() -> ModelResponse {
        let mut r = ModelResponse::new(vec![
            ModelResponsePart::Text(crate::messages::TextPart::new("Searching.")),
            ModelResponsePart::Text(crate::messages::TextPart::new("Found it.")),
            ModelResponsePart::ToolCall(ToolCallPart::new("get_weather", json!({"city": "Paris"}), "toolu_1")),
        ]);
        r.provider_name = Some("anthropic".into());
        r.provider_details = Some(Box::new(json!({"anthropic_blocks": [
            {"after_part": 1, "block": {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_regex", "input": {"query": "weather"}}},
            {"after_part": 1, "block": {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1", "content": {"type": "tool_search_tool_search_result", "tool_references": [{"type": "tool_reference", "tool_name": "get_weather"}]}}},
            {"after_part": 3, "block": {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_2", "content": []}},
        ]})));
        r
    }

    #[test]
    fn native_searches_become_search_tools_calls_and_returns() {
        let history: Vec<ModelMessage> = vec![
            ModelRequest::user_prompt("Weather?").into(),
            anthropic_search_response().into(),
            ModelRequest::new(vec![ModelRequestPart::ToolReturn(ToolReturnPart::success(
                "get_weather",
                json!("Sunny"),
                "toolu_1",
            ))])
            .into(),
        ];
        let anthropic = |r: &ModelResponse| r.provider_name.as_deref() == Some("anthropic");
        assert!(matches!(localize_native_searches(&history, anthropic), Cow::Borrowed(_)));
        let local = localize_native_searches(&history, |_| false);
        assert_eq!(local.len(), 3);
        let response = local[1].as_response().unwrap();
        let names: Vec<&str> = response
            .parts
            .iter()
            .map(|p| match p {
                ModelResponsePart::ToolCall(c) => c.tool_name.as_str(),
                _ => "text",
            })
            .collect();
        assert_eq!(names, ["text", "search_tools", "text", "get_weather"]);
        let call = response.tool_calls().next().unwrap();
        assert_eq!((call.args.clone(), call.tool_call_id.as_str()), (json!({"queries": ["weather"]}), "srvtoolu_1"));
        assert_eq!(
            response.provider_details.as_deref(),
            Some(
                &json!({"anthropic_blocks": [{"after_part": 4, "block": {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_2", "content": []}}]})
            )
        );
        let request = local[2].as_request().unwrap();
        let ModelRequestPart::ToolReturn(ret) = &request.parts[0] else { panic!("the search's return comes first") };
        assert_eq!(ret.content, json!({"discovered_tools": [{"name": "get_weather"}]}));
        assert_eq!(ret.tool_kind.as_deref(), Some("tool-search"));
        assert_eq!(request.parts.len(), 2);
        assert!(discovered_in(&local).contains("get_weather"));

        // At the end of a history, the return gets a request of its own.
        let local = localize_native_searches(&history[..2], |_| false);
        assert_eq!(local.len(), 3);
        assert_eq!(local[2].as_request().unwrap().parts.len(), 1);
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

/// A JSON value's type, as error messages name it.
pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Checks the shape of a provider's answer: each accessor says which field is missing or of
/// which type, with a redacted snippet of the answer (or of the stream event).
pub(crate) struct Shape<'a> {
    /// The provider, as named in messages.
    pub(crate) provider: &'a str,
    /// `"answer"` or `"stream event"`.
    pub(crate) what: &'a str,
    /// The whole answer (or event), quoted in errors.
    pub(crate) root: &'a Value,
    pub(crate) redactor: &'a crate::providers::redact::Redactor,
}

impl<'a> Shape<'a> {
    /// An answer's shape checker.
    pub(crate) fn answer(provider: &'a str, root: &'a Value, redactor: &'a crate::providers::redact::Redactor) -> Self {
        Shape { provider, what: "answer", root, redactor }
    }

    /// A stream event's shape checker.
    pub(crate) fn event(provider: &'a str, root: &'a Value, redactor: &'a crate::providers::redact::Redactor) -> Self {
        Shape { provider, what: "stream event", root, redactor }
    }

    /// The error for a malformed answer: `problem` says what is wrong.
    pub(crate) fn error(&self, problem: impl std::fmt::Display) -> ModelError {
        ModelError::new(
            crate::model::ModelErrorKind::UnexpectedResponse,
            format!(
                "the {} API sent a malformed {}: {problem}. It was: {}",
                self.provider,
                self.what,
                self.redactor.snippet(&self.root.to_string(), crate::providers::sse::SNIPPET_CHARS)
            ),
        )
    }

    fn wrong(&self, path: &str, found: &Value, expected: &str) -> ModelError {
        let what = if path.starts_with("the ") { path.to_string() } else { format!("`{path}`") };
        self.error(format_args!("{what} is {}, expected {expected}", json_type(found)))
    }

    /// `parent[key]` when present and not null; an error when it has another type than `T`.
    fn field<T: ?Sized>(
        &self,
        parent: &'a Value,
        key: &str,
        path: &str,
        expected: &str,
        cast: impl Fn(&'a Value) -> Option<&'a T>,
    ) -> Result<Option<&'a T>, ModelError> {
        match parent.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => cast(v).map(Some).ok_or_else(|| self.wrong(path, v, expected)),
        }
    }

    fn required<T: ?Sized>(&self, found: Option<&'a T>, path: &str) -> Result<&'a T, ModelError> {
        found.ok_or_else(|| self.error(format_args!("`{path}` is missing")))
    }

    /// An optional string field.
    pub(crate) fn opt_str(&self, parent: &'a Value, key: &str, path: &str) -> Result<Option<&'a str>, ModelError> {
        self.field(parent, key, path, "a string", Value::as_str)
    }

    /// A required string field.
    pub(crate) fn str(&self, parent: &'a Value, key: &str, path: &str) -> Result<&'a str, ModelError> {
        let found = self.opt_str(parent, key, path)?;
        self.required(found, path)
    }

    /// An optional array field.
    pub(crate) fn opt_array(
        &self,
        parent: &'a Value,
        key: &str,
        path: &str,
    ) -> Result<Option<&'a Vec<Value>>, ModelError> {
        self.field(parent, key, path, "an array", Value::as_array)
    }

    /// A required array field.
    pub(crate) fn array(&self, parent: &'a Value, key: &str, path: &str) -> Result<&'a Vec<Value>, ModelError> {
        let found = self.opt_array(parent, key, path)?;
        self.required(found, path)
    }

    /// An optional object field.
    pub(crate) fn opt_object(&self, parent: &'a Value, key: &str, path: &str) -> Result<Option<&'a Value>, ModelError> {
        self.field(parent, key, path, "an object", |v: &'a Value| v.is_object().then_some(v))
    }

    /// A required object field.
    pub(crate) fn object_field(&self, parent: &'a Value, key: &str, path: &str) -> Result<&'a Value, ModelError> {
        let found = self.opt_object(parent, key, path)?;
        self.required(found, path)
    }

    /// `v` itself must be an object (`path` names it).
    pub(crate) fn object(&self, v: &'a Value, path: &str) -> Result<&'a Value, ModelError> {
        if v.is_object() { Ok(v) } else { Err(self.wrong(path, v, "an object")) }
    }
}

/// How much of a provider's own error message an error quotes.
pub(crate) const ERROR_CHARS: usize = 2000;
