//! From MCP to toolsmith: tool definitions, and call results to tool outputs.

use std::future::Future;

use base64::Engine;
use serde_json::{Map, Value};

use crate::messages::{BinaryContent, UserContent};
use crate::tool::{ToolDefinition, ToolOutput, ToolReturn};
use crate::validation::Validator;

/// A tool listed by the server, ready to be offered: its definition and compiled validator.
#[derive(Debug, Clone)]
pub(crate) struct CatalogTool {
    pub(crate) def: ToolDefinition,
    pub(crate) validator: Option<Validator>,
    /// Whether the output schema says the structured result is wrapped as `{"result": ...}`
    /// (FastMCP's `x-fastmcp-wrap-result`).
    pub(crate) wrap_result: bool,
    /// The output schema, compiled: structured results are checked against it.
    pub(crate) output: Option<Validator>,
}

/// Maps a tool as listed by the server (MCP JSON) to a definition: the input schema as it is;
/// the title, annotations, output schema and `_meta` in the metadata (keys `title`,
/// `annotations`, `output_schema`, `meta`, when present), and `mcp: {"server": NAME}` always
/// (what tool search's bridge mode defers by); the output schema also as the return schema.
pub(crate) fn catalog_tool(server: &str, tool: &rmcp::model::Tool, validate: bool) -> CatalogTool {
    let schema = Value::Object((*tool.input_schema).clone());
    let mut def = ToolDefinition::new(tool.name.to_string(), schema);
    def.description = tool.description.as_ref().map(|d| d.to_string());
    let mut metadata = Map::new();
    if let Some(title) = &tool.title {
        metadata.insert("title".into(), Value::String(title.clone()));
    }
    if let Some(annotations) = &tool.annotations
        && let Ok(v) = serde_json::to_value(annotations)
    {
        metadata.insert("annotations".into(), v);
    }
    let mut wrap_result = false;
    let mut output_validator = None;
    if let Some(output) = &tool.output_schema {
        let output = Value::Object((**output).clone());
        wrap_result = output.get("x-fastmcp-wrap-result") == Some(&Value::Bool(true));
        output_validator = super::client::structured::compile(server, &tool.name, &output);
        def.return_schema = Some(std::sync::Arc::new(output.clone()));
        metadata.insert("output_schema".into(), output);
    }
    if let Some(meta) = &tool.meta
        && let Ok(v) = serde_json::to_value(meta)
    {
        metadata.insert("meta".into(), v);
    }
    metadata.insert("mcp".into(), serde_json::json!({ "server": server }));
    def.metadata = Some(Value::Object(metadata));
    let validator = if validate {
        match Validator::compile(&def.parameters_json_schema) {
            Ok(v) => Some(v),
            Err(e) => {
                tracing::warn!(
                    server,
                    tool = %def.name,
                    error = %e,
                    "the input schema of an MCP tool cannot be compiled: its arguments are sent unvalidated"
                );
                None
            }
        }
    } else {
        None
    };
    CatalogTool { def, validator, wrap_result, output: output_validator }
}

/// The input schema given to a listed tool that has none: an object without properties.
fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}})
}

/// Reads a `tools/list` page tool by tool, for a page rmcp could not read whole: a tool without
/// an `inputSchema` (or with one that is not an object) gets an empty object schema, a tool that
/// still cannot be read is skipped; each with a warning naming it. Returns the tools and the
/// next cursor; an error when the page has no `tools` list at all.
pub(crate) fn lenient_tools(server: &str, page: &Value) -> Result<(Vec<rmcp::model::Tool>, Option<String>), String> {
    let Some(items) = page.get("tools").and_then(Value::as_array) else {
        let mut shown = page.to_string();
        if shown.chars().count() > 200 {
            shown = shown.chars().take(200).collect::<String>() + "…";
        }
        return Err(format!("the server broke the protocol: its tools/list result has no `tools` list: {shown}"));
    };
    let mut tools = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        if let Ok(tool) = serde_json::from_value::<rmcp::model::Tool>(item.clone()) {
            tools.push(tool);
            continue;
        }
        let Some(name) = item.get("name").and_then(Value::as_str) else {
            tracing::warn!(server, index, "the MCP server lists a tool without a name: it is skipped");
            continue;
        };
        let mut fixed = item.clone();
        let schema_missing = !item.get("inputSchema").is_some_and(Value::is_object);
        if schema_missing && let Value::Object(map) = &mut fixed {
            map.insert("inputSchema".into(), empty_object_schema());
        }
        match serde_json::from_value::<rmcp::model::Tool>(fixed) {
            Ok(tool) => {
                tracing::warn!(
                    server,
                    tool = name,
                    "the MCP server lists tool '{name}' without an object `inputSchema`: it is offered with an empty object schema (no arguments)"
                );
                tools.push(tool);
            }
            Err(e) => {
                tracing::warn!(
                    server,
                    tool = name,
                    error = %e,
                    "the MCP server lists tool '{name}' in a shape that cannot be read: it is skipped"
                );
            }
        }
    }
    Ok((tools, page.get("nextCursor").and_then(Value::as_str).map(str::to_string)))
}

