//! A durable support agent served on Restate, offline (a scripted model): refunds need a
//! human's approval, which may come minutes or days later, across restarts of this process.
//!
//! ```text
//! scripts/restate.sh start
//! cargo run -p toolsmith-restate --example durable_agent &
//! scripts/restate.sh register http://127.0.0.1:9080
//! curl -s localhost:8080/AgentSession/conv-1/turn/send -H 'idempotency-key: turn-1' --json '{"prompt": "refund order 42"}'
//! curl -s -X POST localhost:8080/AgentSession/conv-1/pending
//! curl -s localhost:8080/AgentSession/conv-1/decide --json '{"tool_call_id": "refund-1", "approved": true}'
//! curl -s localhost:8080/restate/invocation/AgentSession/conv-1/turn/turn-1/attach
//! ```
//!
//! `PORT` sets the port (default 9080).

use serde_json::json;
use toolsmith::messages::{ModelMessage, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::prelude::*;
use toolsmith_restate::restate_sdk::prelude::*;
use toolsmith_restate::{AgentSession, DurableAgent};

/// Refund an order.
///
/// Args:
///     order: The order's number.
#[tool(requires_approval)]
fn refund(order: u32) -> String {
    println!("refunding order {order}");
    format!("order {order} refunded")
}

/// The scripted model: asks for a refund when told to, then reports what happened.
fn support(messages: &[ModelMessage]) -> ModelResponse {
    let history = serde_json::to_value(messages).unwrap_or_default();
    let parts: Vec<&serde_json::Value> =
        history.as_array().into_iter().flatten().filter_map(|m| m["parts"].as_array()).flatten().collect();
    let last = parts.last().copied().cloned().unwrap_or_default();
    match last["part_kind"].as_str() {
        Some("tool-return") => {
            ModelResponse::text(format!("The refund tool answered: {}", last["content"].as_str().unwrap_or("?")))
        }
        Some("user-prompt") => {
            let prompt = last["content"].as_str().unwrap_or_default();
            match prompt.strip_prefix("refund order ").and_then(|n| n.trim().parse::<u32>().ok()) {
                Some(order) => ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
                    "refund",
                    json!({ "order": order }),
                    "refund-1",
                ))]),
                None => ModelResponse::text("I can refund orders: say \"refund order 42\"."),
            }
        }
        _ => ModelResponse::text("I could not do that."),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(9080);
    let agent = Agent::builder(FunctionModel::sync(|messages, _| support(messages)))
        .instructions("You are a support agent. Refunds need a human's approval.")
        .tool(refund)
        .allow_deferred()
        .build()?;
    let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    println!("serving the AgentSession object on http://{address}");
    HttpServer::new(Endpoint::builder().bind(AgentSession::new(DurableAgent::new(agent))).build())
        .listen_and_serve(address)
        .await;
    Ok(())
}
