//! Presets for OpenAI-compatible providers ([`Preset`]): each one's base URL, key variable,
//! provider name and the differences of its Chat Completions API from OpenAI's, applied to every
//! request of an [`OpenAIChatModel`] built with it.
//!
//! The differences applied, as Pydantic AI's providers apply them:
//! - the token limit goes in `max_completion_tokens` (OpenAI's field, Pydantic AI's default)
//!   except where the server reads `max_tokens`: OpenRouter and DeepSeek (whose Pydantic AI
//!   profiles turn the field off), Mistral and Groq (which Pydantic AI reaches through their own
//!   SDKs, sending `max_tokens`), Ollama and LM Studio (whose OpenAI-compatible endpoints read
//!   only `max_tokens`: Pydantic AI's Ollama profile keeps the default, which Ollama ignores);
//!   Together, Fireworks and vLLM take `max_completion_tokens`;
//! - Mistral takes the seed as `random_seed` and refuses `stream_options` (its streams end with
//!   the usage anyway);
//! - Ollama does not take strict tool definitions: tools go without `strict` and with their own
//!   schema;
//! - vLLM takes a single system message at the start: the leading ones are joined;
//! - models that refuse a forced tool choice (`tool_choice: "required"` or a named tool) get
//!   `auto`, with the tool list cut to the forced tool: DeepSeek's `deepseek-reasoner` and its
//!   Flash and V4 models (which think by default), Together's DeepSeek V4 models, and gpt-oss
//!   (OpenAI's Harmony format) on Together, Ollama and vLLM;
//! - llama.cpp's servers (`llama-server`, llama-cpp-python's) force a tool only by name: a single
//!   tool required (`tool_choice: "required"`, as a forced tool resolves) is named instead, and
//!   a choice among several becomes `auto`, the tools kept (the model is asked, not forced; the
//!   agent's retry prompts carry on from there); they read `max_tokens`;
//! - OpenRouter model names must name the upstream provider (`openai/gpt-4o`): a name without it
//!   is refused when the model is built.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use reqwest::header::HeaderMap;
use serde_json::{Map, Value};

use super::chat::{MaxTokensField, OpenAIChatModel, OpenAIChatModelBuilder};
use crate::error::UserError;
use crate::providers::connection::{ConnectionOptions, DEFAULT_TIMEOUT};
use crate::providers::http::header;

