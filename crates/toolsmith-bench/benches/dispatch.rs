//! Micro-benchmarks of the tool hot paths, through the public API only.
//!
//! ```sh
//! cargo bench -p toolsmith-bench --bench dispatch
//! ```
//!
//! - `validate_*`: argument validation of `{"x": 1, "y": 2}` against the schema of
//!   `add(x: i64, y: i64)`, with a compiled [`Validator`].
//! - `agent_run`: a whole agent run on a current-thread tokio runtime whose scripted model
//!   answers with `n` calls of a trivial `#[tool] async fn add`, then with text; reported per
//!   call (divan's item counter). `agent_run_text_only` is the same run with no calls, so
//!   `(agent_run(n) - agent_run_text_only) / n` is the marginal cost of one call.
//! - `agent_run_with_capabilities`: `agent_run(100)` with four built-in capabilities that hook
//!   no tool call: the chain skips a capability in the stages it says it does not hook
//!   (`Capability::hooks_stage`), so they should cost nothing per call.
//! - `agent_run_deferred`: the text-only run of an agent with `add` and `n` deferred tools
//!   (`Tool::from_schema(...).defer_loading(true)`): one step shows `add` and `search_tools`.
//!   Its cost should not grow with `n`: the deferred catalogue is indexed once, not per step.
//! - `agent_run_with_history`: the text-only run continuing a history of `n` earlier turns
//!   (prompt, a call of `add`, its return, a text answer: 4 messages each). What grows with `n`
//!   is the per-request preparation of the history the model is sent (repair, merge, results in
//!   call order), which copies nothing when the history needs no change.
//! - `repair_sound_history`: [`repair_messages`] on that history (a sound one: nothing to repair).
//! - `tool_from_spec`: `Tool::<()>::from(add)`: schema generation plus validator compilation.
//! - `test_model_generate_args`: `TestModel`'s argument generation for the `add` schema.

use divan::Bencher;
use divan::counter::ItemsCount;
use serde_json::{Value, json};
use toolsmith::messages::{
    ModelMessage, ModelRequest, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart, ToolReturnPart,
    repair_messages,
};
use toolsmith::model::{AgentInfo, FunctionModel, generate_args};
use toolsmith::tool::ToolOutput;
use toolsmith::validation::Validator;
use toolsmith::{Agent, RunContext, Tool, ToolError, tool};

fn main() {
    divan::main();
}

/// Add two integers.
#[tool]
async fn add(x: i64, y: i64) -> i64 {
    x + y
}

fn add_schema() -> Value {
    Tool::<()>::from(add).definition().parameters_json_schema.as_ref().clone()
}

fn add_validator() -> Validator {
    Validator::compile(&add_schema()).expect("the schema of add compiles")
}

/// Validation of arguments the model sent as a JSON object.
#[divan::bench]
fn validate_object(bencher: Bencher) {
    let validator = add_validator();
    let args = json!({"x": 1, "y": 2});
    bencher.bench_local(|| validator.validate(divan::black_box(&args)));
}

/// Validation of arguments the model sent as a raw JSON string (parsing included).
#[divan::bench]
fn validate_str(bencher: Bencher) {
    let validator = add_validator();
    let raw = r#"{"x": 1, "y": 2}"#;
    bencher.bench_local(|| validator.validate_str(divan::black_box(raw)));
}

/// An agent whose model answers the first request with `n` calls of `add`, then `"done"`.
fn agent_with_calls(n: usize) -> Agent {
    agent_builder_with_calls(n).build().expect("agent builds")
}

