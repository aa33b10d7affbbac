//! The native tools with local fallbacks: [`WebSearch`], [`WebFetch`], [`ImageGeneration`],
//! [`Mcp`] and [`CodeExecution`], each a builder of a [`NativeOrLocalTool`].

use std::sync::Arc;

use serde_json::{Value, json};

use super::native_or_local::{LocalTool, NativeOrLocalTool};
use crate::error::UserError;
use crate::messages::{ModelMessage, ModelRequest, ModelResponsePart};
use crate::model::{AnyModel, Model, ModelRequestParameters};
use crate::native::{self, NativeTool};
use crate::tool::{Tool, ToolError};

/// What a builder's `local` side is.
enum Local<D> {
    /// The capability's own default (see each builder).
    Default,
    /// No local tool: the native tool only.
    Off,
    /// The user's tool or toolset.
    Given(LocalTool<D>),
}

impl<D> Clone for Local<D> {
    fn clone(&self) -> Self {
        match self {
            Local::Default => Local::Default,
            Local::Off => Local::Off,
            Local::Given(t) => Local::Given(t.clone()),
        }
    }
}

macro_rules! sides {
    () => {
        /// Never uses the provider's native tool: always the local tool.
        pub fn native(mut self, enabled: bool) -> Self {
            self.native_enabled = enabled;
            self
        }

        /// The local tool used when the model's provider cannot run the native tool (a
        /// [`Tool`], a [`FunctionToolset`](crate::toolset::FunctionToolset), or a [`LocalTool`]).
        pub fn local(mut self, local: impl Into<LocalTool<D>>) -> Self {
            self.local = Local::Given(local.into());
            self
        }

        /// No local tool: a model that cannot run the native tool is refused when the agent is
        /// built.
        pub fn no_local(mut self) -> Self {
            self.local = Local::Off;
            self
        }
    };
}

/// Web search (Pydantic AI's `WebSearch` capability): the provider's own search where the
/// model runs it with every setting given, else a local `web_search` tool.
///
/// The local tool is, by default, [`DuckDuckGo`](crate::web::DuckDuckGo) through the
/// `web` feature (without it there is no default local tool); [`WebSearch::backend`] plugs in
/// another [`SearchBackend`](crate::web::SearchBackend), [`WebSearch::local`] any tool. The
/// local search applies the settings that narrow it: results outside `allowed_domains` or in
/// `blocked_domains` are dropped, and after `max_uses` searches in a run the tool answers
/// that the limit is reached.
///
/// ```
/// use toolsmith::capability::WebSearch;
/// use toolsmith::prelude::*;
///
/// // A model without native search, and no local tool: refused when the agent is built.
/// let search = WebSearch::<()>::new().max_uses(3).no_local().build()?;
/// let err = Agent::builder(TestModel::default()).capability(search).build().unwrap_err();
/// assert!(err.to_string().contains("cannot run the native tool `web_search`"));
/// # Ok::<(), toolsmith::UserError>(())
/// ```
pub struct WebSearch<D> {
    tool: native::WebSearch,
    native_enabled: bool,
    local: Local<D>,
    #[cfg(feature = "web")]
    backend: Option<Arc<dyn crate::web::SearchBackend>>,
    max_results: usize,
}

impl<D: Clone + Send + Sync + 'static> Default for WebSearch<D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D: Clone + Send + Sync + 'static> WebSearch<D> {
    /// The provider's defaults, DuckDuckGo as the local search (feature `web`).
    pub fn new() -> Self {
        WebSearch {
            tool: native::WebSearch::new(),
            native_enabled: true,
            local: Local::Default,
            #[cfg(feature = "web")]
            backend: None,
            max_results: 8,
        }
    }

    /// The settings of the native tool at once.
    pub fn native_tool(mut self, tool: native::WebSearch) -> Self {
        self.tool = tool;
        self
    }

    /// The most searches in one run.
    pub fn max_uses(mut self, n: u32) -> Self {
        self.tool.max_uses = Some(n);
        self
    }

    /// Only results from these domains (and their subdomains).
    pub fn allowed_domains<S: Into<String>>(mut self, domains: impl IntoIterator<Item = S>) -> Self {
        self.tool = self.tool.allowed_domains(domains);
        self
    }

    /// No results from these domains (or their subdomains).
    pub fn blocked_domains<S: Into<String>>(mut self, domains: impl IntoIterator<Item = S>) -> Self {
        self.tool = self.tool.blocked_domains(domains);
        self
    }

