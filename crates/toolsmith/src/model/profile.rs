//! What toolsmith knows of a model from its name: its context window and the tokenizer its tool
//! schemas are counted with.
//!
//! [`Model::context_window`](crate::model::Model::context_window) answers with this table unless
//! a model says otherwise; [`AgentBuilder::context_window`](crate::AgentBuilder::context_window)
//! overrides both for one agent (a fine-tune, a deployment with another limit, a model the table
//! does not know).
//!
//! ```
//! use toolsmith::model::ModelProfile;
//! use toolsmith::search::tokens::Encoding;
//!
//! let p = ModelProfile::for_model("gpt-4o-mini");
//! assert_eq!(p.context_window, Some(128_000));
//! assert_eq!(p.encoding, Encoding::O200kBase);
//! assert_eq!(ModelProfile::for_model("anthropic:claude-sonnet-4-5").context_window, Some(200_000));
//! assert_eq!(ModelProfile::for_model("my-local-model").context_window, None);
//! ```

use std::fmt;
use std::str::FromStr;

/// A tiktoken vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Encoding {
    /// `o200k_base`: GPT-4o and later OpenAI models; the stand-in for other providers.
    #[default]
    O200kBase,
    /// `cl100k_base`: GPT-4, GPT-3.5 and OpenAI's embedding models.
    Cl100kBase,
}

impl Encoding {
    /// The vocabulary of a model, by its name (`gpt-4o`, `openai:gpt-4`, `ft:gpt-3.5-turbo:...`,
    /// `claude-sonnet-4-5`...): `cl100k_base` for GPT-4 (not 4o, 4.1 or 4.5), GPT-3.5 and the
    /// embedding models, `o200k_base` otherwise.
    pub fn for_model(name: &str) -> Self {
        let name = base_model_name(name);
        let gpt4_family =
            name.starts_with("gpt-4") && !["gpt-4o", "gpt-4.1", "gpt-4.5"].iter().any(|p| name.starts_with(p));
        if gpt4_family || name.starts_with("gpt-3.5") || name.starts_with("text-embedding-") {
            Encoding::Cl100kBase
        } else {
            Encoding::O200kBase
        }
    }

    /// The vocabulary's tiktoken name.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An encoding name that is not `o200k_base` or `cl100k_base`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown encoding '{0}': expected o200k_base or cl100k_base")]
pub struct UnknownEncoding(pub String);

impl FromStr for Encoding {
    type Err = UnknownEncoding;

    fn from_str(s: &str) -> Result<Self, UnknownEncoding> {
        match s {
            "o200k_base" => Ok(Encoding::O200kBase),
            "cl100k_base" => Ok(Encoding::Cl100kBase),
            other => Err(UnknownEncoding(other.to_string())),
        }
    }
}

/// The model name without a `provider:` prefix or a fine-tune's `ft:` wrapping.
fn base_model_name(name: &str) -> &str {
    let name = match name.strip_prefix("ft:") {
        Some(rest) => rest.split(':').next().unwrap_or(rest),
        None => name.rsplit_once(':').map_or(name, |(_, model)| model),
    };
    name.rsplit_once('/').map_or(name, |(_, model)| model)
}

/// A model's context window and tokenizer, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ModelProfile {
    /// The context window in tokens, for the model families the table knows.
    pub context_window: Option<u64>,
    /// The vocabulary tool schemas are counted in (see [`Encoding::for_model`]).
    pub encoding: Encoding,
}

/// Context windows by name prefix, the more specific prefixes first (as the providers document
/// them; an input limit where output has its own).
const WINDOWS: &[(&str, u64)] = &[
    // OpenAI
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4.5", 128_000),
    ("gpt-4o", 128_000),
    ("chatgpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4-1106", 128_000),
    ("gpt-4-0125", 128_000),
    ("gpt-4-32k", 32_768),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo-instruct", 4_096),
    ("gpt-3.5-turbo", 16_385),
    ("gpt-oss", 131_072),
    ("o1-mini", 128_000),
    ("o1-preview", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("codex-mini", 200_000),
    // Anthropic
    ("claude-2.0", 100_000),
    ("claude-instant", 100_000),
    ("claude-", 200_000),
    // Google
    ("gemini-1.0-pro", 32_760),
    ("gemini-1.5-pro", 2_097_152),
    ("gemini-1.5-flash", 1_048_576),
    ("gemini-2", 1_048_576),
    ("gemini-3", 1_048_576),
];

impl ModelProfile {
    /// The profile of a model name, with or without a `provider:` prefix (`gpt-4o`,
    /// `openai:gpt-4.1-mini`, `claude-opus-4-1`, `gemini-2.5-flash`, `ft:gpt-4o-mini:org::id`).
    /// Unknown names have no context window.
    pub fn for_model(name: &str) -> Self {
        let base = base_model_name(name);
        let context_window = WINDOWS.iter().find(|(prefix, _)| base.starts_with(prefix)).map(|&(_, w)| w);
        ModelProfile { context_window, encoding: Encoding::for_model(name) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_families_have_their_windows() {
        for (name, window) in [
            ("gpt-4o", Some(128_000)),
            ("openai:gpt-4.1-mini", Some(1_047_576)),
            ("gpt-4", Some(8_192)),
            ("gpt-4-turbo-2024-04-09", Some(128_000)),
            ("gpt-3.5-turbo", Some(16_385)),
            ("gpt-5-mini", Some(400_000)),
            ("o3-mini", Some(200_000)),
            ("o1-mini", Some(128_000)),
            ("ft:gpt-4o-mini-2024-07-18:acme::abc", Some(128_000)),
            ("claude-3-5-haiku-latest", Some(200_000)),
            ("claude-2.0", Some(100_000)),
            ("gemini-1.5-pro", Some(2_097_152)),
            ("google-gla:gemini-2.5-flash", Some(1_048_576)),
            ("llama3", None),
            ("test", None),
            ("function", None),
        ] {
            assert_eq!(ModelProfile::for_model(name).context_window, window, "{name}");
        }
    }
}
