//! The request body of [`AnthropicModel`]: system, messages, tools, tool choice, output format,
//! native tools and settings, as the Messages API takes them.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::{AnthropicModel, NativeToolSearch, discovered_names, native, thinking_enabled};
use crate::messages::{
    MediaContent, ModelMessage, ModelRequestPart, ModelResponsePart, ReturnItem, ToolReturnPart, UserContent,
    UserPromptContent,
};
use crate::model::{ModelError, ModelRequestParameters, ModelSettings, ResolvedToolChoice};
use crate::providers::wire::{self, put};
use crate::search::SEARCH_TOOL_KIND;
use crate::tool::ToolDefinition;

/// The room a default `max_tokens` leaves beyond an extended thinking `budget_tokens`.
const MIN_TOKENS_AFTER_THINKING: u32 = 4096;

impl AnthropicModel {
    /// The request body for these messages and parameters (what is POSTed).
    pub fn request_body(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
        stream: bool,
    ) -> Result<Value, ModelError> {
        wire::check_depth(messages, params)?;
        let native_search = self.uses_tool_search(params);
        let mut body = Map::new();
        body.insert("model".into(), self.name.clone().into());
        // Extended thinking's `budget_tokens` counts toward `max_tokens`, which must exceed it: a
        // default leaves room for an answer beyond a large budget. A `max_tokens` the settings set
        // is sent as it is.
        let thinking_budget = settings
            .and_then(|s| s.extra.as_deref())
            .and_then(|e| e.get("thinking"))
            .filter(|t| t.get("type").and_then(Value::as_str) == Some("enabled"))
            .and_then(|t| t.get("budget_tokens"))
            .and_then(Value::as_u64)
            .map_or(0, |b| u32::try_from(b).unwrap_or(u32::MAX));
        let mut max_tokens = settings
            .and_then(|s| s.max_tokens)
            .unwrap_or_else(|| self.default_max_tokens.max(thinking_budget.saturating_add(MIN_TOKENS_AFTER_THINKING)));
        // Above the model's maximum output the API refuses the request; the model cannot write
        // more anyway (unless an `output-...` beta raises the maximum).
        if let Some(most) = wire::anthropic_max_output_tokens(&self.name)
            && !self.extends_max_output()
        {
            max_tokens = max_tokens.min(most);
        }
        body.insert("max_tokens".into(), max_tokens.into());
        let mut system: Vec<String> = wire::instructions(messages, params).into_iter().collect();
        system.extend(messages.iter().filter_map(ModelMessage::as_request).flat_map(|r| {
            r.parts.iter().filter_map(|p| match p {
                ModelRequestPart::SystemPrompt(s) => Some(s.content.clone()),
                _ => None,
            })
        }));
        if !system.is_empty() {
            body.insert("system".into(), system.join("\n\n").into());
        }
        let deferred: Option<HashSet<&str>> =
            native_search.then(|| params.all_tools().filter(|t| t.defer_loading).map(|t| t.name.as_str()).collect());
        // Its own searches are replayed as they came when the same search tool is declared (a
        // `server_tool_use` of an undeclared tool is refused).
        let declared = self.tool_search.map(NativeToolSearch::name);
        let messages = wire::localize_native_searches(messages, |r| {
            native_search
                && r.provider_name.as_deref() == Some("anthropic")
                && wire::replayed_blocks(r.provider_details.as_deref(), "anthropic_blocks", "block").iter().all(
                    |(_, b)| {
                        let name = b.get("name").and_then(Value::as_str).unwrap_or_default();
                        b.get("type").and_then(Value::as_str) != Some("server_tool_use")
                            || !name.starts_with("tool_search_tool")
                            || Some(name) == declared
                    },
                )
        });
        body.insert("messages".into(), Value::Array(self.map_messages(&messages, deferred.as_ref())?));

        let choice = wire::tool_choice(settings, params)?;
        // A forced tool choice (`any`, `tool`) is refused with extended thinking, and by some
        // families outright: the tools are filtered client-side with `auto` instead.
        let thinking = thinking_enabled(settings);
        let no_forcing = thinking || refuses_forced_tool_choice(&self.name);
        let all: Vec<&ToolDefinition> =
            if native_search { wire::all_tools(params) } else { wire::tools_without_native_search(params, &messages) };
        let (tools, mut tool_choice): (Vec<&ToolDefinition>, Option<Value>) = match &choice {
            ResolvedToolChoice::Auto => (all, None),
            ResolvedToolChoice::None => (all, Some(json!({"type": "none"}))),
            ResolvedToolChoice::Required if no_forcing => {
                tracing::warn!(
                    model = %self.name,
                    thinking,
                    "Anthropic cannot force tool use with extended thinking enabled, nor on this model; sending tool_choice auto"
                );
                (all, Some(json!({"type": "auto"})))
            }
            ResolvedToolChoice::Required => (all, Some(json!({"type": "any"}))),
            ResolvedToolChoice::Restricted { required: true, tools } if tools.len() == 1 && !no_forcing => {
                (all, Some(json!({"type": "tool", "name": tools.iter().next()})))
            }
            ResolvedToolChoice::Restricted { required, tools } => {
                let mode = if *required && !no_forcing { "any" } else { "auto" };
                (wire::only(&all, tools), Some(json!({"type": mode})))
            }
        };
        if !tools.is_empty() {
            let mut list: Vec<Value> = Vec::new();
            // The strategy the agent asked for by name, else the model's.
            let kind = match params.native_search_strategy {
                Some(crate::model::NativeSearchStrategy::Regex) => Some(NativeToolSearch::Regex),
                Some(_) => Some(NativeToolSearch::Bm25),
                None => self.tool_search,
            };
            if native_search && let Some(kind) = kind {
                list.push(kind.tool());
            }
            list.extend(tools.iter().map(|t| {
                let mut m = Map::new();
                m.insert("name".into(), t.name.clone().into());
                put(&mut m, "description", t.description.clone());
                m.insert("input_schema".into(), wire::provider_schema(&t.parameters_json_schema));
                if t.strict == Some(true) {
                    m.insert("strict".into(), true.into());
                }
                if t.defer_loading && native_search {
                    m.insert("defer_loading".into(), true.into());
                }
                Value::Object(m)
            }));
            body.insert("tools".into(), Value::Array(list));
            if settings.and_then(|s| s.parallel_tool_calls) == Some(false) {
                let c = tool_choice.get_or_insert_with(|| json!({"type": "auto"}));
                if c.get("type").and_then(Value::as_str) != Some("none") {
                    c["disable_parallel_tool_use"] = true.into();
                }
            }
            put(&mut body, "tool_choice", tool_choice);
        }
        if let Some(format) = output_format(params)? {
            body.insert("output_config".into(), json!({"format": format}));
        }
        let native = native::request(&params.native_tools);
        wire::push_tools(&mut body, native.tools);
        if native.memory
            && let Value::Array(tools) = body.entry("tools").or_insert_with(|| Value::Array(Vec::new()))
        {
            native::use_memory_tool(tools)?;
        }
        if !native.mcp_servers.is_empty() {
            body.insert("mcp_servers".into(), Value::Array(native.mcp_servers));
        }
        if let Some(s) = settings {
            put(&mut body, "temperature", s.temperature);
            put(&mut body, "top_p", s.top_p);
        }
        if stream {
            body.insert("stream".into(), true.into());
        }
        let mut body = Value::Object(body);
        wire::merge_extra(&mut body, settings.and_then(|s| s.extra.as_deref()));
        // Claude Opus 4.7 and later families refuse sampling settings, whether they come from
        // the settings or their `extra` (`top_k`): left out, with a warning.
        if wire::anthropic_refuses_sampling(&self.name)
            && let Some(map) = body.as_object_mut()
        {
            wire::drop_refused_sampling(map, wire::ANTHROPIC_SAMPLING, &self.name);
        }
        Ok(body)
    }

