//! Token counts of tool schemas, as bridge mode's `auto` setting compares them with the
//! model's context window, and as `toolsmith tokens` reports them.
//!
//! A tool is counted as OpenAI-style APIs are sent it: the JSON text of
//! `{"type": "function", "function": {name, description, parameters}}` ([`tool_wire_text`]).
//!
//! - With the `tiktoken` cargo feature, counts are exact for OpenAI models: the text is encoded
//!   with tiktoken's `o200k_base` (GPT-4o, GPT-4.1, GPT-4.5, GPT-5, o1, o3, o4 and `gpt-oss`) or
//!   `cl100k_base` (GPT-4, GPT-3.5 and the embedding models); [`Encoding::for_model`] chooses by
//!   the model's name. Other providers' models (Claude, Gemini) have tokenizers of their own
//!   that are not public: they are counted with `o200k_base`, an approximation of their count.
//! - Without the feature (the default build: tiktoken-rs embeds its vocabularies, some
//!   megabytes), counts are estimates of one token per four bytes of that text. On real catalogues
//!   the estimate runs about a fifth high: 284,260 estimated against 238,160 `o200k_base` tokens
//!   for the 1,853 tools of the retrieval benchmark, 6,458 against 5,385 for the 62 MCP-style
//!   tools of the test fixtures (`toolsmith tokens` prints both). So without the feature, `auto`
//!   bridge mode tends to open a little early on such schemas. [`TokenCount::exact`]
//!   says which one a count is.
//!
//! ```
//! use serde_json::json;
//! use toolsmith::ToolDefinition;
//! use toolsmith::search::tokens::{Encoding, schema_tokens};
//!
//! let schema = json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]});
//! let def = ToolDefinition::new("get_weather", schema).with_description("Get the current weather of a city.");
//! let count = schema_tokens([&def], Encoding::for_model("gpt-4o"));
//! // 43 tokens exactly (feature `tiktoken`), 49 estimated without it.
//! assert!(count.tokens == 43 || (count.tokens == 49 && !count.exact));
//! ```

use serde_json::{Value, json};

use crate::tool::ToolDefinition;

pub use crate::model::{Encoding, UnknownEncoding};

/// A number of tokens, counted exactly or estimated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TokenCount {
    /// The tokens.
    pub tokens: u64,
    /// Whether they were counted with the model's tokenizer (the `tiktoken` feature), rather
    /// than estimated at four bytes a token.
    pub exact: bool,
}

impl std::ops::Add for TokenCount {
    type Output = TokenCount;

    fn add(self, other: TokenCount) -> TokenCount {
        TokenCount { tokens: self.tokens + other.tokens, exact: self.exact && other.exact }
    }
}

/// The estimate used without the `tiktoken` feature: a token per four bytes, rounded up.
pub fn estimate_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

/// Why a text could not be counted exactly.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The crate was built without the `tiktoken` feature.
    #[error("exact token counts need toolsmith's `tiktoken` cargo feature")]
    Unavailable,
    /// The tokenizer's vocabulary could not be loaded.
    #[error("cannot load the {encoding} tokenizer: {message}")]
    Tokenizer {
        /// The vocabulary.
        encoding: Encoding,
        /// What went wrong.
        message: String,
    },
}

/// The exact tokens of `text` in `encoding` (special tokens such as `<|endoftext|>` count as one).
pub fn exact_tokens(text: &str, encoding: Encoding) -> Result<u64, TokenError> {
    #[cfg(feature = "tiktoken")]
    {
        let bpe = exact::bpe(encoding)?;
        Ok(bpe.encode_with_special_tokens(text).len() as u64)
    }
    #[cfg(not(feature = "tiktoken"))]
    {
        let _ = (text, encoding);
        Err(TokenError::Unavailable)
    }
}

/// The tokens of `text`: exact with the `tiktoken` feature, else (or should the vocabulary fail
/// to load) the four-bytes-a-token estimate.
pub fn count_tokens(text: &str, encoding: Encoding) -> TokenCount {
    match exact_tokens(text, encoding) {
        Ok(tokens) => TokenCount { tokens, exact: true },
        Err(_) => TokenCount { tokens: estimate_tokens(text), exact: false },
    }
}

