//! OpenAI: the Chat Completions adapter ([`OpenAIChatModel`], also for any OpenAI-compatible
//! server, with [`Preset`]s for the usual ones and Azure OpenAI through
//! [`OpenAIChatModel::azure`]) and the Responses adapter ([`OpenAIResponsesModel`]), with what
//! they share: the connection from the environment, the bearer-token transport and strict-mode
//! schemas.

mod azure;
mod chat;
mod chat_request;
mod presets;
mod reasoning;
mod responses;
mod responses_native;
mod strict;

use reqwest::header::HeaderMap;
use serde_json::Value;

pub use azure::AzureOpenAIBuilder;
pub use chat::{MaxTokensField, OpenAIChatModel, OpenAIChatModelBuilder};
pub use presets::Preset;
pub use responses::{OpenAIResponsesModel, OpenAIResponsesModelBuilder};
pub use strict::openai_strict_schema;

use crate::error::UserError;
use crate::providers::connection::{ConnectionOptions, DEFAULT_TIMEOUT};
use crate::providers::http::{HttpTransport, header};
use crate::tool::ToolDefinition;

/// OpenAI's API.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// Reads `OPENAI_API_KEY` / `OPENAI_BASE_URL` into connection options. A key is required only
/// for OpenAI's own API: a compatible server given by `OPENAI_BASE_URL` may need none.
pub(crate) fn openai_options_from_env(mut opts: ConnectionOptions) -> Result<ConnectionOptions, UserError> {
    if opts.base_url.is_none() {
        opts.base_url = std::env::var("OPENAI_BASE_URL").ok().filter(|v| !v.trim().is_empty());
    }
    if opts.api_key.is_none() {
        opts.api_key = std::env::var("OPENAI_API_KEY").ok().filter(|v| !v.trim().is_empty());
    }
    let official = opts.base_url.as_deref().is_none_or(|u| u.contains("api.openai.com"));
    if opts.api_key.is_none() && official {
        return Err(UserError::new(
            "OPENAI_API_KEY is not set: export it with your OpenAI API key, pass it with `.api_key(...)`, or point OPENAI_BASE_URL (with its `/v1`) at an OpenAI-compatible server",
        ));
    }
    Ok(opts)
}

pub(crate) fn openai_transport(
    opts: &ConnectionOptions,
    provider: &str,
    model: &str,
) -> Result<HttpTransport, UserError> {
    let mut auth = HeaderMap::new();
    if let Some(key) = opts.api_key.as_deref().filter(|k| !k.is_empty()) {
        header(&mut auth, "authorization", &format!("Bearer {key}"), true)?;
    }
    opts.transport(provider, model, auth, DEFAULT_TIMEOUT)
}

/// The JSON-schema response format of native output (Chat's `response_format.json_schema`,
/// Responses' `text.format` less its `type`), as Pydantic AI maps it: the output's name
/// (`final_result` without one), schema, description, and strictness when the server takes it
/// (a strict schema made strict-compatible).
pub(crate) fn json_schema_format(params: &crate::model::ModelRequestParameters, strict_ok: bool) -> Option<Value> {
    if params.output_mode != crate::output_mode::OutputMode::Native {
        return None;
    }
    let o = params.output_object.as_ref()?;
    let name = if o.name.is_empty() { crate::output_mode::OUTPUT_TOOL_NAME } else { o.name.as_str() };
    let strict = o.strict.filter(|_| strict_ok);
    let schema = if strict == Some(true) {
        openai_strict_schema(&o.json_schema)
    } else {
        crate::providers::wire::provider_schema(&o.json_schema)
    };
    let mut format = serde_json::Map::new();
    format.insert("name".into(), name.into());
    format.insert("schema".into(), schema);
    if let Some(d) = &o.description {
        format.insert("description".into(), d.clone().into());
    }
    if let Some(s) = strict {
        format.insert("strict".into(), s.into());
    }
    Some(Value::Object(format))
}

/// An OpenAI function tool's `parameters` (without `$schema`, strict or not) and `strict` flag.
pub(crate) fn openai_parameters(def: &ToolDefinition) -> (Value, Option<bool>) {
    if def.strict == Some(true) {
        (openai_strict_schema(&def.parameters_json_schema), Some(true))
    } else {
        (crate::providers::wire::provider_schema(&def.parameters_json_schema), None)
    }
}
