//! Tool definitions and results in MCP's shapes: a [`ToolDefinition`] as an MCP tool, what a
//! tool returned as a `CallToolResult` (text, image and audio content, embedded resources,
//! structured content), an error as an `isError` result.

use rmcp::model::{CallToolResult, Tool as McpTool};
use serde_json::{Map, Value, json};

use crate::messages::{BinaryContent, MediaContent, UserContent};
use crate::tool::{ToolDefinition, ToolOutput};

/// The MCP tool for a definition. Its metadata's `title`, `annotations`, `output_schema` and
/// `meta` (the keys `McpToolset` writes) become the tool's; a return schema becomes the
/// `outputSchema` (wrapped in `{"result": ...}` when it is not an object).
pub(super) fn mcp_tool(def: &ToolDefinition) -> Option<McpTool> {
    let metadata = def.metadata.as_ref().and_then(Value::as_object);
    let field = |key: &str| metadata.and_then(|m| m.get(key)).filter(|v| !v.is_null()).cloned();
    let mut input = (*def.parameters_json_schema).clone();
    if let Value::Object(schema) = &mut input
        && !schema.contains_key("type")
    {
        schema.insert("type".into(), json!("object"));
    }
    let mut tool = Map::new();
    tool.insert("name".into(), json!(def.name));
    tool.insert("description".into(), json!(def.description.clone().unwrap_or_default()));
    tool.insert("inputSchema".into(), input);
    if let Some(output) = field("output_schema").or_else(|| output_schema(def)) {
        tool.insert("outputSchema".into(), output);
    }
    for (key, name) in [("title", "title"), ("annotations", "annotations"), ("meta", "_meta")] {
        if let Some(v) = field(key) {
            tool.insert(name.into(), v);
        }
    }
    serde_json::from_value(Value::Object(tool)).ok()
}

/// The output schema a definition's return schema gives: an object schema as it is, any other
/// wrapped in a `result` property.
fn output_schema(def: &ToolDefinition) -> Option<Value> {
    let schema = def.return_schema.as_deref()?;
    Some(if is_object_schema(schema) { schema.clone() } else { wrapped_schema(schema) })
}

fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

fn wrapped_schema(schema: &Value) -> Value {
    json!({"type": "object", "properties": {"result": schema}, "required": ["result"]})
}

/// A successful call's result. A value is one text block (a string as it is, anything else as
/// its JSON text); with an output schema it is also the structured content. A [`ToolReturn`]
/// gives its value (unless `null`), then its content; its metadata becomes the result's `_meta`.
///
/// [`ToolReturn`]: crate::tool::ToolReturn
/// How deep a tool's result (or its `_meta`) may nest in a `tools/call` answer: the JSON-RPC
/// message adds four levels above it (`result`, `structuredContent`, its `result` wrapper).
const MAX_RESULT_DEPTH: usize = 100;

pub(super) fn success(def: &ToolDefinition, output: ToolOutput) -> CallToolResult {
    let (mut value, content, mut metadata) = match output {
        ToolOutput::Value(v) => (v, None, None),
        ToolOutput::Return(ret) => (ret.return_value, ret.content, ret.metadata),
    };
    // What a JSON parser with serde_json's limit of 128 levels (rmcp's, among others) reads whole
    // inside the JSON-RPC message: deeper levels are sent as their JSON text.
    crate::messages::flatten_deeper_than(&mut value, MAX_RESULT_DEPTH);
    if let Some(metadata) = &mut metadata {
        crate::messages::flatten_deeper_than(metadata, MAX_RESULT_DEPTH);
    }
    let mut blocks = Vec::new();
    if !(value.is_null() && content.is_some()) {
        blocks.push(json!({"type": "text", "text": value_text(&value)}));
    }
    blocks.extend(content.unwrap_or_default().into_iter().filter_map(content_block));
    let mut result = json!({"content": blocks});
    if let Some(schema) = def
        .return_schema
        .as_deref()
        .or_else(|| def.metadata.as_ref().and_then(|m| m.get("output_schema")).filter(|v| !v.is_null()))
        && !value.is_null()
    {
        let structured = if is_object_schema(schema) && value.is_object() { value } else { json!({"result": value}) };
        result["structuredContent"] = structured;
    }
    if let Some(Value::Object(meta)) = metadata {
        result["_meta"] = Value::Object(meta);
    }
    serde_json::from_value(result).unwrap_or_else(|e| error(format!("The tool's result is not valid MCP content: {e}")))
}

