//! What a run that ends with an error in a step leaves behind: the results of the calls that
//! already ran stay in the history, as Pydantic AI 2.68 records them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use toolsmith::agent::ParallelMode;
use toolsmith::messages::{
    ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart, ToolOutcome,
};
use toolsmith::prelude::*;

fn calls(list: &[(&str, Value, &str)]) -> ModelResponse {
    ModelResponse::new(
        list.iter().map(|(n, a, id)| ModelResponsePart::ToolCall(ToolCallPart::new(*n, a.clone(), *id))).collect(),
    )
}

fn responses(messages: &[ModelMessage]) -> usize {
    messages.iter().filter(|m| matches!(m, ModelMessage::Response(_))).count()
}

/// The model answers request k with `script[k]` (text "done" after the script).
fn script(script: Vec<ModelResponse>) -> FunctionModel {
    FunctionModel::sync(move |messages, _| {
        script.get(responses(messages)).cloned().unwrap_or_else(|| ModelResponse::text("done"))
    })
}

/// Counts the transfers it makes: a side effect the history must not forget.
fn transfer(count: Arc<AtomicUsize>) -> Tool<()> {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Args {
        amount: u32,
    }
    Tool::new("transfer", move |_ctx: RunContext<()>, a: Args| {
        let count = count.clone();
        async move {
            count.fetch_add(1, Ordering::SeqCst);
            Ok::<_, ToolError>(format!("sent {}", a.amount))
        }
    })
}

/// Always asks for a retry; with `retries(0)` its first failure ends the run.
#[tool(retries = 0)]
fn always_retry(reason: String) -> Result<String, ModelRetry> {
    Err(ModelRetry::new(reason))
}

/// Look something up.
#[tool]
fn flaky(query: String) -> Result<String, ModelRetry> {
    if query == "bad" {
        return Err(ModelRetry::new("bad query"));
    }
    Ok("found".into())
}

/// Always fails.
#[tool]
fn boom() -> Result<String, ToolError> {
    Err(ToolError::failed("kaboom"))
}

/// Add two numbers (no retries: invalid arguments end the run).
#[tool(retries = 0)]
fn strict_add(a: i64, b: i64) -> i64 {
    a + b
}

/// The parts of the last request of `messages`: (tool name, outcome) for tool returns, "user" for
/// user prompts.
fn last_request(messages: &[ModelMessage]) -> Vec<(String, String)> {
    let Some(ModelMessage::Request(r)) = messages.last() else { panic!("the history ends with a request") };
    r.parts
        .iter()
        .map(|p| match p {
            ModelRequestPart::ToolReturn(t) => (t.tool_name.clone(), format!("{:?}:{}", t.outcome, t.content_text())),
            ModelRequestPart::UserPrompt(_) => ("user".into(), String::new()),
            other => (format!("{other:?}"), String::new()),
        })
        .collect()
}

fn pair(name: &str, outcome: &str) -> (String, String) {
    (name.to_string(), outcome.to_string())
}

#[tokio::test]
async fn results_of_calls_that_ran_stay_when_a_later_call_exhausts_its_retries() {
    for mode in [ParallelMode::Sequential, ParallelMode::Parallel] {
        let sent = Arc::new(AtomicUsize::new(0));
        let agent = Agent::builder(script(vec![calls(&[
            ("transfer", json!({"amount": 5}), "c1"),
            ("flaky", json!({"query": "bad"}), "c2"),
            ("always_retry", json!({"reason": "no"}), "c3"),
            ("transfer", json!({"amount": 7}), "c4"),
        ])]))
        .tool(transfer(sent.clone()))
        .tools([flaky, always_retry])
        .parallel_mode(mode)
        .build()
        .unwrap();
        let record = agent.run("pay").run_capturing().await;
        let err = record.result.unwrap_err();
        assert!(err.to_string().contains("Tool 'always_retry' exceeded max retries count of 0"), "{err}");
        let ran = sent.load(Ordering::SeqCst);
        let parts = last_request(&record.messages);
        let mut expected = vec![pair("transfer", "Success:sent 5"), pair("flaky", "Retried:bad query")];
        if ran == 2 {
            // In parallel mode the whole segment ran: the second transfer too.
            expected.push(pair("transfer", "Success:sent 7"));
        }
        assert_eq!(parts, expected, "{mode:?}");
        assert_eq!(ran, if mode == ParallelMode::Sequential { 1 } else { 2 }, "{mode:?}");
        assert_eq!(record.usage.tool_calls as usize, ran, "{mode:?}");
    }
}

