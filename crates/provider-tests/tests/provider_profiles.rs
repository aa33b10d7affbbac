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
//! | Claude's maximum output: 128K for fable-5, mythos-5, opus-4-6 to opus-5, sonnet-4-6, sonnet-5, haiku-5-5; 64K for haiku-4-5, opus-4-5, sonnet-4-5 | `anthropic_max_output_tokens`: a larger `max_tokens` lowered to it (not with an `output-` beta on Anthropic) | same, on Anthropic and on Bedrock |
//! | Bedrock: Grok, OpenAI GPT-5.6 Sol/Luna/Terra, GPT-6 Sol/Luna/Astra, GPT-6.1 Sol | `bedrock_disallows_sampling_settings` | same |
//! | a forced tool choice (one required tool, or any) | refused (`supports_forced_tool_choice` off) by `deepseek-reasoner`, DeepSeek Flash and V4 (thinking by default), Together's DeepSeek V4, gpt-oss (Harmony) on Together, Ollama and vLLM, Claude Fable and Mythos 5.1 and 5.2, Opus 5.5, Sonnet 5.5 | `auto` with the tools cut to the allowed ones |
//! | tool and output schemas (an MCP server's carry `$schema`) | the OpenAI (strict or not), Anthropic, Google and Bedrock transformers drop `$schema` from every subschema | same |

mod provider_support;

use serde_json::{Value, json};
use toolsmith::model::{Model, ModelRequestParameters, ModelSettings, ToolChoice};
use toolsmith::providers::{
    AnthropicModel, AwsCredentials, BedrockModel, GeminiModel, MaxTokensField, OpenAIChatModel, OpenAIResponsesModel,
    Preset,
};
use toolsmith::tool::ToolDefinition;
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
    // The other vendors' families, as Pydantic AI's Bedrock profiles have them: Grok and OpenAI's
    // GPT-5.6 and GPT-6 models refuse sampling settings on Converse.
    for (id, takes_sampling) in [
        ("us.amazon.nova-pro-v1:0", true),
        ("meta.llama3-3-70b-instruct-v1:0", true),
        ("openai.gpt-oss-120b-1:0", true),
        ("xai.grok-4-6-v1:0", false),
        ("us.openai.gpt-5.6-sol-v1:0", false),
        ("openai.gpt-6-astra-v1:0", false),
    ] {
        server.reset().await;
        Mock::given(method("POST")).respond_with(converse_ok()).mount(&server).await;
        let m = BedrockModel::builder(id)
            .region("us-east-1")
            .credentials(AwsCredentials::new("AKIDEXAMPLE0123", "secret"))
            .base_url(server.uri())
            .build()
            .unwrap();
        m.request(&user("hi"), Some(&settings()), &ModelRequestParameters::default()).await.unwrap();
        let body = &bodies(&server).await[0];
        for key in ["temperature", "topP"] {
            assert_eq!(body["inferenceConfig"].get(key).is_some(), takes_sampling, "{id}: {key} in {body}");
        }
    }
}

/// A tool schema as an MCP server (zod's JSON Schema) sends it: `$schema` at the root and in a
/// definition, and a property that happens to be named `$schema`.
fn mcp_schema() -> Value {
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "$schema": {"type": "string", "description": "A property named like the keyword."},
            "query": {"$ref": "#/definitions/Query"},
            "tags": {"type": "array", "items": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"}}
        },
        "required": ["query"],
        "additionalProperties": false,
        "definitions": {
            "Query": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                "properties": {"text": {"type": "string"}}, "required": ["text"], "additionalProperties": false}
        }
    })
}