    /// A `tool_result` block; with native search (`deferred`: the request's deferred tools), a
    /// search's return lists the deferred tools it found as `tool_reference` blocks.
    fn tool_result(&self, part: &ToolReturnPart, deferred: Option<&HashSet<&str>>) -> Result<Value, ModelError> {
        let mut block = Map::new();
        block.insert("type".into(), "tool_result".into());
        block.insert("tool_use_id".into(), part.tool_call_id.clone().into());
        let references = deferred
            .filter(|_| part.tool_kind.as_deref() == Some(SEARCH_TOOL_KIND))
            .and_then(|d| discovered_names(&part.content).map(|names| (d, names)))
            .map(|(d, names)| names.into_iter().filter(|n| d.contains(n.as_str())).collect::<Vec<_>>())
            .filter(|names| !names.is_empty());
        match references {
            Some(names) => {
                let refs: Vec<Value> =
                    names.iter().map(|n| json!({"type": "tool_reference", "tool_name": n})).collect();
                block.insert("content".into(), Value::Array(refs));
            }
            None => match part.items() {
                // Files (images, documents) go in the result, next to the text.
                Some((items, _)) => {
                    let mut content = Vec::with_capacity(items.len());
                    for item in items {
                        match item {
                            ReturnItem::Text(text) => content.push(json!({"type": "text", "text": text})),
                            ReturnItem::File(m) => content
                                .extend(map_user_content(&UserPromptContent::Parts(vec![UserContent::Media(m)]))?),
                        }
                    }
                    block.insert("content".into(), Value::Array(content));
                }
                None => {
                    block.insert("content".into(), wire::tool_return_text(part).into());
                }
            },
        }
        if wire::tool_return_is_error(part) {
            block.insert("is_error".into(), true.into());
        }
        Ok(Value::Object(block))
    }

