//! Code mode through the public API: the `run_code` tool, the snippet's calls through the
//! run's tool path, its results and errors, and the limits.

mod support;

use std::time::Duration;

use serde_json::json;
use support::{get_order, refund, returns, scripted, text};
use toolsmith::prelude::*;
use toolsmith_code::{CodeMode, CodeModeLimits};

async fn run(snippets: Vec<&'static str>, mode: CodeMode) -> RunResult<String> {
    let agent =
        Agent::builder(scripted(snippets)).tools([get_order, refund]).capability(mode).retries(10).build().unwrap();
    agent.run("go").await.unwrap()
}

#[tokio::test]
async fn run_code_replaces_the_chosen_tools_in_the_request() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    let model = FunctionModel::sync(move |_, info| {
        *record.lock().unwrap() = info.function_tools.iter().map(|t| (**t).clone()).collect::<Vec<_>>();
        toolsmith::messages::ModelResponse::text("done")
    });
    let mode = CodeMode::new().tools(toolsmith::toolset::ToolSelector::names(["get_order"]));
    let agent = Agent::builder(model).tools([get_order, refund]).capability(mode).build().unwrap();
    agent.run("go").await.unwrap();
    let tools = seen.lock().unwrap().clone();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["refund", "run_code"]);
    let run_code = &tools[1];
    let description = run_code.description.as_deref().unwrap();
    assert!(description.starts_with("Write and run Python code in a sandboxed environment."));
    assert!(
        description.ends_with(
            "```python\nasync def get_order(*, order_id: int) -> Any:\n    \"\"\"Look up an order.\"\"\"\n    ...\n```"
        ),
        "{description}"
    );
    assert!(run_code.sequential);
    assert_eq!(run_code.parameters_json_schema["required"], json!(["code"]));
}

#[tokio::test]
async fn gathered_calls_go_through_the_tool_path_and_the_last_expression_returns() {
    let result = run(
        vec![
            "import asyncio\norders = await asyncio.gather(*[get_order(order_id=i) for i in range(1, 7)])\nlate = [o['id'] for o in orders if o['late']]\nfor i in late:\n    await refund(order_id=i)\nlate",
        ],
        CodeMode::new(),
    )
    .await;
    let r = returns(result.all_messages());
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].content, json!([3, 6]));
    // run_code, six lookups and two refunds.
    assert_eq!(result.usage().tool_calls, 9);
    let meta = r[0].metadata.as_deref().unwrap();
    assert_eq!(meta["code_mode"], json!(true));
    assert_eq!(meta["tool_calls"]["c1__1"]["tool_name"], json!("get_order"));
    assert_eq!(meta["tool_calls"]["c1__1"]["args"], json!({"order_id": 1}));
    assert_eq!(meta["tool_returns"]["c1__8"]["content"], json!("refunded 6"));
}

#[tokio::test]
async fn printed_output_and_result_are_returned_as_the_harness_returns_them() {
    let result = run(vec!["print('hi')\n1 + 1", "print('only')", "y = 1", "5"], CodeMode::new()).await;
    let r = returns(result.all_messages());
    assert_eq!(r[0].content, json!({"output": "hi\n", "result": 2}));
    assert_eq!(r[1].content, json!({"output": "only\n"}));
    assert_eq!(r[2].content, json!({}));
    assert_eq!(r[3].content, json!(5));
}

#[tokio::test]
async fn state_is_kept_between_snippets_and_restart_resets_it() {
    let result = run(vec!["x = 41", "x + 1"], CodeMode::new()).await;
    assert_eq!(returns(result.all_messages())[1].content, json!(42));
}

#[tokio::test]
async fn a_tool_failure_is_a_python_exception_the_code_can_catch() {
    let result = run(
        vec![
            "try:\n    await refund(order_id=-1)\nexcept Exception as e:\n    r = str(e)\nr",
            "await refund(order_id=-2)",
        ],
        CodeMode::new(),
    )
    .await;
    let r = returns(result.all_messages());
    assert_eq!(r[0].content, json!("order -1 does not exist"));
    let uncaught = text(&r[1]);
    assert!(uncaught.starts_with("Runtime error:\nTraceback (most recent call last):\n"), "{uncaught}");
    assert!(uncaught.contains("line 1"), "{uncaught}");
    assert!(uncaught.ends_with("Exception: order -2 does not exist"), "{uncaught}");
}

