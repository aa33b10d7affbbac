//! The Rust side of the UI protocol comparison (tests/ui-differential): runs a scenario's
//! scripted run through this crate's adapter and prints the events of each request as JSON.
//!
//!     cargo run -p toolsmith-ui --example ui_differential -- SCENARIO.json PROTOCOL
//!
//! PROTOCOL is `ag_ui`, `vercel_ai_v5` or `vercel_ai_v6`. The history of a conversation is kept
//! here between requests (as the axum handlers keep it), and each request's approvals are bound
//! to the calls the previous run ended with.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::StreamExt;
use serde_json::{Value, json};
use toolsmith::messages::{ModelMessage, ModelResponse, ModelResponsePart, TextPart, ThinkingPart, ToolCallPart};
use toolsmith::model::{
    ModelError, ModelErrorKind, ModelRequestParameters, ModelStream, ModelStreamEvent, StreamingModel,
};
use toolsmith::prelude::*;
use toolsmith::tool::ToolOutput;
use toolsmith_ui::UiRunInput;
use toolsmith_ui::ag_ui::{AgUiStream, RunAgentInput};
use toolsmith_ui::vercel_ai::{SdkVersion, VercelAiStream, VercelRequest};

/// A model that streams the scenario's responses, one per request.
#[derive(Clone)]
struct Scripted {
    responses: Arc<Vec<Value>>,
    next: Arc<AtomicUsize>,
}

impl Scripted {
    fn events(&self) -> Vec<Result<ModelStreamEvent, ModelError>> {
        let index = self.next.fetch_add(1, Ordering::SeqCst);
        let Some(parts) = self.responses.get(index).and_then(Value::as_array) else {
            return vec![Err(ModelError::new(ModelErrorKind::Api, "the scenario has no more responses"))];
        };
        let mut events = Vec::new();
        let mut done = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            let pieces = |key: &str| -> Vec<String> {
                part[key].as_array().into_iter().flatten().filter_map(|p| p.as_str().map(String::from)).collect()
            };
            if part.get("text").is_some() {
                let text = pieces("text");
                events.extend(text.iter().map(|d| Ok(ModelStreamEvent::TextDelta { index: i, delta: d.clone() })));
                done.push(ModelResponsePart::Text(TextPart::new(text.concat())));
            } else if part.get("thinking").is_some() {
                let text = pieces("thinking");
                events.extend(text.iter().map(|d| Ok(ModelStreamEvent::ThinkingDelta { index: i, delta: d.clone() })));
                done.push(ModelResponsePart::Thinking(ThinkingPart::new(text.concat())));
            } else if let Some(call) = part.get("tool_call") {
                let (id, name) = (call["id"].as_str().unwrap_or_default(), call["name"].as_str().unwrap_or_default());
                let args: Vec<String> = call["args"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p.as_str().map(String::from))
                    .collect();
                events.push(Ok(ModelStreamEvent::ToolCallStart {
                    index: i,
                    tool_call_id: id.into(),
                    tool_name: name.into(),
                }));
                events.extend(
                    args.iter().map(|d| Ok(ModelStreamEvent::ToolCallArgsDelta { index: i, delta: d.clone() })),
                );
                let call = ToolCallPart::new(name, Value::String(args.concat()), id);
                events.push(Ok(ModelStreamEvent::ToolCallEnd { index: i, call: call.clone() }));
                done.push(ModelResponsePart::ToolCall(call));
            } else if let Some(message) = part["error"].as_str() {
                events.push(Err(ModelError::new(ModelErrorKind::Api, message)));
                return events;
            }
        }
        events.push(Ok(ModelStreamEvent::Final(ModelResponse::new(done))));
        events
    }
}

impl Model for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    async fn request(
        &self,
        _messages: &[ModelMessage],
        _settings: Option<&ModelSettings>,
        _params: &ModelRequestParameters,
    ) -> Result<ModelResponse, ModelError> {
        for event in self.events() {
            if let ModelStreamEvent::Final(r) = event? {
                return Ok(r);
            }
        }
        Err(ModelError::new(ModelErrorKind::Api, "no response"))
    }
}

impl StreamingModel for Scripted {
    async fn request_stream(
        &self,
        _messages: &[ModelMessage],
        _settings: Option<&ModelSettings>,
        _params: &ModelRequestParameters,
    ) -> Result<ModelStream, ModelError> {
        Ok(futures::stream::iter(self.events()).boxed())
    }
}

