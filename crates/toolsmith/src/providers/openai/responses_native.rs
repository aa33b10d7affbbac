//! OpenAI Responses' hosted tools: the request's tools for the agent's native tools, and the
//! hosted tool items of an answer (`web_search_call`, `code_interpreter_call`,
//! `image_generation_call`, `mcp_call`, `mcp_list_tools`, `file_search_call`) read as native
//! tool parts and written back as the items the API resolves by id.

use serde_json::{Map, Value, json};

use crate::messages::{BinaryContent, FilePart, ModelResponsePart, NativeToolReturnPart, ToolCallPart};
use crate::native::NativeTool;
use crate::providers::wire::put;

/// A native tool as a Responses tool (`None` for a kind Responses does not run: the agent
/// refused it when it was built).
pub(super) fn tool(tool: &NativeTool) -> Option<Value> {
    Some(match tool {
        NativeTool::WebSearch(w) => {
            let mut t = Map::new();
            t.insert("type".into(), "web_search".into());
            t.insert("search_context_size".into(), serde_json::to_value(w.search_context_size).unwrap_or_default());
            if let Some(l) = &w.user_location {
                let mut loc = serde_json::to_value(l).unwrap_or_else(|_| json!({}));
                loc["type"] = "approximate".into();
                t.insert("user_location".into(), loc);
            }
            let mut filters = Map::new();
            put(&mut filters, "allowed_domains", w.allowed_domains.clone().filter(|d| !d.is_empty()));
            put(&mut filters, "blocked_domains", w.blocked_domains.clone().filter(|d| !d.is_empty()));
            if !filters.is_empty() {
                t.insert("filters".into(), Value::Object(filters));
            }
            Value::Object(t)
        }
        NativeTool::CodeExecution(_) => json!({"type": "code_interpreter", "container": {"type": "auto"}}),
        NativeTool::ImageGeneration(g) => {
            let mut t = Map::new();
            t.insert("type".into(), "image_generation".into());
            put(&mut t, "action", g.action.clone());
            put(&mut t, "background", g.background.clone());
            put(&mut t, "input_fidelity", g.input_fidelity.clone());
            put(&mut t, "moderation", g.moderation.clone());
            put(&mut t, "model", g.model.clone());
            put(&mut t, "output_compression", g.output_compression);
            put(&mut t, "output_format", g.output_format.clone());
            put(&mut t, "partial_images", g.partial_images);
            put(&mut t, "quality", g.quality.clone());
            put(&mut t, "size", image_size(g.size.as_deref(), g.aspect_ratio.as_deref()));
            Value::Object(t)
        }
        NativeTool::McpServer(m) => {
            let mut t = Map::new();
            t.insert("type".into(), "mcp".into());
            t.insert("server_label".into(), m.id.clone().into());
            // `x-openai-connector:<id>` names one of OpenAI's connectors instead of a URL.
            match m.url.strip_prefix("x-openai-connector:") {
                Some(connector) => t.insert("connector_id".into(), connector.into()),
                None => t.insert("server_url".into(), m.url.clone().into()),
            };
            put(&mut t, "server_description", m.description.clone());
            put(&mut t, "allowed_tools", m.allowed_tools.clone());
            put(&mut t, "authorization", m.authorization_token.clone());
            if let Some(h) = &m.headers {
                t.insert("headers".into(), serde_json::to_value(h).unwrap_or_default());
            }
            t.insert("require_approval".into(), "never".into());
            Value::Object(t)
        }
        NativeTool::FileSearch(f) => {
            let mut t = Map::new();
            t.insert("type".into(), "file_search".into());
            t.insert("vector_store_ids".into(), f.file_store_ids.clone().into());
            put(&mut t, "max_num_results", f.max_num_results);
            Value::Object(t)
        }
        _ => return None,
    })
}

/// The size OpenAI is asked for: the aspect ratio's size when one is set (`1:1`, `2:3`, `3:2`).
fn image_size(size: Option<&str>, aspect_ratio: Option<&str>) -> Option<String> {
    let from_ratio = match aspect_ratio {
        Some("1:1") => Some("1024x1024"),
        Some("2:3") => Some("1024x1536"),
        Some("3:2") => Some("1536x1024"),
        _ => None,
    };
    from_ratio.or(size).map(str::to_string)
}