/// The result of a `tools/call`, as the server sent it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct McpCallResult {
    /// The content blocks, as MCP JSON (`{"type": "text", "text": ...}`, `{"type": "image", ...}`...).
    pub content: Vec<Value>,
    /// The structured result, when the server sent one.
    pub structured_content: Option<Value>,
    /// Whether the server reported the call as failed (`isError: true`).
    pub is_error: bool,
    /// The result's `_meta`, if any.
    pub meta: Option<Value>,
}

impl McpCallResult {
    pub(crate) fn from_rmcp(result: rmcp::model::CallToolResult) -> Self {
        let meta = result.meta.as_ref().and_then(|m| serde_json::to_value(m).ok()).filter(|m| !is_empty_object(m));
        McpCallResult {
            content: result.content.iter().filter_map(|c| serde_json::to_value(c).ok()).collect(),
            structured_content: result.structured_content,
            is_error: result.is_error.unwrap_or(false),
            meta,
        }
    }

    /// The result with the redactor's secrets (the HTTP headers and bearer token this client
    /// sends) removed from every string: a server that echoes them puts them nowhere, neither
    /// in the model's context nor in the history.
    pub(crate) fn redacted(self, redactor: &super::redact::Redactor) -> McpCallResult {
        if redactor.is_empty() {
            return self;
        }
        let r = |v: Value| super::error::redact_value(v, redactor);
        McpCallResult {
            content: self.content.into_iter().map(r).collect(),
            structured_content: self.structured_content.map(r),
            is_error: self.is_error,
            meta: self.meta.map(r),
        }
    }

    /// The text blocks, joined with newlines.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|c| c.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// What the server said about a failed call: its text blocks, else its content as JSON.
    pub fn error_message(&self) -> String {
        let text = self.text();
        if !text.is_empty() {
            text
        } else if !self.content.is_empty() {
            Value::Array(self.content.clone()).to_string()
        } else if let Some(s) = &self.structured_content {
            s.to_string()
        } else {
            "the tool reported an error without a message".to_string()
        }
    }
}

fn is_empty_object(v: &Value) -> bool {
    v.as_object().is_some_and(Map::is_empty)
}

/// One mapped piece of a result: a value for the model, a file sent alongside, or what a
/// resource (embedded, or a link) holds.
enum Piece {
    Value(Value),
    File(BinaryContent),
    Resource(Value),
}

fn decode(data: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD.decode(data.trim()).ok()
}

/// Maps resource contents (`{"uri", "mimeType", "text" | "blob"}`).
fn resource_piece(contents: &Value) -> Piece {
    if let Some(text) = contents.get("text").and_then(Value::as_str) {
        return Piece::Resource(Value::String(text.to_string()));
    }
    if let Some(blob) = contents.get("blob").and_then(Value::as_str)
        && let Some(bytes) = decode(blob)
    {
        let mime = contents.get("mimeType").and_then(Value::as_str).unwrap_or("application/octet-stream");
        return Piece::File(BinaryContent::new(bytes, mime));
    }
    Piece::Resource(contents.clone())
}

