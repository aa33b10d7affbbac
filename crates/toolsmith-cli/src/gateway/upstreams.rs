//! The upstream servers behind the gateway: their tools gathered under `NAME_tool` names (a
//! server that fails is reported, not fatal, and asked again next time), the search index over
//! them (rebuilt only when the gathered tools changed, as after a `listChanged`), and calls
//! routed back to the server that owns a name.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolsmith::ToolDefinition;
use toolsmith::search::SearchStrategy;
use toolsmith::search::eval::SearchIndex;
use toolsmith::toolset::{McpCallResult, McpError, McpNotification, McpToolset};

use super::config::{GatewayConfig, ServerConfig};

/// One upstream server.
pub struct Upstream {
    pub name: String,
    pub config: ServerConfig,
    pub mcp: McpToolset,
}

/// What gathering the tools found: the tools, and the servers that could not list theirs.
pub struct Gathered {
    pub tools: Vec<ToolDefinition>,
    pub unavailable: Vec<(String, String)>,
}

/// Every upstream server and the last search index.
pub struct Upstreams {
    servers: Vec<Upstream>,
    index: Mutex<Option<(Vec<ToolDefinition>, Arc<SearchIndex>)>>,
}

/// Called when an upstream server's tool list changed.
pub type OnToolsChanged = Arc<dyn Fn() + Send + Sync>;

impl Upstreams {
    pub fn new(config: GatewayConfig, on_tools_changed: Option<OnToolsChanged>) -> Self {
        let servers = config
            .servers
            .into_iter()
            .map(|(name, config)| {
                let mut mcp = config.toolset(&name);
                if let Some(changed) = on_tools_changed.clone() {
                    mcp = mcp.on_notification(move |note| {
                        if matches!(note, McpNotification::ToolsChanged { .. }) {
                            changed();
                        }
                    });
                }
                Upstream { mcp, name, config }
            })
            .collect();
        Upstreams { servers, index: Mutex::new(None) }
    }

    pub fn servers(&self) -> &[Upstream] {
        &self.servers
    }

    /// Every allowed tool of every server that answers, named `NAME_tool`.
    pub async fn gather(&self) -> Gathered {
        let lists = futures::future::join_all(self.servers.iter().map(|s| s.mcp.list_tools())).await;
        let mut gathered = Gathered { tools: Vec::new(), unavailable: Vec::new() };
        for (server, list) in self.servers.iter().zip(lists) {
            match list {
                Ok(tools) => {
                    gathered.tools.extend(tools.into_iter().filter(|t| server.config.allows(&t.name)).map(|mut t| {
                        t.name = format!("{}_{}", server.name, t.name);
                        t
                    }))
                }
                Err(e) => gathered.unavailable.push((server.name.clone(), e.to_string())),
            }
        }
        gathered
    }

    /// The search index of these tools: the last one when they did not change, else one that
    /// replaces it.
    fn index(&self, tools: &[ToolDefinition]) -> Arc<SearchIndex> {
        let mut last = self.index.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((defs, index)) = last.as_ref()
            && defs == tools
        {
            return index.clone();
        }
        let index = Arc::new(match last.as_ref() {
            Some((_, index)) => index.updated(tools),
            None => SearchIndex::new(tools),
        });
        *last = Some((tools.to_vec(), index.clone()));
        index
    }

    /// `search_tools`: the best matches for `query` (the library's default strategy, BM25),
    /// with their descriptions and parameter schemas, and the servers that are down.
    pub async fn search(&self, query: &str, max_results: usize) -> Result<Value, String> {
        let gathered = self.gather().await;
        let index = self.index(&gathered.tools);
        let names = index
            .search(&SearchStrategy::default(), &[query.to_string()], max_results)
            .map_err(|retry| retry.to_string())?;
        let tools: Vec<Value> = names
            .iter()
            .filter_map(|name| gathered.tools.iter().find(|t| &t.name == name))
            .map(|t| {
                let mut found =
                    json!({"name": t.name, "description": t.description, "parameters": t.parameters_json_schema});
                if self.needs_approval(&t.name) {
                    found["requires_approval"] = json!(true);
                }
                found
            })
            .collect();
        let mut result = json!({"tools": tools});
        if !gathered.unavailable.is_empty() {
            result["unavailable_servers"] =
                gathered.unavailable.iter().map(|(server, error)| json!({"server": server, "error": error})).collect();
        }
        Ok(result)
    }

    /// The server and tool a gateway name stands for (the longest server name that prefixes it).
    pub fn resolve<'a>(&self, name: &'a str) -> Option<(&Upstream, &'a str)> {
        self.servers
            .iter()
            .filter_map(|s| name.strip_prefix(s.name.as_str())?.strip_prefix('_').map(|tool| (s, tool)))
            .filter(|(s, tool)| !tool.is_empty() && s.config.allows(tool))
            .max_by_key(|(s, _)| s.name.len())
    }

    /// Whether a call of the tool of this gateway name needs the user's approval.
    pub fn needs_approval(&self, name: &str) -> bool {
        self.resolve(name).is_some_and(|(server, tool)| server.config.needs_approval(tool))
    }

    /// Calls an upstream tool by its gateway name.
    pub async fn call(&self, name: &str, arguments: Value) -> Result<McpCallResult, CallError> {
        let (server, tool) = self.resolve(name).ok_or(CallError::Unknown)?;
        server.mcp.call_tool(tool, arguments).await.map_err(|e| CallError::Upstream(server.name.clone(), e))
    }
}

/// Why a call through the gateway failed.
pub enum CallError {
    /// No server offers a tool of that name.
    Unknown,
    /// The server failed (not a tool error: those are results with `isError`).
    Upstream(String, McpError),
}