/// An OpenAI-compatible provider with its defaults, for
/// [`OpenAIChatModelBuilder::preset`] and [`OpenAIChatModel::from_preset`].
///
/// | preset | name | default base URL | key | base URL variable |
/// |---|---|---|---|---|
/// | `OpenRouter` | `openrouter` | `https://openrouter.ai/api/v1` | `OPENROUTER_API_KEY` | `OPENROUTER_BASE_URL` |
/// | `DeepSeek` | `deepseek` | `https://api.deepseek.com` | `DEEPSEEK_API_KEY` | `DEEPSEEK_BASE_URL` |
/// | `Mistral` | `mistral` | `https://api.mistral.ai/v1` | `MISTRAL_API_KEY` | `MISTRAL_BASE_URL` |
/// | `Groq` | `groq` | `https://api.groq.com/openai/v1` | `GROQ_API_KEY` | `GROQ_BASE_URL` |
/// | `Together` | `together` | `https://api.together.xyz/v1` | `TOGETHER_API_KEY` | `TOGETHER_BASE_URL` |
/// | `Fireworks` | `fireworks` | `https://api.fireworks.ai/inference/v1` | `FIREWORKS_API_KEY` | `FIREWORKS_BASE_URL` |
/// | `Ollama` | `ollama` | `http://localhost:11434/v1` | optional `OLLAMA_API_KEY` | `OLLAMA_BASE_URL` |
/// | `Vllm` | `vllm` | `http://localhost:8000/v1` | optional `VLLM_API_KEY` | `VLLM_BASE_URL` |
/// | `LmStudio` | `lmstudio` | `http://localhost:1234/v1` | none | `LMSTUDIO_BASE_URL` |
/// | `LlamaCpp` | `llamacpp` | `http://localhost:8080/v1` | optional `LLAMACPP_API_KEY` | `LLAMACPP_BASE_URL` |
///
/// The environment is read only by [`OpenAIChatModel::from_preset`] and
/// [`OpenAIChatModelBuilder::from_env`]; the builder's `.base_url(...)` and `.api_key(...)` come
/// first. With the environment, OpenRouter's app attribution headers come from
/// `OPENROUTER_APP_URL` (`HTTP-Referer`) and `OPENROUTER_APP_TITLE` (`X-Title`); without it, set
/// them with `.header(...)`.
///
/// ```
/// use toolsmith::model::Model;
/// use toolsmith::providers::{OpenAIChatModel, Preset};
///
/// let model = OpenAIChatModel::builder("llama-3.3-70b-versatile")
///     .preset(Preset::Groq)
///     .api_key("gsk-...")
///     .build()?;
/// assert_eq!(model.system(), "groq");
/// assert_eq!(model.base_url(), "https://api.groq.com/openai/v1");
///
/// // A local server needs no key:
/// let local = OpenAIChatModel::builder("llama3.2").preset(Preset::Ollama).build()?;
/// assert_eq!(local.base_url(), "http://localhost:11434/v1");
///
/// assert_eq!("lmstudio".parse::<Preset>()?, Preset::LmStudio);
/// # Ok::<(), toolsmith::UserError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Preset {
    /// [OpenRouter](https://openrouter.ai): model names name the upstream provider
    /// (`anthropic/claude-sonnet-4.5`).
    OpenRouter,
    /// [DeepSeek](https://api-docs.deepseek.com).
    DeepSeek,
    /// [Mistral](https://docs.mistral.ai) (La Plateforme).
    Mistral,
    /// [Groq](https://console.groq.com/docs).
    Groq,
    /// [Together AI](https://docs.together.ai).
    Together,
    /// [Fireworks AI](https://docs.fireworks.ai).
    Fireworks,
    /// A local [Ollama](https://ollama.com) server.
    Ollama,
    /// A [vLLM](https://docs.vllm.ai) server.
    Vllm,
    /// A local [LM Studio](https://lmstudio.ai) server.
    LmStudio,
    /// A local [llama.cpp](https://github.com/ggml-org/llama.cpp) server (`llama-server`, or
    /// llama-cpp-python's `llama_cpp.server`).
    LlamaCpp,
}

