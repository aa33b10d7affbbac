//! The Converse request body: system blocks, messages, tool configuration and inference
//! configuration (see the module documentation of [`super`] for the mapping).

use std::time::Duration;

use base64::Engine;
use serde_json::{Map, Value, json};

use crate::messages::{
    MediaContent, ModelMessage, ModelRequestPart, ModelResponsePart, ReturnItem, ThinkingPart, ToolReturnPart,
    UserContent, UserPromptContent,
};
use crate::model::{ModelError, ModelRequestParameters, ModelSettings, ResolvedToolChoice};
use crate::providers::http::download;
use crate::providers::wire::{self, put};
use crate::tool::ToolDefinition;

/// What a model family accepts, by the provider prefix of its id (as Pydantic AI's Bedrock
/// profiles).
#[derive(Debug, Clone, Copy)]
struct Family {
    /// `toolChoice` is accepted (else never sent).
    tool_choice: bool,
    /// Thinking with a signature goes back as `reasoningContent`.
    thinking_back: bool,
    /// Tool results carry JSON values as `{json}` blocks (else everything is `{text}`).
    json_results: bool,
    /// `toolResult` blocks take a `status`.
    result_status: bool,
    /// A conversation may start with an assistant turn.
    leading_assistant: bool,
    /// The most the model can write in one answer, where it is known (Claude).
    max_output_tokens: Option<u32>,
    /// `temperature` and `topP` are refused (the Claude families that refuse sampling
    /// settings, Grok, OpenAI's GPT-5.6 and GPT-6 models).
    no_sampling: bool,
}

/// The OpenAI models Converse takes without sampling settings (Pydantic AI's
/// `bedrock_disallows_sampling_settings`).
const BEDROCK_OPENAI_NO_SAMPLING: &[&str] =
    &["gpt-5.6-sol", "gpt-5.6-luna", "gpt-5.6-terra", "gpt-6-sol", "gpt-6-luna", "gpt-6-astra", "gpt-6.1-sol"];

/// The family of a model id: the vendor prefix, after an ARN's resource path and a
/// cross-region inference profile's geography (`us.`, `eu.`, `global.`...).
fn family(model_id: &str) -> Family {
    let id = model_id.rsplit('/').next().unwrap_or(model_id);
    let (first, rest) = id.split_once('.').unwrap_or((id, ""));
    // The vendor, and the model's own name after it (which may hold dots: `gpt-5.6-sol`).
    let (vendor, name) = if matches!(first, "us" | "eu" | "apac" | "global" | "us-gov" | "jp" | "au" | "ca") {
        rest.split_once('.').unwrap_or((rest, ""))
    } else {
        (first, rest)
    };
    Family {
        tool_choice: matches!(vendor, "anthropic" | "amazon" | "zai" | "moonshotai" | "xai"),
        thinking_back: matches!(vendor, "anthropic" | "deepseek"),
        json_results: vendor == "mistral",
        result_status: vendor != "writer",
        leading_assistant: matches!(vendor, "anthropic" | "qwen" | "zai" | "moonshotai"),
        max_output_tokens: if vendor == "anthropic" { wire::anthropic_max_output_tokens(name) } else { None },
        no_sampling: match vendor {
            "anthropic" => wire::anthropic_refuses_sampling(name),
            // Converse refuses them for Grok, and for OpenAI's GPT-5.6 and GPT-6 models.
            "xai" => true,
            "openai" => BEDROCK_OPENAI_NO_SAMPLING.iter().any(|p| name.starts_with(p)),
            _ => false,
        },
    }
}

/// Where files are read from: the HTTP client and the time a download may take.
struct Files<'a> {
    client: &'a reqwest::Client,
    timeout: Duration,
    /// Documents are named `Document 1`, `Document 2`... in the order they are sent.
    documents: usize,
}

