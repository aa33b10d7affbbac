//! The OpenAI-compatible presets and Azure OpenAI on the wire: each one's path, authentication,
//! query and request differences, asserted against a local server speaking Chat Completions.

mod provider_support;

use std::time::Duration;

use serde_json::{Value, json};
use toolsmith::model::{Model, ModelRequestParameters, ModelSettings, StreamingModel, ToolChoice};
use toolsmith::providers::{OpenAIChatModel, OpenAIChatModelBuilder, Preset, RetryConfig, infer_model};
use toolsmith::tool::ToolDefinition;
use wiremock::matchers::{header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use provider_support::*;

const KEY: &str = "preset-test-key-0123456789-secret";

/// A model on `preset` pointed at the local server under `base_path` (the preset's own path).
fn preset(server: &MockServer, preset: Preset, model: &str, base_path: &str) -> OpenAIChatModelBuilder {
    OpenAIChatModel::builder(model)
        .preset(preset)
        .base_url(format!("{}{base_path}", server.uri()))
        .retry(RetryConfig::none())
}

async fn answering(server: &MockServer) {
    Mock::given(method("POST")).respond_with(json_response("openai", "chat_text.json")).mount(server).await;
}

/// Two tools, the first one strict.
fn tools() -> ModelRequestParameters {
    let mut strict = ToolDefinition::new(
        "get_weather",
        json!({"type": "object", "properties": {"city": {"type": "string", "minLength": 2}}}),
    );
    strict.strict = Some(true);
    let other = ToolDefinition::new("get_time", weather_schema());
    let mut p = ModelRequestParameters::default();
    p.function_tools = vec![strict.into(), other.into()];
    p.allow_text_output = true;
    p
}

fn tool_names(body: &Value) -> Vec<&str> {
    body["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn hosted_presets_send_a_bearer_key_to_their_path_and_name_themselves() {
    for (p, model, base_path) in [
        (Preset::OpenRouter, "openai/gpt-4o-mini", "/api/v1"),
        (Preset::DeepSeek, "deepseek-chat", ""),
        (Preset::Mistral, "mistral-small-latest", "/v1"),
        (Preset::Groq, "llama-3.3-70b-versatile", "/openai/v1"),
        (Preset::Together, "meta-llama/Llama-3.3-70B-Instruct-Turbo", "/v1"),
        (Preset::Fireworks, "accounts/fireworks/models/llama-v3p1-8b-instruct", "/inference/v1"),
    ] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path(format!("{base_path}/chat/completions")))
            .and(header("authorization", format!("Bearer {KEY}").as_str()))
            .respond_with(json_response("openai", "chat_text.json"))
            .expect(1)
            .mount(&server)
            .await;
        let m = preset(&server, p, model, base_path).api_key(KEY).build().unwrap();
        assert_eq!(m.system(), p.name());
        let settings = ModelSettings::new().max_tokens(50);
        let response = m.request(&user("hi"), Some(&settings), &ModelRequestParameters::default()).await.unwrap();
        assert_eq!(response.provider_name.as_deref(), Some(p.name()), "{p}");
        let body = &bodies(&server).await[0];
        assert_eq!(body["model"], model, "{p}");
        // The field each provider reads (see provider_profiles.rs for the whole table).
        let field =
            if matches!(p, Preset::Together | Preset::Fireworks) { "max_completion_tokens" } else { "max_tokens" };
        let other = if field == "max_tokens" { "max_completion_tokens" } else { "max_tokens" };
        assert_eq!(body[field], 50, "{p} reads {field}");
        assert!(body.get(other).is_none(), "{p}: {body}");
        let default = p.default_base_url();
        assert!(default.starts_with("https://") && default.ends_with(base_path), "{p}: {default}");
    }
}

