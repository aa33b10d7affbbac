//! Micro-benchmarks of the work a history costs as it grows, through the public API only.
//!
//! ```sh
//! cargo bench -p toolsmith-bench --bench history
//! ```
//!
//! - `run_tool_steps`: a whole run of `s` steps, each a model response with one call of a
//!   trivial `#[tool] async fn add` and its result, then a text answer. Before each request the
//!   run prepares the history the model is sent; that must cost what the step appended, not the
//!   whole history, or the run is quadratic in `s`. Reported per step.
//! - `repair_unanswered_calls`: [`repair_messages`] on a history whose first response holds `n`
//!   calls that never got a result (a new prompt follows it): each is answered `interrupted`, in
//!   call order. Reported per call.
//! - `history_to_json` / `serde_json_to_string`: writing a history of `n` turns (prompt, a call
//!   of `add`, its return, a text answer) with toolsmith's depth-checked writer, and with a plain
//!   `serde_json::to_string` of the same messages, the floor it is measured against.

use divan::Bencher;
use divan::counter::ItemsCount;
use serde_json::json;
use toolsmith::messages::{
    ModelMessage, ModelRequest, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart, ToolReturnPart,
    history_to_json, repair_messages,
};
use toolsmith::model::{AgentInfo, FunctionModel};
use toolsmith::{Agent, tool};

fn main() {
    divan::main();
}

/// Add two integers.
#[tool]
async fn add(x: i64, y: i64) -> i64 {
    x + y
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

/// A model that calls `add` once per response for `steps` responses, then answers with text.
fn stepping_agent(steps: usize) -> Agent {
    let model = FunctionModel::sync(move |messages: &[ModelMessage], _info: &AgentInfo| {
        let responses = messages.iter().filter(|m| matches!(m, ModelMessage::Response(_))).count();
        if responses < steps {
            ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
                "add",
                json!({"x": responses, "y": 1}),
                format!("c{responses}"),
            ))])
        } else {
            ModelResponse::text("done")
        }
    });
    Agent::builder(model).tool(add).build().expect("agent builds")
}

/// A run of `s` tool steps, reported per step.
#[divan::bench(args = [100, 300, 1_000], sample_count = 20)]
fn run_tool_steps(bencher: Bencher, s: usize) {
    let rt = runtime();
    let agent = stepping_agent(s);
    bencher.counter(ItemsCount::new(s)).bench_local(|| {
        let result = rt
            .block_on(agent.run("go").usage_limits(toolsmith::usage::UsageLimits::unlimited()).into_future())
            .expect("run succeeds");
        assert_eq!(result.output(), "done");
    });
}

/// A prompt, a response with `n` calls, and a new prompt: none of the calls is answered.
fn unanswered_calls(n: usize) -> Vec<ModelMessage> {
    let calls = (0..n)
        .map(|i| ModelResponsePart::ToolCall(ToolCallPart::new("add", json!({"x": i, "y": 1}), format!("c{i}"))))
        .collect();
    vec![
        ModelMessage::Request(ModelRequest::user_prompt("go")),
        ModelMessage::Response(ModelResponse::new(calls)),
        ModelMessage::Request(ModelRequest::user_prompt("again")),
    ]
}

/// Answering `n` unanswered calls `interrupted`, reported per call.
#[divan::bench(args = [1_000, 3_000, 10_000], sample_count = 20)]
fn repair_unanswered_calls(bencher: Bencher, n: usize) {
    let history = unanswered_calls(n);
    bencher
        .counter(ItemsCount::new(n))
        .with_inputs(|| history.clone())
        .bench_local_values(|h| repair_messages(h, true));
}

/// `n` turns: a prompt, a call of `add`, its return, a text answer.
fn history(n: usize) -> Vec<ModelMessage> {
    let mut messages = Vec::with_capacity(4 * n);
    for i in 0..n {
        let id = format!("h{i}");
        messages.push(ModelMessage::Request(ModelRequest::user_prompt(format!("turn {i}"))));
        messages.push(ModelMessage::Response(ModelResponse::new(vec![ModelResponsePart::ToolCall(
            ToolCallPart::new("add", json!({"x": i, "y": {"nested": [i, {"deeper": [1, 2, 3]}]}}), id.clone()),
        )])));
        messages.push(ModelMessage::Request(ModelRequest::new(vec![ModelRequestPart::ToolReturn(
            ToolReturnPart::success("add", json!({"sum": i + 1, "items": [1, 2, 3]}), id),
        )])));
        messages.push(ModelMessage::Response(ModelResponse::text(format!("{}", i + 1))));
    }
    messages
}

/// toolsmith's writer, depth limit checked.
#[divan::bench(args = [100, 1_000, 10_000], sample_count = 50)]
fn history_to_json_turns(bencher: Bencher, n: usize) {
    let history = history(n);
    bencher.counter(ItemsCount::new(n)).bench_local(|| history_to_json(&history));
}

/// The floor: serde_json's writer, no depth check.
#[divan::bench(args = [100, 1_000, 10_000], sample_count = 50)]
fn serde_json_to_string_turns(bencher: Bencher, n: usize) {
    let history = history(n);
    bencher.counter(ItemsCount::new(n)).bench_local(|| serde_json::to_string(&history).expect("writes"));
}
