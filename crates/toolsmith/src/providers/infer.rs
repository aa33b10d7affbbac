//! [`infer_model`]: a model from a `provider:model` name.

use crate::error::UserError;
use crate::model::{AnyModel, TestModel};

/// Makes a model from a `provider:model` name, with the key and base URL from the provider's
/// usual environment variables.
///
/// | name | model | environment |
/// |---|---|---|
/// | `openai:gpt-4o-mini` (or `openai-chat:`) | [`OpenAIChatModel`](crate::providers::OpenAIChatModel) | `OPENAI_API_KEY`, `OPENAI_BASE_URL` (with its `/v1`) |
/// | `openai-responses:gpt-5.2` | [`OpenAIResponsesModel`](crate::providers::OpenAIResponsesModel) | same |
/// | `anthropic:claude-sonnet-4-5` | [`AnthropicModel`](crate::providers::AnthropicModel) | `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL` |
/// | `google:gemini-2.5-flash` (or `google-gla:`, `gemini:`) | [`GeminiModel`](crate::providers::GeminiModel) | `GEMINI_API_KEY` (or `GOOGLE_API_KEY`), `GEMINI_BASE_URL` |
/// | `openrouter:openai/gpt-4o` | `OpenAIChatModel` with [`Preset::OpenRouter`](crate::providers::Preset) | `OPENROUTER_API_KEY`, `OPENROUTER_BASE_URL`, `OPENROUTER_APP_URL`, `OPENROUTER_APP_TITLE` |
/// | `deepseek:deepseek-chat` | `Preset::DeepSeek` | `DEEPSEEK_API_KEY`, `DEEPSEEK_BASE_URL` |
/// | `mistral:mistral-large-latest` | `Preset::Mistral` | `MISTRAL_API_KEY`, `MISTRAL_BASE_URL` |
/// | `groq:llama-3.3-70b-versatile` | `Preset::Groq` | `GROQ_API_KEY`, `GROQ_BASE_URL` |
/// | `together:meta-llama/Llama-3.3-70B-Instruct-Turbo` | `Preset::Together` | `TOGETHER_API_KEY`, `TOGETHER_BASE_URL` |
/// | `fireworks:accounts/fireworks/models/llama-v3p1-8b-instruct` | `Preset::Fireworks` | `FIREWORKS_API_KEY`, `FIREWORKS_BASE_URL` |
/// | `ollama:llama3.2` | `Preset::Ollama` | `OLLAMA_BASE_URL` (default `http://localhost:11434/v1`), optional `OLLAMA_API_KEY` |
/// | `vllm:Qwen/Qwen3-8B` | `Preset::Vllm` | `VLLM_BASE_URL` (default `http://localhost:8000/v1`), optional `VLLM_API_KEY` |
/// | `lmstudio:qwen3-8b` | `Preset::LmStudio` | `LMSTUDIO_BASE_URL` (default `http://localhost:1234/v1`) |
/// | `llamacpp:smollm2` | `Preset::LlamaCpp` | `LLAMACPP_BASE_URL` (default `http://localhost:8080/v1`) |
/// | `azure:DEPLOYMENT` | [`OpenAIChatModel::azure`](crate::providers::OpenAIChatModel::azure) | `AZURE_OPENAI_ENDPOINT`, `AZURE_OPENAI_API_KEY`, `OPENAI_API_VERSION` |
/// | `bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0` | [`BedrockModel`](crate::providers::BedrockModel) | `AWS_REGION` (or `AWS_DEFAULT_REGION`); `AWS_BEARER_TOKEN_BEDROCK`, or `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` |
/// | `test` | [`TestModel`] | none |
///
/// A name without a provider is accepted for the usual prefixes (`gpt-`, `o1`/`o3`/`o4`,
/// `claude`, `gemini`). The provider adapters are behind the crate features `openai`,
/// `anthropic`, `gemini` and `bedrock`; a provider whose feature is off is a [`UserError`] that says so.
///
/// ```
/// let model = toolsmith::providers::infer_model("test").unwrap();
/// let agent = toolsmith::Agent::builder(model).build().unwrap();
/// # let _ = agent;
/// assert!(toolsmith::providers::infer_model("nope:x").is_err());
/// ```
pub fn infer_model(name: &str) -> Result<AnyModel, UserError> {
    let name = name.trim();
    if name == "test" {
        return Ok(AnyModel::from_model(TestModel::default()));
    }
    let (provider, model) = match name.split_once(':') {
        Some((p, m)) => (p.to_string(), m.to_string()),
        None => {
            let inferred = if name.starts_with("gpt-")
                || name.starts_with("o1")
                || name.starts_with("o3")
                || name.starts_with("o4")
                || name.starts_with("chatgpt")
            {
                "openai"
            } else if name.starts_with("claude") {
                "anthropic"
            } else if name.starts_with("gemini") {
                "google"
            } else {
                return Err(UserError::new(format!(
                    "cannot tell the provider of model `{name}`: write it as `provider:model`, e.g. `openai:gpt-4o-mini`, `anthropic:claude-sonnet-4-5` or `google:gemini-2.5-flash`"
                )));
            };
            (inferred.to_string(), name.to_string())
        }
    };
    if model.is_empty() {
        return Err(UserError::new(format!("the model name is missing in `{name}`: write it as `{provider}:MODEL`")));
    }
    build(&provider, &model)
}