impl Preset {
    /// Every preset.
    pub const ALL: &'static [Preset] = &[
        Preset::OpenRouter,
        Preset::DeepSeek,
        Preset::Mistral,
        Preset::Groq,
        Preset::Together,
        Preset::Fireworks,
        Preset::Ollama,
        Preset::Vllm,
        Preset::LmStudio,
        Preset::LlamaCpp,
    ];

    /// The provider's name: what the model reports as its system, and the prefix of
    /// [`infer_model`](crate::providers::infer_model) names (`openrouter:openai/gpt-4o`).
    pub fn name(self) -> &'static str {
        match self {
            Preset::OpenRouter => "openrouter",
            Preset::DeepSeek => "deepseek",
            Preset::Mistral => "mistral",
            Preset::Groq => "groq",
            Preset::Together => "together",
            Preset::Fireworks => "fireworks",
            Preset::Ollama => "ollama",
            Preset::Vllm => "vllm",
            Preset::LmStudio => "lmstudio",
            Preset::LlamaCpp => "llamacpp",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Preset::OpenRouter => "OpenRouter",
            Preset::DeepSeek => "DeepSeek",
            Preset::Mistral => "Mistral",
            Preset::Groq => "Groq",
            Preset::Together => "Together",
            Preset::Fireworks => "Fireworks",
            Preset::Ollama => "Ollama",
            Preset::Vllm => "Vllm",
            Preset::LmStudio => "LmStudio",
            Preset::LlamaCpp => "LlamaCpp",
        }
    }

    /// The base URL used when neither the builder nor the environment gives one.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Preset::OpenRouter => "https://openrouter.ai/api/v1",
            Preset::DeepSeek => "https://api.deepseek.com",
            Preset::Mistral => "https://api.mistral.ai/v1",
            Preset::Groq => "https://api.groq.com/openai/v1",
            Preset::Together => "https://api.together.xyz/v1",
            Preset::Fireworks => "https://api.fireworks.ai/inference/v1",
            Preset::Ollama => "http://localhost:11434/v1",
            Preset::Vllm => "http://localhost:8000/v1",
            Preset::LmStudio => "http://localhost:1234/v1",
            Preset::LlamaCpp => "http://localhost:8080/v1",
        }
    }

    /// The environment variable that overrides the default base URL (`GROQ_BASE_URL`...).
    pub fn base_url_env(self) -> &'static str {
        match self {
            Preset::OpenRouter => "OPENROUTER_BASE_URL",
            Preset::DeepSeek => "DEEPSEEK_BASE_URL",
            Preset::Mistral => "MISTRAL_BASE_URL",
            Preset::Groq => "GROQ_BASE_URL",
            Preset::Together => "TOGETHER_BASE_URL",
            Preset::Fireworks => "FIREWORKS_BASE_URL",
            Preset::Ollama => "OLLAMA_BASE_URL",
            Preset::Vllm => "VLLM_BASE_URL",
            Preset::LmStudio => "LMSTUDIO_BASE_URL",
            Preset::LlamaCpp => "LLAMACPP_BASE_URL",
        }
    }

    /// The environment variable the API key is read from, if the provider has one.
    pub fn api_key_env(self) -> Option<&'static str> {
        match self {
            Preset::OpenRouter => Some("OPENROUTER_API_KEY"),
            Preset::DeepSeek => Some("DEEPSEEK_API_KEY"),
            Preset::Mistral => Some("MISTRAL_API_KEY"),
            Preset::Groq => Some("GROQ_API_KEY"),
            Preset::Together => Some("TOGETHER_API_KEY"),
            Preset::Fireworks => Some("FIREWORKS_API_KEY"),
            Preset::Ollama => Some("OLLAMA_API_KEY"),
            Preset::Vllm => Some("VLLM_API_KEY"),
            Preset::LmStudio => None,
            Preset::LlamaCpp => Some("LLAMACPP_API_KEY"),
        }
    }

    /// Whether a request needs an API key (the hosted providers), or a local server takes one
    /// only when it was set up to.
    pub fn requires_api_key(self) -> bool {
        !matches!(self, Preset::Ollama | Preset::Vllm | Preset::LmStudio | Preset::LlamaCpp)
    }

    /// The field the provider reads the token limit from (see the module notes).
    pub(super) fn max_tokens_field(self) -> MaxTokensField {
        match self {
            Preset::OpenRouter
            | Preset::DeepSeek
            | Preset::Mistral
            | Preset::Groq
            | Preset::Ollama
            | Preset::LmStudio
            | Preset::LlamaCpp => MaxTokensField::MaxTokens,
            Preset::Together | Preset::Fireworks | Preset::Vllm => MaxTokensField::MaxCompletionTokens,
        }
    }

    /// How this provider's API differs from OpenAI's for `model`.
    pub(super) fn quirks(self, model: &str) -> Quirks {
        let model = model.to_ascii_lowercase();
        let bare = model.rsplit('/').next().unwrap_or(&model);
        let harmony = bare.starts_with("gpt-oss");
        let mut q = Quirks::default();
        match self {
            // `deepseek-reasoner` always thinks; Flash and V4 think by default, and thinking
            // refuses a forced tool choice.
            Preset::DeepSeek => {
                q.no_forced_tool_choice =
                    model == "deepseek-reasoner" || model == "deepseek-flash" || model.starts_with("deepseek-v4-");
            }
            Preset::Mistral => {
                q.seed_as_random_seed = true;
                q.no_stream_options = true;
            }
            Preset::Together => {
                q.no_forced_tool_choice = harmony || model.starts_with("deepseek-ai/deepseek-v4-");
            }
            Preset::Ollama => {
                q.no_strict_tools = true;
                q.no_forced_tool_choice = harmony;
            }
            Preset::Vllm => {
                q.single_system_message = true;
                q.no_forced_tool_choice = harmony;
            }
            Preset::LlamaCpp => q.forces_by_name_only = true,
            Preset::OpenRouter | Preset::Groq | Preset::Fireworks | Preset::LmStudio => {}
        }
        q
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Preset {
    type Err = UserError;

    /// A preset by its [name](Preset::name) (`lm-studio`, `llama.cpp` and `llama-cpp` are also
    /// accepted).
    fn from_str(s: &str) -> Result<Self, UserError> {
        let s = s.trim().to_ascii_lowercase();
        let s = match s.as_str() {
            "lm-studio" => "lmstudio",
            "llama.cpp" | "llama-cpp" | "llama_cpp" => "llamacpp",
            s => s,
        };
        Preset::ALL.iter().copied().find(|p| p.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Preset::ALL.iter().map(|p| p.name()).collect();
            UserError::new(format!("unknown preset `{s}`: `Preset` knows {}", names.join(", ")))
        })
    }
}

