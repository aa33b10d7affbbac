//! The provider profile rules, family by family, against Pydantic AI's (pydantic-ai-slim as
//! pinned by the conformance reference): which field carries the token limit on each OpenAI
//! Chat Completions route, and which Claude families are sent no sampling settings (Anthropic's
//! Messages API and Bedrock's Converse). Each row is a request body as it is POSTed.
//!
//! | route | reference rule | here |
//! |---|---|---|
//! | OpenAI, any base URL (`OPENAI_BASE_URL` proxies and gateways) | `openai_chat_supports_max_completion_tokens` defaults to true | `max_completion_tokens` |
//! | OpenRouter, DeepSeek | their profiles turn it off | `max_tokens` |
//! | Mistral, Groq | own SDK models, which send `max_tokens` | `max_tokens` |
//! | Together, Fireworks, vLLM | OpenAI-compatible, default kept | `max_completion_tokens` |
//! | Ollama, LM Studio | default kept (Ollama's endpoint reads only `max_tokens`) | `max_tokens` (deliberately) |
//! | Azure OpenAI | default, but `max_tokens` for Mistral deployments | same |
//! | Claude fable-5, mythos-5, opus-4-7, opus-4-8, opus-5, sonnet-5, haiku-5-5 | `anthropic_disallows_sampling_settings`: `temperature`, `top_p`, `top_k` dropped, `extra_body` too | same, on Anthropic and on Bedrock (`inferenceConfig`) |

mod provider_support;

use serde_json::{Value, json};
use toolsmith::model::{Model, ModelRequestParameters, ModelSettings};
use toolsmith::providers::{AnthropicModel, AwsCredentials, BedrockModel, MaxTokensField, OpenAIChatModel, Preset};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use provider_support::*;

fn settings() -> ModelSettings {
    let mut s = ModelSettings::new();
    s.max_tokens = Some(321);
    s.temperature = Some(0.5);
    s.top_p = Some(0.9);
    s
}

/// The Chat Completions body of `model` for a request with a token limit.
fn chat_body(model: &OpenAIChatModel) -> Value {
    model.request_body(&user("hi"), Some(&settings()), &ModelRequestParameters::default(), false).unwrap()
}

/// Which field of `body` holds the token limit; fails when both or neither do.
fn limit_field(body: &Value) -> &'static str {
    match (body.get("max_completion_tokens"), body.get("max_tokens")) {
        (Some(n), None) if n == 321 => "max_completion_tokens",
        (None, Some(n)) if n == 321 => "max_tokens",
        other => panic!("the token limit is not in exactly one field: {other:?} in {body}"),
    }
}

#[test]
fn the_token_limit_field_follows_the_profile_not_the_host() {
    // OpenAI's own API, and OpenAI behind any base URL: a proxy, a gateway, a compatible server.
    for base_url in [None, Some("https://llm-gateway.internal.example/v1"), Some("http://127.0.0.1:4000/v1")] {
        for model in ["gpt-5.2", "gpt-4o-mini", "o3"] {
            let mut b = OpenAIChatModel::builder(model).api_key("sk-test");
            if let Some(url) = base_url {
                b = b.base_url(url);
            }
            let m = b.build().unwrap();
            assert_eq!(limit_field(&chat_body(&m)), "max_completion_tokens", "{model} at {base_url:?}");
        }
    }
    // The builder's choice wins, for a server that reads only `max_tokens`.
    let m = OpenAIChatModel::builder("llama")
        .base_url("http://127.0.0.1:8080/v1")
        .max_tokens_field(MaxTokensField::MaxTokens)
        .build()
        .unwrap();
    assert_eq!(limit_field(&chat_body(&m)), "max_tokens");

    // The presets, family by family.
    for (preset, model, expected) in [
        (Preset::OpenRouter, "openai/gpt-5.2", "max_tokens"),
        (Preset::OpenRouter, "anthropic/claude-sonnet-4.5", "max_tokens"),
        (Preset::DeepSeek, "deepseek-chat", "max_tokens"),
        (Preset::DeepSeek, "deepseek-reasoner", "max_tokens"),
        (Preset::Mistral, "mistral-large-latest", "max_tokens"),
        (Preset::Groq, "llama-3.3-70b-versatile", "max_tokens"),
        (Preset::Groq, "openai/gpt-oss-120b", "max_tokens"),
        (Preset::Together, "meta-llama/Llama-3.3-70B-Instruct-Turbo", "max_completion_tokens"),
        (Preset::Fireworks, "accounts/fireworks/models/llama-v3p1-8b-instruct", "max_completion_tokens"),
        (Preset::Vllm, "Qwen/Qwen3-8B", "max_completion_tokens"),
        (Preset::Ollama, "llama3.2", "max_tokens"),
        (Preset::LmStudio, "qwen2.5-7b-instruct", "max_tokens"),
    ] {
        let m = OpenAIChatModel::builder(model).preset(preset).api_key("key").build().unwrap();
        assert_eq!(limit_field(&chat_body(&m)), expected, "{preset}: {model}");
    }

    // Azure OpenAI: OpenAI's field, but `max_tokens` for the Mistral deployments.
    for (deployment, expected) in [
        ("gpt-4o", "max_completion_tokens"),
        ("gpt-5.2", "max_completion_tokens"),
        ("mistral-large-2411", "max_tokens"),
        ("Ministral-3B", "max_tokens"),
        ("magistral-medium", "max_tokens"),
    ] {
        let m = OpenAIChatModel::azure(deployment)
            .base_url("https://example.openai.azure.com")
            .api_version("2024-10-21")
            .api_key("key")
            .build()
            .unwrap();
        assert_eq!(limit_field(&chat_body(&m)), expected, "azure: {deployment}");
    }
}

