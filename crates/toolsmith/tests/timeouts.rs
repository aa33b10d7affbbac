//! Timeouts as `Duration`s: what a run does at a tool's timeout, synchronous tools that keep
//! running past it, `run_sync`, and timeout values at the edges of what a `Duration` holds.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolsmith::capability::ThreadExecutor;
use toolsmith::messages::{ModelMessage, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::model::ModelSettings;
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

/// Sleep (blocking) for the given milliseconds.
#[tool]
fn nap(ms: u64) -> String {
    std::thread::sleep(Duration::from_millis(ms));
    "rested".into()
}

/// Answer at once.
#[tool]
fn quick() -> String {
    "quick".into()
}

/// The contents of the tool returns that asked the model to try again.
fn retry_texts(messages: &[ModelMessage]) -> Vec<String> {
    let history = serde_json::to_value(messages).unwrap();
    let mut texts = Vec::new();
    for m in history.as_array().unwrap() {
        for p in m["parts"].as_array().unwrap() {
            if p["outcome"] == "retried" {
                texts.push(p["content"].to_string());
            }
        }
    }
    texts
}

#[test]
fn run_sync_returns_at_the_timeout_of_a_synchronous_tool() {
    let agent = Agent::builder(script(vec![call("nap", json!({"ms": 3000}), "c1"), ModelResponse::text("done")]))
        .tool(Tool::from(nap).timeout(Duration::from_millis(200)))
        .build()
        .unwrap();
    let started = Instant::now();
    let result = agent.run("rest").run_sync().unwrap();
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_millis(2500), "run_sync waited for the timed-out tool: {elapsed:?}");
    assert_eq!(result.output(), "done");
    let retries = retry_texts(result.all_messages());
    assert_eq!(retries.len(), 1, "{retries:?}");
    assert!(retries[0].contains("Timed out after 0.2 seconds."), "{retries:?}");
}

#[test]
fn a_pool_held_by_timed_out_tools_is_reported_as_such() {
    let pool = ThreadExecutor::new(1);
    let agent = Agent::builder(script(vec![
        call("nap", json!({"ms": 3000}), "c1"),
        call("quick", json!({}), "c2"),
        ModelResponse::text("done"),
    ]))
    .tool(Tool::from(nap).timeout(Duration::from_millis(100)))
    .tool(Tool::from(quick).timeout(Duration::from_millis(100)))
    .capability(pool.clone())
    .build()
    .unwrap();
    let err = agent.run("go").run_sync().unwrap_err();
    assert_eq!(pool.running_past_timeout(), 1);
    let text = err.to_string();
    assert!(text.contains("BlockingPoolExhausted") || text.contains("could not start within its timeout"), "{text}");
    assert!(text.contains("`quick`") && text.contains("1 of them"), "{text}");
    // Once the sleeper returns, its slot is free again and the count drops.
    let deadline = Instant::now() + Duration::from_secs(10);
    while pool.running_past_timeout() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(pool.running_past_timeout(), 0);
}

#[test]
fn a_tool_that_waits_for_a_busy_pool_without_overdue_tools_times_out_as_usual() {
    let pool = ThreadExecutor::new(1);
    let model = FunctionModel::sync(|messages, _| {
        if messages.len() == 1 {
            ModelResponse::new(vec![
                ModelResponsePart::ToolCall(ToolCallPart::new("nap", json!({"ms": 400}), "c1")),
                ModelResponsePart::ToolCall(ToolCallPart::new("quick", json!({}), "c2")),
            ])
        } else {
            ModelResponse::text("done")
        }
    });
    let agent = Agent::builder(model)
        .tool(Tool::from(nap).timeout(Duration::from_secs(5)))
        .tool(Tool::from(quick).timeout(Duration::from_millis(100)))
        .capability(pool.clone())
        .build()
        .unwrap();
    let result = agent.run("go").run_sync().unwrap();
    assert_eq!(result.output(), "done");
    let retries = retry_texts(result.all_messages());
    assert_eq!(retries.len(), 1, "{retries:?}");
    assert!(retries[0].contains("Timed out after 0.1 seconds."), "{retries:?}");
    assert_eq!(pool.running_past_timeout(), 0);
}

#[test]
fn the_longest_timeouts_are_no_deadline() {
    for timeout in [Duration::MAX, Duration::from_secs(u64::MAX / 2), Duration::from_secs(1 << 40)] {
        let agent = Agent::builder(script(vec![call("quick", json!({}), "c1"), ModelResponse::text("done")]))
            .tool(Tool::from(quick).timeout(timeout))
            .tool_timeout(timeout)
            .build()
            .unwrap();
        assert_eq!(agent.run("go").run_sync().unwrap().output(), "done");
        let settings = ModelSettings::new().timeout(timeout);
        let agent = Agent::builder(TestModel::default()).model_settings(settings).build().unwrap();
        assert!(agent.run("go").run_sync().is_ok());
    }
}

#[test]
fn zero_timeouts_are_configuration_errors() {
    let err = Agent::builder(TestModel::default()).tool(Tool::from(quick).timeout(Duration::ZERO)).build().unwrap_err();
    assert!(err.to_string().contains("greater than 0"), "{err}");
    let err = Agent::builder(TestModel::default()).tool_timeout(Duration::ZERO).build().unwrap_err();
    assert!(err.to_string().contains("greater than 0"), "{err}");
    let toolset = FunctionToolset::new().with_tool(quick).timeout(Duration::ZERO);
    let err = Agent::builder(TestModel::default()).toolset(toolset).build().unwrap_err();
    assert!(err.to_string().contains("greater than 0"), "{err}");
}

#[tokio::test]
async fn run_sync_inside_a_runtime_is_an_error_not_a_panic() {
    let agent = Agent::builder(TestModel::default()).build().unwrap();
    let err = agent.run("hi").run_sync().unwrap_err();
    assert!(err.to_string().contains("`.await` the run"), "{err}");
    // The agent still works the async way.
    assert!(agent.run("hi").await.is_ok());
}

/// Wait a little.
#[tool(timeout = "250ms")]
async fn brief() -> String {
    "ok".into()
}

#[test]
fn the_macro_takes_a_duration_with_a_unit() {
    let tool: Tool<()> = brief.into();
    assert_eq!(tool.definition().timeout, Some(Duration::from_millis(250)));
}

#[test]
fn timeouts_in_json_are_seconds_and_bad_ones_are_errors() {
    let settings = ModelSettings::new().timeout(Duration::from_millis(1500));
    let json = serde_json::to_value(&settings).unwrap();
    assert_eq!(json["timeout"], json!(1.5));
    let back: ModelSettings = serde_json::from_value(json).unwrap();
    assert_eq!(back.timeout, Some(Duration::from_millis(1500)));
    for bad in [json!(-1.0), json!(1e300), json!("5s")] {
        assert!(serde_json::from_value::<ModelSettings>(json!({"timeout": bad})).is_err(), "{bad}");
    }
}