#[tokio::test]
async fn results_of_calls_that_ran_stay_when_a_tool_fails_or_a_hook_ends_the_step() {
    let sent = Arc::new(AtomicUsize::new(0));
    let agent =
        Agent::builder(script(vec![calls(&[("transfer", json!({"amount": 5}), "c1"), ("boom", json!({}), "c2")])]))
            .tool(transfer(sent.clone()))
            .tool(boom)
            .parallel_mode(ParallelMode::Sequential)
            .build()
            .unwrap();
    let record = agent.run("pay").run_capturing().await;
    assert!(matches!(record.result, Err(AgentRunError::ToolFailed { .. })));
    assert_eq!(last_request(&record.messages), vec![pair("transfer", "Success:sent 5")]);

    // A hook that ends the step with an error after the first call ran.
    let sent = Arc::new(AtomicUsize::new(0));
    let hooks = Hooks::new().after_tool_execute(|_ctx, call, _args, out| async move {
        if call.call.tool_call_id == "c2" {
            return Err(ToolError::failed("the audit log refused the second transfer"));
        }
        Ok(out)
    });
    let agent = Agent::builder(script(vec![calls(&[
        ("transfer", json!({"amount": 5}), "c1"),
        ("transfer", json!({"amount": 9}), "c2"),
        ("transfer", json!({"amount": 11}), "c3"),
    ])]))
    .tool(transfer(sent.clone()))
    .capability(hooks)
    .parallel_mode(ParallelMode::Sequential)
    .build()
    .unwrap();
    let record = agent.run("pay").run_capturing().await;
    let err = record.result.unwrap_err();
    assert!(err.to_string().contains("audit log refused"), "{err}");
    // The second transfer happened too (its hook failed after it): only the third never ran.
    assert_eq!(sent.load(Ordering::SeqCst), 2);
    assert_eq!(last_request(&record.messages), vec![pair("transfer", "Success:sent 5")]);

    // A conversation continued from that history sees what was done.
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let next = Agent::builder(FunctionModel::sync(move |messages, _| {
        *log.lock().unwrap() = messages.to_vec();
        ModelResponse::text("ok")
    }))
    .build()
    .unwrap();
    next.run("what happened?").message_history(record.messages.clone()).await.unwrap();
    let shown = seen.lock().unwrap().clone();
    assert!(shown.iter().any(|m| matches!(m, ModelMessage::Request(r) if r.parts.iter().any(
        |p| matches!(p, ModelRequestPart::ToolReturn(t) if t.outcome == ToolOutcome::Success && t.content_text() == "sent 5")
    ))));
}

#[tokio::test]
async fn a_validation_failure_that_ends_the_run_leaves_the_request_empty_as_nothing_ran() {
    // Pydantic AI validates every call of a step before any runs: nothing ran, nothing is kept.
    let sent = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder(script(vec![calls(&[
        ("transfer", json!({"amount": 5}), "c1"),
        ("strict_add", json!({"a": "x", "b": 1}), "c2"),
    ])]))
    .tool(transfer(sent.clone()))
    .tool(strict_add)
    .build()
    .unwrap();
    let record = agent.run("pay").run_capturing().await;
    assert!(record.result.unwrap_err().to_string().contains("Tool 'strict_add' exceeded max retries count of 0"));
    assert_eq!(sent.load(Ordering::SeqCst), 0);
    assert_eq!(last_request(&record.messages), vec![]);
}

/// Reads a file the model names.
#[tool]
fn read_config(path: String) -> std::io::Result<String> {
    std::fs::read_to_string(path)
}

#[tokio::test]
async fn a_tools_error_value_stays_reachable_as_the_runs_error_source() {
    let missing = "/nonexistent/toolsmith/config.toml";
    let agent = Agent::builder(script(vec![calls(&[("read_config", json!({"path": missing}), "c1")])]))
        .tool(read_config)
        .build()
        .unwrap();
    let err = agent.run("read it").await.unwrap_err();
    let AgentRunError::ToolFailed { tool, kind, source, .. } = &err else { panic!("unexpected {err:?}") };
    assert_eq!((tool.as_str(), kind.as_str()), ("read_config", "ToolError"));
    let source = source.as_deref().expect("the io::Error is kept");
    let io = source.downcast_ref::<std::io::Error>().expect("an io::Error");
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    // `source()` walks from the run's error to the tool's.
    let chained = std::error::Error::source(&err).expect("a source");
    assert!(chained.downcast_ref::<std::io::Error>().is_some());
}

/// An error type of the application's own, with a cause.
#[derive(Debug)]
struct QuotaError {
    cause: std::num::ParseIntError,
}

impl std::fmt::Display for QuotaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the quota is not a number")
    }
}

impl std::error::Error for QuotaError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.cause)
    }
}

/// Reads the quota.
#[tool]
async fn quota(raw: String) -> Result<u32, QuotaError> {
    let n: u32 = raw.parse().map_err(|cause| QuotaError { cause })?;
    Ok(n)
}

#[tokio::test]
async fn any_error_type_ends_the_run_with_its_chain() {
    let agent =
        Agent::builder(script(vec![calls(&[("quota", json!({"raw": "ten"}), "c1")])])).tool(quota).build().unwrap();
    let err = agent.run("quota?").await.unwrap_err();
    assert_eq!(err.to_string(), "tool 'quota' failed: the quota is not a number");
    let source = std::error::Error::source(&err).expect("the tool's error");
    assert!(source.downcast_ref::<QuotaError>().is_some());
    let cause = source.source().expect("its own cause");
    assert!(cause.downcast_ref::<std::num::ParseIntError>().is_some());
    // The function itself stays callable.
    assert_eq!(quota_fn("7".into()).await.unwrap(), 7);
}
