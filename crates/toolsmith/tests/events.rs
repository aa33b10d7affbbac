//! Run events: the handler sees requests, responses, tool calls and results, and streamed deltas
//! from a streaming model.

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use serde_json::json;
use toolsmith::agent::AgentEvent;
use toolsmith::messages::{ModelMessage, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::model::{Model, ModelError, ModelRequestParameters, ModelStream, ModelStreamEvent, StreamingModel};
use toolsmith::prelude::*;

/// Echo the message back.
#[tool]
fn echo(message: String) -> String {
    message
}

fn describe(e: &AgentEvent) -> String {
    match e {
        AgentEvent::ModelRequest { step } => format!("request {step}"),
        AgentEvent::Stream(ModelStreamEvent::TextDelta { delta, .. }) => format!("delta {delta}"),
        AgentEvent::Stream(_) => "stream".into(),
        AgentEvent::ModelResponse { response } => format!("response {}", response.parts.len()),
        AgentEvent::FunctionToolCall { call, args_valid } => format!("call {} {args_valid}", call.tool_name),
        AgentEvent::FunctionToolResult { result } => format!("result {} {}", result.tool_name, result.content_text()),
        AgentEvent::FinalResult { tool_name } => format!("final {tool_name:?}"),
        _ => "other".into(),
    }
}

fn script() -> FunctionModel {
    FunctionModel::sync(|messages, _| match messages.len() {
        1 => ModelResponse::new(vec![
            ModelResponsePart::ToolCall(ToolCallPart::new("echo", json!({"message": "hi"}), "c1")),
            ModelResponsePart::ToolCall(ToolCallPart::new("echo", json!({"msg": "oops"}), "c2")),
        ]),
        _ => ModelResponse::text("done"),
    })
}

#[tokio::test]
async fn the_event_handler_sees_every_stage_in_order() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let agent = Agent::builder(script()).tool(echo).retries(2).build().unwrap();
    let result = agent.run("go").event_handler(move |e| sink.lock().unwrap().push(describe(&e))).await.unwrap();
    assert_eq!(result.output(), "done");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            "request 1",
            "response 2",
            "call echo true",
            "call echo false",
            "result echo hi",
            r#"result echo [{"type":"missing","loc":["message"],"msg":"Field required","input":{"msg":"oops"}},{"type":"extra_forbidden","loc":["msg"],"msg":"Extra inputs are not permitted","input":"oops"}]"#,
            "request 2",
            "response 1",
            "final None",
        ]
    );
}

/// A model that streams its text in pieces.
struct Chunky;

impl Model for Chunky {
    fn name(&self) -> &str {
        "chunky"
    }

    async fn request(
        &self,
        _messages: &[ModelMessage],
        _settings: Option<&ModelSettings>,
        _params: &ModelRequestParameters,
    ) -> Result<ModelResponse, ModelError> {
        Ok(ModelResponse::text("Hello world"))
    }
}

impl StreamingModel for Chunky {
    async fn request_stream(
        &self,
        _messages: &[ModelMessage],
        _settings: Option<&ModelSettings>,
        _params: &ModelRequestParameters,
    ) -> Result<ModelStream, ModelError> {
        let events = vec![
            Ok(ModelStreamEvent::TextDelta { index: 0, delta: "Hello".into() }),
            Ok(ModelStreamEvent::TextDelta { index: 0, delta: " world".into() }),
            Ok(ModelStreamEvent::Final(ModelResponse::text("Hello world"))),
        ];
        Ok(Box::pin(futures::stream::iter(events)))
    }
}

#[tokio::test]
async fn a_streaming_model_sends_its_deltas_as_events() {
    let agent = Agent::builder_streaming(Chunky).build().unwrap();
    let (events, run) = agent.run("hi").stream();
    let (result, events) = tokio::join!(run, events.map(|e| describe(&e)).collect::<Vec<_>>());
    assert_eq!(result.unwrap().output(), "Hello world");
    assert_eq!(events, ["request 1", "delta Hello", "delta  world", "response 1", "final None"]);

    // Without a handler the same agent makes a plain request.
    assert_eq!(agent.run("hi").await.unwrap().output(), "Hello world");
}
