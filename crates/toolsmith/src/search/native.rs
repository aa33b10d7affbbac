//! Providers' own (native) tool searches as the history keeps them.
//!
//! The adapters keep the blocks of a server-side search in the response's `provider_details`,
//! as `{"after_part": N, ...}` entries to replay in place:
//! - Anthropic (`anthropic_blocks`, field `block`): a `server_tool_use` of
//!   `tool_search_tool_bm25` / `tool_search_tool_regex` (`input.query`), then its
//!   `tool_search_tool_result`, whose `content.tool_references` name the tools loaded;
//! - OpenAI Responses (`openai_items`, field `item`): a `tool_search_call` (`arguments`), then a
//!   `tool_search_output` whose `tools` are the definitions loaded.
//!
//! [`native_searches`] reads them as [`NativeSearch`]es: what was searched for and which tools
//! were found. [`discovered_in`](super::discovered_in) counts those tools as discovered, and the
//! adapters replay a search their provider cannot take natively as a `search_tools` call and
//! return.

use serde_json::Value;

/// Where Anthropic's blocks are kept, and the field of each entry.
pub(crate) const ANTHROPIC_BLOCKS: (&str, &str) = ("anthropic_blocks", "block");
/// Where OpenAI Responses' items are kept, and the field of each entry.
pub(crate) const OPENAI_ITEMS: (&str, &str) = ("openai_items", "item");

/// One server-side tool search of a response.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NativeSearch {
    /// The response part the search's result came before.
    pub after_part: usize,
    /// The provider's id for the search call.
    pub call_id: String,
    /// What the model searched for (queries, or the paths OpenAI loads).
    pub queries: Vec<String>,
    /// The tools the search loaded.
    pub names: Vec<String>,
}

/// The native searches in a response's `provider_details`, and the details without their
/// entries (`None` when there are none).
pub(crate) fn native_searches(details: Option<&Value>) -> Option<(Vec<NativeSearch>, Value)> {
    let details = details?.as_object()?;
    let mut searches = Vec::new();
    let mut rest = details.clone();
    for (key, field) in [ANTHROPIC_BLOCKS, OPENAI_ITEMS] {
        let Some(Value::Array(entries)) = details.get(key) else { continue };
        let mut kept = Vec::new();
        let mut pending: Vec<(String, Vec<String>)> = Vec::new();
        for entry in entries {
            let (Some(at), Some(block)) = (entry.get("after_part").and_then(Value::as_u64), entry.get(field)) else {
                kept.push(entry.clone());
                continue;
            };
            match search_block(block) {
                Some(Block::Call { id, queries }) => pending.push((id, queries)),
                Some(Block::Result { call_id, names }) => {
                    let slot = match &call_id {
                        Some(id) => pending.iter().position(|(p, _)| p == id),
                        None => pending.len().checked_sub(1),
                    };
                    let (id, queries) = match slot {
                        Some(i) => pending.remove(i),
                        None => (call_id.unwrap_or_else(crate::messages::generate_tool_call_id), Vec::new()),
                    };
                    searches.push(NativeSearch { after_part: at as usize, call_id: id, queries, names });
                }
                None => kept.push(entry.clone()),
            }
        }
        if kept.len() == entries.len() {
            continue;
        }
        // A call without a result (a cut-off stream) is dropped with the others.
        if kept.is_empty() {
            rest.remove(key);
        } else {
            rest.insert(key.to_string(), Value::Array(kept));
        }
    }
    if searches.is_empty() {
        return None;
    }
    Some((searches, Value::Object(rest)))
}

/// The names of the tools the native searches of a response loaded.
pub(crate) fn natively_discovered(details: Option<&Value>) -> Vec<String> {
    native_searches(details).map(|(s, _)| s.into_iter().flat_map(|s| s.names).collect()).unwrap_or_default()
}

enum Block {
    Call { id: String, queries: Vec<String> },
    Result { call_id: Option<String>, names: Vec<String> },
}