/// Every `$schema` keyword in a sent schema (a property of that name is not one).
fn schema_keywords(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                if k == "$schema" && !at.ends_with("/properties") {
                    out.push(at.clone());
                }
                schema_keywords(child, format!("{at}/{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                schema_keywords(child, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// The sent schema has no `$schema` keyword left, and still its property of that name.
fn assert_no_schema_keyword(schema: &Value, route: &str) {
    let mut found = Vec::new();
    schema_keywords(schema, String::new(), &mut found);
    assert!(found.is_empty(), "{route}: `$schema` left at {found:?} in {schema}");
    let properties = schema.get("properties").unwrap_or_else(|| panic!("{route}: {schema}"));
    assert!(properties.get("$schema").is_some(), "{route}: the property named `$schema` was lost: {schema}");
}

#[tokio::test]
async fn mcp_schemas_reach_every_provider_without_their_schema_keyword() {
    let params = |strict: Option<bool>| {
        let mut def = ToolDefinition::new("search", mcp_schema()).with_description("Search.");
        def.strict = strict;
        let mut p = ModelRequestParameters::default();
        p.function_tools = vec![def.into()];
        p.allow_text_output = true;
        p
    };
    let messages = user("hi");
    for strict in [None, Some(true), Some(false)] {
        let p = params(strict);
        let chat = OpenAIChatModel::builder("gpt-4o").api_key("k").build().unwrap();
        let body = chat.request_body(&messages, None, &p, false).unwrap();
        assert_no_schema_keyword(&body["tools"][0]["function"]["parameters"], &format!("chat, strict {strict:?}"));
        // A server that takes no strict definitions gets the tool's own schema.
        let ollama = OpenAIChatModel::builder("llama3.2").preset(Preset::Ollama).build().unwrap();
        let body = ollama.request_body(&messages, None, &p, false).unwrap();
        assert_no_schema_keyword(&body["tools"][0]["function"]["parameters"], &format!("ollama, strict {strict:?}"));
        let responses = OpenAIResponsesModel::builder("gpt-5.2").api_key("k").build().unwrap();
        let body = responses.request_body(&messages, None, &p, false).unwrap();
        assert_no_schema_keyword(&body["tools"][0]["parameters"], &format!("responses, strict {strict:?}"));
        let gemini = GeminiModel::builder("gemini-2.5-flash").api_key("k").build().unwrap();
        let body = gemini.request_body(&messages, None, &p, false).unwrap();
        let declared = &body["tools"][0]["functionDeclarations"][0];
        let schema = declared.get("parameters").or_else(|| declared.get("parametersJsonSchema")).unwrap();
        let mut found = Vec::new();
        schema_keywords(schema, String::new(), &mut found);
        assert!(found.is_empty(), "gemini: {schema}");
        let bedrock = BedrockModel::builder("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
            .region("us-east-1")
            .credentials(AwsCredentials::new("AKIDEXAMPLE0123", "secret"))
            .build()
            .unwrap();
        let body = bedrock.request_body(&messages, None, &p).await.unwrap();
        assert_no_schema_keyword(
            &body["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"],
            &format!("bedrock, strict {strict:?}"),
        );
    }

    // Anthropic, on the wire.
    let server = MockServer::start().await;
    let anthropic = AnthropicModel::builder("claude-sonnet-4-5").api_key("k").base_url(server.uri()).build().unwrap();
    for strict in [None, Some(true)] {
        server.reset().await;
        Mock::given(method("POST")).respond_with(json_response("anthropic", "messages_text.json")).mount(&server).await;
        anthropic.request(&messages, None, &params(strict)).await.unwrap();
        let body = &bodies(&server).await[0];
        assert_no_schema_keyword(&body["tools"][0]["input_schema"], &format!("anthropic, strict {strict:?}"));
    }
}

/// Two tools, for a forced choice of one.
fn two_tools() -> ModelRequestParameters {
    let mut p = ModelRequestParameters::default();
    p.function_tools = vec![
        ToolDefinition::new("get_weather", weather_schema()).into(),
        ToolDefinition::new("get_time", weather_schema()).into(),
    ];
    p.allow_text_output = true;
    p
}

#[test]
fn families_that_refuse_a_forced_tool_get_auto_with_the_allowed_tools() {
    let forced = ModelSettings::new().tool_choice(ToolChoice::Tools(vec!["get_time".into()]));
    let chat_names = |b: &Value| -> Vec<String> {
        b["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap().to_string()).collect()
    };
    for (preset, model, refuses) in [
        (Preset::DeepSeek, "deepseek-chat", false),
        (Preset::DeepSeek, "deepseek-reasoner", true),
        (Preset::DeepSeek, "deepseek-flash", true),
        (Preset::DeepSeek, "deepseek-v4-pro", true),
        (Preset::Together, "deepseek-ai/DeepSeek-V4-Pro", true),
        (Preset::Together, "openai/gpt-oss-120b", true),
        (Preset::Together, "meta-llama/Llama-3.3-70B-Instruct-Turbo", false),
        (Preset::Ollama, "gpt-oss:20b", true),
        (Preset::Ollama, "llama3.2", false),
        (Preset::Vllm, "openai/gpt-oss-20b", true),
        (Preset::Vllm, "Qwen/Qwen3-Coder-30B-A3B-Instruct", false),
        (Preset::Groq, "openai/gpt-oss-120b", false),
        (Preset::Fireworks, "accounts/fireworks/models/gpt-oss-120b", false),
        (Preset::OpenRouter, "openai/gpt-oss-120b", false),
    ] {
        let m = OpenAIChatModel::builder(model).preset(preset).api_key("key").build().unwrap();
        let body = m.request_body(&user("hi"), Some(&forced), &two_tools(), false).unwrap();
        if refuses {
            assert_eq!(body["tool_choice"], "auto", "{preset}: {model}");
            assert_eq!(chat_names(&body), ["get_time"], "{preset}: {model}");
        } else {
            assert_eq!(
                body["tool_choice"],
                json!({"type": "function", "function": {"name": "get_time"}}),
                "{preset}: {model}"
            );
            assert_eq!(chat_names(&body), ["get_weather", "get_time"], "{preset}: {model}");
        }
    }

    let required = ModelSettings::new().tool_choice(ToolChoice::Required);
    for (model, refuses) in [
        ("claude-sonnet-4-5", false),
        ("claude-opus-4-7", false),
        ("claude-opus-5", false),
        ("claude-sonnet-5", false),
        ("claude-fable-5", false),
        ("claude-mythos-5", false),
        ("claude-fable-5-1", true),
        ("claude-fable-5-2", true),
        ("claude-mythos-5-1", true),
        ("claude-mythos-5-2", true),
        ("claude-opus-5-5", true),
        ("claude-sonnet-5-5", true),
    ] {
        let m = AnthropicModel::builder(model).api_key("key").build().unwrap();
        let names = |b: &Value| -> Vec<String> {
            b["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
        };
        let body = m.request_body(&user("hi"), Some(&forced), &two_tools(), false).unwrap();
        let body_required = m.request_body(&user("hi"), Some(&required), &two_tools(), false).unwrap();
        if refuses {
            assert_eq!(body["tool_choice"], json!({"type": "auto"}), "{model}");
            assert_eq!(names(&body), ["get_time"], "{model}");
            assert_eq!(body_required["tool_choice"], json!({"type": "auto"}), "{model}");
        } else {
            assert_eq!(body["tool_choice"], json!({"type": "tool", "name": "get_time"}), "{model}");
            assert_eq!(names(&body), ["get_weather", "get_time"], "{model}");
            assert_eq!(body_required["tool_choice"], json!({"type": "any"}), "{model}");
        }
    }
}

#[test]
fn a_default_max_tokens_leaves_room_beyond_the_thinking_budget() {
    // As the reference's `_default_max_tokens`: with no max_tokens set, the default rises to the
    // budget plus 4,096 when the budget leaves it no room; a set max_tokens is sent as it is.
    let m = AnthropicModel::builder("claude-sonnet-4-0").api_key("key").build().unwrap();
    for (budget, expected) in [(1024, 5120), (10_000, 14_096), (32_768, 36_864)] {
        let mut s = ModelSettings::new();
        s.extra = Some(Box::new(json!({"thinking": {"type": "enabled", "budget_tokens": budget}})));
        let body = m.request_body(&user("hi"), Some(&s), &ModelRequestParameters::default(), false).unwrap();
        assert_eq!(body["max_tokens"], expected, "budget {budget}");
        assert_eq!(body["thinking"]["budget_tokens"], budget);
        s.max_tokens = Some(20_000);
        let body = m.request_body(&user("hi"), Some(&s), &ModelRequestParameters::default(), false).unwrap();
        assert_eq!(body["max_tokens"], 20_000, "budget {budget}");
    }
    // Thinking off (or adaptive) leaves the default alone.
    let mut s = ModelSettings::new();
    s.extra = Some(Box::new(json!({"thinking": {"type": "disabled"}})));
    let body = m.request_body(&user("hi"), Some(&s), &ModelRequestParameters::default(), false).unwrap();
    assert_eq!(body["max_tokens"], 4096);
}

#[tokio::test]
async fn claude_max_tokens_are_capped_at_the_models_maximum_output() {
    let mut s = ModelSettings::new();
    s.max_tokens = Some(200_000);
    let table = [
        ("claude-3-5-haiku-latest", 200_000),
        ("claude-sonnet-4-0", 200_000),
        ("claude-sonnet-4-5", 64_000),
        ("claude-haiku-4-5", 64_000),
        ("claude-opus-4-5", 64_000),
        ("claude-opus-4-6", 128_000),
        ("claude-sonnet-4-6", 128_000),
        ("claude-opus-4-7", 128_000),
        ("claude-sonnet-5", 128_000),
        ("claude-haiku-5-5", 128_000),
    ];
    for (model, expected) in table {
        let m = AnthropicModel::builder(model).api_key("key").build().unwrap();
        let body = m.request_body(&user("hi"), Some(&s), &ModelRequestParameters::default(), false).unwrap();
        assert_eq!(body["max_tokens"], expected, "{model}");
        // A limit within the maximum is sent as it is.
        let mut small = s.clone();
        small.max_tokens = Some(1000);
        let body = m.request_body(&user("hi"), Some(&small), &ModelRequestParameters::default(), false).unwrap();
        assert_eq!(body["max_tokens"], 1000, "{model}");
    }
    // A beta that raises the maximum output leaves the limit to the API.
    let m = AnthropicModel::builder("claude-sonnet-4-5")
        .api_key("key")
        .header("anthropic-beta", "output-300k-2026-03-24")
        .build()
        .unwrap();
    let body = m.request_body(&user("hi"), Some(&s), &ModelRequestParameters::default(), false).unwrap();
    assert_eq!(body["max_tokens"], 200_000);

    // Bedrock: the Claude families alike; other vendors' models as asked.
    let server = MockServer::start().await;
    for (model, expected) in table
        .iter()
        .map(|(m, n)| (format!("us.anthropic.{m}-v1:0"), *n))
        .chain([("us.amazon.nova-pro-v1:0".to_string(), 200_000)])
    {
        server.reset().await;
        Mock::given(method("POST")).respond_with(converse_ok()).mount(&server).await;
        let m = BedrockModel::builder(model.as_str())
            .region("us-east-1")
            .credentials(AwsCredentials::new("AKIDEXAMPLE0123", "secret"))
            .base_url(server.uri())
            .build()
            .unwrap();
        m.request(&user("hi"), Some(&s), &ModelRequestParameters::default()).await.unwrap();
        assert_eq!(bodies(&server).await[0]["inferenceConfig"]["maxTokens"], expected, "{model}");
    }
}
