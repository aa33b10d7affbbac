//! Arguments validators: over the raw JSON, over the arguments as a Rust type, and async; what
//! the model is sent when they refuse, and their panics.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolsmith::messages::{
    ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart, ToolOutcome, ToolReturnPart,
};
use toolsmith::prelude::*;
use toolsmith::tool::ToolOutput;

/// Calls `tool` with `args` on the first request, then answers with the text of the last tool
/// return (or retry message).
fn call_then_echo(tool: &'static str, args: Value) -> FunctionModel {
    FunctionModel::sync(move |messages, _| match last_return(messages) {
        None => ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(tool, args.clone(), "c1"))]),
        Some(part) => ModelResponse::text(part.content_text()),
    })
}

fn last_return(messages: &[ModelMessage]) -> Option<ToolReturnPart> {
    messages.iter().rev().find_map(|m| match m {
        ModelMessage::Request(r) => r.parts.iter().find_map(|p| match p {
            ModelRequestPart::ToolReturn(t) => Some(t.clone()),
            _ => None,
        }),
        _ => None,
    })
}

/// The first tool return of a run, without its timestamp.
async fn first_return(tool: Tool<i64>, args: Value) -> ToolReturnPart {
    let agent = Agent::builder(call_then_echo("sum", args)).deps::<i64>().tool(tool).build().unwrap();
    let result = agent.run("go").deps(10).await.unwrap();
    let mut part = result
        .all_messages()
        .iter()
        .find_map(|m| match m {
            ModelMessage::Request(r) => r.parts.iter().find_map(|p| match p {
                ModelRequestPart::ToolReturn(t) => Some(t.clone()),
                _ => None,
            }),
            _ => None,
        })
        .unwrap();
    part.timestamp = None;
    part
}

#[derive(Deserialize, JsonSchema)]
struct Sum {
    x: i64,
    y: i64,
}

fn sum_tool() -> Tool<i64> {
    Tool::new("sum", |_ctx: RunContext<i64>, s: Sum| async move { Ok::<_, ModelRetry>(s.x + s.y) })
}

fn too_big(limit: i64) -> ModelRetry {
    ModelRetry::new(format!("Sum of x and y must not exceed {limit}"))
}