/// What a provider's Chat Completions API does differently from OpenAI's; all off for OpenAI.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Quirks {
    /// Tools go without `strict` and with their own schema.
    pub(super) no_strict_tools: bool,
    /// A forced tool choice becomes `auto`, with the tools cut to the forced one.
    pub(super) no_forced_tool_choice: bool,
    /// A tool is forced only by name: `required` with one tool names it, with several becomes
    /// `auto`.
    pub(super) forces_by_name_only: bool,
    /// The leading system messages are joined into one.
    pub(super) single_system_message: bool,
    /// The seed goes in `random_seed`.
    pub(super) seed_as_random_seed: bool,
    /// A streamed request goes without `stream_options`.
    pub(super) no_stream_options: bool,
}

impl Quirks {
    /// Rewrites an OpenAI request body for the provider.
    pub(super) fn apply(&self, body: &mut Value) {
        let Some(map) = body.as_object_mut() else { return };
        if self.no_forced_tool_choice {
            unforce_tool_choice(map);
        } else if self.forces_by_name_only {
            force_by_name(map);
        }
        if self.single_system_message {
            join_leading_system_messages(map);
        }
        if self.seed_as_random_seed
            && let Some(seed) = map.remove("seed")
        {
            map.insert("random_seed".into(), seed);
        }
        if self.no_stream_options {
            map.remove("stream_options");
        }
    }
}

/// `tool_choice: "required"` becomes `auto`; a named tool becomes `auto` with only that tool.
fn unforce_tool_choice(map: &mut Map<String, Value>) {
    let forced = match map.get("tool_choice") {
        Some(Value::String(s)) if s == "required" => None,
        Some(Value::Object(o)) => match o.get("function").and_then(|f| f.get("name")).and_then(Value::as_str) {
            Some(name) => Some(name.to_string()),
            None => return,
        },
        _ => return,
    };
    if let (Some(name), Some(Value::Array(tools))) = (forced, map.get_mut("tools")) {
        tools.retain(|t| t.pointer("/function/name").and_then(Value::as_str) == Some(name.as_str()));
    }
    map.insert("tool_choice".into(), "auto".into());
}

/// `tool_choice: "required"` names the tool when there is one, else becomes `auto`.
fn force_by_name(map: &mut Map<String, Value>) {
    if map.get("tool_choice").and_then(Value::as_str) != Some("required") {
        return;
    }
    let only = match map.get("tools") {
        Some(Value::Array(tools)) if tools.len() == 1 => {
            tools[0].pointer("/function/name").and_then(Value::as_str).map(str::to_string)
        }
        _ => None,
    };
    let choice = match only {
        Some(name) => serde_json::json!({"type": "function", "function": {"name": name}}),
        None => "auto".into(),
    };
    map.insert("tool_choice".into(), choice);
}

