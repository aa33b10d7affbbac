//! Shared helpers of the provider wire tests: fixtures, a sequenced wiremock responder, and the
//! weather agent.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::Mutex;

use serde_json::Value;
use toolsmith::model::{ModelStream, ModelStreamEvent};
use toolsmith::prelude::*;
use wiremock::{MockServer, Request, Respond, ResponseTemplate};

/// A history of one user prompt.
pub fn user(text: &str) -> Vec<ModelMessage> {
    vec![toolsmith::messages::ModelRequest::user_prompt(text).into()]
}

/// A fixture file's text.
pub fn fixture(provider: &str, name: &str) -> String {
    let path = format!("{}/tests/fixtures/{provider}/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

/// A fixture file parsed as JSON.
pub fn fixture_json(provider: &str, name: &str) -> Value {
    serde_json::from_str(&fixture(provider, name)).expect("fixture is JSON")
}

/// A JSON response from a fixture.
pub fn json_response(provider: &str, name: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(fixture(provider, name), "application/json")
}

/// An SSE response from a fixture.
pub fn sse_response(provider: &str, name: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(fixture(provider, name), "text/event-stream")
}

/// Answers with the given responses in order (the last one repeats).
pub struct Seq(Mutex<VecDeque<ResponseTemplate>>);

impl Seq {
    pub fn new(responses: impl IntoIterator<Item = ResponseTemplate>) -> Self {
        Seq(Mutex::new(responses.into_iter().collect()))
    }
}

impl Respond for Seq {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let mut q = self.0.lock().unwrap();
        if q.len() > 1 {
            q.pop_front().unwrap()
        } else {
            q.front().cloned().unwrap_or_else(|| ResponseTemplate::new(500))
        }
    }
}

/// The bodies of the requests the server received, as JSON.
pub async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).expect("request body is JSON"))
        .collect()
}

/// The received requests.
pub async fn requests(server: &MockServer) -> Vec<Request> {
    server.received_requests().await.unwrap_or_default()
}

/// Get the current weather in a city.
///
/// # Arguments
/// * `city` - The city.
#[tool]
pub async fn get_weather(city: String) -> String {
    format!("Sunny in {city}")
}

/// The weather agent of the example.
pub fn weather_agent<M: Model>(model: M) -> Agent {
    Agent::builder(model).system_prompt("You are a weather assistant.").tool(get_weather).build().expect("agent builds")
}

/// Every event of a stream.
pub async fn events(mut stream: ModelStream) -> Vec<ModelStreamEvent> {
    use futures::StreamExt;
    let mut out = Vec::new();
    while let Some(e) = stream.next().await {
        out.push(e.expect("stream event"));
    }
    out
}

/// The weather tool's JSON schema as toolsmith generates it.
pub fn weather_schema() -> Value {
    serde_json::json!({
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city."}},
        "required": ["city"],
        "additionalProperties": false
    })
}