    fn map_messages(
        &self,
        messages: &[ModelMessage],
        deferred: Option<&HashSet<&str>>,
    ) -> Result<Vec<Value>, ModelError> {
        let mut turns = wire::Turns::default();
        for message in messages {
            match message {
                ModelMessage::Request(request) => {
                    let mut blocks = Vec::new();
                    for part in &request.parts {
                        match part {
                            ModelRequestPart::SystemPrompt(_) => {}
                            ModelRequestPart::UserPrompt(p) => blocks.extend(map_user_content(&p.content)?),
                            ModelRequestPart::ToolReturn(p) => blocks.push(self.tool_result(p, deferred)?),
                            ModelRequestPart::RetryFeedback(p) => {
                                blocks.push(json!({"type": "text", "text": wire::feedback_text(p)}))
                            }
                            ModelRequestPart::RetryPrompt(p) => match &p.tool_call_id {
                                Some(id) if p.tool_name.is_some() => blocks.push(json!({
                                    "type": "tool_result",
                                    "tool_use_id": id,
                                    "content": wire::retry_prompt_text(p),
                                    "is_error": true,
                                })),
                                _ => blocks.push(json!({"type": "text", "text": wire::retry_prompt_text(p)})),
                            },
                        }
                    }
                    turns.push("user", blocks);
                }
                ModelMessage::Response(response) => {
                    let own = response.provider_name.as_deref() == Some("anthropic");
                    let raw: Vec<(usize, Value)> = if own {
                        wire::replayed_blocks(response.provider_details.as_deref(), "anthropic_blocks", "block")
                    } else {
                        Vec::new()
                    };
                    let mut blocks = Vec::new();
                    for (i, part) in response.parts.iter().enumerate() {
                        blocks.extend(raw.iter().filter(|(at, _)| *at == i).map(|(_, b)| b.clone()));
                        match part {
                            ModelResponsePart::Text(t) if !t.content.is_empty() => {
                                blocks.push(json!({"type": "text", "text": t.content}))
                            }
                            ModelResponsePart::Text(_) => {}
                            ModelResponsePart::ToolCall(c) => blocks.push(json!({
                                "type": "tool_use",
                                "id": c.tool_call_id,
                                "name": c.tool_name,
                                "input": wire::args_object(&c.args),
                            })),
                            ModelResponsePart::Thinking(t) if t.provider_name.as_deref() == Some("anthropic") => {
                                match (&t.signature, t.id.as_deref()) {
                                    (Some(data), Some("redacted_thinking")) => {
                                        blocks.push(json!({"type": "redacted_thinking", "data": data}))
                                    }
                                    (Some(sig), _) => blocks.push(json!({
                                        "type": "thinking",
                                        "thinking": t.content,
                                        "signature": sig,
                                    })),
                                    (None, _) => {}
                                }
                            }
                            ModelResponsePart::Thinking(_) => {}
                            // Its own server tools' calls and results go back as they came;
                            // another provider's, and files the model made, are not sent.
                            ModelResponsePart::NativeToolCall(_) | ModelResponsePart::NativeToolReturn(_) => {
                                blocks.extend(native::replay(part))
                            }
                            ModelResponsePart::File(_) => {}
                        }
                    }
                    let n = response.parts.len();
                    blocks.extend(raw.iter().filter(|(at, _)| *at >= n).map(|(_, b)| b.clone()));
                    turns.push("assistant", blocks);
                }
            }
        }
        Ok(turns.into_json("content"))
    }
}