#[tokio::test]
async fn local_presets_default_to_localhost_and_send_no_key() {
    for (p, default) in [
        (Preset::Ollama, "http://localhost:11434/v1"),
        (Preset::Vllm, "http://localhost:8000/v1"),
        (Preset::LmStudio, "http://localhost:1234/v1"),
        (Preset::LlamaCpp, "http://localhost:8080/v1"),
    ] {
        let m = OpenAIChatModel::builder("m").preset(p).build().unwrap();
        assert_eq!(m.base_url(), default);
        assert_eq!(m.system(), p.name());

        let server = MockServer::start().await;
        answering(&server).await;
        let m = preset(&server, p, "llama3.2", "/v1").build().unwrap();
        let response = m.request(&user("hi"), None, &ModelRequestParameters::default()).await.unwrap();
        assert_eq!(response.provider_name.as_deref(), Some(p.name()));
        let req = &requests(&server).await[0];
        assert_eq!(req.url.path(), "/v1/chat/completions");
        assert!(req.headers.get("authorization").is_none(), "{p} sent a key it was not given");
    }
}

#[tokio::test]
async fn a_local_server_set_up_with_a_key_gets_it() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .respond_with(json_response("openai", "chat_text.json"))
        .expect(1)
        .mount(&server)
        .await;
    let m = preset(&server, Preset::Vllm, "Qwen/Qwen3-8B", "/v1").api_key(KEY).build().unwrap();
    m.request(&user("hi"), None, &ModelRequestParameters::default()).await.unwrap();
}

#[test]
fn a_missing_key_names_the_variable_and_the_builder_method() {
    for p in [Preset::OpenRouter, Preset::DeepSeek, Preset::Mistral, Preset::Groq, Preset::Together, Preset::Fireworks]
    {
        assert!(p.requires_api_key());
        let var = p.api_key_env().unwrap();
        let err = OpenAIChatModel::builder("vendor/model").preset(p).build().unwrap_err().to_string();
        assert!(err.contains(var), "{p}: {err}");
        assert!(err.contains(".api_key(...)"), "{p}: {err}");
        let blank = OpenAIChatModel::builder("vendor/model").preset(p).api_key("  ").build();
        assert!(blank.is_err(), "{p}: a blank key is no key");
    }
    for p in [Preset::Ollama, Preset::Vllm, Preset::LmStudio, Preset::LlamaCpp] {
        assert!(!p.requires_api_key());
    }
}

#[test]
fn openrouter_names_must_name_the_upstream_provider() {
    let err = OpenAIChatModel::builder("gpt-4o").preset(Preset::OpenRouter).api_key(KEY).build().unwrap_err();
    assert!(err.to_string().contains("`openai/gpt-4o`"), "{err}");
}

#[tokio::test]
async fn openrouter_takes_app_attribution_headers() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(header("http-referer", "https://example.org"))
        .and(header("x-title", "Weather"))
        .respond_with(json_response("openai", "chat_text.json"))
        .expect(1)
        .mount(&server)
        .await;
    let m = preset(&server, Preset::OpenRouter, "openai/gpt-4o", "/api/v1")
        .api_key(KEY)
        .header("HTTP-Referer", "https://example.org")
        .header("X-Title", "Weather")
        .build()
        .unwrap();
    m.request(&user("hi"), None, &ModelRequestParameters::default()).await.unwrap();
}

#[tokio::test]
async fn mistral_gets_random_seed_and_no_stream_options() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(sse_response("openai", "chat_stream_text.sse"))
        .mount(&server)
        .await;
    let m = preset(&server, Preset::Mistral, "mistral-large-latest", "/v1").api_key(KEY).build().unwrap();
    let mut settings = ModelSettings::new();
    settings.seed = Some(7);
    let stream = m.request_stream(&user("hi"), Some(&settings), &ModelRequestParameters::default()).await.unwrap();
    events(stream).await;
    let body = &bodies(&server).await[0];
    assert_eq!(body["random_seed"], 7);
    assert!(body.get("seed").is_none(), "{body}");
    assert_eq!(body["stream"], true);
    assert!(body.get("stream_options").is_none(), "Mistral refuses stream_options: {body}");

    // Other presets keep OpenAI's fields.
    let groq = preset(&server, Preset::Groq, "llama-3.3-70b-versatile", "/v1").api_key(KEY).build().unwrap();
    let body = groq.request_body(&user("hi"), Some(&settings), &ModelRequestParameters::default(), true).unwrap();
    assert_eq!(body["seed"], 7);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
}

