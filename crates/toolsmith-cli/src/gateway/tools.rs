//! The gateway's two tools, `search_tools` and `call_tool`, and the toolset of
//! `--expose-all` (every upstream tool listed directly).

use std::sync::Arc;

use serde_json::{Value, json};
use toolsmith::mcp_server::{Elicitation, McpRequest};
use toolsmith::messages::UserContent;
use toolsmith::tool::ToolOutput;
use toolsmith::toolset::{CombinedToolset, FunctionToolset, McpCallResult, ToolsetExt};
use toolsmith::{ModelRetry, Tool, ToolError, ToolReturn};

use super::upstreams::{CallError, Upstreams};

/// How many tools a search returns unless asked otherwise, and at most.
const DEFAULT_RESULTS: u64 = 10;
const MAX_RESULTS: u64 = 50;

fn search_tool(upstreams: Arc<Upstreams>) -> Tool<()> {
    let schema = json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What the tool should do, in a few words."},
            "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS, "default": DEFAULT_RESULTS,
                "description": "How many tools to return."},
        },
        "required": ["query"],
    });
    let description = "Search the tools of every connected MCP server. Returns the best matches with their \
        descriptions and parameter schemas; call one with `call_tool`.";
    Tool::from_schema("search_tools", description, schema, move |_, args: Value| {
        let upstreams = upstreams.clone();
        async move {
            let query = args["query"].as_str().unwrap_or_default().trim().to_string();
            if query.is_empty() {
                return Err(ModelRetry::new("`query` is empty: describe the tool you need").into());
            }
            let k = args["max_results"].as_u64().unwrap_or(DEFAULT_RESULTS).clamp(1, MAX_RESULTS) as usize;
            let found = upstreams.search(&query, k).await.map_err(ModelRetry::new)?;
            Ok(ToolOutput::Value(found))
        }
    })
    .validate_args(true)
}

fn call_tool(upstreams: Arc<Upstreams>) -> Tool<()> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The tool's name, as `search_tools` returned it."},
            "arguments": {"type": "object", "description": "The tool's arguments, matching its parameters."},
        },
        "required": ["name"],
    });
    let description = "Call a tool found with `search_tools`, by its name, with its arguments.";
    Tool::from_schema("call_tool", description, schema, move |_, args: Value| {
        let upstreams = upstreams.clone();
        async move {
            let name = args["name"].as_str().unwrap_or_default().to_string();
            let arguments = args.get("arguments").cloned().unwrap_or_else(|| json!({}));
            if upstreams.needs_approval(&name) {
                approve(&name, &arguments).await?;
            }
            match upstreams.call(&name, arguments).await {
                Ok(result) => answer(result),
                Err(CallError::Unknown) => Err(ModelRetry::new(format!(
                    "Unknown tool `{name}`: find tools with `search_tools` and use the names it returns."
                ))
                .into()),
                Err(CallError::Upstream(server, e)) => {
                    Err(ToolError::failed(format!("The MCP server `{server}` failed: {e}")))
                }
            }
        }
    })
    .validate_args(true)
}

/// Asks the user, through the client's elicitation, whether the call may run (as `McpServer`
/// does for its approval-required tools, naming the upstream tool rather than `call_tool`).
async fn approve(name: &str, arguments: &Value) -> Result<(), ToolError> {
    let request = McpRequest::current().filter(McpRequest::can_elicit).ok_or_else(|| {
        ToolError::failed(format!(
            "`{name}` needs approval, and this MCP client cannot ask for it (it did not declare the elicitation capability)."
        ))
    })?;
    let message = format!("Allow the call to `{name}` with arguments {arguments}?");
    match request.elicit(message, json!({"type": "object", "properties": {}})).await {
        Ok(Elicitation::Accept(_)) => Ok(()),
        Ok(_) => Err(ToolError::failed(format!("The user denied the call to `{name}`."))),
        Err(e) => Err(ToolError::failed(format!("`{name}` needs approval, which could not be asked: {e}"))),
    }
}

/// An upstream result as the gateway's: its content blocks passed on as they are; an upstream
/// `isError` stays one.
fn answer(result: McpCallResult) -> Result<ToolOutput, ToolError> {
    if result.is_error {
        let text: Vec<&str> = result.content.iter().filter_map(|c| c["text"].as_str()).collect();
        return Err(ToolError::failed(text.join("\n")));
    }
    if result.content.is_empty() {
        return Ok(ToolOutput::Value(result.structured_content.unwrap_or_else(|| json!(""))));
    }
    let content = result.content.into_iter().map(UserContent::Other).collect();
    let mut ret = ToolReturn::new(()).with_content(content);
    if let Some(meta) = result.meta {
        ret = ret.with_metadata(meta);
    }
    Ok(ToolOutput::Return(ret))
}

/// The gateway's toolset: `search_tools` and `call_tool`.
pub fn search_toolset(upstreams: Arc<Upstreams>) -> FunctionToolset<()> {
    FunctionToolset::new().with_tool(search_tool(upstreams.clone())).with_tool(call_tool(upstreams))
}

/// `--expose-all`: every allowed upstream tool as `NAME_tool` (those of `approve` needing the
/// user's approval, which `McpServer` asks through elicitation); a server that is down is left
/// out until it answers again.
pub fn expose_all_toolset(upstreams: &Upstreams) -> CombinedToolset<()> {
    let mut combined = CombinedToolset::new();
    for server in upstreams.servers() {
        let config_allows = {
            let allow = server.config.allow.clone();
            let deny = server.config.deny.clone();
            move |name: &str| {
                allow.as_ref().is_none_or(|a| a.iter().any(|x| x == name)) && !deny.iter().any(|d| d == name)
            }
        };
        let toolset = server
            .mcp
            .clone()
            .filtered(move |_, def| config_allows(&def.name))
            .approval_required_for(server.config.approve.clone())
            .prefixed(server.name.clone())
            .optional();
        combined.add(toolset);
    }
    combined
}
