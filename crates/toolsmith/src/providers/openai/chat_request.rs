//! The request body of [`OpenAIChatModel`]: messages, tools, tool choice, response format,
//! settings and the provider's differences, as Chat Completions takes them.

use serde_json::{Map, Value, json};

use super::chat::{MaxTokensField, OpenAIChatModel};
use super::openai_parameters;
use crate::messages::{MediaContent, ModelMessage, ModelResponsePart, UserContent, UserPromptContent};
use crate::model::{ModelError, ModelRequestParameters, ModelSettings, ResolvedToolChoice};
use crate::providers::wire::{self, put};
use crate::tool::ToolDefinition;

impl OpenAIChatModel {
    /// The request body for these messages and parameters (what is POSTed).
    pub fn request_body(
        &self,
        messages: &[ModelMessage],
        settings: Option<&ModelSettings>,
        params: &ModelRequestParameters,
        stream: bool,
    ) -> Result<Value, ModelError> {
        wire::check_depth(messages, params)?;
        let mut body = Map::new();
        body.insert("model".into(), self.name.clone().into());
        let messages = wire::localize_native_searches(messages, |_| false);
        // A `tool` message holds text only: files a tool returned follow in a user message.
        let messages = crate::messages::move_tool_files(&messages, |_| false);
        let mut mapped = map_messages(&messages, params)?;
        if super::reasoning::system_prompts_as_user(&self.name) {
            for m in &mut mapped {
                if m.get("role").and_then(Value::as_str) == Some("system") {
                    m["role"] = "user".into();
                }
            }
        }
        body.insert("messages".into(), Value::Array(mapped));

        let choice = wire::tool_choice(settings, params)?;
        let all: Vec<&ToolDefinition> = wire::tools_without_native_search(params, &messages);
        let (tools, tool_choice): (Vec<&ToolDefinition>, Option<Value>) = match &choice {
            ResolvedToolChoice::Auto => (all, None),
            ResolvedToolChoice::None => (all, Some("none".into())),
            ResolvedToolChoice::Required => (all, Some("required".into())),
            ResolvedToolChoice::Restricted { required: true, tools }
                if tools.len() == 1 && self.tool_choice_forcing =>
            {
                let name = tools.iter().next().cloned().unwrap_or_default();
                (all, Some(json!({"type": "function", "function": {"name": name}})))
            }
            ResolvedToolChoice::Restricted { required, tools } => {
                let filtered = wire::only(&all, tools);
                (filtered, Some(if *required { "required" } else { "auto" }.into()))
            }
        };
        if !tools.is_empty() {
            let strict = !self.quirks.no_strict_tools;
            body.insert("tools".into(), Value::Array(tools.iter().map(|t| map_tool(t, strict)).collect()));
            put(&mut body, "tool_choice", tool_choice);
            if let Some(p) = settings.and_then(|s| s.parallel_tool_calls) {
                body.insert("parallel_tool_calls".into(), p.into());
            }
        } else if matches!(choice, ResolvedToolChoice::None) && !params.function_tools.is_empty() {
            // Every tool was deferred: nothing to disable.
        }
        if let Some(format) = super::json_schema_format(params, !self.quirks.no_strict_tools) {
            body.insert("response_format".into(), json!({"type": "json_schema", "json_schema": format}));
        }
        // Search models search the web themselves (`web_search_options`).
        if let Some(w) = params.native_tools.iter().find_map(|t| match t {
            crate::native::NativeTool::WebSearch(w) => Some(w),
            _ => None,
        }) {
            let mut options = Map::new();
            options
                .insert("search_context_size".into(), serde_json::to_value(w.search_context_size).unwrap_or_default());
            if let Some(l) = &w.user_location {
                options.insert("user_location".into(), json!({"type": "approximate", "approximate": l}));
            }
            body.insert("web_search_options".into(), Value::Object(options));
        }
        if let Some(s) = settings {
            let field = match self.max_tokens_field {
                MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
                MaxTokensField::MaxTokens => "max_tokens",
            };
            put(&mut body, field, s.max_tokens);
            put(&mut body, "temperature", s.temperature);
            put(&mut body, "top_p", s.top_p);
            put(&mut body, "seed", s.seed);
        }
        if stream {
            body.insert("stream".into(), true.into());
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        let mut body = Value::Object(body);
        wire::merge_extra(&mut body, settings.and_then(|s| s.extra.as_deref()));
        super::reasoning::drop_sampling(&self.name, &mut body, "/reasoning_effort");
        self.quirks.apply(&mut body);
        Ok(body)
    }
}

/// A function tool; without `strict_mode` (a server that refuses strict definitions), with its
/// own schema and no `strict` flag.
fn map_tool(def: &ToolDefinition, strict_mode: bool) -> Value {
    let (parameters, strict) =
        if strict_mode { openai_parameters(def) } else { (wire::provider_schema(&def.parameters_json_schema), None) };
    let mut f = Map::new();
    f.insert("name".into(), def.name.clone().into());
    put(&mut f, "description", def.description.clone());
    f.insert("parameters".into(), parameters);
    put(&mut f, "strict", strict);
    json!({"type": "function", "function": Value::Object(f)})
}

fn map_user_content(content: &UserPromptContent) -> Result<Value, ModelError> {
    let items = match content {
        UserPromptContent::Text(s) => return Ok(Value::String(s.clone())),
        UserPromptContent::Parts(items) => items,
    };
    let mut out = Vec::new();
    for item in items {
        match item {
            UserContent::Text(t) => out.push(json!({"type": "text", "text": t})),
            UserContent::TextContent(t) => out.push(json!({"type": "text", "text": t.content})),
            UserContent::Media(m) => out.push(map_media(m)?),
            UserContent::Other(v) => {
                tracing::warn!(content = %v, "user content of an unknown kind is not sent to OpenAI");
            }
        }
    }
    Ok(Value::Array(out))
}

fn image_url(url: String, vendor: Option<&Value>) -> Value {
    let mut image = json!({"url": url});
    if let Some(detail) = vendor.and_then(|v| v.get("detail")) {
        image["detail"] = detail.clone();
    }
    json!({"type": "image_url", "image_url": image})
}

fn map_media(m: &MediaContent) -> Result<Value, ModelError> {
    Ok(match m {
        MediaContent::Binary(b) if b.media_type.starts_with("image/") => {
            image_url(wire::data_url(&b.media_type, &b.data), b.vendor_metadata.as_deref())
        }
        MediaContent::Binary(b) if b.media_type.starts_with("audio/") => {
            let format = match b.media_type.as_str() {
                "audio/mpeg" | "audio/mp3" => "mp3",
                "audio/wav" | "audio/x-wav" | "audio/wave" => "wav",
                other => {
                    return Err(wire::unsupported(
                        "OpenAI Chat Completions",
                        &format!("audio of type {other}"),
                        "send WAV or MP3 audio",
                    ));
                }
            };
            json!({"type": "input_audio", "input_audio": {"data": b.data, "format": format}})
        }
        MediaContent::Binary(b) if b.media_type.starts_with("video/") => {
            return Err(wire::unsupported("OpenAI Chat Completions", "video", "use a Gemini model for video input"));
        }
        MediaContent::Binary(b) => {
            let filename = format!(
                "{}.{}",
                b.identifier.clone().unwrap_or_else(|| "file".into()),
                wire::extension_for(&b.media_type)
            );
            json!({"type": "file", "file": {"file_data": wire::data_url(&b.media_type, &b.data), "filename": filename}})
        }
        MediaContent::ImageUrl(u) => image_url(u.url.clone(), u.vendor_metadata.as_deref()),
        MediaContent::VideoUrl(_) => {
            return Err(wire::unsupported("OpenAI Chat Completions", "video", "use a Gemini model for video input"));
        }
        MediaContent::AudioUrl(u) | MediaContent::DocumentUrl(u) => {
            return Err(wire::unsupported(
                "OpenAI Chat Completions",
                &format!("files by URL ({})", u.url.split(['?', '#']).next().unwrap_or(&u.url)),
                "`request` and `request_stream` download them and send them inline; when building a body with \
                 `request_body`, download the file yourself and pass it as BinaryContent",
            ));
        }
    })
}

/// Maps the message history to Chat Completions messages.
fn map_messages(messages: &[ModelMessage], params: &ModelRequestParameters) -> Result<Vec<Value>, ModelError> {
    let mut out = Vec::new();
    if let Some(i) = wire::instructions(messages, params) {
        out.push(json!({"role": "system", "content": i}));
    }
    for message in messages {
        match message {
            ModelMessage::Request(request) => wire::openai_request_items(
                &request.parts,
                map_user_content,
                |id, content| json!({"role": "tool", "tool_call_id": id, "content": content}),
                &mut out,
            )?,
            ModelMessage::Response(response) => {
                let texts: Vec<&str> = response
                    .parts
                    .iter()
                    .filter_map(|p| match p {
                        ModelResponsePart::Text(t) => Some(t.content.as_str()),
                        _ => None,
                    })
                    .collect();
                let calls: Vec<Value> = response
                    .tool_calls()
                    .map(|c| {
                        json!({
                            "id": c.tool_call_id,
                            "type": "function",
                            "function": {"name": c.tool_name, "arguments": wire::args_string(&c.args)},
                        })
                    })
                    .collect();
                if texts.is_empty() && calls.is_empty() {
                    continue;
                }
                let mut m = Map::new();
                m.insert("role".into(), "assistant".into());
                // Without text, an empty string rather than null: OpenAI takes either with
                // `tool_calls`, but OpenAI-compatible servers need a string (llama-cpp-python's
                // schema refuses null, its chat templates read the field).
                m.insert("content".into(), texts.join("\n\n").into());
                if !calls.is_empty() {
                    m.insert("tool_calls".into(), Value::Array(calls));
                }
                out.push(Value::Object(m));
            }
        }
    }
    Ok(out)
}