/// The Converse request body.
pub(super) async fn body(
    model_id: &str,
    messages: &[ModelMessage],
    settings: Option<&ModelSettings>,
    params: &ModelRequestParameters,
    client: &reqwest::Client,
    timeout: Duration,
) -> Result<Value, ModelError> {
    wire::check_depth(messages, params)?;
    let family = family(model_id);
    let messages = wire::localize_native_searches(messages, |_| false);
    let mut files = Files { client, timeout, documents: 0 };
    let mut body = Map::new();

    let mut system: Vec<Value> = messages
        .iter()
        .filter_map(ModelMessage::as_request)
        .flat_map(|r| r.parts.iter())
        .filter_map(|p| match p {
            ModelRequestPart::SystemPrompt(s) if !s.content.is_empty() => Some(json!({"text": s.content})),
            _ => None,
        })
        .collect();
    system.extend(wire::instructions(&messages, params).map(|i| json!({"text": i})));

    let mut turns = map_messages(&messages, family, &mut files).await?;
    let leads_with_user = turns.first().and_then(|t| t.get("role")).and_then(Value::as_str) == Some("user");
    if turns.is_empty() || (!leads_with_user && !family.leading_assistant) {
        // Converse needs a message, and most families a user turn first (a period: several
        // models refuse blank text).
        turns.insert(0, json!({"role": "user", "content": [{"text": "."}]}));
    }
    let has_tool_blocks = turns.iter().any(|t| {
        t.get("content")
            .and_then(Value::as_array)
            .is_some_and(|blocks| blocks.iter().any(|b| b.get("toolUse").is_some() || b.get("toolResult").is_some()))
    });
    body.insert("messages".into(), Value::Array(turns));
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }

    let mut inference = Map::new();
    if let Some(s) = settings {
        // Above a Claude model's maximum output Converse refuses the request: lowered to it.
        let most = family.max_output_tokens.unwrap_or(u32::MAX);
        put(&mut inference, "maxTokens", s.max_tokens.map(|n| n.min(most)));
        put(&mut inference, "temperature", s.temperature);
        put(&mut inference, "topP", s.top_p);
        if family.no_sampling {
            wire::drop_refused_sampling(&mut inference, &["temperature", "topP"], model_id);
        }
    }
    // `stop_sequences` in the provider settings (Pydantic AI's name) is Converse's `stopSequences`.
    let mut extra = settings.and_then(|s| s.extra.clone());
    if let Some(Value::Object(e)) = extra.as_deref_mut()
        && let Some(stops) = e.remove("stop_sequences")
    {
        inference.insert("stopSequences".into(), stops);
    }
    if !inference.is_empty() {
        body.insert("inferenceConfig".into(), Value::Object(inference));
    }

    if let Some(config) = tool_config(settings, params, &messages, family, has_tool_blocks)? {
        body.insert("toolConfig".into(), config);
    }
    let mut body = Value::Object(body);
    wire::merge_extra(&mut body, extra.as_deref());
    Ok(body)
}

/// `toolConfig`: the tools the run's tool choice leaves, and `toolChoice` where the family takes
/// it. `None` without tools, or for `ToolChoice::None` before the history has tool blocks.
fn tool_config(
    settings: Option<&ModelSettings>,
    params: &ModelRequestParameters,
    messages: &[ModelMessage],
    family: Family,
    has_tool_blocks: bool,
) -> Result<Option<Value>, ModelError> {
    let all: Vec<&ToolDefinition> = wire::tools_without_native_search(params, messages);
    let (tools, choice): (Vec<&ToolDefinition>, Option<Value>) = match wire::tool_choice(settings, params)? {
        ResolvedToolChoice::Auto => (all, Some(json!({"auto": {}}))),
        // Converse has no `none`; the tools stay once the history has tool blocks (Converse
        // refuses those without a `toolConfig`).
        ResolvedToolChoice::None if has_tool_blocks => (all, None),
        ResolvedToolChoice::None => return Ok(None),
        ResolvedToolChoice::Required if family.tool_choice => (all, Some(json!({"any": {}}))),
        ResolvedToolChoice::Required => (all, Some(json!({"auto": {}}))),
        ResolvedToolChoice::Restricted { required: true, tools } if tools.len() == 1 && family.tool_choice => {
            (all, Some(json!({"tool": {"name": tools.iter().next()}})))
        }
        ResolvedToolChoice::Restricted { required, tools } => {
            let mode = if required && family.tool_choice { "any" } else { "auto" };
            (wire::only(&all, &tools), Some(json!({mode: {}})))
        }
    };
    if tools.is_empty() {
        return Ok(None);
    }
    let specs: Vec<Value> = tools
        .iter()
        .map(|t| {
            let mut spec = Map::new();
            spec.insert("name".into(), t.name.clone().into());
            put(&mut spec, "description", t.description.clone().filter(|d| !d.is_empty()));
            spec.insert("inputSchema".into(), json!({"json": wire::provider_schema(&t.parameters_json_schema)}));
            json!({"toolSpec": spec})
        })
        .collect();
    let mut config = Map::new();
    config.insert("tools".into(), Value::Array(specs));
    if family.tool_choice {
        put(&mut config, "toolChoice", choice);
    }
    Ok(Some(Value::Object(config)))
}