/// A tool as OpenAI-style APIs are sent it, the text its tokens are counted in: the description
/// is left out when the tool has none.
pub fn tool_wire_text(def: &ToolDefinition) -> String {
    let mut function = serde_json::Map::new();
    function.insert("name".into(), Value::String(def.name.clone()));
    if let Some(d) = &def.description {
        function.insert("description".into(), Value::String(d.clone()));
    }
    function.insert("parameters".into(), def.parameters_json_schema.as_ref().clone());
    json!({"type": "function", "function": function}).to_string()
}

/// The tokens of these tools' definitions, each counted as [`tool_wire_text`].
pub fn schema_tokens<'a>(defs: impl IntoIterator<Item = &'a ToolDefinition>, encoding: Encoding) -> TokenCount {
    let mut total = TokenCount { tokens: 0, exact: true };
    let mut any = false;
    for def in defs {
        total = total + count_tokens(&tool_wire_text(def), encoding);
        any = true;
    }
    if !any {
        total.exact = cfg!(feature = "tiktoken");
    }
    total
}

#[cfg(feature = "tiktoken")]
mod exact {
    use std::sync::OnceLock;

    use tiktoken_rs::CoreBPE;

    use super::{Encoding, TokenError};

    /// Each vocabulary, loaded once (parsing one takes tens of milliseconds).
    pub(super) fn bpe(encoding: Encoding) -> Result<&'static CoreBPE, TokenError> {
        static O200K: OnceLock<Result<CoreBPE, String>> = OnceLock::new();
        static CL100K: OnceLock<Result<CoreBPE, String>> = OnceLock::new();
        let loaded = match encoding {
            Encoding::O200kBase => O200K.get_or_init(|| tiktoken_rs::o200k_base().map_err(|e| e.to_string())),
            Encoding::Cl100kBase => CL100K.get_or_init(|| tiktoken_rs::cl100k_base().map_err(|e| e.to_string())),
        };
        loaded.as_ref().map_err(|message| TokenError::Tokenizer { encoding, message: message.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_follow_the_model_family() {
        for name in
            ["gpt-4o", "gpt-4o-mini", "openai:gpt-4.1", "gpt-5", "o3-mini", "claude-sonnet-4-5", "gemini-2.5-pro"]
        {
            assert_eq!(Encoding::for_model(name), Encoding::O200kBase, "{name}");
        }
        for name in ["gpt-4", "gpt-4-turbo", "gpt-3.5-turbo", "ft:gpt-3.5-turbo:acme::abc", "text-embedding-3-small"] {
            assert_eq!(Encoding::for_model(name), Encoding::Cl100kBase, "{name}");
        }
        assert_eq!("cl100k_base".parse::<Encoding>(), Ok(Encoding::Cl100kBase));
        let err = "p50k_base".parse::<Encoding>().unwrap_err();
        assert_eq!(err.to_string(), "unknown encoding 'p50k_base': expected o200k_base or cl100k_base");
    }

    fn weather() -> ToolDefinition {
        ToolDefinition::new(
            "get_weather",
            json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        )
        .with_description("Get the current weather of a city.")
    }

    #[test]
    fn the_wire_text_is_the_function_schema_without_an_empty_description() {
        assert_eq!(
            tool_wire_text(&weather()),
            r#"{"type":"function","function":{"name":"get_weather","description":"Get the current weather of a city.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}"#
        );
        let bare = ToolDefinition::new("ping", json!({"type": "object"}));
        assert_eq!(
            tool_wire_text(&bare),
            r#"{"type":"function","function":{"name":"ping","parameters":{"type":"object"}}}"#
        );
    }

    /// The weather tool's wire text is 195 bytes: 49 estimated tokens; o200k_base encodes it in
    /// 43 tokens and cl100k_base in 42.
    #[test]
    fn a_known_schema_has_a_known_count() {
        let text = tool_wire_text(&weather());
        assert_eq!(text.len(), 195);
        assert_eq!(estimate_tokens(&text), 49);
        let o200k = schema_tokens([&weather()], Encoding::O200kBase);
        let cl100k = schema_tokens([&weather()], Encoding::Cl100kBase);
        if cfg!(feature = "tiktoken") {
            assert_eq!(o200k, TokenCount { tokens: 43, exact: true });
            assert_eq!(cl100k, TokenCount { tokens: 42, exact: true });
            assert_eq!(exact_tokens("hello world", Encoding::O200kBase), Ok(2));
        } else {
            assert_eq!(o200k, TokenCount { tokens: 49, exact: false });
            assert_eq!(cl100k, o200k);
            assert_eq!(exact_tokens("hello world", Encoding::O200kBase), Err(TokenError::Unavailable));
        }
    }
}
