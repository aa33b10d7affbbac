//! Agent runs end to end: histories written by Pydantic AI, bad input, panics, stepping, deferral.

use serde_json::{Value, json};
use toolsmith::agent::{Deferrable, Node};
use toolsmith::deferred::{DeferredToolResults, ToolApproval};
use toolsmith::messages::{
    ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart, ToolOutcome, parse_history,
};
use toolsmith::prelude::*;

fn call(name: &str, args: Value, id: &str) -> ModelResponse {
    ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(name, args, id))])
}

/// A model that plays a script, one response per request.
fn script(responses: Vec<ModelResponse>) -> FunctionModel {
    let responses = std::sync::Arc::new(std::sync::Mutex::new(responses.into_iter()));
    FunctionModel::sync(move |_, _| {
        responses.lock().unwrap().next().unwrap_or_else(|| ModelResponse::text("script exhausted"))
    })
}

/// Drops null-valued keys (Pydantic AI writes every optional field; toolsmith leaves absent ones out).
fn strip_nulls(v: Value) -> Value {
    match v {
        Value::Object(o) => {
            Value::Object(o.into_iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k, strip_nulls(v))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(strip_nulls).collect()),
        other => other,
    }
}

#[test]
fn histories_written_by_pydantic_ai_round_trip() {
    for file in ["pydantic_history.json", "pydantic_dice_history.json", "pydantic_native_history.json"] {
        let text = std::fs::read_to_string(format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let history = parse_history(&text).unwrap();
        assert!(history.len() >= 4, "{file}");
        let written = serde_json::to_string(&history).unwrap();
        let again = parse_history(&written).unwrap();
        assert_eq!(history, again, "{file} changes in a round trip");
        // What Pydantic AI wrote is kept: kinds, ids, contents, instructions, metadata.
        let original: Value = serde_json::from_str(&text).unwrap();
        let ours: Value = serde_json::from_str(&written).unwrap();
        for (a, b) in original.as_array().unwrap().iter().zip(ours.as_array().unwrap()) {
            assert_eq!(a["kind"], b["kind"]);
            assert_eq!(a.get("instructions").filter(|v| !v.is_null()), b.get("instructions"));
            for (pa, pb) in a["parts"].as_array().unwrap().iter().zip(b["parts"].as_array().unwrap()) {
                for key in [
                    "part_kind",
                    "content",
                    "tool_name",
                    "tool_call_id",
                    "args",
                    "signature",
                    "metadata",
                    "provider_name",
                    "provider_details",
                    "id",
                ] {
                    let a = pa.get(key).filter(|v| !v.is_null()).cloned().map(strip_nulls);
                    assert_eq!(a, pb.get(key).filter(|v| !v.is_null()).cloned().map(strip_nulls), "{file}: {key}");
                }
            }
        }
    }
}

#[test]
fn a_history_with_an_unknown_part_kind_is_a_clear_error() {
    let text = r#"[{"kind": "request", "parts": [{"part_kind": "hologram", "content": "?"}]}]"#;
    let err = parse_history(text).unwrap_err().to_string();
    assert!(err.contains("hologram"), "{err}");
    assert!(err.contains("message history"), "{err}");
    let broken = parse_history("[{\"kind\": \"request\", \"parts\": [").unwrap_err().to_string();
    assert!(broken.contains("EOF"), "{broken}");
}

/// Echo the message back.
#[tool]
fn echo(message: String) -> String {
    message
}

/// Panics.
#[tool]
async fn explode() -> String {
    panic!("the reactor is on fire")
}

/// Panics on the blocking pool.
#[tool]
fn explode_sync() -> String {
    panic!("the sync reactor is on fire")
}

#[tokio::test]
async fn a_panicking_tool_ends_the_run_with_a_clear_error_and_the_agent_stays_usable() {
    for tool in ["explode", "explode_sync"] {
        let agent = Agent::builder(script(vec![
            call(tool, json!({}), "c1"),
            call("echo", json!({"message": "still here"}), "c2"),
            ModelResponse::text("done"),
        ]))
        .tools([explode, explode_sync, echo])
        .build()
        .unwrap();
        let err = agent.run("go").await.unwrap_err();
        match &err {
            AgentRunError::ToolPanicked { tool: t, message } => {
                assert_eq!(t, tool);
                assert!(message.contains("on fire"), "{message}");
            }
            other => panic!("unexpected error {other:?}"),
        }
        assert!(err.to_string().contains(tool));
        // The same agent runs again.
        let ok = agent.run("go again").await.unwrap();
        assert_eq!(ok.output(), "done");
    }
}

#[tokio::test]
async fn stepping_through_a_run_node_by_node() {
    let agent = Agent::builder(script(vec![call("echo", json!({"message": "hi"}), "c1"), ModelResponse::text("bye")]))
        .tool(echo)
        .build()
        .unwrap();
    let mut run = agent.run("go").iter().unwrap();
    let mut kinds = Vec::new();
    loop {
        let node = run.next().await.unwrap();
        kinds.push(match &node {
            Node::UserPrompt => "user_prompt",
            Node::ModelRequest { .. } => "model_request",
            Node::CallTools { parts } => {
                assert!(matches!(&parts[0], ModelRequestPart::ToolReturn(r) if r.content == json!("hi")));
                "call_tools"
            }
            Node::End => "end",
            _ => "other",
        });
        if matches!(node, Node::End) {
            break;
        }
    }
    assert_eq!(kinds, ["user_prompt", "model_request", "call_tools", "model_request", "end"]);
    let result = run.into_result().unwrap();
    assert_eq!(result.output(), "bye");
    assert_eq!(result.usage().requests, 2);
    assert_eq!(result.usage().tool_calls, 1);
}

/// Delete a file.
#[tool(requires_approval)]
fn delete_file(path: String) -> String {
    format!("File '{path}' deleted")
}

#[tokio::test]
async fn approval_round_trip_through_deferred_results() {
    let agent = Agent::builder(script(vec![
        ModelResponse::new(vec![
            ModelResponsePart::ToolCall(ToolCallPart::new("delete_file", json!({"path": "a"}), "d1")),
            ModelResponsePart::ToolCall(ToolCallPart::new("delete_file", json!({"path": "b"}), "d2")),
        ]),
        ModelResponse::text("finished"),
    ]))
    .tool(delete_file)
    .allow_deferred()
    .build()
    .unwrap();
    let first = agent.run("delete a and b").await.unwrap();
    let requests = first.output().deferred().expect("the run ends waiting for approval").clone();
    assert_eq!(requests.approvals.iter().map(|c| c.tool_call_id.as_str()).collect::<Vec<_>>(), ["d1", "d2"]);

    // Missing a decision is a clear error.
    let incomplete = agent
        .resume()
        .message_history(first.all_messages().to_vec())
        .deferred_tool_results(DeferredToolResults::new().approve("d1", true))
        .await
        .unwrap_err();
    assert!(
        incomplete.to_string().contains("expects results for ['d1', 'd2'], the deferred tool results answer ['d1']"),
        "{incomplete}"
    );

    let second = agent
        .resume()
        .message_history(first.all_messages().to_vec())
        .deferred_tool_results(
            DeferredToolResults::new().approve("d1", true).approve("d2", ToolApproval::denied_with("not b")),
        )
        .await
        .unwrap();
    assert_eq!(second.output(), &Deferrable::Output("finished".to_string()));
    let ModelMessage::Request(results) = &second.new_messages()[0] else { panic!("expected a request") };
    let outcomes: Vec<(ToolOutcome, Value)> = results
        .parts
        .iter()
        .filter_map(|p| match p {
            ModelRequestPart::ToolReturn(r) => Some((r.outcome, r.content.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        outcomes,
        vec![(ToolOutcome::Success, json!("File 'a' deleted")), (ToolOutcome::Denied, json!("not b"))]
    );
    assert_eq!(second.usage().tool_calls, 1);
}

#[tokio::test]
async fn deferred_calls_without_deferred_output_are_a_user_error() {
    // A tool that always needs approval: a mistake `build()` reports.
    let err = Agent::builder(script(vec![])).tool(delete_file).build().unwrap_err();
    assert!(err.message.contains("'delete_file'") && err.message.contains("DeferredToolRequests"), "{err}");

    /// Delete a file; asks for approval when the file is protected.
    #[tool]
    fn remove(path: String) -> Result<String, ApprovalRequired> {
        if path.starts_with('.') { Err(ApprovalRequired::default()) } else { Ok(format!("removed {path}")) }
    }
    // One that asks at call time: the run that meets the call fails.
    let agent =
        Agent::builder(script(vec![call("remove", json!({"path": ".env"}), "d1")])).tool(remove).build().unwrap();
    let err = agent.run("go").await.unwrap_err();
    assert!(matches!(err, AgentRunError::User(_)));
    assert!(err.to_string().contains("DeferredToolRequests"), "{err}");
}

#[tokio::test]
async fn malformed_arguments_from_the_model_are_retried_with_every_error() {
    /// Add two integers.
    #[tool]
    fn add(x: i64, y: i64) -> i64 {
        x + y
    }
    let agent = Agent::builder(script(vec![
        call("add", json!("{\"x\": 1, \"y\": "), "c1"),
        call("add", json!({"x": "one", "z": 3}), "c2"),
        call("add", json!({"x": "1", "y": 2}), "c3"),
        ModelResponse::text("3"),
    ]))
    .tool(add)
    .retries(3)
    .build()
    .unwrap();
    let result = agent.run("go").await.unwrap();
    let returns: Vec<Value> = result
        .all_messages()
        .iter()
        .filter_map(|m| match m {
            ModelMessage::Request(r) => r.parts.iter().find_map(|p| match p {
                ModelRequestPart::ToolReturn(t) => Some(t.content.clone()),
                _ => None,
            }),
            _ => None,
        })
        .collect();
    assert_eq!(returns[0][0]["type"], "json_invalid");
    let kinds: Vec<&str> = returns[1].as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["int_parsing", "missing", "extra_forbidden"]);
    assert_eq!(returns[2], json!(3));
}

/// Add two numbers.
#[tool]
fn add_numbers(a: i64, b: i64) -> i64 {
    a + b
}

#[tokio::test]
async fn test_model_names_unknown_and_withheld_tools_as_user_errors() {
    let run = |names: &[&str], deferred: bool| {
        let agent = Agent::builder(TestModel::default().call_tools(names.iter().copied()))
            .tool(Tool::from(add_numbers).defer_loading(deferred))
            .build()
            .unwrap();
        async move { agent.run("go").await.unwrap_err() }
    };
    let unknown = run(&["nope"], false).await;
    assert!(matches!(&unknown, AgentRunError::User(_)), "{unknown:?}");
    assert_eq!(unknown.to_string(), "TestModel was configured to call unknown tool 'nope'.");
    let withheld = run(&["add_numbers"], true).await;
    assert!(matches!(&withheld, AgentRunError::User(_)), "{withheld:?}");
    assert!(withheld.to_string().contains("'add_numbers' has visibility 'withheld'"), "{withheld}");
}

#[test]
fn tools_added_before_the_dependency_type_are_reported_not_dropped() {
    /// Ping.
    #[tool]
    fn ping() -> String {
        "pong".into()
    }
    let err = Agent::builder(TestModel::default())
        .tool(ping)
        .capability(toolsmith::capability::ReinjectSystemPrompt::new())
        .deps::<String>()
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("1 tool, 1 capability added before it would be lost"), "{err}");
    // In the right order everything is kept.
    let agent = Agent::builder(TestModel::default()).deps::<String>().tool(ping).build().unwrap();
    let result = agent.run("hi").deps("x".to_string()).run_sync().unwrap();
    assert!(result.output().contains("pong"));
}