async fn map_messages(
    messages: &[ModelMessage],
    family: Family,
    files: &mut Files<'_>,
) -> Result<Vec<Value>, ModelError> {
    let mut turns = wire::Turns::default();
    for message in messages {
        match message {
            ModelMessage::Request(request) => {
                let mut blocks = Vec::new();
                for part in &request.parts {
                    match part {
                        ModelRequestPart::SystemPrompt(_) => {}
                        ModelRequestPart::UserPrompt(p) => blocks.extend(user_blocks(&p.content, files).await?),
                        ModelRequestPart::ToolReturn(p) => blocks.push(tool_result(p, family, files).await?),
                        ModelRequestPart::RetryFeedback(p) => blocks.push(json!({"text": wire::feedback_text(p)})),
                        ModelRequestPart::RetryPrompt(p) => match &p.tool_call_id {
                            Some(id) if p.tool_name.is_some() => {
                                let mut result = Map::new();
                                result.insert("toolUseId".into(), id.clone().into());
                                result.insert("content".into(), json!([{"text": wire::retry_prompt_text(p)}]));
                                if family.result_status {
                                    result.insert("status".into(), "error".into());
                                }
                                blocks.push(json!({"toolResult": result}));
                            }
                            _ => blocks.push(json!({"text": wire::retry_prompt_text(p)})),
                        },
                    }
                }
                turns.push("user", blocks);
            }
            ModelMessage::Response(response) => {
                let mut blocks = Vec::new();
                for part in &response.parts {
                    match part {
                        ModelResponsePart::Text(t) if !t.content.is_empty() => blocks.push(json!({"text": t.content})),
                        ModelResponsePart::ToolCall(c) => blocks.push(json!({"toolUse": {
                            "toolUseId": c.tool_call_id,
                            "name": c.tool_name,
                            "input": wire::args_object(&c.args),
                        }})),
                        ModelResponsePart::Thinking(t) if family.thinking_back => blocks.extend(reasoning(t)),
                        // Thinking the family cannot take back, other providers' server tools and
                        // files the model made are not sent.
                        _ => {}
                    }
                }
                turns.push("assistant", blocks);
            }
        }
    }
    Ok(turns.into_json("content"))
}

/// A thinking part with a signature (Bedrock's own, or Anthropic's, which Bedrock serves) as a
/// `reasoningContent` block.
fn reasoning(t: &ThinkingPart) -> Option<Value> {
    let signature = t.signature.as_ref()?;
    if !matches!(t.provider_name.as_deref(), Some("bedrock" | "anthropic")) {
        return None;
    }
    Some(match t.id.as_deref() {
        Some("redacted_content" | "redacted_thinking") => json!({"reasoningContent": {"redactedContent": signature}}),
        _ => json!({"reasoningContent": {"reasoningText": {"text": t.content, "signature": signature}}}),
    })
}

/// A `toolResult` block: the value as text (JSON values as `{json}` for the families that
/// take them), files as image or document blocks; `status: "error"` for anything but a success.
async fn tool_result(part: &ToolReturnPart, family: Family, files: &mut Files<'_>) -> Result<Value, ModelError> {
    let mut content = Vec::new();
    match part.items() {
        Some((items, _)) => {
            for item in items {
                match item {
                    ReturnItem::Text(text) => content.push(json!({"text": text})),
                    ReturnItem::File(m) => content.push(media_block(&m, files).await?),
                }
            }
        }
        None if family.json_results && !wire::tool_return_is_error(part) && !part.content.is_string() => {
            content.push(json!({"json": part.content}))
        }
        None => content.push(json!({"text": wire::tool_return_text(part)})),
    }
    let mut result = Map::new();
    result.insert("toolUseId".into(), part.tool_call_id.clone().into());
    result.insert("content".into(), Value::Array(content));
    if family.result_status {
        let status = if wire::tool_return_is_error(part) { "error" } else { "success" };
        result.insert("status".into(), status.into());
    }
    Ok(json!({"toolResult": result}))
}

async fn user_blocks(content: &UserPromptContent, files: &mut Files<'_>) -> Result<Vec<Value>, ModelError> {
    let items = match content {
        UserPromptContent::Text(s) if s.is_empty() => return Ok(Vec::new()),
        UserPromptContent::Text(s) => return Ok(vec![json!({"text": s})]),
        UserPromptContent::Parts(items) => items,
    };
    let mut out = Vec::new();
    for item in items {
        match item {
            UserContent::Text(t) if t.is_empty() => {}
            UserContent::Text(t) => out.push(json!({"text": t})),
            UserContent::TextContent(t) if t.content.is_empty() => {}
            UserContent::TextContent(t) => out.push(json!({"text": t.content})),
            UserContent::Media(m) => out.push(media_block(m, files).await?),
            UserContent::Other(v) => {
                tracing::warn!(content = %v, "user content of an unknown kind is not sent to Bedrock")
            }
        }
    }
    Ok(out)
}