/// The parts of a hosted tool item (`None` for an item of another type, kept as it came).
pub(super) fn parts_of(item: &Value, system: &str) -> Option<Vec<ModelResponsePart>> {
    let kind = item.get("type")?.as_str()?;
    let id = item.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
    let str_of = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    let status = || item.get("status").cloned().unwrap_or(Value::Null);
    let mut files = Vec::new();
    let (tool, args, content) = match kind {
        "web_search_call" => {
            let mut result = Map::new();
            result.insert("status".into(), status());
            let args = match item.get("action").cloned() {
                Some(Value::Object(mut action)) => {
                    action.retain(|_, v| !v.is_null());
                    if let Some(sources) = action.remove("sources") {
                        result.insert("sources".into(), sources);
                    }
                    Value::Object(action)
                }
                _ => Value::Null,
            };
            ("web_search".to_string(), args, Value::Object(result))
        }
        "code_interpreter_call" => {
            let mut result = Map::new();
            result.insert("status".into(), status());
            let mut logs = Vec::new();
            for output in item.get("outputs").and_then(Value::as_array).into_iter().flatten() {
                match output.get("type").and_then(Value::as_str) {
                    Some("logs") => logs.push(output.get("logs").cloned().unwrap_or_default()),
                    Some("image") => {
                        if let Some(b) = output.get("url").and_then(Value::as_str).and_then(from_data_url) {
                            let mut f = FilePart::new(b);
                            f.id = Some(id.clone());
                            f.provider_name = Some(system.to_string());
                            files.push(ModelResponsePart::File(f));
                        }
                    }
                    _ => {}
                }
            }
            if !logs.is_empty() {
                result.insert("logs".into(), Value::Array(logs));
            }
            let args = json!({"container_id": item.get("container_id"), "code": str_of("code")});
            ("code_execution".to_string(), args, Value::Object(result))
        }
        "image_generation_call" => {
            let mut result = Map::new();
            result.insert("status".into(), status());
            for key in ["background", "quality", "size", "revised_prompt"] {
                put(&mut result, key, item.get(key).filter(|v| !v.is_null()).cloned());
            }
            let format = item.get("output_format").and_then(Value::as_str).unwrap_or("png");
            let image = item.get("result").and_then(Value::as_str).filter(|d| !d.is_empty());
            if let Some(b) = image.and_then(|data| BinaryContent::from_base64(data, format!("image/{format}"))) {
                let mut f = FilePart::new(b);
                f.id = Some(id.clone());
                f.provider_name = Some(system.to_string());
                files.push(ModelResponsePart::File(f));
                // A streamed item may still say `generating` when its image has come.
                result.insert("status".into(), "completed".into());
            }
            ("image_generation".to_string(), Value::Null, Value::Object(result))
        }
        "mcp_list_tools" => {
            let mut result = Map::new();
            put(&mut result, "tools", item.get("tools").cloned());
            result.insert("error".into(), item.get("error").cloned().unwrap_or(Value::Null));
            (format!("mcp_server:{}", str_of("server_label")), json!({"action": "list_tools"}), Value::Object(result))
        }
        "mcp_call" => {
            let tool_args = item
                .get("arguments")
                .and_then(Value::as_str)
                .filter(|a| !a.is_empty())
                .and_then(|a| serde_json::from_str(a).ok())
                .unwrap_or_else(|| json!({}));
            let args = json!({"action": "call_tool", "tool_name": str_of("name"), "tool_args": tool_args});
            let content = json!({
                "output": item.get("output").cloned().unwrap_or(Value::Null),
                "error": item.get("error").cloned().unwrap_or(Value::Null),
            });
            (format!("mcp_server:{}", str_of("server_label")), args, content)
        }
        "file_search_call" => {
            let mut result = Map::new();
            result.insert("status".into(), status());
            put(&mut result, "results", item.get("results").filter(|r| !r.is_null()).cloned());
            let args = json!({"queries": item.get("queries").cloned().unwrap_or_else(|| json!([]))});
            ("file_search".to_string(), args, Value::Object(result))
        }
        _ => return None,
    };
    let mut call = ToolCallPart::native(tool.clone(), args, id.clone(), system);
    if matches!(kind, "web_search_call" | "file_search_call") {
        call.id = Some(id.clone());
    }
    let mut parts = vec![
        ModelResponsePart::NativeToolCall(call),
        ModelResponsePart::NativeToolReturn(NativeToolReturnPart::new(tool, content, id, system)),
    ];
    parts.extend(files);
    Some(parts)
}

fn from_data_url(url: &str) -> Option<BinaryContent> {
    let rest = url.strip_prefix("data:")?;
    let (media_type, data) = rest.split_once(";base64,")?;
    BinaryContent::from_base64(data, media_type)
}