fn search_block(block: &Value) -> Option<Block> {
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    match block.get("type").and_then(Value::as_str)? {
        "server_tool_use" if block.get("name").and_then(Value::as_str)?.starts_with("tool_search_tool") => {
            let input = block.get("input").cloned().unwrap_or(Value::Null);
            Some(Block::Call { id: text(block, "id")?, queries: queries(&input) })
        }
        "tool_search_tool_result" => {
            let names = block
                .pointer("/content/tool_references")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|r| text(r, "tool_name"))
                .collect();
            Some(Block::Result { call_id: text(block, "tool_use_id"), names })
        }
        "tool_search_call" => {
            let args = match block.get("arguments") {
                Some(Value::String(raw)) => serde_json::from_str(raw).unwrap_or(Value::Null),
                Some(other) => other.clone(),
                None => Value::Null,
            };
            let id = text(block, "call_id").or_else(|| text(block, "id"))?;
            Some(Block::Call { id, queries: queries(&args) })
        }
        "tool_search_output" => {
            let mut names = Vec::new();
            for tool in block.get("tools").and_then(Value::as_array).into_iter().flatten() {
                // A namespace loads the functions inside it.
                match tool.get("tools").and_then(Value::as_array) {
                    Some(inner) => names.extend(inner.iter().filter_map(|t| text(t, "name"))),
                    None => names.extend(text(tool, "name")),
                }
            }
            Some(Block::Result { call_id: text(block, "call_id"), names })
        }
        _ => None,
    }
}

/// The search terms of a native call's input: `query`, `queries`, `paths` or `pattern`.
fn queries(input: &Value) -> Vec<String> {
    let Some(obj) = input.as_object() else { return Vec::new() };
    let mut out = Vec::new();
    for key in ["query", "queries", "paths", "pattern"] {
        match obj.get(key) {
            Some(Value::String(s)) => out.push(s.clone()),
            Some(Value::Array(items)) => out.extend(items.iter().filter_map(Value::as_str).map(str::to_string)),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn anthropic_blocks_are_read_and_removed() {
        let details = json!({
            "finish_reason": "tool_use",
            "anthropic_blocks": [
                {"after_part": 1, "block": {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25", "input": {"query": "weather"}}},
                {"after_part": 1, "block": {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1", "content": {"type": "tool_search_tool_search_result", "tool_references": [{"type": "tool_reference", "tool_name": "get_weather"}]}}},
                {"after_part": 2, "block": {"type": "server_tool_use", "id": "srvtoolu_2", "name": "web_search", "input": {"query": "news"}}},
            ],
        });
        let (searches, rest) = native_searches(Some(&details)).unwrap();
        assert_eq!(
            searches,
            [NativeSearch {
                after_part: 1,
                call_id: "srvtoolu_1".into(),
                queries: vec!["weather".into()],
                names: vec!["get_weather".into()],
            }]
        );
        assert_eq!(rest["anthropic_blocks"].as_array().unwrap().len(), 1, "the web search stays");
        assert_eq!(rest["finish_reason"], "tool_use");
    }

    #[test]
    fn openai_items_pair_without_call_ids() {
        let details = json!({"openai_items": [
            {"after_part": 0, "item": {"type": "tool_search_call", "id": "tsc_1", "call_id": null, "execution": "server", "status": "completed", "arguments": {"paths": ["get_weather"]}}},
            {"after_part": 0, "item": {"type": "tool_search_output", "id": "tso_1", "call_id": null, "execution": "server", "status": "completed", "tools": [
                {"type": "function", "name": "get_weather", "defer_loading": true, "parameters": {"type": "object"}},
                {"type": "namespace", "name": "crm", "tools": [{"type": "function", "name": "crm_lookup"}]},
            ]}},
        ]});
        let (searches, rest) = native_searches(Some(&details)).unwrap();
        assert_eq!(searches[0].call_id, "tsc_1");
        assert_eq!(searches[0].queries, ["get_weather"]);
        assert_eq!(searches[0].names, ["get_weather", "crm_lookup"]);
        assert_eq!(rest, json!({}));
        assert_eq!(natively_discovered(Some(&details)), ["get_weather", "crm_lookup"]);
    }

    #[test]
    fn details_without_searches_are_none() {
        assert!(native_searches(None).is_none());
        assert!(native_searches(Some(&json!({"finish_reason": "stop"}))).is_none());
    }
}
