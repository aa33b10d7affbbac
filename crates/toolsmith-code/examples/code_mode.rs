//! Code mode against plain tool calls on one task: look up 20 orders and refund the late ones.
//! The model is scripted (offline), the tools are real; each way is one agent run, and the
//! model's input is estimated at four bytes a token per request.
//!
//! ```sh
//! cargo run -p toolsmith-code --example code_mode
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use toolsmith::messages::{ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::prelude::*;
use toolsmith_code::CodeMode;

const ORDERS: i64 = 20;

/// List the ids of the customer's orders.
#[tool]
async fn list_orders() -> Vec<i64> {
    (1..=ORDERS).collect()
}

/// Look up an order: its id, total and how many days late it is.
#[tool]
async fn get_order(order_id: i64) -> Value {
    let days_late = if order_id % 4 == 0 { order_id / 2 } else { 0 };
    json!({"id": order_id, "total": 10.0 * order_id as f64, "days_late": days_late})
}

/// Refund an order.
#[tool]
async fn refund(order_id: i64, reason: String) -> String {
    format!("refunded order {order_id} ({reason})")
}

const SNIPPET: &str = "import asyncio
ids = await list_orders()
orders = await asyncio.gather(*[get_order(order_id=i) for i in ids])
late = [o['id'] for o in orders if o['days_late'] > 0]
for i in late:
    await refund(order_id=i, reason='late delivery')
late";

fn call(name: &str, args: Value, id: String) -> ModelResponsePart {
    ModelResponsePart::ToolCall(ToolCallPart::new(name, args, id))
}

/// The tool returns of the last request, by tool name.
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

/// The model without code mode: list, look every order up, refund the late ones, answer.
fn tool_by_tool(messages: &[ModelMessage]) -> ModelResponse {
    let returns = last_returns(messages);
    match returns.first().map(|(name, _)| name.as_str()) {
        None => ModelResponse::new(vec![call("list_orders", json!({}), "l1".into())]),
        Some("list_orders") => {
            let ids: Vec<i64> = returns[0].1.as_array().into_iter().flatten().filter_map(Value::as_i64).collect();
            ModelResponse::new(ids.iter().map(|i| call("get_order", json!({"order_id": i}), format!("g{i}"))).collect())
        }
        Some("get_order") => {
            let late: Vec<i64> = returns
                .iter()
                .filter(|(_, o)| o["days_late"].as_i64().unwrap_or(0) > 0)
                .filter_map(|(_, o)| o["id"].as_i64())
                .collect();
            ModelResponse::new(
                late.iter()
                    .map(|i| call("refund", json!({"order_id": i, "reason": "late delivery"}), format!("r{i}")))
                    .collect(),
            )
        }
        _ => ModelResponse::text(format!("Refunded {} late orders.", returns.len())),
    }
}

/// The model with code mode: one snippet does the task, then it answers.
fn with_code(messages: &[ModelMessage]) -> ModelResponse {
    match last_returns(messages).first() {
        None => ModelResponse::new(vec![call("run_code", json!({"code": SNIPPET}), "c1".into())]),
        Some((_, late)) => ModelResponse::text(format!("Refunded late orders {late}.")),
    }
}

/// A scripted model that also estimates each request's input: the history and the tool
/// definitions, at four bytes a token.
fn counting(script: fn(&[ModelMessage]) -> ModelResponse, tokens: Arc<AtomicU64>) -> FunctionModel {
    FunctionModel::sync(move |messages: &[ModelMessage], info: &AgentInfo| {
        let history = serde_json::to_string(messages).unwrap_or_default();
        let tools = serde_json::to_string(&info.function_tools).unwrap_or_default();
        tokens.fetch_add((history.len() + tools.len()).div_ceil(4) as u64, Ordering::Relaxed);
        script(messages)
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let plain_tokens = Arc::new(AtomicU64::new(0));
    let plain =
        Agent::builder(counting(tool_by_tool, plain_tokens.clone())).tools([list_orders, get_order, refund]).build()?;
    let without = plain.run("Refund my late orders.").await?;

    let code_tokens = Arc::new(AtomicU64::new(0));
    let coded = Agent::builder(counting(with_code, code_tokens.clone()))
        .tools([list_orders, get_order, refund])
        .capability(CodeMode::new())
        .build()?;
    let with = coded.run("Refund my late orders.").await?;

    println!("without code mode: {}", without.output());
    println!("with code mode: {}", with.output());
    println!(
        "estimated input tokens: {} without code mode, {} with code mode",
        plain_tokens.load(Ordering::Relaxed),
        code_tokens.load(Ordering::Relaxed)
    );
    let (u, c) = (without.usage(), with.usage());
    println!("without code mode: {} model requests, {} tool calls", u.requests, u.tool_calls);
    println!("with code mode: {} model requests, {} tool calls", c.requests, c.tool_calls);
    Ok(())
}
