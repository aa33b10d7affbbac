//! Model providers: adapters for OpenAI (Chat Completions and Responses), Anthropic, Gemini and
//! AWS Bedrock (the Converse API), each behind its crate feature, with what they share — the HTTP transport (retries,
//! `Retry-After`, timeouts, key redaction), server-sent events, and the mappings between
//! toolsmith's messages and the providers' wire formats — and [`infer_model`], which makes a
//! model from a `provider:model` name.
//!
//! The [`Model`](crate::model::Model) abstractions and the offline models live in
//! [`model`](crate::model); this module only speaks to providers.

mod infer;

#[cfg(feature = "anthropic")]
pub mod anthropic;
#[cfg(feature = "bedrock")]
pub mod bedrock;
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini", feature = "bedrock"))]
mod connection;
#[cfg(feature = "gemini")]
pub mod gemini;
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini", feature = "bedrock"))]
mod http;
#[cfg(feature = "openai")]
pub mod openai;
// Also compiled into the MCP toolset (`toolset/mcp/mod.rs`).
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini", feature = "bedrock"))]
#[allow(clippy::duplicate_mod)]
mod redact;
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini", feature = "bedrock"))]
mod sse;
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini", feature = "bedrock"))]
mod wire;

pub use crate::model::ModelHttpError;
pub use infer::infer_model;

#[cfg(feature = "anthropic")]
pub use anthropic::{ANTHROPIC_BASE_URL, AnthropicModel, AnthropicModelBuilder, NativeToolSearch};
#[cfg(feature = "bedrock")]
pub use bedrock::{AwsCredentials, BedrockModel, BedrockModelBuilder};
#[cfg(feature = "gemini")]
pub use gemini::{GEMINI_BASE_URL, GeminiModel, GeminiModelBuilder, gemini_schema};
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini", feature = "bedrock"))]
pub use http::RetryConfig;
#[cfg(feature = "openai")]
pub use openai::{
    AzureOpenAIBuilder, MaxTokensField, OPENAI_BASE_URL, OpenAIChatModel, OpenAIChatModelBuilder, OpenAIResponsesModel,
    OpenAIResponsesModelBuilder, Preset, openai_strict_schema,
};

/// Parses server-sent events from `chunks` (see `__private::sse_events`).
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini", feature = "bedrock"))]
pub(crate) fn sse_events<'c>(
    chunks: impl IntoIterator<Item = &'c [u8]>,
    max_event_size: usize,
) -> Result<Vec<(String, String)>, usize> {
    let mut parser = sse::SseParser::new(max_event_size);
    let mut out = std::collections::VecDeque::new();
    for chunk in chunks {
        parser.feed(chunk, &mut out).map_err(|e| e.max)?;
    }
    Ok(out.into_iter().map(|e| (e.event, e.data)).collect())
}