#[tokio::test]
async fn ollama_gets_tools_without_strict_mode() {
    let server = MockServer::start().await;
    answering(&server).await;
    let m = preset(&server, Preset::Ollama, "llama3.2", "/v1").build().unwrap();
    m.request(&user("hi"), None, &tools()).await.unwrap();
    let body = &bodies(&server).await[0];
    let f = &body["tools"][0]["function"];
    assert!(f.get("strict").is_none(), "{f}");
    assert_eq!(f["parameters"], json!({"type": "object", "properties": {"city": {"type": "string", "minLength": 2}}}));

    // vLLM takes strict definitions.
    let vllm = preset(&server, Preset::Vllm, "m", "/v1").build().unwrap();
    let body = vllm.request_body(&user("hi"), None, &tools(), false).unwrap();
    let f = &body["tools"][0]["function"];
    assert_eq!(f["strict"], true);
    assert_eq!(f["parameters"]["additionalProperties"], false);
    assert_eq!(f["parameters"]["required"], json!(["city"]));
}

#[tokio::test]
async fn models_that_refuse_a_forced_tool_get_auto_with_that_tool() {
    let server = MockServer::start().await;
    answering(&server).await;
    let forced = ModelSettings::new().tool_choice(ToolChoice::Tools(vec!["get_time".into()]));
    let required = ModelSettings::new().tool_choice(ToolChoice::Required);
    for (p, model) in [
        (Preset::DeepSeek, "deepseek-reasoner"),
        (Preset::Together, "openai/gpt-oss-120b"),
        (Preset::Ollama, "gpt-oss:20b"),
        (Preset::Vllm, "openai/gpt-oss-20b"),
    ] {
        let m = preset(&server, p, model, "/v1").api_key(KEY).build().unwrap();
        m.request(&user("hi"), Some(&forced), &tools()).await.unwrap();
        let body = bodies(&server).await.pop().unwrap();
        assert_eq!(body["tool_choice"], "auto", "{p} {model}");
        assert_eq!(tool_names(&body), ["get_time"], "{p} {model}");
        let body = m.request_body(&user("hi"), Some(&required), &tools(), false).unwrap();
        assert_eq!(body["tool_choice"], "auto", "{p} {model}");
        assert_eq!(tool_names(&body).len(), 2);
    }
    // The same provider's other models are forced as on OpenAI.
    let m = preset(&server, Preset::DeepSeek, "deepseek-chat", "/v1").api_key(KEY).build().unwrap();
    let body = m.request_body(&user("hi"), Some(&forced), &tools(), false).unwrap();
    assert_eq!(body["tool_choice"], json!({"type": "function", "function": {"name": "get_time"}}));
    let body = m.request_body(&user("hi"), Some(&required), &tools(), false).unwrap();
    assert_eq!(body["tool_choice"], "required");
}