fn map_user_content(content: &UserPromptContent) -> Result<Vec<Value>, ModelError> {
    let items = match content {
        UserPromptContent::Text(s) => return Ok(vec![json!({"type": "text", "text": s})]),
        UserPromptContent::Parts(items) => items,
    };
    let mut out = Vec::new();
    for item in items {
        match item {
            UserContent::Text(t) => out.push(json!({"type": "text", "text": t})),
            UserContent::TextContent(t) => out.push(json!({"type": "text", "text": t.content})),
            UserContent::Media(m) => out.push(map_media(m)?),
            UserContent::Other(v) => {
                tracing::warn!(content = %v, "user content of an unknown kind is not sent to Anthropic")
            }
        }
    }
    Ok(out)
}

fn map_media(m: &MediaContent) -> Result<Value, ModelError> {
    Ok(match m {
        MediaContent::Binary(b) if b.media_type.starts_with("image/") => json!({
            "type": "image",
            "source": {"type": "base64", "media_type": b.media_type, "data": b.data},
        }),
        MediaContent::Binary(b) if b.media_type == "application/pdf" => json!({
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": b.data},
        }),
        MediaContent::Binary(b) if b.media_type.starts_with("text/") => {
            let text = b.bytes().map(|d| String::from_utf8_lossy(&d).into_owned()).unwrap_or_default();
            json!({"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}})
        }
        MediaContent::Binary(b) => {
            return Err(wire::unsupported(
                "Anthropic",
                &format!("content of type {}", b.media_type),
                "send images, PDF or plain text",
            ));
        }
        MediaContent::ImageUrl(u) => json!({"type": "image", "source": {"type": "url", "url": u.url}}),
        MediaContent::DocumentUrl(u) => json!({"type": "document", "source": {"type": "url", "url": u.url}}),
        MediaContent::AudioUrl(_) | MediaContent::VideoUrl(_) => {
            return Err(wire::unsupported(
                "Anthropic",
                "audio or video",
                "use a Gemini model for audio and video input",
            ));
        }
    })
}

impl AnthropicModel {
    /// Whether the requests carry a beta that raises the maximum output (`output-...`).
    fn extends_max_output(&self) -> bool {
        self.http
            .headers
            .get_all("anthropic-beta")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|beta| beta.trim().starts_with("output-"))
    }
}

/// The Claude families that refuse a forced tool choice (`any`, `tool`) even without thinking,
/// by name prefix: Pydantic AI's `supports_forced_tool_choice` is off for them.
const NO_FORCED_TOOL_CHOICE: &[&str] = &[
    "claude-fable-5-1",
    "claude-fable-5-2",
    "claude-mythos-5-1",
    "claude-mythos-5-2",
    "claude-opus-5-5",
    "claude-sonnet-5-5",
];

/// Whether a Claude model refuses a forced tool choice.
fn refuses_forced_tool_choice(model: &str) -> bool {
    NO_FORCED_TOOL_CHOICE.iter().any(|p| model.starts_with(p))
}

/// Native output's `output_config.format`: always strict, its objects closed
/// (`additionalProperties: false`, which Anthropic requires).
fn output_format(params: &ModelRequestParameters) -> Result<Option<Value>, ModelError> {
    if params.output_mode != crate::output_mode::OutputMode::Native {
        return Ok(None);
    }
    let Some(o) = &params.output_object else { return Ok(None) };
    if o.strict == Some(false) {
        return Err(ModelError::new(
            crate::model::ModelErrorKind::User,
            "Anthropic's structured outputs are always strict: drop `output_strict(false)` or use `OutputMode::Prompted`",
        ));
    }
    let mut schema = wire::provider_schema(&o.json_schema);
    close_objects(&mut schema, 0);
    Ok(Some(json!({"type": "json_schema", "schema": schema})))
}

fn close_objects(schema: &mut Value, depth: usize) {
    if depth > crate::validation::MAX_NESTING {
        return;
    }
    match schema {
        Value::Object(m) => {
            if m.get("type").and_then(Value::as_str) == Some("object") && !m.contains_key("additionalProperties") {
                m.insert("additionalProperties".into(), false.into());
            }
            for v in m.values_mut() {
                close_objects(v, depth + 1);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| close_objects(v, depth + 1)),
        _ => {}
    }
}