/// Writes an own native tool part back into `out`: a call as the item the API resolves by its
/// id, a result as the status of that item (files are not sent back).
pub(super) fn replay(part: &ModelResponsePart, out: &mut Vec<Value>) {
    match part {
        ModelResponsePart::NativeToolCall(c) => {
            let args = match &c.args {
                Value::String(s) => serde_json::from_str(s).unwrap_or(Value::Null),
                other => other.clone(),
            };
            let item = match c.tool_name.as_str() {
                "web_search" if args.as_object().is_some_and(|a| !a.is_empty()) => {
                    let mut action = args.as_object().cloned().unwrap_or_default();
                    action.retain(|_, v| !v.is_null());
                    json!({
                        "type": "web_search_call",
                        "id": c.id.clone().unwrap_or_else(|| c.tool_call_id.clone()),
                        "action": action,
                        "status": "completed",
                    })
                }
                "code_execution" if args.get("container_id").is_some_and(|c| !c.is_null()) => json!({
                    "type": "code_interpreter_call",
                    "id": c.tool_call_id,
                    "code": args.get("code"),
                    "container_id": args.get("container_id"),
                    "outputs": null,
                    "status": "completed",
                }),
                "file_search" if args.is_object() => json!({
                    "type": "file_search_call",
                    "id": c.id.clone().unwrap_or_else(|| c.tool_call_id.clone()),
                    "queries": args.get("queries").cloned().unwrap_or_else(|| json!([])),
                    "status": "completed",
                }),
                "image_generation" => json!({"type": "image_generation_call", "id": c.tool_call_id}),
                name => {
                    let Some(label) = name.strip_prefix("mcp_server:") else { return };
                    match args.get("action").and_then(Value::as_str) {
                        Some("list_tools") => json!({
                            "type": "mcp_list_tools", "id": c.tool_call_id, "server_label": label, "tools": [],
                        }),
                        Some("call_tool") => {
                            let Some(tool) = args.get("tool_name").and_then(Value::as_str) else { return };
                            json!({
                                "type": "mcp_call",
                                "id": c.tool_call_id,
                                "server_label": label,
                                "name": tool,
                                "arguments": args.get("tool_args").unwrap_or(&json!({})).to_string(),
                                "error": null,
                                "output": null,
                            })
                        }
                        _ => return,
                    }
                }
            };
            out.push(item);
        }
        ModelResponsePart::NativeToolReturn(r) => {
            let Some(status) = r.content.get("status").and_then(Value::as_str) else { return };
            let kind = match r.tool_name.as_str() {
                "web_search" => "web_search_call",
                "code_execution" => "code_interpreter_call",
                "file_search" => "file_search_call",
                _ => return,
            };
            if let Some(item) = out.iter_mut().rev().find(|i| {
                i.get("type").and_then(Value::as_str) == Some(kind)
                    && i.get("id").and_then(Value::as_str) == Some(r.tool_call_id.as_str())
            }) {
                item["status"] = status.into();
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(item: Value) -> (Vec<ModelResponsePart>, Vec<Value>) {
        let parts = parts_of(&item, "openai").unwrap();
        let mut out = Vec::new();
        for p in &parts {
            replay(p, &mut out);
        }
        (parts, out)
    }

    proptest::proptest! {
        /// Any JSON as an output item: read or left alone, never a panic, and whatever is read
        /// writes back without a panic.
        #[test]
        fn any_item_is_read_without_panicking(item in crate::test_support::arb_json(), kind in 0usize..7) {
            let mut item = item;
            if let Value::Object(m) = &mut item {
                let kinds = ["web_search_call", "code_interpreter_call", "image_generation_call", "mcp_list_tools",
                             "mcp_call", "file_search_call", "message"];
                m.insert("type".into(), kinds[kind].into());
            }
            if let Some(parts) = parts_of(&item, "openai") {
                let mut out = Vec::new();
                for p in &parts {
                    replay(p, &mut out);
                }
            }
        }
    }

    #[test]
    fn hosted_tool_items_read_as_parts_and_go_back_by_id() {
        let (parts, out) = round_trip(json!({
            "type": "web_search_call", "id": "ws_1", "status": "completed",
            "action": {"type": "search", "query": "rust", "sources": [{"type": "url", "url": "https://rust-lang.org"}]},
        }));
        let ModelResponsePart::NativeToolReturn(r) = &parts[1] else { panic!() };
        assert_eq!(
            r.content,
            json!({"status": "completed", "sources": [{"type": "url", "url": "https://rust-lang.org"}]})
        );
        assert_eq!(
            out,
            vec![
                json!({"type": "web_search_call", "id": "ws_1", "action": {"type": "search", "query": "rust"}, "status": "completed"})
            ]
        );

        let png = BinaryContent::new(b"\x89PNG", "image/png");
        let (parts, out) = round_trip(json!({
            "type": "image_generation_call", "id": "ig_1", "status": "generating", "result": png.data, "output_format": "png",
        }));
        let ModelResponsePart::File(f) = &parts[2] else { panic!("{parts:?}") };
        assert_eq!(f.content, png.clone().into());
        assert_eq!(out, vec![json!({"type": "image_generation_call", "id": "ig_1"})]);

        let (_, out) = round_trip(json!({
            "type": "mcp_call", "id": "mcp_1", "server_label": "wiki", "name": "ask", "arguments": "{\"q\":1}", "output": "a",
        }));
        assert_eq!(out[0]["arguments"], "{\"q\":1}");
        assert_eq!(out[0]["server_label"], "wiki");

        let (parts, out) = round_trip(json!({
            "type": "code_interpreter_call", "id": "ci_1", "status": "completed", "code": "print(1)", "container_id": "cntr_1",
            "outputs": [{"type": "logs", "logs": "1\n"}, {"type": "image", "url": format!("data:image/png;base64,{}", png.data)}],
        }));
        assert_eq!(parts.len(), 3);
        assert_eq!(out[0]["container_id"], "cntr_1");
        assert_eq!(parts_of(&json!({"type": "message"}), "openai"), None);
    }
}
