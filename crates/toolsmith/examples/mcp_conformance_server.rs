//! The server the official MCP conformance suite's server scenarios test: every tool, resource
//! and prompt they call, served with `toolsmith::mcp_server` over streamable HTTP at
//! `http://127.0.0.1:<port>/mcp`.
//!
//! ```text
//! cargo run -p toolsmith --features mcp-server --example mcp_conformance_server -- --port 3001
//! node conformance/dist/index.js server --url http://127.0.0.1:3001/mcp --scenario tools-list
//! ```

use std::time::Duration;

use serde_json::{Value, json};
use toolsmith::mcp_server::{
    Elicitation, HttpOptions, LogLevel, McpRequest, McpServer, Prompt, PromptMessage, Resource, ResourceContent,
    ResourceTemplate,
};
use toolsmith::messages::{BinaryContent, UserContent};
use toolsmith::prelude::*;
use toolsmith::tool::ToolOutput;

/// A 1x1 red PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53, 0xDE, 0x00, 0x00, 0x00, 0x0C, 0x49,
    0x44, 0x41, 0x54, 0x08, 0xD7, 0x63, 0xF8, 0xCF, 0xC0, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00, 0x18, 0xDD, 0x8D, 0xB0,
    0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
];

/// A WAV header with no samples.
fn wav() -> Vec<u8> {
    let mut w = b"RIFF".to_vec();
    w.extend(36u32.to_le_bytes());
    w.extend(b"WAVEfmt ");
    w.extend(16u32.to_le_bytes());
    w.extend(1u16.to_le_bytes()); // PCM
    w.extend(1u16.to_le_bytes()); // mono
    w.extend(8000u32.to_le_bytes());
    w.extend(16000u32.to_le_bytes());
    w.extend(2u16.to_le_bytes());
    w.extend(16u16.to_le_bytes());
    w.extend(b"data");
    w.extend(0u32.to_le_bytes());
    w
}

fn resource_block(uri: &str, mime: &str, text: &str) -> UserContent {
    UserContent::Other(json!({"type": "resource", "resource": {"uri": uri, "mimeType": mime, "text": text}}))
}

/// Returns a simple text.
#[tool]
fn test_simple_text() -> String {
    "This is a simple text response for testing.".into()
}

/// Returns an image.
#[tool]
fn test_image_content() -> ToolReturn {
    ToolReturn::new(()).with_content(vec![BinaryContent::new(PNG, "image/png").into()])
}

/// Returns audio.
#[tool]
fn test_audio_content() -> ToolReturn {
    ToolReturn::new(()).with_content(vec![BinaryContent::new(wav(), "audio/wav").into()])
}

/// Returns an embedded resource.
#[tool]
fn test_embedded_resource() -> ToolReturn {
    ToolReturn::new(()).with_content(vec![resource_block(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )])
}

/// Returns text, an image and a resource.
#[tool]
fn test_multiple_content_types() -> ToolReturn {
    ToolReturn::new("Multiple content types test:").with_content(vec![
        BinaryContent::new(PNG, "image/png").into(),
        resource_block("test://mixed-content-resource", "application/json", r#"{"test":"data","value":123}"#),
    ])
}

/// Sends three log messages while it runs.
#[tool]
async fn test_tool_with_logging() -> String {
    if let Some(request) = McpRequest::current() {
        request.log(LogLevel::Info, "Tool execution started").await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        request.log(LogLevel::Info, "Tool processing data").await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        request.log(LogLevel::Info, "Tool execution completed").await;
    }
    "Tool with logging executed successfully".into()
}

/// Reports progress while it runs.
#[tool]
async fn test_tool_with_progress() -> String {
    let request = McpRequest::current();
    for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if let Some(request) = &request {
            request.progress(step, Some(100.0), None).await;
        }
    }
    "Tool with progress executed successfully".into()
}

/// Always fails.
#[tool]
fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::failed("This tool intentionally returns an error for testing"))
}

/// Asks the client's model.
#[tool]
async fn test_sampling(prompt: String) -> Result<String, ToolError> {
    let request = McpRequest::current().ok_or_else(|| ToolError::failed("not called through MCP"))?;
    let sampled = request.sample(prompt, 100).await.map_err(|e| ToolError::failed(e.to_string()))?;
    Ok(format!("LLM response: {}", sampled.text))
}

async fn elicit(message: &str, schema: Value) -> Result<String, ToolError> {
    let request = McpRequest::current().ok_or_else(|| ToolError::failed("not called through MCP"))?;
    let answer = request.elicit(message, schema).await.map_err(|e| ToolError::failed(e.to_string()))?;
    Ok(match answer {
        Elicitation::Accept(content) => format!("action=accept, content={content}"),
        Elicitation::Decline => "action=decline, content={}".into(),
        _ => "action=cancel, content={}".into(),
    })
}

/// Asks the user for their name and email.
#[tool]
async fn test_elicitation(message: String) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    });
    Ok(format!("User response: {}", elicit(&message, schema).await?))
}

