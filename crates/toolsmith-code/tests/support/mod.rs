//! A scripted model that sends one `run_code` call per snippet, then answers "done"; and the
//! `run_code` returns of a run.

#![allow(dead_code)]

use serde_json::{Value, json};
use toolsmith::messages::{
    ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart, ToolReturnPart,
};
use toolsmith::prelude::*;

/// Sends `snippets[i]` as the `i`-th response's `run_code` call, then "done".
pub fn scripted(snippets: Vec<&'static str>) -> FunctionModel {
    FunctionModel::sync(move |messages: &[ModelMessage], _| {
        let step = messages.iter().filter(|m| matches!(m, ModelMessage::Response(_))).count();
        match snippets.get(step) {
            Some(code) => ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
                "run_code",
                json!({"code": code}),
                format!("c{}", step + 1),
            ))]),
            None => ModelResponse::text("done"),
        }
    })
}

/// The returns of the run's `run_code` calls, in order (retries included).
pub fn returns(messages: &[ModelMessage]) -> Vec<ToolReturnPart> {
    messages
        .iter()
        .filter_map(|m| match m {
            ModelMessage::Request(r) => Some(r.parts.iter()),
            _ => None,
        })
        .flatten()
        .filter_map(|p| match p {
            ModelRequestPart::ToolReturn(r) if r.tool_name == "run_code" => Some(r.clone()),
            _ => None,
        })
        .collect()
}

/// A return's content as text (a retry's message).
pub fn text(part: &ToolReturnPart) -> String {
    match &part.content {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Look up an order.
#[tool]
pub async fn get_order(order_id: i64) -> Value {
    json!({"id": order_id, "late": order_id % 3 == 0})
}

/// Refund an order.
#[tool]
pub async fn refund(order_id: i64) -> Result<String, ModelRetry> {
    if order_id < 0 {
        return Err(ModelRetry::new(format!("order {order_id} does not exist")));
    }
    Ok(format!("refunded {order_id}"))
}