/// The Claude models, with whether they take sampling settings.
const CLAUDE_FAMILIES: &[(&str, bool)] = &[
    ("claude-3-5-haiku-latest", true),
    ("claude-sonnet-4-5", true),
    ("claude-sonnet-4-6", true),
    ("claude-opus-4-5", true),
    ("claude-opus-4-6", true),
    ("claude-haiku-4-5", true),
    ("claude-opus-4-7", false),
    ("claude-opus-4-8", false),
    ("claude-opus-5", false),
    ("claude-opus-5-5", false),
    ("claude-sonnet-5", false),
    ("claude-sonnet-5-5", false),
    ("claude-haiku-5-5", false),
    ("claude-fable-5", false),
    ("claude-mythos-5", false),
];

#[test]
fn claude_families_that_refuse_sampling_are_sent_none() {
    let mut s = settings();
    s.extra = Some(Box::new(json!({"top_k": 5, "metadata": {"user_id": "u"}})));
    for &(model, takes_sampling) in CLAUDE_FAMILIES {
        let m = AnthropicModel::builder(model).api_key("key").build().unwrap();
        let body = m.request_body(&user("hi"), Some(&s), &ModelRequestParameters::default(), false).unwrap();
        for key in ["temperature", "top_p", "top_k"] {
            assert_eq!(body.get(key).is_some(), takes_sampling, "{model}: {key} in {body}");
        }
        // What is not a sampling setting is sent either way.
        assert_eq!(body["max_tokens"], 321, "{model}");
        assert_eq!(body["metadata"], json!({"user_id": "u"}), "{model}");
    }
}

/// A Converse answer.
fn converse_ok() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}
    }))
}

#[tokio::test]
async fn claude_families_on_bedrock_that_refuse_sampling_are_sent_none() {
    let server = MockServer::start().await;
    for &(model, takes_sampling) in CLAUDE_FAMILIES {
        for id in [format!("anthropic.{model}-v1:0"), format!("us.anthropic.{model}-v1:0")] {
            server.reset().await;
            Mock::given(method("POST")).respond_with(converse_ok()).mount(&server).await;
            let m = BedrockModel::builder(id.as_str())
                .region("us-east-1")
                .credentials(AwsCredentials::new("AKIDEXAMPLE0123", "secret"))
                .base_url(server.uri())
                .build()
                .unwrap();
            m.request(&user("hi"), Some(&settings()), &ModelRequestParameters::default()).await.unwrap();
            let body = &bodies(&server).await[0];
            let inference = &body["inferenceConfig"];
            assert_eq!(inference["maxTokens"], 321, "{id}");
            for key in ["temperature", "topP"] {
                assert_eq!(inference.get(key).is_some(), takes_sampling, "{id}: {key} in {body}");
            }
        }
    }
    // Other vendors' models keep them.
    server.reset().await;
    Mock::given(method("POST")).respond_with(converse_ok()).mount(&server).await;
    let m = BedrockModel::builder("us.amazon.nova-pro-v1:0")
        .region("us-east-1")
        .credentials(AwsCredentials::new("AKIDEXAMPLE0123", "secret"))
        .base_url(server.uri())
        .build()
        .unwrap();
    m.request(&user("hi"), Some(&settings()), &ModelRequestParameters::default()).await.unwrap();
    let body = &bodies(&server).await[0];
    assert_eq!(body["inferenceConfig"]["temperature"], 0.5);
    assert_eq!(body["inferenceConfig"]["topP"], 0.9);
}