/// An image, document or video block: bytes inline (URLs downloaded), `s3://` URLs as an
/// `s3Location`.
async fn media_block(m: &MediaContent, files: &mut Files<'_>) -> Result<Value, ModelError> {
    let (media_type, source) = match m {
        MediaContent::Binary(b) => (b.media_type.to_ascii_lowercase(), json!({"bytes": b.data})),
        MediaContent::AudioUrl(_) => {
            return Err(wire::unsupported("Bedrock", "audio", "send text, images, documents or video"));
        }
        MediaContent::ImageUrl(u) | MediaContent::DocumentUrl(u) | MediaContent::VideoUrl(u) => {
            let declared = u.media_type.clone().or_else(|| wire::guess_media_type(&u.url).map(str::to_string));
            if u.url.starts_with("s3://") {
                let media_type = declared.ok_or_else(|| unknown_type(&u.url))?;
                (media_type.to_ascii_lowercase(), json!({"s3Location": {"uri": u.url}}))
            } else {
                let (bytes, served) = download(files.client, &u.url, files.timeout, "Bedrock").await?;
                let media_type = declared.or(served).ok_or_else(|| unknown_type(&u.url))?;
                let data = base64::engine::general_purpose::STANDARD.encode(bytes);
                (media_type.to_ascii_lowercase(), json!({"bytes": data}))
            }
        }
    };
    let (kind, format) = format_of(&media_type).ok_or_else(|| {
        wire::unsupported(
            "Bedrock",
            &format!("files of type {media_type}"),
            "send images (png, jpeg, gif, webp), documents (pdf, csv, doc, docx, xls, xlsx, html, txt, md) or videos",
        )
    })?;
    Ok(match kind {
        "document" => {
            files.documents += 1;
            json!({"document": {"name": format!("Document {}", files.documents), "format": format, "source": source}})
        }
        kind => json!({kind: {"format": format, "source": source}}),
    })
}

fn unknown_type(url: &str) -> ModelError {
    let shown = url.split(['?', '#']).next().unwrap_or(url);
    ModelError::new(
        "UserError",
        format!("cannot tell the media type of {shown} for Bedrock: set the FileUrl's `media_type`"),
    )
}

/// The block kind and Converse format of a media type.
fn format_of(media_type: &str) -> Option<(&'static str, &'static str)> {
    let media_type = media_type.split(';').next().unwrap_or_default().trim();
    Some(match media_type {
        "image/png" => ("image", "png"),
        "image/jpeg" | "image/jpg" => ("image", "jpeg"),
        "image/gif" => ("image", "gif"),
        "image/webp" => ("image", "webp"),
        "application/pdf" => ("document", "pdf"),
        "text/plain" => ("document", "txt"),
        "text/csv" => ("document", "csv"),
        "text/html" => ("document", "html"),
        "text/markdown" => ("document", "md"),
        "application/msword" => ("document", "doc"),
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => ("document", "docx"),
        "application/vnd.ms-excel" => ("document", "xls"),
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" => ("document", "xlsx"),
        "video/x-matroska" => ("video", "mkv"),
        "video/quicktime" => ("video", "mov"),
        "video/mp4" => ("video", "mp4"),
        "video/webm" => ("video", "webm"),
        "video/x-flv" => ("video", "flv"),
        "video/mpeg" => ("video", "mpeg"),
        "video/x-ms-wmv" => ("video", "wmv"),
        "video/3gpp" => ("video", "three_gp"),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_are_read_through_arns_and_geographies() {
        assert!(family("anthropic.claude-3-5-sonnet-20240620-v1:0").tool_choice);
        assert!(family("us.anthropic.claude-sonnet-4-5-20250929-v1:0").thinking_back);
        assert!(family("us.anthropic.claude-opus-4-7-v1:0").no_sampling);
        assert!(family("arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-haiku-5-5-v1:0").no_sampling);
        assert!(!family("anthropic.claude-sonnet-4-5-20250929-v1:0").no_sampling);
        assert!(!family("us.amazon.nova-pro-v1:0").no_sampling);
        assert!(family("xai.grok-4-6-v1:0").no_sampling);
        assert!(family("us.openai.gpt-5.6-sol-v1:0").no_sampling);
        assert!(!family("openai.gpt-oss-120b-1:0").no_sampling);
        assert!(family("us.anthropic.claude-3-5-sonnet-20240620-v1:0").leading_assistant);
        assert!(family("global.zai.glm-4-6").tool_choice);
        assert!(family("arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-pro-v1:0").tool_choice);
        assert!(!family("meta.llama3-70b-instruct-v1:0").tool_choice);
        assert!(family("mistral.mistral-large-2402-v1:0").json_results);
        assert!(!family("writer.palmyra-x5-v1:0").result_status);
    }

    #[test]
    fn media_types_have_formats() {
        assert_eq!(format_of("image/jpeg"), Some(("image", "jpeg")));
        assert_eq!(format_of("application/pdf"), Some(("document", "pdf")));
        assert_eq!(format_of("video/3gpp"), Some(("video", "three_gp")));
        assert_eq!(format_of("audio/wav"), None);
    }
}
