//! Native tools: tools the model's provider runs on its side (web search, web fetch, code
//! execution, image generation, an MCP server, file search, memory), asked for in the request
//! and never executed by the agent.
//!
//! A [`NativeTool`] is data, in Pydantic AI's JSON shape (tagged by `kind`), and a capability:
//! add it to an agent and every request carries it, mapped to the provider's own tool. A model
//! whose provider does not run that kind ([`Model::native_tool_support`](crate::model::Model::native_tool_support))
//! is refused when the agent is built, with a [`UserError`](crate::UserError) naming the model
//! and the tool.
//!
//! | kind | Anthropic | OpenAI Responses | Gemini |
//! |---|---|---|---|
//! | `web_search` | `web_search_20250305` | `web_search` | `google_search` |
//! | `web_fetch` | `web_fetch_20250910` | — | `url_context` |
//! | `code_execution` | `code_execution_20250825` | `code_interpreter` | `code_execution` |
//! | `image_generation` | — | `image_generation` | image output (`responseModalities`) on image models |
//! | `mcp_server` | `mcp_servers` (MCP connector) | `mcp` | — |
//! | `file_search` | — | `file_search` | — |
//! | `memory` | `memory_20250818` (replaces the application's `memory` tool) | — | — |
//!
//! ```
//! use toolsmith::native::{NativeTool, WebSearch};
//! use toolsmith::prelude::*;
//!
//! let search = NativeTool::WebSearch(WebSearch::new().max_uses(3).allowed_domains(["docs.rs"]));
//! assert_eq!(serde_json::to_value(&search).unwrap()["kind"], "web_search");
//!
//! // A model that runs no native tool is refused when the agent is built.
//! let err = Agent::builder(TestModel::default()).capability(search).build().unwrap_err();
//! assert!(err.to_string().contains("model 'test' cannot run the native tool `web_search`"));
//! ```

use serde::{Deserialize, Serialize};

pub use crate::model_info::{NativeToolKind, NativeToolKinds};

/// How much context a web search gathers (OpenAI's `search_context_size`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum SearchContextSize {
    /// Less context, faster and cheaper.
    Low,
    /// The default.
    #[default]
    Medium,
    /// More context.
    High,
}

/// Where the user is, to localise web search results.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct UserLocation {
    /// The city.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub city: Option<String>,
    /// The country (ISO 3166-1 alpha-2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    /// The region or state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// The IANA time zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
}

/// Search the web (Pydantic AI's `WebSearchTool`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct WebSearch {
    /// How much context to gather (OpenAI).
    #[serde(default)]
    pub search_context_size: SearchContextSize,
    /// Where the user is (Anthropic, OpenAI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_location: Option<UserLocation>,
    /// Domains never searched (Anthropic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_domains: Option<Vec<String>>,
    /// The only domains searched (Anthropic, OpenAI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_domains: Option<Vec<String>>,
    /// The most searches in one request (Anthropic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_uses: Option<u32>,
}

impl WebSearch {
    /// The provider's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// The most searches in one request.
    pub fn max_uses(mut self, n: u32) -> Self {
        self.max_uses = Some(n);
        self
    }

    /// The only domains searched.
    pub fn allowed_domains<S: Into<String>>(mut self, domains: impl IntoIterator<Item = S>) -> Self {
        self.allowed_domains = Some(domains.into_iter().map(Into::into).collect());
        self
    }

    /// Domains never searched.
    pub fn blocked_domains<S: Into<String>>(mut self, domains: impl IntoIterator<Item = S>) -> Self {
        self.blocked_domains = Some(domains.into_iter().map(Into::into).collect());
        self
    }

    /// Where the user is.
    pub fn user_location(mut self, location: UserLocation) -> Self {
        self.user_location = Some(location);
        self
    }

    /// How much context to gather.
    pub fn search_context_size(mut self, size: SearchContextSize) -> Self {
        self.search_context_size = size;
        self
    }
}

/// Fetch web pages the conversation names (Pydantic AI's `WebFetchTool`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct WebFetch {
    /// The most fetches in one request (Anthropic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_uses: Option<u32>,
    /// The only domains fetched (Anthropic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_domains: Option<Vec<String>>,
    /// Domains never fetched (Anthropic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_domains: Option<Vec<String>>,
    /// Cite the fetched pages (Anthropic).
    #[serde(default)]
    pub enable_citations: bool,
    /// The most tokens of a page kept (Anthropic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_content_tokens: Option<u32>,
}