#[tokio::test]
async fn invalid_arguments_are_reported_with_every_error() {
    let result =
        run(vec!["await get_order(order_id='x')", "await get_order(1)", "await nothere()"], CodeMode::new()).await;
    let r = returns(result.all_messages());
    let invalid = text(&r[0]);
    assert!(invalid.contains("ValueError: 1 validation error for get_order\norder_id\n  Input should be a valid integer, unable to parse string as an integer [type=int_parsing, input_value='x', input_type=str]"), "{invalid}");
    assert!(
        text(&r[1]).ends_with("TypeError: get_order() does not accept positional arguments; use keyword arguments"),
        "{}",
        text(&r[1])
    );
    assert!(text(&r[2]).contains("NameError"), "{}", text(&r[2]));
}

#[tokio::test]
async fn a_syntax_error_is_a_retry() {
    let result = run(vec!["def f(:\n  pass"], CodeMode::new()).await;
    let r = returns(result.all_messages());
    assert!(text(&r[0]).starts_with("Syntax error in code:\n"), "{}", text(&r[0]));
}

#[tokio::test]
async fn a_snippet_that_loops_forever_is_stopped_by_the_time_limit() {
    let mode = CodeMode::new().limits(CodeModeLimits::default().max_duration(Duration::from_millis(200)));
    let result = run(vec!["x = 1", "while True:\n    pass", "x"], mode).await;
    let r = returns(result.all_messages());
    let stopped = text(&r[1]);
    assert!(stopped.contains("time limit exceeded"), "{stopped}");
    assert!(stopped.contains("the session was reset"), "{stopped}");
    // The session was reset: `x` is gone.
    assert!(text(&r[2]).contains("NameError"), "{}", text(&r[2]));
}

#[tokio::test]
async fn recursion_output_and_nested_call_limits() {
    let mode = CodeMode::new()
        .limits(CodeModeLimits::default().max_recursion_depth(50).max_output_bytes(100).max_tool_calls(2));
    let result = run(
        vec![
            "def f(n):\n    return f(n + 1)\nf(0)",
            "print('x' * 1000)",
            "a = await get_order(order_id=1)\nb = await get_order(order_id=2)\nc = await get_order(order_id=3)",
        ],
        mode,
    )
    .await;
    let r = returns(result.all_messages());
    assert!(text(&r[0]).contains("RecursionError"), "{}", text(&r[0]));
    assert!(text(&r[1]).contains("MemoryError"), "{}", text(&r[1]));
    let budget = text(&r[2]);
    assert!(budget.contains("Code mode allows 2 nested tool calls per `run_code` call"), "{budget}");
    assert!(budget.contains("2 nested tool calls started before execution stopped:\n- get_order({'order_id': 1}) returned {'id': 1, 'late': False}"), "{budget}");
}

#[tokio::test]
async fn no_file_system_or_environment() {
    let result = run(
        vec!["import os\nos.getenv('HOME')", "from pathlib import Path\nPath('/etc/passwd').read_text()"],
        CodeMode::new(),
    )
    .await;
    let r = returns(result.all_messages());
    assert!(text(&r[0]).starts_with("Runtime error:"), "{}", text(&r[0]));
    assert!(text(&r[1]).starts_with("Runtime error:"), "{}", text(&r[1]));
}

#[tokio::test]
async fn a_limit_of_zero_is_a_configuration_error() {
    let mode = CodeMode::new().limits(CodeModeLimits::default().max_tool_calls(0));
    let agent = Agent::builder(scripted(vec!["1"])).tool(get_order).capability(mode).build().unwrap();
    let error = agent.run("go").await.unwrap_err().to_string();
    assert!(error.contains("CodeMode: `max_tool_calls` must be greater than zero"), "{error}");
}