    /// Where the user is (native only).
    pub fn user_location(mut self, location: native::UserLocation) -> Self {
        self.tool = self.tool.user_location(location);
        self
    }

    /// How much context the provider gathers (native only).
    pub fn search_context_size(mut self, size: native::SearchContextSize) -> Self {
        self.tool = self.tool.search_context_size(size);
        self
    }

    /// The most results the local search returns (default 8).
    pub fn max_results(mut self, n: usize) -> Self {
        self.max_results = n;
        self
    }

    /// The local search's backend (default DuckDuckGo).
    #[cfg(feature = "web")]
    pub fn backend(mut self, backend: impl crate::web::SearchBackend + 'static) -> Self {
        self.backend = Some(Arc::new(backend));
        self
    }

    sides!();

    /// The capability; a [`UserError`] when it would do nothing (native off and no local tool).
    pub fn build(self) -> Result<NativeOrLocalTool<D>, UserError> {
        let native = self.native_enabled.then(|| NativeTool::WebSearch(self.tool.clone()));
        let by_default = matches!(self.local, Local::Default);
        let local = match self.local {
            Local::Given(t) => Some(t),
            Local::Off => None,
            Local::Default => self.default_local(),
        };
        if native.is_none() && local.is_none() && by_default {
            return Err(UserError::new(
                "WebSearch: with the native tool off there is no default local search without the `web` feature: enable it, or give a tool with local(...)",
            ));
        }
        NativeOrLocalTool::named("WebSearch", native, local)
    }

    #[cfg(feature = "web")]
    fn default_local(&self) -> Option<LocalTool<D>> {
        let backend = self.backend.clone().unwrap_or_else(|| Arc::new(crate::web::DuckDuckGo::new()));
        Some(web_local::search_tool(backend, &self.tool, self.max_results))
    }

    #[cfg(not(feature = "web"))]
    fn default_local(&self) -> Option<LocalTool<D>> {
        None
    }
}

/// Fetching web pages (Pydantic AI's `WebFetch` capability): the provider's own fetch where
/// the model runs it with every setting given, else a local `web_fetch` tool.
///
/// The local tool (feature `web`) fetches with a [`WebFetcher`](crate::web::WebFetcher): pages
/// on private, loopback, link-local or metadata addresses are refused (checked after DNS and on
/// every redirect), `allowed_domains` and `blocked_domains` are enforced on every redirect too,
/// HTML becomes Markdown, text and JSON stay text, PDFs and images go to the model as files,
/// and after `max_uses` fetches in a run the tool answers that the limit is reached.
pub struct WebFetch<D> {
    tool: native::WebFetch,
    native_enabled: bool,
    local: Local<D>,
    #[cfg(feature = "web")]
    fetcher: Option<crate::web::WebFetcherBuilder>,
}

impl<D: Clone + Send + Sync + 'static> Default for WebFetch<D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D: Clone + Send + Sync + 'static> WebFetch<D> {
    /// The provider's defaults, the library's fetcher as the local tool (feature `web`).
    pub fn new() -> Self {
        WebFetch {
            tool: native::WebFetch::new(),
            native_enabled: true,
            local: Local::Default,
            #[cfg(feature = "web")]
            fetcher: None,
        }
    }

    /// The settings of the native tool at once.
    pub fn native_tool(mut self, tool: native::WebFetch) -> Self {
        self.tool = tool;
        self
    }

    /// The most fetches in one run.
    pub fn max_uses(mut self, n: u32) -> Self {
        self.tool.max_uses = Some(n);
        self
    }

    /// Only pages of these domains (and their subdomains).
    pub fn allowed_domains<S: Into<String>>(mut self, domains: impl IntoIterator<Item = S>) -> Self {
        self.tool.allowed_domains = Some(domains.into_iter().map(Into::into).collect());
        self
    }

    /// No page of these domains (or their subdomains).
    pub fn blocked_domains<S: Into<String>>(mut self, domains: impl IntoIterator<Item = S>) -> Self {
        self.tool.blocked_domains = Some(domains.into_iter().map(Into::into).collect());
        self
    }

    /// Cite the fetched pages (native only).
    pub fn enable_citations(mut self, enabled: bool) -> Self {
        self.tool.enable_citations = enabled;
        self
    }

    /// The most tokens of a page kept (native only).
    pub fn max_content_tokens(mut self, n: u32) -> Self {
        self.tool.max_content_tokens = Some(n);
        self
    }