impl WebFetch {
    /// The provider's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// The only domains fetched.
    pub fn allowed_domains<S: Into<String>>(mut self, domains: impl IntoIterator<Item = S>) -> Self {
        self.allowed_domains = Some(domains.into_iter().map(Into::into).collect());
        self
    }

    /// The most fetches in one request.
    pub fn max_uses(mut self, n: u32) -> Self {
        self.max_uses = Some(n);
        self
    }
}

/// Run code in the provider's sandbox (Pydantic AI's `CodeExecutionTool`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct CodeExecution {}

/// Generate images (Pydantic AI's `ImageGenerationTool`; OpenAI Responses).
///
/// Every option is the provider's default when unset.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ImageGeneration {
    /// `generate`, `edit` or `auto` (OpenAI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// `transparent`, `opaque` or `auto` (OpenAI; transparent needs `png` or `webp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<String>,
    /// How closely to match input images, `high` or `low` (OpenAI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_fidelity: Option<String>,
    /// `auto` or `low` (OpenAI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moderation: Option<String>,
    /// The image model, e.g. `gpt-image-1` (OpenAI); not the agent's model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Compression, 0 to 100, for `jpeg` and `webp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_compression: Option<u8>,
    /// `png`, `webp` or `jpeg`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_format: Option<String>,
    /// Partial images streamed while generating, 0 to 3 (OpenAI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial_images: Option<u8>,
    /// `low`, `medium`, `high` or `auto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<String>,
    /// OpenAI: `1024x1024`, `1024x1536`, `1536x1024` or `auto`; Gemini: `1K`, `2K` or `4K`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
    /// The aspect ratio, e.g. `16:9` (Gemini; OpenAI maps `1:1`, `2:3` and `3:2` to sizes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aspect_ratio: Option<String>,
}

impl ImageGeneration {
    /// The provider's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// The output format (`png`, `webp` or `jpeg`).
    pub fn output_format(mut self, format: impl Into<String>) -> Self {
        self.output_format = Some(format.into());
        self
    }

    /// The size.
    pub fn size(mut self, size: impl Into<String>) -> Self {
        self.size = Some(size.into());
        self
    }

    /// The quality.
    pub fn quality(mut self, quality: impl Into<String>) -> Self {
        self.quality = Some(quality.into());
        self
    }

    /// The aspect ratio.
    pub fn aspect_ratio(mut self, ratio: impl Into<String>) -> Self {
        self.aspect_ratio = Some(ratio.into());
        self
    }
}

/// Keep memories across conversations in a `memory` function tool the application defines,
/// with the provider's own memory tool definition (Pydantic AI's `MemoryTool`; Anthropic).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Memory {}

/// An MCP server the provider calls itself (Pydantic AI's `MCPServerTool`; OpenAI Responses).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct McpServer {
    /// A name for the server (its label in the request).
    pub id: String,
    /// The server's URL.
    pub url: String,
    /// A bearer token for the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_token: Option<String>,
    /// What the server is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The only tools of the server the model may call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<Vec<String>>,
    /// Headers sent to the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<std::collections::BTreeMap<String, String>>,
}

impl McpServer {
    /// The server `id` at `url`.
    pub fn new(id: impl Into<String>, url: impl Into<String>) -> Self {
        McpServer {
            id: id.into(),
            url: url.into(),
            authorization_token: None,
            description: None,
            allowed_tools: None,
            headers: None,
        }
    }
}

/// Search files stored with the provider (Pydantic AI's `FileSearchTool`; OpenAI Responses).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct FileSearch {
    /// The stores to search (OpenAI vector store ids).
    pub file_store_ids: Vec<String>,
    /// The most results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_num_results: Option<u32>,
}

impl FileSearch {
    /// Search these stores.
    pub fn new<S: Into<String>>(file_store_ids: impl IntoIterator<Item = S>) -> Self {
        FileSearch { file_store_ids: file_store_ids.into_iter().map(Into::into).collect(), max_num_results: None }
    }
}

/// A tool the model's provider runs, in Pydantic AI's JSON shape (tagged by `kind`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum NativeTool {
    /// Search the web.
    WebSearch(WebSearch),
    /// Fetch web pages.
    WebFetch(WebFetch),
    /// Run code.
    CodeExecution(CodeExecution),
    /// Generate images.
    ImageGeneration(ImageGeneration),
    /// Call an MCP server.
    McpServer(McpServer),
    /// Search stored files.
    FileSearch(FileSearch),
    /// Keep memories in the application's `memory` tool.
    Memory(Memory),
}