/// An `isError` result with one text block.
pub(super) fn error(text: impl Into<String>) -> CallToolResult {
    let result = json!({"content": [{"type": "text", "text": text.into()}], "isError": true});
    serde_json::from_value(result).unwrap_or_default()
}

/// The text of a value: a string as it is, anything else as compact JSON.
pub(crate) fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One content item as an MCP content block: text; inline images and audio as themselves;
/// other inline data as an embedded resource (text for textual media types, else a blob) whose
/// URI is the data's identifier when that is a URI; a URL as a resource link. An
/// [`UserContent::Other`] that is already an MCP content block (`{"type": "resource", ...}`)
/// is passed as it is.
pub(super) fn content_block(item: UserContent) -> Option<Value> {
    Some(match item {
        UserContent::Text(text) => json!({"type": "text", "text": text}),
        UserContent::TextContent(text) => json!({"type": "text", "text": text.content}),
        UserContent::Media(MediaContent::Binary(b)) => binary_block(b),
        UserContent::Media(
            MediaContent::ImageUrl(u)
            | MediaContent::AudioUrl(u)
            | MediaContent::VideoUrl(u)
            | MediaContent::DocumentUrl(u),
        ) => {
            let name = u.url.rsplit('/').next().unwrap_or(&u.url).to_string();
            let mut link = json!({"type": "resource_link", "uri": u.url, "name": name});
            if let Some(media_type) = u.media_type {
                link["mimeType"] = json!(media_type);
            }
            link
        }
        UserContent::Other(value) => {
            let known = ["text", "image", "audio", "resource", "resource_link"];
            value.get("type").and_then(Value::as_str).filter(|t| known.contains(t))?;
            value
        }
    })
}

fn binary_block(b: BinaryContent) -> Value {
    let media = b.media_type.as_str();
    if media.starts_with("image/") {
        return json!({"type": "image", "data": b.data, "mimeType": b.media_type});
    }
    if media.starts_with("audio/") {
        return json!({"type": "audio", "data": b.data, "mimeType": b.media_type});
    }
    let id = b.identifier.clone().unwrap_or_default();
    let uri = if id.contains(':') { id } else { format!("toolsmith://binary/{id}") };
    let textual = media.starts_with("text/") || media == "application/json" || media.ends_with("+json");
    let text = textual.then(|| decode_text(&b.data)).flatten();
    match text {
        Some(text) => json!({"type": "resource", "resource": {"uri": uri, "mimeType": b.media_type, "text": text}}),
        None => json!({"type": "resource", "resource": {"uri": uri, "mimeType": b.media_type, "blob": b.data}}),
    }
}

fn decode_text(data: &str) -> Option<String> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD.decode(data).ok()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::ToolReturn;

    fn def() -> ToolDefinition {
        ToolDefinition::new("t", std::sync::Arc::new(json!({"properties": {}})))
    }

    #[test]
    fn a_definition_gets_an_object_input_schema_and_its_annotations() {
        let mut d = def();
        d.metadata = Some(json!({"annotations": {"readOnlyHint": true}, "title": "T"}));
        let tool = serde_json::to_value(mcp_tool(&d).unwrap()).unwrap();
        assert_eq!(tool["inputSchema"]["type"], "object");
        assert_eq!(tool["annotations"]["readOnlyHint"], true);
        assert_eq!(tool["title"], "T");
    }

    #[test]
    fn media_become_image_audio_and_embedded_resources() {
        let ret = ToolReturn::new(()).with_content(vec![
            UserContent::text("hi"),
            BinaryContent::new(b"png", "image/png").into(),
            BinaryContent::new(b"wav", "audio/wav").into(),
            BinaryContent::new(b"{}", "application/json").into(),
        ]);
        let out = serde_json::to_value(success(&def(), ToolOutput::Return(ret))).unwrap();
        let types: Vec<&str> = out["content"].as_array().unwrap().iter().map(|c| c["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["text", "image", "audio", "resource"]);
        assert_eq!(out["content"][3]["resource"]["text"], "{}");
    }

    #[test]
    fn structured_output_is_wrapped_when_the_schema_is_not_an_object() {
        let mut d = def();
        d.return_schema = Some(std::sync::Arc::new(json!({"type": "integer"})));
        let tool = serde_json::to_value(mcp_tool(&d).unwrap()).unwrap();
        assert_eq!(tool["outputSchema"]["properties"]["result"]["type"], "integer");
        let out = serde_json::to_value(success(&d, ToolOutput::Value(json!(3)))).unwrap();
        assert_eq!(out["structuredContent"], json!({"result": 3}));
        assert_eq!(out["content"][0]["text"], "3");
    }
}