#[tokio::test]
async fn a_typed_validator_reads_the_parsed_arguments_and_its_retry_is_the_raw_forms() {
    let raw = sum_tool().args_validator(|ctx, args: &Value| {
        let sum = args["x"].as_i64().unwrap_or(0) + args["y"].as_i64().unwrap_or(0);
        if sum > ctx.deps { Err(too_big(ctx.deps)) } else { Ok(()) }
    });
    let typed = sum_tool()
        .args_validator_typed(|ctx, s: &Sum| if s.x + s.y > ctx.deps { Err(too_big(ctx.deps)) } else { Ok(()) });
    let asynchronous = sum_tool().args_validator_async(|ctx: RunContext<i64>, s: Sum| async move {
        tokio::time::sleep(Duration::from_millis(5)).await;
        if s.x + s.y > ctx.deps { Err(too_big(ctx.deps)) } else { Ok(()) }
    });

    let refused = first_return(raw.clone(), json!({"x": 7, "y": 8})).await;
    assert_eq!(refused.outcome, ToolOutcome::Retried);
    assert_eq!(refused.content, json!("Sum of x and y must not exceed 10"));
    assert_eq!(first_return(typed.clone(), json!({"x": 7, "y": 8})).await, refused);
    assert_eq!(first_return(asynchronous.clone(), json!({"x": 7, "y": 8})).await, refused);
    // Arguments as text, with a coercion by the schema, reach the typed validator parsed.
    assert_eq!(first_return(typed.clone(), json!(r#"{"x": "7", "y": 8}"#)).await, refused);

    for tool in [raw, typed, asynchronous] {
        let accepted = first_return(tool, json!({"x": 2, "y": 3})).await;
        assert_eq!((accepted.outcome, accepted.content), (ToolOutcome::Success, json!(5)));
    }
}

#[tokio::test]
async fn an_async_validator_is_awaited_before_the_tool_runs() {
    let ran = Arc::new(AtomicUsize::new(0));
    let checked = Arc::new(AtomicUsize::new(0));
    let (ran2, checked2, checked3) = (ran.clone(), checked.clone(), checked.clone());
    let tool = Tool::new("sum", move |_ctx: RunContext<i64>, s: Sum| {
        let ran = ran2.clone();
        let checked = checked3.clone();
        async move {
            assert_eq!(checked.load(Ordering::SeqCst), 1, "the validator finished first");
            ran.fetch_add(1, Ordering::SeqCst);
            Ok::<_, ModelRetry>(s.x + s.y)
        }
    })
    .args_validator_async(move |_ctx: RunContext<i64>, _s: Sum| {
        let checked = checked2.clone();
        async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            checked.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
    });
    let part = first_return(tool, json!({"x": 1, "y": 2})).await;
    assert_eq!(part.content, json!(3));
    assert_eq!((ran.load(Ordering::SeqCst), checked.load(Ordering::SeqCst)), (1, 1));
}

/// Add two integers.
#[tool]
fn add(x: i64, y: i64) -> i64 {
    x + y
}

#[tokio::test]
async fn a_macro_tool_takes_a_typed_validator_over_a_struct_of_its_arguments() {
    #[derive(Deserialize)]
    struct OnlyX {
        x: i64,
    }
    let tool = Tool::<()>::from(add).args_validator_typed(|_ctx, a: &OnlyX| {
        if a.x < 0 { Err(ModelRetry::new("x must not be negative")) } else { Ok(()) }
    });
    let out = tool.call_json(RunContext::detached(), json!({"x": -1, "y": 2})).await;
    assert!(matches!(&out, Err(ToolError::Retry(r)) if r.content == json!("x must not be negative")), "{out:?}");
    let out = tool.call_json(RunContext::detached(), json!({"x": 1, "y": 2})).await.unwrap();
    assert_eq!(out, ToolOutput::Value(json!(3)));
}

#[tokio::test]
async fn arguments_that_do_not_fit_the_typed_form_are_a_validation_error_not_a_panic() {
    #[derive(Deserialize)]
    struct Other {
        #[allow(dead_code)]
        z: String,
    }
    let tool = Tool::<()>::from(add).args_validator_typed(|_ctx, _o: &Other| Ok(()));
    let out = tool.call_json(RunContext::detached(), json!({"x": 1, "y": 2})).await;
    match out {
        Err(ToolError::Validation(errors)) => {
            assert_eq!(errors.len(), 1);
            assert_eq!(errors[0].kind, "value_error");
            assert_eq!(errors[0].msg, "Value error, missing field `z`");
        }
        other => panic!("expected a validation error, got {other:?}"),
    }
    let asynchronous = Tool::<()>::from(add).args_validator_async(|_ctx, _o: Other| async { Ok(()) });
    let out = asynchronous.call_json(RunContext::detached(), json!({"x": 1, "y": 2})).await;
    assert!(matches!(out, Err(ToolError::Validation(_))), "{out:?}");

    // In a run, the model is sent the error as a validation retry.
    let agent = Agent::builder(call_then_echo("add", json!({"x": 1, "y": 2}))).tool(tool).build().unwrap();
    let result = agent.run("go").await.unwrap();
    let part = last_return(result.all_messages()).unwrap();
    assert_eq!(part.outcome, ToolOutcome::Retried);
    assert_eq!(part.content[0]["msg"], "Value error, missing field `z`");
}

#[tokio::test]
async fn the_raw_form_still_serves_schema_tools_and_the_async_form_takes_raw_json_too() {
    let schema = json!({"type": "object", "properties": {"path": {"type": "string"}}});
    let read = |_ctx: RunContext<()>, args: Value| async move { Ok(ToolOutput::Value(args["path"].clone())) };
    let raw = Tool::from_schema("read", "Read a file.", schema.clone(), read).args_validator(|_ctx, args: &Value| {
        match args["path"].as_str() {
            Some(p) if !p.contains("..") => Ok(()),
            _ => Err(ModelRetry::new("`path` must be relative")),
        }
    });
    let asynchronous =
        Tool::from_schema("read", "Read a file.", schema, read).args_validator_async(|_ctx, args: Value| async move {
            match args["path"].as_str() {
                Some(p) if !p.contains("..") => Ok(()),
                _ => Err(ModelRetry::new("`path` must be relative")),
            }
        });
    for tool in [raw, asynchronous] {
        let ok = tool.call_json(RunContext::detached(), json!({"path": "a.txt"})).await.unwrap();
        assert_eq!(ok, ToolOutput::Value(json!("a.txt")));
        let refused = tool.call_json(RunContext::detached(), json!({"path": "../etc"})).await;
        assert!(matches!(&refused, Err(ToolError::Retry(r)) if r.content == json!("`path` must be relative")));
    }
}

#[tokio::test]
async fn typed_and_async_validators_panics_end_the_run_as_the_tools() {
    let sync = Tool::<()>::from(add).args_validator_typed(|_ctx, _s: &Sum| panic!("typed validator exploded"));
    let asynchronous = Tool::<()>::from(add).args_validator_async(|_ctx, _s: Sum| async {
        tokio::task::yield_now().await;
        panic!("async validator exploded")
    });
    for (tool, expected) in [(sync, "typed validator exploded"), (asynchronous, "async validator exploded")] {
        let out = tool.call_json(RunContext::detached(), json!({"x": 1, "y": 2})).await;
        assert!(matches!(&out, Err(ToolError::Panicked { message }) if message == expected), "{out:?}");
        let agent = Agent::builder(TestModel::default()).tool(tool).build().unwrap();
        let err = agent.run("go").await.unwrap_err();
        assert!(
            matches!(&err, AgentRunError::ToolPanicked { tool, message } if tool == "add" && message == expected),
            "{err:?}"
        );
    }
}
