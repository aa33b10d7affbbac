//! A run that is not streamed reads, on the wire, as one streamed in whole parts.

use serde_json::{Value, json};
use toolsmith::messages::{ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::prelude::*;
use toolsmith_ui::ag_ui::{AgUiEvent, AgUiStream};
use toolsmith_ui::vercel_ai::{SdkVersion, VercelAiStream};

/// Look something up.
#[tool]
fn lookup(key: String) -> String {
    format!("value of {key}")
}

fn agent() -> Agent<(), Deferrable<String>> {
    let model = FunctionModel::sync(|messages, _| {
        if messages.len() == 1 {
            ModelResponse::new(vec![
                ModelResponsePart::Text(toolsmith::messages::TextPart::new("Looking.")),
                ModelResponsePart::ToolCall(ToolCallPart::new("lookup", json!({"key": "k"}), "c1")),
            ])
        } else {
            ModelResponse::text("Found it.")
        }
    });
    Agent::builder(model).tool(lookup).allow_deferred().build().unwrap()
}

fn types(events: &[Value]) -> Vec<String> {
    events.iter().map(|e| e["type"].as_str().unwrap_or("[DONE]").to_string()).collect()
}

#[tokio::test]
async fn ag_ui_events_of_a_run_that_is_not_streamed() {
    let (tx, rx) = std::sync::mpsc::channel();
    let result = agent().run("find k").event_handler(move |e| drop(tx.send(e))).await.unwrap();
    let mut stream = AgUiStream::builder().thread_id("t").run_id("r").build();
    let mut events: Vec<AgUiEvent> = stream.start();
    events.extend(rx.try_iter().flat_map(|e| stream.event(&e)));
    events.extend(stream.finish(Ok(result.deferred())));
    let values: Vec<Value> = events.iter().map(|e| serde_json::to_value(e).unwrap()).collect();
    assert_eq!(
        types(&values),
        [
            "RUN_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_END",
            "TOOL_CALL_RESULT",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "RUN_FINISHED"
        ]
    );
    assert_eq!(values[5]["delta"], r#"{"key":"k"}"#);
    assert_eq!(values[7]["content"], "value of k");
    assert!(values.iter().all(|v| v["timestamp"].is_i64()), "{values:?}");
}

#[tokio::test]
async fn vercel_chunks_of_a_run_that_is_not_streamed() {
    let (tx, rx) = std::sync::mpsc::channel();
    let result = agent().run("find k").event_handler(move |e| drop(tx.send(e))).await.unwrap();
    let mut stream = VercelAiStream::builder().sdk_version(SdkVersion::V6).build();
    let mut chunks = stream.start();
    chunks.extend(rx.try_iter().flat_map(|e| stream.event(&e)));
    chunks.extend(stream.finish(Ok(result.deferred())));
    let values: Vec<Value> = chunks.iter().map(|c| c.to_json()).collect();
    assert_eq!(
        types(&values),
        [
            "start",
            "start-step",
            "text-start",
            "text-delta",
            "text-end",
            "tool-input-start",
            "tool-input-delta",
            "tool-input-available",
            "tool-output-available",
            "finish-step",
            "start-step",
            "text-start",
            "text-delta",
            "text-end",
            "message-metadata",
            "finish-step",
            "finish",
            "[DONE]"
        ]
    );
    assert_eq!(values[7]["input"], json!({"key": "k"}));
    assert_eq!(chunks.last().unwrap().to_sse(), "data: [DONE]\n\n");
}