#[tokio::test]
async fn llama_cpp_forces_a_tool_by_name_or_not_at_all() {
    // llama.cpp's servers take `auto` or a named function, not `required` (they answer 500).
    let server = MockServer::start().await;
    answering(&server).await;
    let m = preset(&server, Preset::LlamaCpp, "smollm2", "/v1").build().unwrap();
    let forced = ModelSettings::new().tool_choice(ToolChoice::Tools(vec!["get_time".into()]));
    let required = ModelSettings::new().tool_choice(ToolChoice::Required);
    let named = json!({"type": "function", "function": {"name": "get_time"}});
    // One tool forced: named, whatever the OpenAI form would be.
    m.request(&user("hi"), Some(&forced), &tools()).await.unwrap();
    let body = bodies(&server).await.pop().unwrap();
    assert_eq!(body["tool_choice"], named);
    assert!(tool_names(&body).contains(&"get_time"));
    // `required` among one tool: named; among several: `auto`, every tool kept.
    let mut one = tools();
    one.function_tools.truncate(1);
    let body = m.request_body(&user("hi"), Some(&required), &one, false).unwrap();
    assert_eq!(body["tool_choice"], json!({"type": "function", "function": {"name": "get_weather"}}));
    let body = m.request_body(&user("hi"), Some(&required), &tools(), false).unwrap();
    assert_eq!(body["tool_choice"], "auto");
    assert_eq!(tool_names(&body), ["get_weather", "get_time"]);
    // The token limit goes in `max_tokens`.
    let body = m.request_body(&user("hi"), Some(&ModelSettings::new().max_tokens(64)), &tools(), false).unwrap();
    assert_eq!(body["max_tokens"], 64);
    assert!(body.get("max_completion_tokens").is_none());
    assert_eq!("llama.cpp".parse::<Preset>().unwrap(), Preset::LlamaCpp);
}

#[tokio::test]
async fn vllm_gets_one_system_message() {
    let server = MockServer::start().await;
    answering(&server).await;
    for (p, expected) in [(Preset::Vllm, 1), (Preset::LmStudio, 2)] {
        let m = preset(&server, p, "m", "/v1").build().unwrap();
        let agent =
            toolsmith::Agent::builder(m).instructions("Be brief.").system_prompt("You are terse.").build().unwrap();
        agent.run("hi").await.unwrap();
        let body = bodies(&server).await.pop().unwrap();
        let messages = body["messages"].as_array().unwrap();
        let systems: Vec<&Value> = messages.iter().filter(|m| m["role"] == "system").collect();
        assert_eq!(systems.len(), expected, "{p}: {messages:?}");
        if p == Preset::Vllm {
            assert_eq!(messages[0], json!({"role": "system", "content": "Be brief.\n\nYou are terse."}));
            assert_eq!(messages[1], json!({"role": "user", "content": "hi"}));
        }
    }
}

fn azure(server: &MockServer) -> OpenAIChatModel {
    OpenAIChatModel::azure("gpt-4o-prod")
        .endpoint(format!("{}/", server.uri()))
        .api_version("2024-10-21")
        .api_key(KEY)
        .retry(RetryConfig::none())
        .build()
        .unwrap()
}

#[tokio::test]
async fn azure_calls_the_deployment_with_its_api_key_header_and_version() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/openai/deployments/gpt-4o-prod/chat/completions"))
        .and(query_param("api-version", "2024-10-21"))
        .and(header("api-key", KEY))
        .respond_with(json_response("openai", "chat_text.json"))
        .expect(1)
        .mount(&server)
        .await;
    let m = azure(&server);
    assert_eq!(m.system(), "azure");
    let settings = ModelSettings::new().max_tokens(40);
    let response = m.request(&user("hi"), Some(&settings), &ModelRequestParameters::default()).await.unwrap();
    assert_eq!(response.provider_name.as_deref(), Some("azure"));
    let req = &requests(&server).await[0];
    assert!(req.headers.get("authorization").is_none(), "Azure takes the key in api-key");
    assert_eq!(req.url.query(), Some("api-version=2024-10-21"));
    assert!(!req.url.as_str().contains(KEY));
    let body = &bodies(&server).await[0];
    assert_eq!(body["max_completion_tokens"], 40);
    assert!(body.get("max_tokens").is_none());
}

