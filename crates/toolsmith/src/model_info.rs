//! What the run knows of its model: its name, provider, context window, and what it runs or
//! takes natively (tool search, native tools, return schemas, a response format). Below the
//! context, the model traits and the native tools, which all speak of it.

use std::sync::Arc;

/// The model's name and provider, as seen from a [`RunContext`](crate::RunContext).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ModelInfo {
    /// The model's name.
    pub name: Arc<str>,
    /// The provider or system (`openai`, `anthropic`, `test`, `function`...).
    pub system: Arc<str>,
    /// The model's context window in tokens, when known.
    pub context_window: Option<u64>,
    /// The API the model speaks (see [`Model::api`](crate::model::Model::api)); empty when unknown.
    pub api: Arc<str>,
    /// Whether the model takes tools' return schemas in a field of their own.
    pub native_tool_return_schemas: bool,
    /// The server-side tool search the model runs (see [`Model::tool_search_support`](crate::model::Model::tool_search_support)).
    pub tool_search: ToolSearchSupport,
    /// The native tools the model's provider runs (see [`Model::native_tool_support`](crate::model::Model::native_tool_support)).
    pub native_tools: NativeToolKinds,
    /// The native tools' narrowing settings the provider cannot apply (see
    /// [`Model::native_tool_unapplied_settings`](crate::model::Model::native_tool_unapplied_settings)).
    pub native_unapplied: Arc<[(NativeToolKind, &'static str)]>,
    /// Whether the model takes a JSON-schema response format (see [`Model::native_output_support`](crate::model::Model::native_output_support)).
    pub native_output: bool,
}

/// The tool search a model's provider runs server-side (see [`Model::tool_search_support`](crate::model::Model::tool_search_support)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[non_exhaustive]
pub enum ToolSearchSupport {
    /// None: the agent's own `search_tools` searches.
    #[default]
    None,
    /// The provider searches tools sent with `defer_loading`, with its own algorithm (OpenAI
    /// Responses' tool search).
    Server,
    /// The provider searches them and takes a named strategy, BM25 or regex (Anthropic's
    /// `tool_search_tool_bm25` / `tool_search_tool_regex`).
    Named,
}

/// The kind of a [`NativeTool`](crate::native::NativeTool).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NativeToolKind {
    /// `web_search`.
    WebSearch,
    /// `web_fetch`.
    WebFetch,
    /// `code_execution`.
    CodeExecution,
    /// `image_generation`.
    ImageGeneration,
    /// `mcp_server`.
    McpServer,
    /// `file_search`.
    FileSearch,
    /// `memory`.
    Memory,
}

impl NativeToolKind {
    /// The kind's name in Pydantic AI's JSON (`web_search`, ...).
    pub fn name(self) -> &'static str {
        match self {
            NativeToolKind::WebSearch => "web_search",
            NativeToolKind::WebFetch => "web_fetch",
            NativeToolKind::CodeExecution => "code_execution",
            NativeToolKind::ImageGeneration => "image_generation",
            NativeToolKind::McpServer => "mcp_server",
            NativeToolKind::FileSearch => "file_search",
            NativeToolKind::Memory => "memory",
        }
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

impl std::fmt::Display for NativeToolKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of [`NativeToolKind`]s: what a model's provider runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct NativeToolKinds(u16);

impl NativeToolKinds {
    /// No kind.
    pub const NONE: NativeToolKinds = NativeToolKinds(0);

    /// These kinds.
    pub fn of(kinds: impl IntoIterator<Item = NativeToolKind>) -> Self {
        NativeToolKinds(kinds.into_iter().fold(0, |set, k| set | k.bit()))
    }

    /// Whether the set holds `kind`.
    pub fn contains(self, kind: NativeToolKind) -> bool {
        self.0 & kind.bit() != 0
    }

    /// The kinds both sets hold.
    pub fn intersection(self, other: NativeToolKinds) -> Self {
        NativeToolKinds(self.0 & other.0)
    }
}