/// Maps a call's result to a tool output, the way Pydantic AI does: `structuredContent` when
/// present (unwrapped from `{"result": ...}` when the output schema says it is wrapped); otherwise
/// the content blocks, a single one as itself and several as a list: text as a string, images
/// and audio as files, embedded resources as their text or as a file, resource links read from
/// the server with `read_link` (kept as the link's JSON when reading fails). A file is shown to
/// the model as `See file {id}` in the return value and sent after the tool returns as
/// `This is file {id}:` followed by the file (files are sent this way even when there is
/// structured content, and so are the contents of embedded resources and resource links, which
/// the structured value would otherwise drop). The result's `_meta` becomes the tool return's metadata.
pub(crate) async fn tool_output<F, Fut>(result: &McpCallResult, wrap_result: bool, read_link: F) -> ToolOutput
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Option<Vec<Value>>>,
{
    let mut pieces = Vec::with_capacity(result.content.len());
    for block in &result.content {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => match block.get("text").and_then(Value::as_str) {
                Some(text) => pieces.push(Piece::Value(Value::String(text.to_string()))),
                None => pieces.push(Piece::Value(block.clone())),
            },
            Some("image") | Some("audio") => {
                let data = block.get("data").and_then(Value::as_str).and_then(decode);
                let mime = block.get("mimeType").and_then(Value::as_str);
                match (data, mime) {
                    (Some(bytes), Some(mime)) => pieces.push(Piece::File(BinaryContent::new(bytes, mime))),
                    _ => pieces.push(Piece::Value(block.clone())),
                }
            }
            Some("resource") => match block.get("resource") {
                Some(contents) => pieces.push(resource_piece(contents)),
                None => pieces.push(Piece::Value(block.clone())),
            },
            Some("resource_link") => {
                let uri = block.get("uri").and_then(Value::as_str).map(str::to_string);
                let read = match uri {
                    Some(uri) => read_link(uri).await,
                    None => None,
                };
                match read {
                    Some(contents) if !contents.is_empty() => pieces.extend(contents.iter().map(resource_piece)),
                    _ => pieces.push(Piece::Resource(block.clone())),
                }
            }
            _ => pieces.push(Piece::Value(block.clone())),
        }
    }

    let structured = result.structured_content.as_ref().filter(|s| !s.is_null());
    let mut files = Vec::new();
    let mut values: Vec<Value> = pieces
        .into_iter()
        .map(|p| match p {
            Piece::Value(v) => v,
            // With structured content as the value, what resources hold still reaches the model,
            // after the return.
            Piece::Resource(v) if structured.is_some() => {
                let text = match &v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                files.push(UserContent::text(format!("A resource the tool returned:\n{text}")));
                Value::Null
            }
            Piece::Resource(v) => v,
            Piece::File(file) => {
                let id = file.identifier.clone().unwrap_or_default();
                files.push(UserContent::text(format!("This is file {id}:")));
                files.push(file.into());
                Value::String(format!("See file {id}"))
            }
        })
        .collect();

    let return_value = match structured {
        Some(structured) => match structured {
            Value::Object(map) if wrap_result && map.len() == 1 && map.contains_key("result") => map["result"].clone(),
            other => other.clone(),
        },
        _ => {
            if values.len() == 1 {
                values.pop().unwrap_or(Value::Null)
            } else {
                Value::Array(values)
            }
        }
    };

    if files.is_empty() && result.meta.is_none() {
        return ToolOutput::Value(return_value);
    }
    let mut ret = ToolReturn::new(return_value);
    if !files.is_empty() {
        ret = ret.with_content(files);
    }
    if let Some(meta) = &result.meta {
        ret = ret.with_metadata(meta.clone());
    }
    ToolOutput::Return(ret)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn result(content: Value, structured: Option<Value>) -> McpCallResult {
        McpCallResult {
            content: content.as_array().cloned().unwrap_or_default(),
            structured_content: structured,
            is_error: false,
            meta: None,
        }
    }

    fn run(r: &McpCallResult, wrap: bool) -> ToolOutput {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(tool_output(r, wrap, |uri| async move {
            (uri == "test://doc").then(|| vec![json!({"uri": "test://doc", "text": "the doc"})])
        }))
    }

    #[test]
    fn single_text_is_a_string_and_several_are_a_list() {
        let r = result(json!([{"type": "text", "text": "hi"}]), None);
        assert_eq!(run(&r, false), ToolOutput::Value(json!("hi")));
        let r = result(json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]), None);
        assert_eq!(run(&r, false), ToolOutput::Value(json!(["a", "b"])));
        let r = result(json!([]), None);
        assert_eq!(run(&r, false), ToolOutput::Value(json!([])));
    }

    #[test]
    fn structured_content_is_preferred_and_unwrapped_when_wrapped() {
        let r = result(json!([{"type": "text", "text": "{\"sum\": 3}"}]), Some(json!({"sum": 3})));
        assert_eq!(run(&r, false), ToolOutput::Value(json!({"sum": 3})));
        let r = result(json!([]), Some(json!({"result": 3})));
        assert_eq!(run(&r, true), ToolOutput::Value(json!(3)));
        assert_eq!(run(&r, false), ToolOutput::Value(json!({"result": 3})));
    }

    #[test]
    fn images_become_files_and_links_are_read() {
        let r = result(
            json!([
                {"type": "text", "text": "look"},
                {"type": "image", "data": "iVBORw==", "mimeType": "image/png"},
                {"type": "resource_link", "uri": "test://doc", "name": "doc"},
                {"type": "resource_link", "uri": "test://missing", "name": "missing"},
                {"type": "resource", "resource": {"uri": "test://b", "blob": "AAEC", "mimeType": "application/pdf"}},
            ]),
            None,
        );
        let ToolOutput::Return(ret) = run(&r, false) else { panic!("expected a rich return") };
        assert_eq!(
            ret.return_value,
            json!([
                "look",
                "See file 4effda",
                "the doc",
                {"type": "resource_link", "uri": "test://missing", "name": "missing"},
                "See file 0c7a62"
            ])
        );
        let content = ret.content.unwrap();
        assert_eq!(content.len(), 4);
        assert_eq!(content[0], UserContent::text("This is file 4effda:"));
        match &content[1] {
            UserContent::Media(crate::messages::MediaContent::Binary(b)) => {
                assert_eq!(b.media_type, "image/png");
                assert_eq!(b.bytes().unwrap(), b"\x89PNG");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn error_message_prefers_text() {
        let mut r = result(json!([{"type": "text", "text": "Access denied"}]), None);
        r.is_error = true;
        assert_eq!(r.error_message(), "Access denied");
        let r = result(json!([]), None);
        assert_eq!(r.error_message(), "the tool reported an error without a message");
    }
}