#[tokio::test]
async fn azure_v1_endpoints_take_no_api_version() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/openai/v1/chat/completions"))
        .and(header("api-key", KEY))
        .respond_with(json_response("openai", "chat_text.json"))
        .expect(1)
        .mount(&server)
        .await;
    let m = OpenAIChatModel::azure("gpt-4o-prod")
        .endpoint(format!("{}/openai/v1/", server.uri()))
        .api_key(KEY)
        .build()
        .unwrap();
    m.request(&user("hi"), None, &ModelRequestParameters::default()).await.unwrap();
    let req = &requests(&server).await[0];
    assert_eq!(req.url.query(), None);
    assert_eq!(bodies(&server).await[0]["model"], "gpt-4o-prod");
}

#[tokio::test]
async fn azure_keeps_its_key_out_of_errors_that_echo_it() {
    let server = MockServer::start().await;
    let echo = json!({"error": {"code": "401", "message": format!("Access denied: the key {KEY} is not valid for this resource.")}});
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_raw(echo.to_string(), "application/json"))
        .mount(&server)
        .await;
    let m = azure(&server);
    let err = m.request(&user("hi"), None, &ModelRequestParameters::default()).await.unwrap_err();
    assert_eq!(err.kind, "ModelHttpError");
    assert!(err.message.contains("HTTP 401") && err.message.contains("azure"), "{}", err.message);
    assert!(err.message.contains("Access denied"), "{}", err.message);
    assert!(!err.message.contains(KEY), "the key leaked: {}", err.message);
    assert!(err.message.contains("[REDACTED]"), "{}", err.message);
    assert!(!format!("{m:?}").contains(KEY), "the key leaked into Debug");

    // A stream's error is redacted too.
    let Err(err) = m.request_stream(&user("hi"), None, &ModelRequestParameters::default()).await else {
        panic!("a 401 streams nothing")
    };
    assert!(!err.message.contains(KEY), "the key leaked: {}", err.message);
}

#[test]
fn azure_without_endpoint_key_or_version_says_what_to_set() {
    let err = OpenAIChatModel::azure("d").api_key(KEY).api_version("2024-10-21").build().unwrap_err().to_string();
    assert!(err.contains("AZURE_OPENAI_ENDPOINT") && err.contains(".endpoint("), "{err}");
    let err = OpenAIChatModel::azure("d").endpoint("https://r.openai.azure.com").build().unwrap_err().to_string();
    assert!(err.contains("AZURE_OPENAI_API_KEY") && err.contains(".api_key(...)"), "{err}");
    let err = OpenAIChatModel::azure("d").endpoint("https://r.openai.azure.com").api_key(KEY).build().unwrap_err();
    assert!(err.to_string().contains("OPENAI_API_VERSION"), "{err}");
    assert!(!err.to_string().contains(KEY));
}

#[test]
fn infer_model_knows_the_presets_and_azure() {
    let err = infer_model("nope:x").unwrap_err().to_string();
    for name in ["openrouter", "deepseek", "mistral", "together", "fireworks", "vllm", "lmstudio", "azure"] {
        assert!(err.contains(name), "{name} missing from: {err}");
    }
    // The local presets need no key.
    for (name, system) in [("lmstudio:qwen3-8b", "lmstudio"), ("vllm:Qwen/Qwen3-8B", "vllm")] {
        let model = infer_model(name).unwrap();
        assert_eq!(model.system(), system);
        assert_eq!(model.name(), name.split_once(':').unwrap().1);
    }
}

#[tokio::test]
async fn a_preset_keeps_the_connection_settings() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json_response("openai", "chat_text.json").set_delay(Duration::from_secs(3)))
        .mount(&server)
        .await;
    let m = preset(&server, Preset::Groq, "llama-3.3-70b-versatile", "/v1")
        .api_key(KEY)
        .timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let err = m.request(&user("hi"), None, &ModelRequestParameters::default()).await.unwrap_err();
    assert_eq!(err.kind, "ModelTimeoutError");
    assert!(err.message.contains("groq"), "{}", err.message);
}