/// Joins the system messages at the start of `messages` (text ones) with a blank line.
fn join_leading_system_messages(map: &mut Map<String, Value>) {
    let Some(Value::Array(messages)) = map.get_mut("messages") else { return };
    let leading = messages
        .iter()
        .take_while(|m| {
            m.get("role").and_then(Value::as_str) == Some("system") && m.get("content").is_some_and(Value::is_string)
        })
        .count();
    if leading < 2 {
        return;
    }
    let joined: Vec<String> = messages
        .drain(..leading)
        .filter_map(|m| m.get("content").and_then(Value::as_str).map(str::to_string))
        .collect();
    messages.insert(0, serde_json::json!({"role": "system", "content": joined.join("\n\n")}));
}

fn env(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| !v.trim().is_empty())
}

/// Builds a chat model for a preset (see [`OpenAIChatModelBuilder::preset`]).
pub(super) fn build(builder: OpenAIChatModelBuilder, preset: Preset) -> Result<OpenAIChatModel, UserError> {
    let OpenAIChatModelBuilder {
        model, mut opts, max_tokens_field, tool_choice_forcing, from_env, provider_name, ..
    } = builder;
    if from_env {
        opts.base_url = opts.base_url.or_else(|| env(preset.base_url_env()));
        opts.api_key = opts.api_key.or_else(|| preset.api_key_env().and_then(env));
    }
    opts.api_key = opts.api_key.filter(|k| !k.trim().is_empty());
    if preset.requires_api_key() && opts.api_key.is_none() {
        return Err(missing_key(preset, from_env));
    }
    if preset == Preset::OpenRouter && !model.contains('/') {
        return Err(UserError::new(format!(
            "OpenRouter model names start with the upstream provider, e.g. `openai/{model}` or `anthropic/claude-sonnet-4.5`, not `{model}`: see https://openrouter.ai/models"
        )));
    }
    let base_url = opts.base_url.clone().unwrap_or_else(|| preset.default_base_url().to_string());
    let system = provider_name.unwrap_or_else(|| preset.name().to_string());
    let http = transport(&opts, preset, from_env, &system, &model)?;
    Ok(OpenAIChatModel {
        quirks: preset.quirks(&model),
        base_url: base_url.trim_end_matches('/').to_string(),
        system,
        http: Arc::new(http),
        max_tokens_field: max_tokens_field.unwrap_or(preset.max_tokens_field()),
        tool_choice_forcing,
        query: None,
        name: model,
    })
}

fn missing_key(preset: Preset, from_env: bool) -> UserError {
    let var = preset.api_key_env().unwrap_or("its API key variable");
    let title = preset.title();
    if from_env {
        UserError::new(format!(
            "{var} is not set: export it with your {preset} API key, or pass the key with `.api_key(...)` (`OpenAIChatModel::builder(model).preset(Preset::{title}).api_key(...)`)",
            preset = preset_label(preset)
        ))
    } else {
        UserError::new(format!(
            "{} needs an API key: pass it with `.api_key(...)`, or set {var} and add `.from_env()` (or use `OpenAIChatModel::from_preset(Preset::{title}, model)`)",
            preset_label(preset)
        ))
    }
}

fn preset_label(preset: Preset) -> &'static str {
    match preset {
        Preset::Together => "Together AI",
        Preset::Fireworks => "Fireworks AI",
        Preset::Vllm => "vLLM",
        Preset::LmStudio => "LM Studio",
        other => other.title(),
    }
}