    /// The local tool's fetcher settings (its limits and its address policy); the capability's
    /// domain lists are added to them.
    #[cfg(feature = "web")]
    pub fn fetcher(mut self, fetcher: crate::web::WebFetcherBuilder) -> Self {
        self.fetcher = Some(fetcher);
        self
    }

    sides!();

    /// The capability; a [`UserError`] when it would do nothing, or when the fetcher cannot be
    /// built.
    pub fn build(self) -> Result<NativeOrLocalTool<D>, UserError> {
        let native = self.native_enabled.then(|| NativeTool::WebFetch(self.tool.clone()));
        let by_default = matches!(self.local, Local::Default);
        let local = match self.local {
            Local::Given(t) => Some(t),
            Local::Off => None,
            Local::Default => self.default_local()?,
        };
        if native.is_none() && local.is_none() && by_default {
            return Err(UserError::new(
                "WebFetch: with the native tool off there is no default local fetch without the `web` feature: enable it, or give a tool with local(...)",
            ));
        }
        NativeOrLocalTool::named("WebFetch", native, local)
    }

    #[cfg(feature = "web")]
    fn default_local(&self) -> Result<Option<LocalTool<D>>, UserError> {
        Ok(Some(web_local::fetch_tool(self.fetcher.clone(), &self.tool)?))
    }

    #[cfg(not(feature = "web"))]
    fn default_local(&self) -> Result<Option<LocalTool<D>>, UserError> {
        Ok(None)
    }
}

/// Image generation (Pydantic AI's `ImageGeneration` capability): the provider's own where the
/// model makes images, else a local `generate_image` tool: the user's
/// ([`ImageGeneration::local`]) or one that asks an image-making model
/// ([`ImageGeneration::fallback_model`]) and gives the model the image.
pub struct ImageGeneration<D> {
    tool: native::ImageGeneration,
    native_enabled: bool,
    local: Local<D>,
    fallback_model: Option<AnyModel>,
}

impl<D: Clone + Send + Sync + 'static> Default for ImageGeneration<D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D: Clone + Send + Sync + 'static> ImageGeneration<D> {
    /// The provider's defaults, no local tool.
    pub fn new() -> Self {
        ImageGeneration {
            tool: native::ImageGeneration::new(),
            native_enabled: true,
            local: Local::Default,
            fallback_model: None,
        }
    }

    /// The image settings (used natively and by the fallback model).
    pub fn native_tool(mut self, tool: native::ImageGeneration) -> Self {
        self.tool = tool;
        self
    }

    /// A model that makes images with its native tool, asked by the local `generate_image` tool
    /// when the agent's model cannot make them.
    pub fn fallback_model(mut self, model: impl Model + 'static) -> Self {
        self.fallback_model = Some(AnyModel::from_model(model));
        self
    }

    sides!();

    /// The capability; a [`UserError`] when it would do nothing, or when the fallback model
    /// cannot make images.
    pub fn build(self) -> Result<NativeOrLocalTool<D>, UserError> {
        let native = self.native_enabled.then(|| NativeTool::ImageGeneration(self.tool.clone()));
        let local = match (self.local, self.fallback_model) {
            (Local::Given(t), _) => Some(t),
            (Local::Off, _) | (Local::Default, None) => None,
            (Local::Default, Some(model)) => Some(image_tool(model, self.tool)?),
        };
        NativeOrLocalTool::named("ImageGeneration", native, local)
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ImagePrompt {
    /// What the image shows, in detail.
    prompt: String,
}

/// The local `generate_image` tool: one request to `model` with its native image tool.
fn image_tool<D: Clone + Send + Sync + 'static>(
    model: AnyModel,
    settings: native::ImageGeneration,
) -> Result<LocalTool<D>, UserError> {
    if !model.native_tool_support().contains(native::NativeToolKind::ImageGeneration) {
        return Err(UserError::new(format!(
            "ImageGeneration: the fallback model '{}' cannot make images (Model::native_tool_support); use one that runs the image generation tool",
            model.name()
        )));
    }
    let model = Arc::new(model);
    let tool = Tool::<D>::new("generate_image", move |_ctx, args: ImagePrompt| {
        let model = model.clone();
        let settings = settings.clone();
        async move {
            let params = ModelRequestParameters {
                native_tools: vec![NativeTool::ImageGeneration(settings)],
                ..Default::default()
            };
            let messages = vec![ModelMessage::Request(ModelRequest::user_prompt(args.prompt))];
            let response = model
                .request(&messages, None, &params)
                .await
                .map_err(|e| ToolError::failed(format!("the image model failed: {e}")))?;
            let image = response.parts.into_iter().find_map(|p| match p {
                ModelResponsePart::File(f) => Some(f.content),
                _ => None,
            });
            Ok::<Value, ToolError>(match image {
                Some(media) => serde_json::to_value(media).unwrap_or(Value::Null),
                None => json!("the image model made no image"),
            })
        }
    })
    .description("Generate an image from a prompt.");
    Ok(tool.into())
}

/// An MCP server (Pydantic AI's `MCP` capability): the provider calls it itself where it can
/// (OpenAI Responses, Anthropic's MCP connector), else the agent connects to it over streamable
/// HTTP as an [`McpToolset`](crate::toolset::McpToolset) (feature `mcp`), with the same headers,
/// token and allowed tools.
pub struct Mcp<D> {
    server: native::McpServer,
    native_enabled: bool,
    local: Local<D>,
}

impl<D: Clone + Send + Sync + 'static> Mcp<D> {
    /// The server at `url`; its id is a slug of the URL unless [`Mcp::id`] names it.
    pub fn new(url: impl Into<String>) -> Self {
        let url = url.into();
        Mcp { server: native::McpServer::new(slug(&url), url), native_enabled: true, local: Local::Default }
    }

