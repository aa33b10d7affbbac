//! CompactRetryHistory through the public API.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;
use toolsmith::capability::{CapabilityRegistry, CapabilitySpec, CompactRetryHistory};
use toolsmith::messages::{ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::prelude::*;
use toolsmith::tool::ToolOutput;

/// A tool that asks for a retry `fails` times, then answers.
fn flaky(name: &'static str, fails: u32) -> Tool<()> {
    let count = Arc::new(AtomicU32::new(0));
    Tool::from_schema(name, "Flaky.", json!({"type": "object", "properties": {}}), move |_ctx, _args| {
        let n = count.fetch_add(1, Ordering::SeqCst);
        async move {
            if n < fails {
                Err(ModelRetry::new(format!("attempt {} failed", n + 1)).into())
            } else {
                Ok(ToolOutput::Value(json!("ok")))
            }
        }
    })
}

/// The ids of the calls and of the answers in the messages.
fn ids(messages: &[ModelMessage]) -> Vec<String> {
    let mut out = Vec::new();
    for m in messages {
        match m {
            ModelMessage::Response(r) => out.extend(r.parts.iter().filter_map(|p| match p {
                ModelResponsePart::ToolCall(c) => Some(format!("call {}", c.tool_call_id)),
                _ => None,
            })),
            ModelMessage::Request(r) => out.extend(r.parts.iter().filter_map(|p| match p {
                ModelRequestPart::ToolReturn(t) => Some(format!("{:?} {}", t.outcome, t.tool_call_id)),
                _ => None,
            })),
        }
    }
    out
}

/// Calls `calls[k]` (parallel calls) on request k, then answers; records what it was sent.
fn scripted(calls: Vec<Vec<(&'static str, &'static str)>>) -> (FunctionModel, Arc<Mutex<Vec<Vec<String>>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let model = FunctionModel::sync(move |messages, _| {
        let mut log = log.lock().unwrap();
        let k = log.len();
        log.push(ids(messages));
        match calls.get(k) {
            Some(step) => ModelResponse::new(
                step.iter()
                    .map(|(tool, id)| ModelResponsePart::ToolCall(ToolCallPart::new(*tool, json!({}), *id)))
                    .collect(),
            ),
            None => ModelResponse::text("done"),
        }
    });
    (model, seen)
}

#[tokio::test]
async fn only_the_last_failed_attempt_is_sent() {
    let (model, seen) = scripted(vec![vec![("f", "a1")], vec![("f", "a2")], vec![("f", "a3")], vec![("f", "a4")]]);
    let agent =
        Agent::builder(model).tool(flaky("f", 3)).retries(3).capability(CompactRetryHistory::new()).build().unwrap();
    let result = agent.run("go").await.unwrap();
    let seen = seen.lock().unwrap();
    // The third request: two failures so far, the first dropped.
    assert_eq!(seen[2], ["call a2", "Retried a2"]);
    // The last request: the last failure, then the success.
    assert_eq!(seen[4], ["call a3", "Retried a3", "call a4", "Success a4"]);
    // The run's history keeps every attempt.
    assert_eq!(ids(result.all_messages()).len(), 8);
}

#[tokio::test]
async fn keep_last_and_parallel_calls() {
    // `g` succeeds at once beside `f`'s first failure: that response stays, without `f`'s call.
    let (model, seen) =
        scripted(vec![vec![("f", "a1"), ("g", "b1")], vec![("f", "a2")], vec![("f", "a3")], vec![("f", "a4")]]);
    let agent = Agent::builder(model)
        .tool(flaky("f", 3))
        .tool(flaky("g", 0))
        .retries(3)
        .capability(CompactRetryHistory::new().keep_last(2))
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(
        seen[4],
        ["call b1", "Success b1", "call a2", "Retried a2", "call a3", "Retried a3", "call a4", "Success a4"]
    );
}

#[tokio::test]
async fn tools_limits_the_compaction() {
    let (model, seen) = scripted(vec![vec![("f", "a1")], vec![("f", "a2")]]);
    let agent = Agent::builder(model)
        .tool(flaky("f", 1))
        .retries(2)
        .capability(CompactRetryHistory::new().tools(["other"]))
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    assert_eq!(seen.lock().unwrap()[2], ["call a1", "Retried a1", "call a2", "Success a2"]);
}

#[test]
fn from_a_spec() {
    let registry = CapabilityRegistry::<()>::new();
    let spec = CapabilitySpec::from_json(
        r#"["CompactRetryHistory", {"CompactRetryHistory": 2}, {"CompactRetryHistory": {"tools": ["f"]}}]"#,
    )
    .unwrap();
    assert_eq!(registry.load(&spec).unwrap().capabilities.len(), 3);
    let bad = CapabilitySpec::from_json(r#"[{"CompactRetryHistory": 0}]"#).unwrap();
    assert!(registry.load(&bad).unwrap_err().message.contains("keep_last must be at least 1"));
}
