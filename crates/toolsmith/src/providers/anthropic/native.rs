//! Anthropic's server tools: the request's tools, MCP servers and beta headers for the agent's
//! native tools, and the server blocks of an answer read as native tool parts and written back.

use serde_json::{Map, Value, json};

use crate::messages::{ModelResponsePart, NativeToolReturnPart, ToolCallPart};
use crate::model::ModelError;
use crate::native::NativeTool;
use crate::providers::wire::put;

const SYSTEM: &str = "anthropic";
const WEB_FETCH_BETA: &str = "web-fetch-2025-09-10";
const CODE_EXECUTION_BETA: &str = "code-execution-2025-08-25";
const MCP_CLIENT_BETA: &str = "mcp-client-2025-04-04";
const MEMORY_BETA: &str = "context-management-2025-06-27";
/// The key of `provider_details` naming which code execution tool ran (`bash_code_execution`...).
const TOOL_NAME_DETAIL: &str = "anthropic_tool_name";
/// The key of `provider_details` holding a non-direct caller (a server tool called from code).
const CALLER_DETAIL: &str = "anthropic_caller";

/// What the agent's native tools add to a request.
#[derive(Default)]
pub(super) struct NativeRequest {
    /// Server tools for `tools`.
    pub(super) tools: Vec<Value>,
    /// MCP servers for `mcp_servers`.
    pub(super) mcp_servers: Vec<Value>,
    /// Whether the application's `memory` tool is sent as Anthropic's memory tool.
    pub(super) memory: bool,
}

/// The beta headers `tools` need, each once.
pub(super) fn betas(tools: &[NativeTool]) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for tool in tools {
        let beta = match tool {
            NativeTool::WebFetch(_) => WEB_FETCH_BETA,
            NativeTool::CodeExecution(_) => CODE_EXECUTION_BETA,
            NativeTool::McpServer(_) => MCP_CLIENT_BETA,
            NativeTool::Memory(_) => MEMORY_BETA,
            _ => continue,
        };
        if !out.contains(&beta) {
            out.push(beta);
        }
    }
    out
}

/// The request additions for `tools` (kinds Anthropic does not run were refused when the agent
/// was built, and are skipped).
pub(super) fn request(tools: &[NativeTool]) -> NativeRequest {
    let mut out = NativeRequest::default();
    for tool in tools {
        match tool {
            NativeTool::WebSearch(w) => {
                let mut t = Map::new();
                t.insert("type".into(), "web_search_20250305".into());
                t.insert("name".into(), "web_search".into());
                put(&mut t, "max_uses", w.max_uses);
                put(&mut t, "allowed_domains", w.allowed_domains.clone());
                put(&mut t, "blocked_domains", w.blocked_domains.clone());
                if let Some(l) = &w.user_location {
                    let mut loc = serde_json::to_value(l).unwrap_or_else(|_| json!({}));
                    loc["type"] = "approximate".into();
                    t.insert("user_location".into(), loc);
                }
                out.tools.push(Value::Object(t));
            }
            NativeTool::WebFetch(f) => {
                let mut t = Map::new();
                t.insert("type".into(), "web_fetch_20250910".into());
                t.insert("name".into(), "web_fetch".into());
                put(&mut t, "max_uses", f.max_uses);
                put(&mut t, "allowed_domains", f.allowed_domains.clone());
                put(&mut t, "blocked_domains", f.blocked_domains.clone());
                if f.enable_citations {
                    t.insert("citations".into(), json!({"enabled": true}));
                }
                put(&mut t, "max_content_tokens", f.max_content_tokens);
                out.tools.push(Value::Object(t));
            }
            NativeTool::CodeExecution(_) => {
                out.tools.push(json!({"type": "code_execution_20250825", "name": "code_execution"}));
            }
            NativeTool::McpServer(m) => {
                let mut s = Map::new();
                s.insert("type".into(), "url".into());
                s.insert("name".into(), m.id.clone().into());
                s.insert("url".into(), m.url.clone().into());
                if let Some(allowed) = &m.allowed_tools {
                    s.insert(
                        "tool_configuration".into(),
                        json!({"enabled": !allowed.is_empty(), "allowed_tools": allowed}),
                    );
                }
                put(&mut s, "authorization_token", m.authorization_token.clone());
                out.mcp_servers.push(Value::Object(s));
            }
            NativeTool::Memory(_) => {
                out.memory = true;
            }
            _ => {}
        }
    }
    out
}

/// Puts Anthropic's memory tool in place of the application's `memory` function tool.
pub(super) fn use_memory_tool(tools: &mut [Value]) -> Result<(), ModelError> {
    let Some(at) = tools.iter().position(|t| t.get("name").and_then(Value::as_str) == Some("memory")) else {
        return Err(ModelError::new(
            crate::model::ModelErrorKind::User,
            "the native memory tool (NativeTool::Memory) needs a function tool named `memory` that keeps the memories: \
             add one to the agent",
        ));
    };
    tools[at] = json!({"type": "memory_20250818", "name": "memory"});
    Ok(())
}