/// The OpenAI-compatible providers of [`Preset`](crate::providers::Preset), by name.
pub(crate) const OPENAI_COMPATIBLE: &[&str] =
    &["openrouter", "deepseek", "mistral", "groq", "together", "fireworks", "ollama", "vllm", "lmstudio", "llamacpp"];

#[allow(unused_variables)]
fn build(provider: &str, model: &str) -> Result<AnyModel, UserError> {
    match provider {
        "test" => Ok(AnyModel::from_model(TestModel::default())),
        "openai" | "openai-chat" => {
            #[cfg(feature = "openai")]
            {
                Ok(AnyModel::new(crate::providers::OpenAIChatModel::from_env(model)?))
            }
            #[cfg(not(feature = "openai"))]
            Err(feature_off(provider, "openai"))
        }
        "azure" => {
            #[cfg(feature = "openai")]
            {
                Ok(AnyModel::new(crate::providers::OpenAIChatModel::azure(model).from_env().build()?))
            }
            #[cfg(not(feature = "openai"))]
            Err(feature_off(provider, "openai"))
        }
        p if OPENAI_COMPATIBLE.contains(&p) => {
            #[cfg(feature = "openai")]
            {
                let preset: crate::providers::Preset = p.parse()?;
                Ok(AnyModel::new(crate::providers::OpenAIChatModel::from_preset(preset, model)?))
            }
            #[cfg(not(feature = "openai"))]
            Err(feature_off(provider, "openai"))
        }
        "openai-responses" => {
            #[cfg(feature = "openai")]
            {
                Ok(AnyModel::new(crate::providers::OpenAIResponsesModel::from_env(model)?))
            }
            #[cfg(not(feature = "openai"))]
            Err(feature_off(provider, "openai"))
        }
        "anthropic" => {
            #[cfg(feature = "anthropic")]
            {
                Ok(AnyModel::new(crate::providers::AnthropicModel::from_env(model)?))
            }
            #[cfg(not(feature = "anthropic"))]
            Err(feature_off(provider, "anthropic"))
        }
        "google" | "google-gla" | "gemini" => {
            #[cfg(feature = "gemini")]
            {
                Ok(AnyModel::new(crate::providers::GeminiModel::from_env(model)?))
            }
            #[cfg(not(feature = "gemini"))]
            Err(feature_off(provider, "gemini"))
        }
        "bedrock" => {
            #[cfg(feature = "bedrock")]
            {
                Ok(AnyModel::new(crate::providers::BedrockModel::from_env(model)?))
            }
            #[cfg(not(feature = "bedrock"))]
            Err(feature_off(provider, "bedrock"))
        }
        other => Err(UserError::new(format!(
            "unknown model provider `{other}`: use one of openai, openai-responses, anthropic, google, bedrock, azure, {} or test (e.g. `openai:gpt-4o-mini`); for another OpenAI-compatible server use `openai:MODEL` with OPENAI_BASE_URL",
            OPENAI_COMPATIBLE.join(", ")
        ))),
    }
}

#[allow(dead_code)]
fn feature_off(provider: &str, feature: &str) -> UserError {
    UserError::new(format!(
        "the `{provider}` provider needs toolsmith's `{feature}` feature: enable it in Cargo.toml (`toolsmith = {{ version = \"{}\", features = [\"{feature}\"] }}`), or run an example with `--features {feature}`",
        env!("CARGO_PKG_VERSION")
    ))
}