fn tool(spec: &Value) -> Tool<()> {
    let name = spec["name"].as_str().unwrap_or_default().to_string();
    let properties: serde_json::Map<String, Value> =
        spec["parameters"].as_object().into_iter().flatten().map(|(k, v)| (k.clone(), json!({"type": v}))).collect();
    let required: Vec<&String> = properties.keys().collect();
    let schema =
        json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false});
    let returns = spec["returns"].clone();
    let retry_first = spec["retry_first"].as_str().map(String::from);
    let fails = spec["fails"].as_str().map(String::from);
    let external = spec["external"].as_bool().unwrap_or(false);
    let calls = Arc::new(AtomicUsize::new(0));
    let description = spec["description"].as_str().unwrap_or_default().to_string();
    Tool::from_schema(name, description, schema, move |_ctx, _args| {
        let (returns, retry_first, fails) = (returns.clone(), retry_first.clone(), fails.clone());
        let first = calls.fetch_add(1, Ordering::SeqCst) == 0;
        async move {
            match (retry_first, fails) {
                (Some(message), _) if first => Err(ModelRetry::new(message).into()),
                (_, Some(message)) => Err(ToolError::failed(message)),
                _ if external => Err(CallDeferred::default().into()),
                _ => Ok(ToolOutput::Value(returns)),
            }
        }
    })
    .retries(2)
    .validate_args(true)
    .requires_approval(spec["approval"].as_bool().unwrap_or(false))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, path, protocol] = args.as_slice() else {
        return Err("usage: ui_differential SCENARIO.json PROTOCOL".into());
    };
    let scenario: Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let model = Scripted {
        responses: Arc::new(scenario["responses"].as_array().cloned().unwrap_or_default()),
        next: Arc::new(AtomicUsize::new(0)),
    };
    let mut builder = Agent::builder_streaming(model).retries(2);
    for spec in scenario["tools"].as_array().into_iter().flatten() {
        builder = builder.tool(tool(spec));
    }
    let turns = match scenario.get("output") {
        Some(output) => {
            run(builder.output_schema(output["schema"].clone()).allow_deferred().build()?, &scenario, protocol).await?
        }
        None => run(builder.allow_deferred().build()?, &scenario, protocol).await?,
    };
    println!("{}", serde_json::to_string(&turns)?);
    Ok(())
}

async fn run<O: Send + 'static>(
    agent: Agent<(), Deferrable<O>>,
    scenario: &Value,
    protocol: &str,
) -> Result<Vec<Value>, Box<dyn std::error::Error>> {
    let mut history: Vec<ModelMessage> = Vec::new();
    let mut pending: Option<toolsmith::deferred::DeferredToolRequests> = None;
    let mut turns = Vec::new();
    for body in scenario["requests"][protocol].as_array().into_iter().flatten() {
        let raw = serde_json::to_vec(body)?;
        let (input, mut sink): (UiRunInput, Box<dyn Sink>) = match protocol {
            "ag_ui" => {
                let request = RunAgentInput::from_json(&raw)?;
                (request.to_run_input()?, Box::new(AgUiStream::for_request(&request)))
            }
            other => {
                let version = if other == "vercel_ai_v6" { SdkVersion::V6 } else { SdkVersion::V5 };
                let request = VercelRequest::from_json(&raw)?;
                (request.to_run_input()?, Box::new(VercelAiStream::builder().sdk_version(version).build()))
            }
        };
        let mut run = agent.run(input.prompt.clone().unwrap_or_default()).message_history(history.clone());
        if let Some(p) = &pending
            && input.answers(p)
        {
            let results = input.deferred_results(p)?;
            sink.client_answered(results.calls.keys().cloned().collect());
            run = agent.resume().message_history(history.clone()).deferred_tool_results(results);
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let result = run.event_handler(move |e| drop(tx.send(e))).await;
        let mut events = sink.start();
        for e in rx.try_iter() {
            events.extend(sink.event(&e));
        }
        match &result {
            Ok(r) => {
                history = r.all_messages().to_vec();
                pending = r.deferred().cloned();
                events.extend(sink.finish(Ok(r.deferred())));
            }
            Err(e) => events.extend(sink.finish(Err(e))),
        }
        turns.push(Value::Array(events));
    }
    Ok(turns)
}

/// Either protocol's stream, its events as JSON.
trait Sink {
    fn client_answered(&mut self, ids: Vec<String>);
    fn start(&mut self) -> Vec<Value>;
    fn event(&mut self, e: &toolsmith::agent::AgentEvent) -> Vec<Value>;
    fn finish(&mut self, r: Result<Option<&toolsmith::deferred::DeferredToolRequests>, &AgentRunError>) -> Vec<Value>;
}

fn values<T: serde::Serialize>(events: Vec<T>) -> Vec<Value> {
    events.iter().filter_map(|e| serde_json::to_value(e).ok()).collect()
}

impl Sink for AgUiStream {
    fn client_answered(&mut self, ids: Vec<String>) {
        AgUiStream::client_answered(self, ids);
    }
    fn start(&mut self) -> Vec<Value> {
        values(AgUiStream::start(self))
    }
    fn event(&mut self, e: &toolsmith::agent::AgentEvent) -> Vec<Value> {
        values(AgUiStream::event(self, e))
    }
    fn finish(&mut self, r: Result<Option<&toolsmith::deferred::DeferredToolRequests>, &AgentRunError>) -> Vec<Value> {
        values(AgUiStream::finish(self, r))
    }
}

impl Sink for VercelAiStream {
    fn client_answered(&mut self, ids: Vec<String>) {
        VercelAiStream::client_answered(self, ids);
    }
    fn start(&mut self) -> Vec<Value> {
        self.start().iter().map(|c| c.to_json()).collect()
    }
    fn event(&mut self, e: &toolsmith::agent::AgentEvent) -> Vec<Value> {
        VercelAiStream::event(self, e).iter().map(|c| c.to_json()).collect()
    }
    fn finish(&mut self, r: Result<Option<&toolsmith::deferred::DeferredToolRequests>, &AgentRunError>) -> Vec<Value> {
        VercelAiStream::finish(self, r).iter().map(|c| c.to_json()).collect()
    }
}