/// The bearer-token transport, with OpenRouter's attribution headers from the environment.
fn transport(
    opts: &ConnectionOptions,
    preset: Preset,
    from_env: bool,
    system: &str,
    model: &str,
) -> Result<crate::providers::http::HttpTransport, UserError> {
    let mut auth = HeaderMap::new();
    if let Some(key) = opts.api_key.as_deref() {
        header(&mut auth, "authorization", &format!("Bearer {key}"), true)?;
    }
    if preset == Preset::OpenRouter && from_env {
        let set = |name: &str| opts.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
        if let Some(url) = env("OPENROUTER_APP_URL").filter(|_| !set("http-referer")) {
            header(&mut auth, "http-referer", &url, false)?;
        }
        if let Some(title) = env("OPENROUTER_APP_TITLE").filter(|_| !set("x-title")) {
            header(&mut auth, "x-title", &title, false)?;
        }
    }
    opts.transport(system, model, auth, DEFAULT_TIMEOUT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_parse_back() {
        for p in Preset::ALL {
            assert_eq!(p.name().parse::<Preset>().unwrap(), *p);
            assert!(crate::providers::infer::OPENAI_COMPATIBLE.contains(&p.name()), "{p}");
        }
        assert_eq!("LM-Studio".parse::<Preset>().unwrap(), Preset::LmStudio);
        let e = "nope".parse::<Preset>().unwrap_err().to_string();
        assert!(e.contains("openrouter") && e.contains("lmstudio"), "{e}");
    }

    #[test]
    fn a_forced_tool_becomes_auto_with_that_tool_only() {
        let q = Quirks { no_forced_tool_choice: true, ..Quirks::default() };
        let mut body = json!({
            "tools": [{"type": "function", "function": {"name": "a"}}, {"type": "function", "function": {"name": "b"}}],
            "tool_choice": {"type": "function", "function": {"name": "b"}}
        });
        q.apply(&mut body);
        assert_eq!(body["tool_choice"], "auto");
        assert_eq!(body["tools"], json!([{"type": "function", "function": {"name": "b"}}]));
        let mut body = json!({"tools": [{"function": {"name": "a"}}], "tool_choice": "required"});
        q.apply(&mut body);
        assert_eq!(body["tool_choice"], "auto");
        assert_eq!(body["tools"].as_array().map(Vec::len), Some(1));
        let mut body = json!({"tool_choice": "none"});
        q.apply(&mut body);
        assert_eq!(body["tool_choice"], "none");
    }

    #[test]
    fn leading_system_messages_are_joined() {
        let q = Quirks { single_system_message: true, ..Quirks::default() };
        let mut body = json!({"messages": [
            {"role": "system", "content": "a"},
            {"role": "system", "content": "b"},
            {"role": "user", "content": "u"},
            {"role": "system", "content": "c"}
        ]});
        q.apply(&mut body);
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "a\n\nb"},
                {"role": "user", "content": "u"},
                {"role": "system", "content": "c"}
            ])
        );
        let mut odd = json!({"messages": "not a list"});
        q.apply(&mut odd);
        assert_eq!(odd["messages"], "not a list");
    }

    #[test]
    fn quirks_follow_the_model() {
        assert!(Preset::DeepSeek.quirks("deepseek-reasoner").no_forced_tool_choice);
        assert!(!Preset::DeepSeek.quirks("deepseek-chat").no_forced_tool_choice);
        assert!(Preset::DeepSeek.quirks("deepseek-v4-pro").no_forced_tool_choice);
        assert!(Preset::DeepSeek.quirks("deepseek-flash").no_forced_tool_choice);
        assert!(Preset::Together.quirks("openai/gpt-oss-120b").no_forced_tool_choice);
        assert!(Preset::Together.quirks("deepseek-ai/DeepSeek-V4-Pro").no_forced_tool_choice);
        assert!(!Preset::Together.quirks("meta-llama/Llama-3.3-70B-Instruct-Turbo").no_forced_tool_choice);
        assert!(Preset::Ollama.quirks("llama3.2").no_strict_tools);
        assert_eq!(Preset::Groq.quirks("openai/gpt-oss-120b"), Quirks::default());
    }
}