/// The native tool kind of a `server_tool_use` block's name, and the name to keep when it is
/// not the kind's own.
fn kind_of_server_tool(name: &str) -> Option<(&'static str, Option<&str>)> {
    Some(match name {
        "web_search" => ("web_search", None),
        "web_fetch" => ("web_fetch", None),
        "code_execution" => ("code_execution", None),
        "bash_code_execution" | "text_editor_code_execution" => ("code_execution", Some(name)),
        _ => return None,
    })
}

fn details(block: &Value, tool_name: Option<&str>) -> Option<Value> {
    let mut d = Map::new();
    if let Some(name) = tool_name {
        d.insert(TOOL_NAME_DETAIL.into(), name.into());
    }
    if let Some(caller) = block.get("caller").filter(|c| c.get("type").and_then(Value::as_str) != Some("direct")) {
        d.insert(CALLER_DETAIL.into(), caller.clone());
    }
    (!d.is_empty()).then_some(Value::Object(d))
}

/// A server block of an answer as a native tool part (`None` for a block kept as it came:
/// tool search's own blocks, or a kind this version does not know). `mcp_calls` maps the ids
/// of the answer's earlier `mcp_tool_use` blocks to their tool names.
pub(super) fn part_of(block: &Value, mcp_calls: &[(String, String)]) -> Option<ModelResponsePart> {
    let kind = block.get("type")?.as_str()?;
    let str_of = |k: &str| block.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    match kind {
        "server_tool_use" => {
            let name = block.get("name")?.as_str()?;
            let (tool, keep) = kind_of_server_tool(name)?;
            let args = block.get("input").cloned().filter(|i| i.as_object().is_some_and(|o| !o.is_empty()));
            let mut call = ToolCallPart::native(tool, args.unwrap_or(Value::Null), str_of("id"), SYSTEM);
            call.provider_details = details(block, keep).map(Box::new);
            Some(ModelResponsePart::NativeToolCall(call))
        }
        "mcp_tool_use" => {
            let tool = format!("mcp_server:{}", str_of("server_name"));
            let args = json!({
                "action": "call_tool",
                "tool_name": str_of("name"),
                "tool_args": block.get("input").cloned().unwrap_or_else(|| json!({})),
            });
            Some(ModelResponsePart::NativeToolCall(ToolCallPart::native(tool, args, str_of("id"), SYSTEM)))
        }
        "mcp_tool_result" => {
            let id = str_of("tool_use_id");
            let tool = mcp_calls.iter().find(|(c, _)| *c == id).map_or("mcp_server".to_string(), |(_, t)| t.clone());
            let content = json!({
                "content": block.get("content").cloned().unwrap_or(Value::Null),
                "is_error": block.get("is_error").cloned().unwrap_or(Value::Bool(false)),
            });
            Some(ModelResponsePart::NativeToolReturn(NativeToolReturnPart::new(tool, content, id, SYSTEM)))
        }
        _ => {
            let (tool, keep) = match kind {
                "web_search_tool_result" => ("web_search", None),
                "web_fetch_tool_result" => ("web_fetch", None),
                "code_execution_tool_result" => ("code_execution", None),
                "bash_code_execution_tool_result" => ("code_execution", Some("bash_code_execution")),
                "text_editor_code_execution_tool_result" => ("code_execution", Some("text_editor_code_execution")),
                _ => return None,
            };
            let content = block.get("content").cloned().unwrap_or(Value::Null);
            let mut part = NativeToolReturnPart::new(tool, content, str_of("tool_use_id"), SYSTEM);
            part.provider_details = details(block, keep).map(Box::new);
            Some(ModelResponsePart::NativeToolReturn(part))
        }
    }
}

fn detail<'a>(details: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    details?.get(key)
}

fn with_caller(mut block: Value, details: Option<&Value>) -> Value {
    if let Some(caller) = detail(details, CALLER_DETAIL) {
        block["caller"] = caller.clone();
    }
    block
}