    /// The server's id (its label in the provider's request, the local toolset's name).
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.server.id = id.into();
        self
    }

    /// A bearer token for the server.
    pub fn authorization_token(mut self, token: impl Into<String>) -> Self {
        self.server.authorization_token = Some(token.into());
        self
    }

    /// A header sent to the server.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.server.headers.get_or_insert_with(Default::default).insert(name.into(), value.into());
        self
    }

    /// Only these tools of the server.
    pub fn allowed_tools<S: Into<String>>(mut self, tools: impl IntoIterator<Item = S>) -> Self {
        self.server.allowed_tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// What the server is for (native only).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.server.description = Some(description.into());
        self
    }

    sides!();

    /// The capability; a [`UserError`] when it would do nothing.
    pub fn build(self) -> Result<NativeOrLocalTool<D>, UserError> {
        let native = self.native_enabled.then(|| NativeTool::McpServer(self.server.clone()));
        let local = match self.local {
            Local::Given(t) => Some(t),
            Local::Off => None,
            Local::Default => default_mcp_local(&self.server),
        };
        if native.is_none() && local.is_none() {
            return Err(UserError::new(
                "Mcp: with the native tool off the local toolset needs the `mcp` feature: enable it, or give a toolset with local(...)",
            ));
        }
        NativeOrLocalTool::named("MCP", native, local)
    }
}

#[cfg(feature = "mcp")]
fn default_mcp_local<D: Clone + Send + Sync + 'static>(server: &native::McpServer) -> Option<LocalTool<D>> {
    let mut toolset = crate::toolset::McpToolset::http(server.url.clone()).name(server.id.clone());
    for (name, value) in server.headers.iter().flatten() {
        toolset = toolset.header(name.clone(), value.clone());
    }
    if let Some(token) = &server.authorization_token {
        toolset = toolset.bearer_token(token.clone());
    }
    if let Some(allowed) = &server.allowed_tools {
        toolset = toolset.allowed_tools(allowed.clone());
    }
    Some(LocalTool::toolset(toolset))
}

#[cfg(not(feature = "mcp"))]
fn default_mcp_local<D>(_: &native::McpServer) -> Option<LocalTool<D>> {
    None
}

/// A server id from its URL: host and path, lowercased, runs of other characters as `-`.
fn slug(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let mut out = String::new();
    for c in rest.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-');
    if out.is_empty() { "mcp".to_string() } else { out.to_string() }
}

/// Code execution in the provider's sandbox: native only, so a model that cannot run it is
/// refused when the agent is built (running model-written code locally is not offered).
pub struct CodeExecution;

impl CodeExecution {
    /// The capability.
    pub fn build<D: Clone + Send + Sync + 'static>() -> NativeOrLocalTool<D> {
        NativeOrLocalTool::native_only("CodeExecution", NativeTool::CodeExecution(Default::default()))
    }
}

#[cfg(feature = "web")]
mod web_local;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_ids_are_slugs_of_their_urls() {
        assert_eq!(slug("https://mcp.deepwiki.com/mcp"), "mcp-deepwiki-com-mcp");
        assert_eq!(slug("http://127.0.0.1:8080/"), "127-0-0-1-8080");
        assert_eq!(slug("///"), "mcp");
    }
}