impl NativeTool {
    /// The tool's kind.
    pub fn kind(&self) -> NativeToolKind {
        match self {
            NativeTool::WebSearch(_) => NativeToolKind::WebSearch,
            NativeTool::WebFetch(_) => NativeToolKind::WebFetch,
            NativeTool::CodeExecution(_) => NativeToolKind::CodeExecution,
            NativeTool::ImageGeneration(_) => NativeToolKind::ImageGeneration,
            NativeTool::McpServer(_) => NativeToolKind::McpServer,
            NativeTool::FileSearch(_) => NativeToolKind::FileSearch,
            NativeTool::Memory(_) => NativeToolKind::Memory,
        }
    }
}

impl NativeTool {
    /// The settings set on the tool that narrow what it may do (domain filters, use limits), which
    /// a model must apply to run it; settings that only tune results are not among them.
    pub fn restricting_settings(&self) -> Vec<&'static str> {
        let (allowed, blocked, max_uses) = match self {
            NativeTool::WebSearch(w) => (&w.allowed_domains, &w.blocked_domains, w.max_uses),
            NativeTool::WebFetch(f) => (&f.allowed_domains, &f.blocked_domains, f.max_uses),
            _ => return Vec::new(),
        };
        let mut out = Vec::new();
        if allowed.is_some() {
            out.push("allowed_domains");
        }
        if blocked.is_some() {
            out.push("blocked_domains");
        }
        if max_uses.is_some() {
            out.push("max_uses");
        }
        out
    }

    /// Whether `model` runs this tool with every narrowing setting it has.
    pub fn runs_on(&self, model: &crate::model_info::ModelInfo) -> bool {
        unapplied(self, model).is_none() && model.native_tools.contains(self.kind())
    }
}

/// The first narrowing setting of `tool` that `model` cannot apply.
fn unapplied(tool: &NativeTool, model: &crate::model_info::ModelInfo) -> Option<&'static str> {
    let kind = tool.kind();
    tool.restricting_settings().into_iter().find(|s| model.native_unapplied.contains(&(kind, *s)))
}

/// Every tool of `tools` is one the model runs, or the error naming the first it does not.
pub(crate) fn check_support(
    tools: &[NativeTool],
    model: &crate::model_info::ModelInfo,
) -> Result<(), crate::UserError> {
    if let Some(t) = tools.iter().find(|t| !model.native_tools.contains(t.kind())) {
        return Err(crate::UserError::new(format!(
            "model '{}' cannot run the native tool `{}`: its provider does not run it (Model::native_tool_support); use a model that does, or a function tool",
            model.name,
            t.kind()
        )));
    }
    for t in tools {
        if let Some(setting) = unapplied(t, model) {
            return Err(crate::UserError::new(format!(
                "model '{}' cannot apply `{setting}` of the native tool `{}` (Model::native_tool_unapplied_settings): unset it, use a model that applies it, or give the tool a local fallback with NativeOrLocalTool",
                model.name,
                t.kind()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn native_tools_read_and_write_pydantic_ais_json() {
        let search = NativeTool::WebSearch(WebSearch::new().max_uses(2).blocked_domains(["example.com"]));
        let v = serde_json::to_value(&search).unwrap();
        assert_eq!(
            v,
            json!({"kind": "web_search", "search_context_size": "medium", "blocked_domains": ["example.com"], "max_uses": 2})
        );
        assert_eq!(serde_json::from_value::<NativeTool>(v).unwrap(), search);
        let mcp: NativeTool = serde_json::from_value(
            json!({"kind": "mcp_server", "id": "deepwiki", "url": "https://mcp.deepwiki.com/mcp"}),
        )
        .unwrap();
        assert_eq!(mcp.kind(), NativeToolKind::McpServer);
        let err = serde_json::from_value::<NativeTool>(json!({"kind": "web_search", "max_use": 2})).unwrap_err();
        assert!(err.to_string().contains("unknown field `max_use`"), "{err}");
        let kinds = NativeToolKinds::of([NativeToolKind::WebSearch, NativeToolKind::CodeExecution]);
        assert!(kinds.contains(NativeToolKind::CodeExecution) && !kinds.contains(NativeToolKind::WebFetch));
    }
}
