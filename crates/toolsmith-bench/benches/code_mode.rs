//! Code mode (`toolsmith-code`): what a snippet costs, and one task with and without it.
//!
//! ```sh
//! cargo bench -p toolsmith-bench --bench code_mode
//! ```
//!
//! - `direct_call` / `snippet_one_call`: a whole agent run (current-thread runtime, scripted
//!   model) whose first response calls `add` once, directly or from a `run_code` snippet
//!   (`await add(x=1, y=2)`), then answers. Their difference is the per-snippet overhead: the
//!   `run_code` description rendered for the step, a fresh Monty REPL, the snippet parsed and
//!   run (each interpreter step on the blocking pool), the call dispatched through the run's
//!   tool path, the result converted back.
//! - `snippet_no_call`: `run_code` with `1 + 1` (the interpreter alone, no nested call).
//! - `orders_plain` / `orders_code_mode`: the task of the `code_mode` example (list 20 orders,
//!   look each up, refund the 5 late ones), tool by tool (4 model requests) or in one snippet
//!   (2 model requests), with tools that answer at once: what code mode costs in the process when
//!   the model's time is not counted.

use std::future::IntoFuture;

use divan::Bencher;
use serde_json::{Value, json};
use toolsmith::messages::{ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::model::FunctionModel;
use toolsmith::{Agent, tool};
use toolsmith_code::CodeMode;

fn main() {
    divan::main();
}

/// Add two integers.
#[tool]
async fn add(x: i64, y: i64) -> i64 {
    x + y
}

/// List the ids of the customer's orders.
#[tool]
async fn list_orders() -> Vec<i64> {
    (1..=20).collect()
}

/// Look up an order.
#[tool]
async fn get_order(order_id: i64) -> Value {
    json!({"id": order_id, "days_late": if order_id % 4 == 0 { order_id / 2 } else { 0 }})
}

/// Refund an order.
#[tool]
async fn refund(order_id: i64, reason: String) -> String {
    format!("refunded order {order_id} ({reason})")
}

fn call(name: &str, args: Value, id: String) -> ModelResponsePart {
    ModelResponsePart::ToolCall(ToolCallPart::new(name, args, id))
}

/// Answers the first request with `first`, then with text.
fn once(first: ModelResponsePart) -> FunctionModel {
    FunctionModel::sync(move |messages: &[ModelMessage], _| {
        if messages.len() == 1 { ModelResponse::new(vec![first.clone()]) } else { ModelResponse::text("done") }
    })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime")
}

#[divan::bench]
fn direct_call(bencher: Bencher) {
    let rt = runtime();
    let agent = Agent::builder(once(call("add", json!({"x": 1, "y": 2}), "c1".into()))).tool(add).build().unwrap();
    bencher.bench_local(|| rt.block_on(agent.run("go").into_future()).unwrap());
}

#[divan::bench]
fn snippet_one_call(bencher: Bencher) {
    let rt = runtime();
    let first = call("run_code", json!({"code": "await add(x=1, y=2)"}), "c1".into());
    let agent = Agent::builder(once(first)).tool(add).capability(CodeMode::new()).build().unwrap();
    bencher.bench_local(|| rt.block_on(agent.run("go").into_future()).unwrap());
}

#[divan::bench]
fn snippet_no_call(bencher: Bencher) {
    let rt = runtime();
    let first = call("run_code", json!({"code": "1 + 1"}), "c1".into());
    let agent = Agent::builder(once(first)).tool(add).capability(CodeMode::new()).build().unwrap();
    bencher.bench_local(|| rt.block_on(agent.run("go").into_future()).unwrap());
}

/// The tool returns of the last request.
fn last_returns(messages: &[ModelMessage]) -> Vec<(String, Value)> {
    match messages.last() {
        Some(ModelMessage::Request(r)) => r
            .parts
            .iter()
            .filter_map(|p| match p {
                ModelRequestPart::ToolReturn(t) => Some((t.tool_name.clone(), t.content.clone())),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn tool_by_tool() -> FunctionModel {
    FunctionModel::sync(|messages: &[ModelMessage], _| {
        let returns = last_returns(messages);
        match returns.first().map(|(n, _)| n.as_str()) {
            None => ModelResponse::new(vec![call("list_orders", json!({}), "l".into())]),
            Some("list_orders") => ModelResponse::new(
                (1..=20).map(|i| call("get_order", json!({"order_id": i}), format!("g{i}"))).collect(),
            ),
            Some("get_order") => ModelResponse::new(
                returns
                    .iter()
                    .filter(|(_, o)| o["days_late"].as_i64().unwrap_or(0) > 0)
                    .map(|(_, o)| {
                        call("refund", json!({"order_id": o["id"], "reason": "late"}), format!("r{}", o["id"]))
                    })
                    .collect(),
            ),
            _ => ModelResponse::text("done"),
        }
    })
}

const SNIPPET: &str = "import asyncio
ids = await list_orders()
orders = await asyncio.gather(*[get_order(order_id=i) for i in ids])
late = [o['id'] for o in orders if o['days_late'] > 0]
for i in late:
    await refund(order_id=i, reason='late')
late";

#[divan::bench]
fn orders_plain(bencher: Bencher) {
    let rt = runtime();
    let agent = Agent::builder(tool_by_tool()).tools([list_orders, get_order, refund]).build().unwrap();
    bencher.bench_local(|| {
        let r = rt.block_on(agent.run("go").into_future()).unwrap();
        assert_eq!(r.usage().requests, 4);
    });
}

#[divan::bench]
fn orders_code_mode(bencher: Bencher) {
    let rt = runtime();
    let first = call("run_code", json!({"code": SNIPPET}), "c1".into());
    let agent = Agent::builder(once(first))
        .tools([list_orders, get_order, refund])
        .capability(CodeMode::new())
        .build()
        .unwrap();
    bencher.bench_local(|| {
        let r = rt.block_on(agent.run("go").into_future()).unwrap();
        assert_eq!(r.usage().requests, 2);
    });
}