/// Elicitation with defaults for every primitive type.
#[tool]
async fn test_elicitation_sep1034_defaults() -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "default": true},
        },
    });
    let answer = elicit("Please review and update the form fields with defaults", schema).await?;
    Ok(format!("Elicitation completed: {answer}"))
}

/// Elicitation with the five kinds of enum.
#[tool]
async fn test_elicitation_sep1330_enums() -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ]},
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "items": {"anyOf": [
                {"const": "value1", "title": "First Choice"},
                {"const": "value2", "title": "Second Choice"},
                {"const": "value3", "title": "Third Choice"},
            ]}},
        },
    });
    let answer = elicit("Please select options from the enum fields", schema).await?;
    Ok(format!("Elicitation completed: {answer}"))
}

/// Answers after a moment (the SSE polling scenario's tool).
#[tool]
async fn test_reconnection() -> String {
    tokio::time::sleep(Duration::from_millis(100)).await;
    "Reconnection test completed successfully".into()
}

fn json_schema_tool() -> Tool<()> {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
        "additionalProperties": false,
    });
    Tool::from_schema(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features",
        schema,
        |_, args| async move { Ok(ToolOutput::Value(json!(format!("Received: {args}")))) },
    )
}

fn text(
    t: &'static str,
) -> impl Fn(std::collections::HashMap<String, String>) -> std::future::Ready<Result<ResourceContent, String>> {
    move |_| std::future::ready(Ok(ResourceContent::Text(t.into())))
}

fn server() -> McpServer {
    let tools = FunctionToolset::new()
        .with_tools([
            test_simple_text,
            test_image_content,
            test_audio_content,
            test_embedded_resource,
            test_multiple_content_types,
            test_tool_with_logging,
            test_tool_with_progress,
            test_error_handling,
            test_sampling,
            test_elicitation,
            test_elicitation_sep1034_defaults,
            test_elicitation_sep1330_enums,
            test_reconnection,
        ])
        .with_tool(json_schema_tool());
    McpServer::builder(tools)
        .name("toolsmith-conformance-server")
        .resource(
            Resource::new(
                "test://static-text",
                "Static text",
                text("This is the content of the static text resource."),
            )
            .description("A static text resource")
            .mime_type("text/plain"),
        )
        .resource(
            Resource::new("test://static-binary", "Static binary", |_| async {
                Ok(ResourceContent::Binary(PNG.to_vec()))
            })
            .description("A static PNG image")
            .mime_type("image/png"),
        )
        .resource(
            Resource::new("test://watched-resource", "Watched resource", text("Watched resource content"))
                .description("A resource to subscribe to")
                .mime_type("text/plain"),
        )
        .resource_template(
            ResourceTemplate::new("test://template/{id}/data", "Template data", |vars| async move {
                let id = vars.get("id").cloned().unwrap_or_default();
                let data = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                Ok(ResourceContent::Text(data.to_string()))
            })
            .description("Data by id")
            .mime_type("application/json"),
        )
        .prompt(
            Prompt::new("test_simple_prompt", |_| async {
                Ok(vec![PromptMessage::user("This is a simple prompt for testing.")])
            })
            .description("A simple prompt without arguments"),
        )
        .prompt(
            Prompt::new("test_prompt_with_arguments", |args| async move {
                let (a, b) =
                    (args.get("arg1").cloned().unwrap_or_default(), args.get("arg2").cloned().unwrap_or_default());
                Ok(vec![PromptMessage::user(format!("Prompt with arguments: arg1='{a}', arg2='{b}'"))])
            })
            .description("A prompt with two arguments")
            .argument("arg1", "First test argument", true)
            .argument("arg2", "Second test argument", true),
        )
        .prompt(
            Prompt::new("test_prompt_with_embedded_resource", |args| async move {
                let uri = args.get("resourceUri").cloned().unwrap_or_default();
                Ok(vec![
                    PromptMessage::user(resource_block(&uri, "text/plain", "Embedded resource content for testing.")),
                    PromptMessage::user("Please process the embedded resource above."),
                ])
            })
            .description("A prompt with an embedded resource")
            .argument("resourceUri", "URI of the resource to embed", true),
        )
        .prompt(
            Prompt::new("test_prompt_with_image", |_| async {
                Ok(vec![
                    PromptMessage::user(BinaryContent::new(PNG, "image/png")),
                    PromptMessage::user("Please analyze the image above."),
                ])
            })
            .description("A prompt with an image"),
        )
        .build()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut port = 3001u16;
    let mut exit_with_stdin = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => port = args.next().ok_or("--port needs a value")?.parse()?,
            // For a test that starts it: the server ends when its parent closes its stdin.
            "--exit-with-stdin" => exit_with_stdin = true,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let running = server().serve_http(HttpOptions::new().port(port)).await?;
    eprintln!("listening on {}", running.url());
    if exit_with_stdin {
        let mut stdin = tokio::io::stdin();
        let _ = tokio::io::copy(&mut stdin, &mut tokio::io::sink()).await;
        running.shutdown().await;
    } else {
        running.wait().await;
    }
    Ok(())
}