/// The builder of [`agent_with_calls`].
fn agent_builder_with_calls(n: usize) -> toolsmith::AgentBuilder<(), String> {
    let model = FunctionModel::new(move |messages: &[ModelMessage], _info: &AgentInfo| {
        let first = messages.len() == 1;
        async move {
            Ok(if first && n > 0 {
                let calls = (0..n)
                    .map(|i| {
                        ModelResponsePart::ToolCall(ToolCallPart::new(
                            "add",
                            json!({"x": i, "y": i + 1}),
                            format!("c{i}"),
                        ))
                    })
                    .collect();
                ModelResponse::new(calls)
            } else {
                ModelResponse::text("done")
            })
        }
    });
    Agent::builder(model).tool(add)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

/// A whole run with `n` tool calls, reported per call.
#[divan::bench(args = [1, 10, 100], sample_count = 1000)]
fn agent_run(bencher: Bencher, n: usize) {
    let rt = runtime();
    let agent = agent_with_calls(n);
    bencher.counter(ItemsCount::new(n)).bench_local(|| {
        let result = rt.block_on(agent.run("go").into_future()).expect("run succeeds");
        assert_eq!(result.output(), "done");
    });
}

/// `agent_run(100)` with four built-in capabilities that hook no tool call (`Thinking`,
/// `SetToolMetadata`, `IncludeToolReturnSchemas`, `ReinjectSystemPrompt`): what they add per
/// call is the chain's bookkeeping for hooks that do nothing.
#[divan::bench(sample_count = 300)]
fn agent_run_with_capabilities(bencher: Bencher) {
    use toolsmith::capability::{IncludeToolReturnSchemas, ReinjectSystemPrompt, SetToolMetadata, Thinking};
    let n = 100;
    let rt = runtime();
    let agent = agent_builder_with_calls(n)
        .capability(Thinking::high())
        .capability(SetToolMetadata::new(json!({"team": "maths"})))
        .capability(IncludeToolReturnSchemas::all())
        .capability(ReinjectSystemPrompt::new())
        .build()
        .expect("agent builds");
    bencher.counter(ItemsCount::new(n)).bench_local(|| {
        let result = rt.block_on(agent.run("go").into_future()).expect("run succeeds");
        assert_eq!(result.output(), "done");
    });
}

/// The same run with no tool call (one model request, text answer): the fixed cost of a run.
#[divan::bench(sample_count = 1000)]
fn agent_run_text_only(bencher: Bencher) {
    let rt = runtime();
    let agent = agent_with_calls(0);
    bencher.bench_local(|| {
        let result = rt.block_on(agent.run("go").into_future()).expect("run succeeds");
        assert_eq!(result.output(), "done");
    });
}

/// `n` earlier turns: a prompt, a call of `add`, its return, a text answer.
fn history(n: usize) -> Vec<ModelMessage> {
    let mut messages = Vec::with_capacity(4 * n);
    for i in 0..n {
        let id = format!("h{i}");
        messages.push(ModelMessage::Request(ModelRequest::user_prompt(format!("turn {i}"))));
        messages.push(ModelMessage::Response(ModelResponse::new(vec![ModelResponsePart::ToolCall(
            ToolCallPart::new("add", json!({"x": i, "y": 1}), id.clone()),
        )])));
        messages.push(ModelMessage::Request(ModelRequest::new(vec![ModelRequestPart::ToolReturn(
            ToolReturnPart::success("add", json!(i + 1), id),
        )])));
        messages.push(ModelMessage::Response(ModelResponse::text(format!("{}", i + 1))));
    }
    messages
}

/// The text-only run continuing a history of `n` turns.
#[divan::bench(args = [10, 100, 1_000], sample_count = 200)]
fn agent_run_with_history(bencher: Bencher, n: usize) {
    let rt = runtime();
    let agent = agent_with_calls(0);
    let history = history(n);
    bencher.with_inputs(|| history.clone()).bench_local_values(|h| {
        let result = rt.block_on(agent.run("go").message_history(h).into_future()).expect("run succeeds");
        assert_eq!(result.output(), "done");
    });
}

/// Repairing a sound history of `n` turns (nothing to change).
#[divan::bench(args = [10, 100, 1_000], sample_count = 200)]
fn repair_sound_history(bencher: Bencher, n: usize) {
    let history = history(n);
    bencher.with_inputs(|| history.clone()).bench_local_values(|h| repair_messages(h, true));
}

async fn noop(_ctx: RunContext<()>, _args: Value) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::Value(Value::Null))
}

/// A text-only run of an agent with `add` and `n` deferred tools (one step).
#[divan::bench(args = [0, 1_000, 10_000], sample_count = 1000)]
fn agent_run_deferred(bencher: Bencher, n: usize) {
    let rt = runtime();
    let schema = std::sync::Arc::new(json!({"type": "object", "properties": {"q": {"type": "string"}}}));
    let deferred = (0..n).map(|i| {
        let (name, description) = (format!("tool_{i}"), format!("Deferred tool number {i}."));
        Tool::<()>::from_schema(name, description, schema.clone(), noop).defer_loading(true)
    });
    let model =
        FunctionModel::new(|_messages: &[ModelMessage], _info: &AgentInfo| async { Ok(ModelResponse::text("done")) });
    let agent = Agent::builder(model).tool(add).tools(deferred).build().expect("agent builds");
    bencher.bench_local(|| {
        let result = rt.block_on(agent.run("go").into_future()).expect("run succeeds");
        assert_eq!(result.output(), "done");
    });
}

/// Schema generation and validator compilation of a `#[tool]`.
#[divan::bench]
fn tool_from_spec() -> Tool<()> {
    Tool::<()>::from(divan::black_box(add))
}

/// `TestModel`'s argument generation for the schema of `add`.
#[divan::bench]
fn test_model_generate_args(bencher: Bencher) {
    let schema = add_schema();
    bencher.bench_local(|| generate_args(divan::black_box(&schema), 0));
}