/// A native tool part of an Anthropic answer as the block it came as (`None` for a part of
/// another provider, or one with nothing Anthropic can take back).
pub(super) fn replay(part: &ModelResponsePart) -> Option<Value> {
    match part {
        ModelResponsePart::NativeToolCall(c) if c.provider_name.as_deref() == Some(SYSTEM) => {
            let input = match &c.args {
                Value::Null => json!({}),
                Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| json!({})),
                other => other.clone(),
            };
            if let Some(server) = c.tool_name.strip_prefix("mcp_server:") {
                return Some(json!({
                    "type": "mcp_tool_use",
                    "id": c.tool_call_id,
                    "server_name": server,
                    "name": input.get("tool_name")?.as_str()?,
                    "input": input.get("tool_args").cloned().unwrap_or_else(|| json!({})),
                }));
            }
            let name = match c.tool_name.as_str() {
                "web_search" | "web_fetch" => c.tool_name.as_str(),
                "code_execution" => detail(c.provider_details.as_deref(), TOOL_NAME_DETAIL)
                    .and_then(Value::as_str)
                    .unwrap_or("code_execution"),
                _ => return None,
            };
            let block = json!({"type": "server_tool_use", "id": c.tool_call_id, "name": name, "input": input});
            Some(with_caller(block, c.provider_details.as_deref()))
        }
        ModelResponsePart::NativeToolReturn(r) if r.provider_name.as_deref() == Some(SYSTEM) => {
            if r.tool_name.starts_with("mcp_server") {
                return Some(json!({
                    "type": "mcp_tool_result",
                    "tool_use_id": r.tool_call_id,
                    "content": r.content.get("content").cloned().unwrap_or_else(|| json!([])),
                    "is_error": r.content.get("is_error").cloned().unwrap_or(Value::Bool(false)),
                }));
            }
            let kind = match r.tool_name.as_str() {
                "web_search" => "web_search_tool_result".to_string(),
                "web_fetch" => "web_fetch_tool_result".to_string(),
                "code_execution" => {
                    let name = detail(r.provider_details.as_deref(), TOOL_NAME_DETAIL)
                        .and_then(Value::as_str)
                        .unwrap_or("code_execution");
                    format!("{name}_tool_result")
                }
                _ => return None,
            };
            let block = json!({"type": kind, "tool_use_id": r.tool_call_id, "content": r.content});
            Some(with_caller(block, r.provider_details.as_deref()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_server_block_reads_as_a_part_and_writes_back_as_it_came() {
        let blocks = [
            json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "rust"}}),
            json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
                {"type": "web_search_result", "url": "https://www.rust-lang.org", "title": "Rust", "encrypted_content": "e1"}
            ]}),
            json!({"type": "server_tool_use", "id": "srvtoolu_2", "name": "bash_code_execution", "input": {"command": "ls"},
                   "caller": {"type": "code_execution_20250825", "tool_id": "x"}}),
            json!({"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_2",
                   "content": {"type": "bash_code_execution_result", "stdout": "a\n", "stderr": "", "return_code": 0}}),
            json!({"type": "mcp_tool_use", "id": "mcptoolu_1", "server_name": "wiki", "name": "ask", "input": {"q": 1}}),
            json!({"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1", "content": [{"type": "text", "text": "ok"}], "is_error": false}),
        ];
        let mcp = vec![("mcptoolu_1".to_string(), "mcp_server:wiki".to_string())];
        for block in blocks {
            let part = part_of(&block, &mcp).unwrap_or_else(|| panic!("{block}"));
            assert_eq!(replay(&part).as_ref(), Some(&block), "{part:?}");
        }
        let search = part_of(
            &json!({"type": "server_tool_use", "id": "s", "name": "tool_search_tool_bm25", "input": {"query": "x"}}),
            &[],
        );
        assert!(search.is_none(), "tool search blocks stay as they came");
    }

    proptest::proptest! {
        /// Whatever a server block carries (inputs, results, a caller), it goes back as it came,
        /// through Pydantic AI's history JSON too.
        #[test]
        fn any_server_block_round_trips(
            input in crate::test_support::arb_json(),
            content in crate::test_support::arb_json(),
            id in "[a-zA-Z0-9_]{1,12}",
            which in 0usize..6,
            caller in proptest::option::of("[a-z_]{1,10}"),
        ) {
            let input = match input { Value::Object(m) if !m.is_empty() => Value::Object(m), _ => json!({"q": input}) };
            let (call, result) = [
                ("web_search", "web_search_tool_result"),
                ("web_fetch", "web_fetch_tool_result"),
                ("code_execution", "code_execution_tool_result"),
                ("bash_code_execution", "bash_code_execution_tool_result"),
                ("text_editor_code_execution", "text_editor_code_execution_tool_result"),
                ("web_search", "web_search_tool_result"),
            ][which];
            let mut use_block = json!({"type": "server_tool_use", "id": id, "name": call, "input": input});
            let mut result_block = json!({"type": result, "tool_use_id": id, "content": content});
            if let Some(c) = caller {
                use_block["caller"] = json!({"type": c, "tool_id": "t"});
                result_block["caller"] = json!({"type": c, "tool_id": "t"});
            }
            for block in [use_block, result_block] {
                let part = part_of(&block, &[]).expect("a server block");
                let written = serde_json::to_string(&part).unwrap();
                let read: ModelResponsePart = serde_json::from_str(&written).unwrap();
                let back = replay(&read).expect("replayed");
                // A `direct` caller is the default and is not kept.
                let mut expected = block.clone();
                if expected.get("caller").and_then(|c| c.get("type")) == Some(&json!("direct")) {
                    expected.as_object_mut().unwrap().remove("caller");
                }
                proptest::prop_assert_eq!(back, expected);
            }
        }

        /// Any JSON at all as a block: read or left alone, never a panic.
        #[test]
        fn any_block_is_read_without_panicking(block in crate::test_support::arb_json()) {
            if let Some(part) = part_of(&block, &[]) {
                let _ = replay(&part);
            }
        }
    }

    #[test]
    fn another_providers_parts_are_not_replayed() {
        let call = ModelResponsePart::NativeToolCall(ToolCallPart::native("web_search", json!({}), "ws_1", "openai"));
        assert_eq!(replay(&call), None);
    }
}
