//! The run, node, output, model-retry and event-stream hooks of capabilities, end to end.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use serde_json::{Value, json};
use toolsmith::agent::{AgentEvent, RunOutput};
use toolsmith::capability::{
    AgentNode, BoxedCapability, Capability, EventBoxStream, Hooks, NodeResult, OutputKind, ProcessEventStream, Toolset,
};
use toolsmith::messages::{ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::model::ModelError;
use toolsmith::prelude::*;
use toolsmith::tool::ToolOutput;
use toolsmith::toolset::ToolsetExt;

type Log = Arc<Mutex<Vec<String>>>;

fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

fn entries(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

fn push(log: &Log, line: impl Into<String>) {
    log.lock().unwrap().push(line.into());
}

fn call(name: &str, args: Value, id: &str) -> ModelResponse {
    ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(name, args, id))])
}

/// The retry prompts (content as text) of the history, in order.
fn retry_prompts(messages: &[ModelMessage]) -> Vec<String> {
    messages
        .iter()
        .filter_map(ModelMessage::as_request)
        .flat_map(|r| r.parts.iter())
        .filter_map(|p| match p {
            ModelRequestPart::RetryFeedback(f) => Some(match &f.content {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }),
            ModelRequestPart::ToolReturn(t) if t.content_text().contains("again") => Some(t.content_text()),
            _ => None,
        })
        .collect()
}

/// Answers "draft 1", "draft 2", ... one per request.
fn drafts(counter: Arc<AtomicUsize>) -> FunctionModel {
    FunctionModel::sync(move |_, _| {
        let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
        ModelResponse::text(format!("draft {n}"))
    })
}

/// Add two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Calls `add` once, then answers with text.
fn add_then_text() -> FunctionModel {
    FunctionModel::sync(|messages, _| {
        if messages.iter().any(|m| matches!(m, ModelMessage::Response(_))) {
            ModelResponse::text("done")
        } else {
            call("add", json!({"a": 1, "b": 2}), "c1")
        }
    })
}

// ---------------------------------------------------------------------------------------------
// A retry asked by a model-request hook

#[tokio::test]
async fn a_retry_from_after_model_request_keeps_the_response_and_asks_again() {
    let requests = Arc::new(AtomicUsize::new(0));
    let hooks = Hooks::new().after_model_request(|_ctx, _req, response: ModelResponse| async move {
        match response.text_content().as_deref() {
            Some("draft 1") => Err(ModelRetry::new("Too short, try again.").into()),
            _ => Ok(response),
        }
    });
    let agent = Agent::builder(drafts(requests.clone())).capability(hooks).build().unwrap();
    let result = agent.run("write").await.unwrap();
    assert_eq!(result.output(), "draft 2");
    assert_eq!(requests.load(Ordering::SeqCst), 2);
    let messages = result.all_messages();
    // prompt, rejected response (kept so the model sees what it said), retry prompt, response.
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[1].as_response().unwrap().text_content().as_deref(), Some("draft 1"));
    assert_eq!(retry_prompts(messages), ["Too short, try again."]);
    assert_eq!(result.usage().requests, 2);
}

#[tokio::test]
async fn a_retry_from_wrap_model_request_without_calling_the_model_leaves_no_response() {
    let requests = Arc::new(AtomicUsize::new(0));
    let asked = Arc::new(AtomicUsize::new(0));
    let seen = asked.clone();
    let errors = log();
    let e = errors.clone();
    let hooks = Hooks::new()
        .wrap_model_request(move |_ctx, request, next| {
            let first = seen.fetch_add(1, Ordering::SeqCst) == 0;
            Box::pin(async move {
                if first {
                    return Err(ModelRetry::new("Not yet, try again.").into());
                }
                next.run(request).await
            })
        })
        .on_model_request_error(move |_ctx, _req, error| {
            push(&e, error.kind());
            async move { Err(error) }
        });
    let agent = Agent::builder(drafts(requests.clone())).capability(hooks).build().unwrap();
    let result = agent.run("write").await.unwrap();
    assert_eq!(result.output(), "draft 1");
    assert_eq!(requests.load(Ordering::SeqCst), 1, "the model was asked once");
    let messages = result.all_messages();
    assert_eq!(messages.len(), 3, "prompt, retry prompt, response: {messages:?}");
    assert_eq!(retry_prompts(messages), ["Not yet, try again."]);
    assert!(entries(&errors).is_empty(), "a retry is not a model error");
}

#[tokio::test]
async fn retries_asked_by_hooks_count_against_the_output_retries() {
    let hooks =
        Hooks::new().after_model_request(|_ctx, _req, _resp| async move { Err(ModelRetry::new("never good").into()) });
    let agent = Agent::builder(drafts(Arc::default())).output_retries(2).capability(hooks).build().unwrap();
    let err = agent.run("write").await.unwrap_err();
    assert_eq!(err.kind(), "UnexpectedModelBehavior");
    assert!(err.to_string().contains("Exceeded maximum output retries (2)"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Run hooks

#[tokio::test]
async fn after_run_changes_the_output_and_on_run_error_recovers() {
    let hooks = Hooks::new().after_run(|_ctx, output| async move {
        Ok(match output {
            RunOutput::Text(t) => RunOutput::Text(t.to_uppercase()),
            other => other,
        })
    });
    let agent = Agent::builder(drafts(Arc::default())).capability(hooks).build().unwrap();
    assert_eq!(agent.run("write").await.unwrap().output(), "DRAFT 1");

    let failing = FunctionModel::new(|_, _| async { Err(ModelError::new("ModelHttpError", "status 503")) });
    let hooks = Hooks::new().on_run_error(|_ctx, error| async move {
        assert_eq!(error.kind(), "ModelHttpError");
        Ok(RunOutput::Text("the service is busy, try later".into()))
    });
    let agent = Agent::builder(failing).capability(hooks).build().unwrap();
    assert_eq!(agent.run("write").await.unwrap().output(), "the service is busy, try later");
}

#[tokio::test]
async fn wrap_run_can_skip_the_run_or_recover_from_it() {
    let requests = Arc::new(AtomicUsize::new(0));
    let cached = Hooks::new().wrap_run(|_ctx, _next| Box::pin(async { Ok(RunOutput::Text("from cache".into())) }));
    let agent = Agent::builder(drafts(requests.clone())).capability(cached).build().unwrap();
    assert_eq!(agent.run("write").await.unwrap().output(), "from cache");
    assert_eq!(requests.load(Ordering::SeqCst), 0, "the run was skipped");

    let order = log();
    let (l1, l2, l3) = (order.clone(), order.clone(), order.clone());
    let hooks = Hooks::new()
        .before_run(move |_ctx| {
            push(&l1, "before_run");
            async { Ok(()) }
        })
        .wrap_run(move |_ctx, next| {
            let l = l2.clone();
            Box::pin(async move {
                push(&l, "wrap_run>");
                let first = next.run().await;
                // A run runs once: a second call is a clear error.
                let again = next.run().await.unwrap_err();
                push(&l, format!("again: {}", again.kind()));
                push(&l, "wrap_run<");
                first
            })
        })
        .after_run(move |_ctx, output| {
            push(&l3, "after_run");
            async { Ok(output) }
        });
    let agent = Agent::builder(drafts(requests.clone())).capability(hooks).build().unwrap();
    assert_eq!(agent.run("write").await.unwrap().output(), "draft 1");
    assert_eq!(entries(&order), ["before_run", "wrap_run>", "again: UserError", "wrap_run<", "after_run"]);
}

// ---------------------------------------------------------------------------------------------
// Node hooks

fn node_logger(log: &Log, label: &'static str) -> Hooks<()> {
    let (l1, l2) = (log.clone(), log.clone());
    Hooks::new()
        .before_node_run(move |_ctx, node: AgentNode| {
            push(&l1, format!("{label}.before {}", node.name()));
            async { Ok(node) }
        })
        .after_node_run(move |_ctx, node, result| {
            let next = match &result {
                NodeResult::Next(n) => n.name().to_string(),
                NodeResult::End(_) => "End".into(),
                _ => "?".into(),
            };
            push(&l2, format!("{label}.after {} -> {next}", node.name()));
            async { Ok(result) }
        })
}

#[tokio::test]
async fn node_hooks_see_every_node_in_order() {
    let order = log();
    let agent = Agent::builder(add_then_text())
        .tool(add)
        .capability(node_logger(&order, "A"))
        .capability(node_logger(&order, "B"))
        .build()
        .unwrap();
    assert_eq!(agent.run("add").await.unwrap().output(), "done");
    let mut expected = Vec::new();
    for (node, next) in [
        ("UserPromptNode", "ModelRequestNode"),
        ("ModelRequestNode", "CallToolsNode"),
        ("CallToolsNode", "ModelRequestNode"),
        ("ModelRequestNode", "CallToolsNode"),
        ("CallToolsNode", "End"),
    ] {
        // before_* in list order, after_* in reverse.
        expected.push(format!("A.before {node}"));
        expected.push(format!("B.before {node}"));
        expected.push(format!("B.after {node} -> {next}"));
        expected.push(format!("A.after {node} -> {next}"));
    }
    assert_eq!(entries(&order), expected);
}

#[tokio::test]
async fn node_hooks_fire_when_a_run_is_stepped_too() {
    let order = log();
    let agent = Agent::builder(add_then_text()).tool(add).capability(node_logger(&order, "A")).build().unwrap();
    let mut run = agent.run("add").iter().unwrap();
    while !matches!(run.next().await.unwrap(), toolsmith::agent::Node::End) {}
    assert_eq!(run.into_result().unwrap().output(), "done");
    assert_eq!(entries(&order).iter().filter(|l| l.starts_with("A.before")).count(), 5);
}

#[tokio::test]
async fn after_node_run_can_end_the_run_early() {
    let requests = Arc::new(AtomicUsize::new(0));
    let hooks = Hooks::new().after_node_run(|_ctx, node, result| async move {
        Ok(match node {
            // Stop as soon as the model answered: its tool calls never run.
            AgentNode::ModelRequest => NodeResult::End(RunOutput::Text("stopped".into())),
            _ => result,
        })
    });
    let ran = Arc::new(AtomicUsize::new(0));
    let r = ran.clone();
    let counted = Tool::from_schema("count", "Counts its calls.", json!({"type": "object"}), move |_ctx, _args| {
        r.fetch_add(1, Ordering::SeqCst);
        async { Ok(ToolOutput::Value(json!("counted"))) }
    });
    let model = FunctionModel::sync(move |_, _| {
        requests.fetch_add(1, Ordering::SeqCst);
        call("count", json!({}), "c1")
    });
    let agent = Agent::builder(model).tool(counted).capability(hooks).build().unwrap();
    assert_eq!(agent.run("go").await.unwrap().output(), "stopped");
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn on_node_run_error_can_retry_a_failed_model_request() {
    let attempts = Arc::new(AtomicUsize::new(0));
    let a = attempts.clone();
    let flaky = FunctionModel::new(move |_, _| {
        let n = a.fetch_add(1, Ordering::SeqCst);
        async move {
            if n == 0 {
                Err(ModelError::new("UnexpectedModelBehavior", "garbled response"))
            } else {
                Ok(ModelResponse::text("recovered"))
            }
        }
    });
    let hooks = Hooks::new().on_node_run_error(|_ctx, node, error| async move {
        match node {
            AgentNode::ModelRequest if error.kind() == "UnexpectedModelBehavior" => {
                Ok(NodeResult::Next(AgentNode::ModelRequest))
            }
            _ => Err(error),
        }
    });
    let agent = Agent::builder(flaky).capability(hooks).build().unwrap();
    assert_eq!(agent.run("go").await.unwrap().output(), "recovered");
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn before_node_run_can_edit_the_tool_calls_and_cannot_go_back_to_the_start() {
    let hooks = Hooks::new().before_node_run(|_ctx, node| async move {
        Ok(match node {
            AgentNode::CallTools { mut response } => {
                for part in response.parts.iter_mut() {
                    if let ModelResponsePart::ToolCall(c) = part {
                        c.args = json!({"a": 20, "b": 22});
                    }
                }
                AgentNode::CallTools { response }
            }
            other => other,
        })
    });
    let model = FunctionModel::sync(|messages, _| {
        let returned =
            messages.iter().filter_map(ModelMessage::as_request).flat_map(|r| r.parts.iter()).find_map(|p| match p {
                ModelRequestPart::ToolReturn(t) => Some(t.content_text()),
                _ => None,
            });
        match returned {
            Some(text) => ModelResponse::text(text),
            None => call("add", json!({"a": 1, "b": 2}), "c1"),
        }
    });
    let agent = Agent::builder(model).tool(add).capability(hooks).build().unwrap();
    assert_eq!(agent.run("add").await.unwrap().output(), "42");

    let back =
        Hooks::new().after_node_run(|_ctx, _node, _result| async { Ok(NodeResult::Next(AgentNode::UserPrompt)) });
    let agent = Agent::builder(drafts(Arc::default())).capability(back).build().unwrap();
    let err = agent.run("go").await.unwrap_err();
    assert_eq!(err.kind(), "UserError");
    assert!(err.to_string().contains("cannot go back"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Output hooks

#[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
struct City {
    name: String,
    population: u64,
}

/// Answers with the `final_result` call given by `args(n)` for the n-th request (from 1).
fn output_calls(args: impl Fn(usize) -> Value + Send + Sync + 'static) -> FunctionModel {
    let n = AtomicUsize::new(0);
    FunctionModel::sync(move |_, _| {
        let i = n.fetch_add(1, Ordering::SeqCst) + 1;
        call("final_result", args(i), &format!("o{i}"))
    })
}

#[tokio::test]
async fn output_hooks_run_in_order_and_see_the_output_tool_call() {
    let order = log();
    let logger = |label: &'static str| {
        let (l1, l2, l3, l4) = (order.clone(), order.clone(), order.clone(), order.clone());
        Hooks::new()
            .before_output_validate(move |_ctx, out, raw| {
                assert_eq!(out.kind, OutputKind::Tool);
                assert_eq!(out.call.as_ref().map(|c| c.tool_call_id.as_str()), Some("o1"));
                push(&l1, format!("{label}.before_validate"));
                async { Ok(raw) }
            })
            .after_output_validate(move |_ctx, _out, v| {
                push(&l2, format!("{label}.after_validate"));
                async { Ok(v) }
            })
            .before_output_process(move |_ctx, _out, v| {
                push(&l3, format!("{label}.before_process"));
                async { Ok(v) }
            })
            .after_output_process(move |_ctx, _out, v| {
                push(&l4, format!("{label}.after_process"));
                async { Ok(v) }
            })
    };
    let agent = Agent::builder(output_calls(|_| json!({"name": "Paris", "population": 2_100_000})))
        .output_type::<City>()
        .capability(logger("A"))
        .capability(logger("B"))
        .build()
        .unwrap();
    let city = agent.run("a city").await.unwrap().into_output();
    assert_eq!(city, City { name: "Paris".into(), population: 2_100_000 });
    assert_eq!(
        entries(&order),
        [
            "A.before_validate",
            "B.before_validate",
            "B.after_validate",
            "A.after_validate",
            "A.before_process",
            "B.before_process",
            "B.after_process",
            "A.after_process"
        ]
    );
}

#[tokio::test]
async fn after_output_validate_rejects_an_output_with_a_retry() {
    let hooks = Hooks::new().after_output_validate(|ctx, _out, v: Value| async move {
        if v["population"].as_u64() == Some(0) {
            // The output retry budget is what output hooks see.
            assert_eq!((ctx.retry, ctx.max_retries), (0, 1));
            return Err(ModelRetry::new("A city has people: try again.").into());
        }
        Ok(v)
    });
    let agent = Agent::builder(output_calls(|i| json!({"name": "Paris", "population": if i == 1 { 0 } else { 5 }})))
        .output_type::<City>()
        .output_retries(1)
        .capability(hooks)
        .build()
        .unwrap();
    let result = agent.run("a city").await.unwrap();
    assert_eq!(result.output().population, 5);
    assert_eq!(retry_prompts(result.all_messages()), ["A city has people: try again."]);
}

#[tokio::test]
async fn before_output_validate_repairs_and_on_output_validate_error_recovers() {
    // The model writes the population as "2.1M"; a hook repairs it before validation.
    let repair = Hooks::new().before_output_validate(|_ctx, _out, mut raw: Value| async move {
        if raw["population"] == json!("2.1M") {
            raw["population"] = json!(2_100_000);
        }
        Ok(raw)
    });
    let agent = Agent::builder(output_calls(|_| json!({"name": "Paris", "population": "2.1M"})))
        .output_type::<City>()
        .capability(repair)
        .build()
        .unwrap();
    assert_eq!(agent.run("a city").await.unwrap().output().population, 2_100_000);

    let recover = Hooks::new().on_output_validate_error(|_ctx, _out, raw: Value, error| async move {
        assert!(matches!(error, ToolError::Validation(_)));
        Ok(json!({"name": raw["name"], "population": 0}))
    });
    let agent = Agent::builder(output_calls(|_| json!({"name": "Atlantis"})))
        .output_type::<City>()
        .capability(recover)
        .build()
        .unwrap();
    let result = agent.run("a city").await.unwrap();
    assert_eq!(result.output(), &City { name: "Atlantis".into(), population: 0 });
    assert!(retry_prompts(result.all_messages()).is_empty());
}

#[tokio::test]
async fn process_hooks_see_text_output_and_may_ask_for_a_retry() {
    let requests = Arc::new(AtomicUsize::new(0));
    let validated = log();
    let v = validated.clone();
    let hooks = Hooks::new()
        .before_output_validate(move |_ctx, _out, raw| {
            push(&v, "validate");
            async { Ok(raw) }
        })
        .after_output_process(|_ctx, out, value: Value| async move {
            assert_eq!(out.kind, OutputKind::Text);
            match value.as_str() {
                Some("draft 1") => Err(ModelRetry::new("Say more, try again.").into()),
                Some(t) => Ok(json!(format!("{t}!"))),
                None => Ok(value),
            }
        });
    let agent = Agent::builder(drafts(requests.clone())).capability(hooks).build().unwrap();
    let result = agent.run("write").await.unwrap();
    assert_eq!(result.output(), "draft 2!");
    assert_eq!(retry_prompts(result.all_messages()), ["Say more, try again."]);
    assert!(entries(&validated).is_empty(), "plain text is not validated");
}

// ---------------------------------------------------------------------------------------------
// Event stream

#[tokio::test]
async fn event_stream_capabilities_nest_and_work_without_an_event_handler() {
    let outer = log();
    let o = outer.clone();
    // The outer capability sees what the inner one made of the stream.
    let observer = ProcessEventStream::handler(move |event: AgentEvent| {
        let line = match &event {
            AgentEvent::ModelRequest { step } => format!("request {step}"),
            AgentEvent::FunctionToolCall { call, args_valid } => format!("call {} {args_valid}", call.tool_name),
            AgentEvent::FunctionToolResult { result } => format!("result {}", result.content_text()),
            AgentEvent::FinalResult { .. } => "final".into(),
            _ => "other".into(),
        };
        push(&o, line);
        async {}
    });
    let drop_responses = ProcessEventStream::processor(|events| {
        events.filter(|e| std::future::ready(!matches!(e, AgentEvent::ModelResponse { .. }))).boxed()
    });
    let agent =
        Agent::builder(add_then_text()).tool(add).capability(observer).capability(drop_responses).build().unwrap();
    assert_eq!(agent.run("add").await.unwrap().output(), "done");
    assert_eq!(entries(&outer), ["request 1", "call add true", "result 3", "request 2", "final"]);

    // The run's own handler sees the wrapped stream too, every event before the run returns.
    let handled = log();
    let h = handled.clone();
    let counted = Arc::new(AtomicUsize::new(0));
    let c = counted.clone();
    let agent = Agent::builder(add_then_text())
        .tool(add)
        .capability(Hooks::new().on_event(move |_e| {
            c.fetch_add(1, Ordering::SeqCst);
            async {}
        }))
        .capability(ProcessEventStream::processor(|events| {
            events.filter(|e| std::future::ready(matches!(e, AgentEvent::FinalResult { .. }))).boxed()
        }))
        .build()
        .unwrap();
    agent
        .run("add")
        .event_handler(move |e| push(&h, format!("{e:?}").split_whitespace().next().unwrap()))
        .await
        .unwrap();
    assert_eq!(entries(&handled), ["FinalResult"]);
    assert_eq!(counted.load(Ordering::SeqCst), 1);
}

/// Logs each stream it is given: the run step it was given at, and how many events it carried.
struct CountStreams(Log);

impl Capability<()> for CountStreams {
    fn wraps_event_stream(&self) -> bool {
        true
    }

    fn wrap_event_stream(&self, ctx: &RunContext<()>, events: EventBoxStream) -> EventBoxStream {
        let (log, step) = (self.0.clone(), ctx.run_step);
        let seen = Arc::new(AtomicUsize::new(0));
        let counted = seen.clone();
        let line = push_on_drop(log, move || format!("step {step}: {} events", counted.load(Ordering::SeqCst)));
        events
            .map(move |e| {
                let _keep = &line;
                seen.fetch_add(1, Ordering::SeqCst);
                e
            })
            .boxed()
    }
}

/// Pushes `line()` to `log` when dropped (when the stream it lives in ends).
fn push_on_drop(log: Log, line: impl Fn() -> String + Send + Sync + 'static) -> impl Send + Sync {
    struct OnDrop<F: Fn() -> String>(Log, F);
    impl<F: Fn() -> String> Drop for OnDrop<F> {
        fn drop(&mut self) {
            push(&self.0, (self.1)());
        }
    }
    OnDrop(log, line)
}

#[tokio::test]
async fn the_event_stream_is_wrapped_for_each_model_request_and_call_tools_node() {
    // As the reference: one stream for each ModelRequest and CallTools node (none for the
    // UserPrompt node), each ended before the next node starts.
    let streams = log();
    let agent = Agent::builder(add_then_text()).tool(add).capability(CountStreams(streams.clone())).build().unwrap();
    assert_eq!(agent.run("add").await.unwrap().output(), "done");
    assert_eq!(
        entries(&streams),
        // request + response; call + result; request + response; the final result.
        ["step 1: 2 events", "step 1: 2 events", "step 2: 2 events", "step 2: 1 events"]
    );
}

// ---------------------------------------------------------------------------------------------
// Per-run instances bring their toolsets

/// Brings a toolset made per run: each run gets a `tick_N` tool, N counting the runs.
struct PerRun {
    runs: Arc<AtomicUsize>,
    toolset: Option<BoxedToolset>,
}

type BoxedToolset = toolsmith::toolset::BoxedToolset<()>;

impl Capability<()> for PerRun {
    fn for_run(&self, _ctx: &RunContext<()>) -> Option<BoxedCapability<()>> {
        let n = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        let tool = Tool::from_schema(
            format!("tick_{n}"),
            "Ticks.",
            json!({"type": "object"}),
            move |_ctx, _args| async move { Ok(ToolOutput::Value(json!(n))) },
        );
        let toolset = BoxedToolset::new(FunctionToolset::new().with_tool(tool));
        Some(BoxedCapability::new(PerRun { runs: self.runs.clone(), toolset: Some(toolset) }))
    }

    fn toolset(&self) -> Option<BoxedToolset> {
        self.toolset.clone()
    }
}

#[tokio::test]
async fn a_for_run_instance_brings_its_own_toolset() {
    let offered = log();
    let o = offered.clone();
    let model = FunctionModel::sync(move |_, info| {
        push(&o, info.function_tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>().join(","));
        ModelResponse::text("ok")
    });
    let agent = Agent::builder(model)
        .tool(add)
        .capability(PerRun { runs: Arc::default(), toolset: None })
        .capability(Toolset::new(FunctionToolset::new()))
        .build()
        .unwrap();
    agent.run("one").await.unwrap();
    agent.run("two").await.unwrap();
    assert_eq!(entries(&offered), ["add,tick_1", "add,tick_2"]);
}

// ---------------------------------------------------------------------------------------------
// Wrapper toolsets

/// Wraps the run's toolset with a prefix.
struct Prefix(&'static str);

impl Capability<()> for Prefix {
    fn wrapper_toolset(&self, toolset: BoxedToolset) -> Option<BoxedToolset> {
        Some(BoxedToolset::new(toolset.prefixed(self.0)))
    }
}

/// Hides the tools whose name starts with `hidden`.
struct Hide(&'static str);

impl Capability<()> for Hide {
    fn wrapper_toolset(&self, toolset: BoxedToolset) -> Option<BoxedToolset> {
        let hidden = self.0;
        Some(BoxedToolset::new(
            toolset.filtered(move |_ctx: &RunContext<()>, def: &ToolDefinition| !def.name.starts_with(hidden)),
        ))
    }
}

/// Multiply two numbers.
#[tool]
fn mul(a: i64, b: i64) -> i64 {
    a * b
}

#[tokio::test]
async fn wrapper_toolsets_nest_with_the_first_capability_outermost() {
    let offered = log();
    let o = offered.clone();
    let model = FunctionModel::sync(move |messages, info| {
        if messages.iter().any(|m| matches!(m, ModelMessage::Response(_))) {
            return ModelResponse::text("done");
        }
        push(&o, info.function_tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>().join(","));
        call("ns_add", json!({"a": 2, "b": 3}), "c1")
    });
    // Hide is inside Prefix: it sees the unprefixed names and hides `mul`.
    let agent = Agent::builder(model)
        .tool(add)
        .toolset(FunctionToolset::new().with_tool(mul))
        .capability(Prefix("ns"))
        .capability(Hide("mul"))
        .build()
        .unwrap();
    let result = agent.run("add").await.unwrap();
    assert_eq!(entries(&offered), ["ns_add"]);
    let returned = result.all_messages()[2].as_request().unwrap();
    assert!(matches!(&returned.parts[0], ModelRequestPart::ToolReturn(t) if t.content_text() == "5"), "{returned:?}");
}

/// Keeps the tools whose name is not `dropped` (in `prepare_tools`) and logs what it saw.
struct DropInPrepare(&'static str, Log);

impl Capability<()> for DropInPrepare {
    async fn prepare_tools(
        &self,
        _ctx: &RunContext<()>,
        tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        push(&self.1, tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>().join(","));
        Ok(tools.into_iter().filter(|t| t.name != self.0).collect())
    }
}

/// Logs the names the run's toolset lists to the wrapper, and prefixes them.
struct Spy(Log);

impl Capability<()> for Spy {
    fn wrapper_toolset(&self, toolset: BoxedToolset) -> Option<BoxedToolset> {
        let seen = self.0.clone();
        Some(BoxedToolset::new(
            toolset
                .filtered(move |_ctx: &RunContext<()>, def: &ToolDefinition| {
                    push(&seen, def.name.clone());
                    true
                })
                .prefixed("ns"),
        ))
    }
}

#[tokio::test]
async fn a_wrapper_toolset_wraps_what_prepare_tools_left() {
    // As the reference assembles a run's toolset: the wrapper wraps the prepared toolset, so
    // `prepare_tools` sees the tools' own names and the wrapper never sees (or runs) what it removed.
    let (prepared, wrapped, offered) = (log(), log(), log());
    let o = offered.clone();
    let model = FunctionModel::sync(move |messages, info| {
        push(&o, info.function_tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>().join(","));
        match messages.iter().filter(|m| matches!(m, ModelMessage::Response(_))).count() {
            0 => call("ns_mul", json!({"a": 2, "b": 3}), "c1"),
            1 => call("ns_add", json!({"a": 2, "b": 3}), "c2"),
            _ => ModelResponse::text("done"),
        }
    });
    let agent = Agent::builder(model)
        .tool(add)
        .toolset(FunctionToolset::new().with_tool(mul))
        .capability(Spy(wrapped.clone()))
        .capability(DropInPrepare("mul", prepared.clone()))
        .build()
        .unwrap();
    let result = agent.run("go").await.unwrap();
    assert_eq!(entries(&prepared), ["add,mul"; 3]);
    assert_eq!(entries(&wrapped), ["add"; 3]);
    assert_eq!(entries(&offered), ["ns_add"; 3]);
    // The removed tool is unknown to the run: its call gets a retry, the other one runs.
    let retry = result.all_messages()[2].as_request().unwrap();
    assert!(
        matches!(&retry.parts[0], ModelRequestPart::ToolReturn(t) if t.content_text() == "Unknown tool name: 'ns_mul'. Available tools: 'ns_add'"),
        "{retry:?}"
    );
    let returned = result.all_messages()[4].as_request().unwrap();
    assert!(matches!(&returned.parts[0], ModelRequestPart::ToolReturn(t) if t.content_text() == "5"), "{returned:?}");
}

/// Fails in `prepare_tools`.
struct FailInPrepare;

impl Capability<()> for FailInPrepare {
    async fn prepare_tools(
        &self,
        _ctx: &RunContext<()>,
        _tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        Err(AgentRunError::UnexpectedModelBehavior { message: "no tools today".into(), detail: None })
    }
}

#[tokio::test]
async fn a_prepare_tools_error_under_a_wrapper_ends_the_run_as_it_was() {
    let agent = Agent::builder(TestModel::default())
        .tool(add)
        .capability(Spy(log()))
        .capability(FailInPrepare)
        .build()
        .unwrap();
    let err = agent.run("go").await.unwrap_err();
    assert!(
        matches!(&err, AgentRunError::UnexpectedModelBehavior { message, .. } if message == "no tools today"),
        "{err:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Skipping the per-step preparation

/// Says it prepares nothing, yet would hide every tool: the hint is taken at its word.
struct Hint(bool);

impl Capability<()> for Hint {
    fn has_prepare_tools(&self) -> bool {
        self.0
    }

    async fn prepare_tools(
        &self,
        _ctx: &RunContext<()>,
        _tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        Ok(Vec::new())
    }
}

#[tokio::test]
async fn prepare_tools_runs_only_when_a_capability_may_change_the_tools() {
    let offered = log();
    let model = |o: Log| {
        FunctionModel::sync(move |_, info| {
            push(&o, info.function_tools.len().to_string());
            ModelResponse::text("ok")
        })
    };
    for (hint, expected) in [(false, "1"), (true, "0")] {
        let agent = Agent::builder(model(offered.clone())).tool(add).capability(Hint(hint)).build().unwrap();
        agent.run("go").await.unwrap();
        assert_eq!(entries(&offered).last().map(String::as_str), Some(expected), "hint {hint}");
    }
    // Hooks says so by whether it has prepare_tools closures.
    let hooks = Hooks::new().prepare_tools(|_ctx, _tools| async { Ok(Vec::new()) });
    assert!(Capability::<()>::has_prepare_tools(&hooks));
    assert!(!Capability::<()>::has_prepare_tools(&Hooks::<()>::new()));
}

// ---------------------------------------------------------------------------------------------
// Messages delivered into the conversation by a closure

/// The user prompts of a history, in order.
fn user_prompts(messages: &[ModelMessage]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| match m {
            ModelMessage::Request(r) => Some(r),
            _ => None,
        })
        .flat_map(|r| &r.parts)
        .filter_map(|p| match p {
            ModelRequestPart::UserPrompt(u) => Some(serde_json::to_value(&u.content).unwrap().to_string()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_pending_messages_closure_delivers_before_a_request_and_at_the_end() {
    use toolsmith::capability::{Delivery, DeliveryPoint};
    use toolsmith::messages::ModelRequest;

    let points = log();
    let seen = log();
    let (p, s) = (points.clone(), seen.clone());
    let hooks = Hooks::new().pending_messages(move |_ctx, at| {
        let points = p.clone();
        async move {
            let mut points = points.lock().unwrap();
            points.push(format!("{at:?}"));
            // One notification before the first request, one more when the run first ends.
            let first_of_its_kind = points.iter().filter(|x| **x == format!("{at:?}")).count() == 1;
            Ok(match (at, first_of_its_kind) {
                (DeliveryPoint::BeforeRequest, true) => {
                    Delivery::new(vec![ModelRequest::user_prompt("note: the build is green")])
                }
                (DeliveryPoint::RunEnd, true) => Delivery::new(vec![ModelRequest::user_prompt("note: deployed")]),
                _ => Delivery::default(),
            })
        }
    });
    let model = FunctionModel::sync(move |messages, _| {
        let prompts = user_prompts(messages);
        s.lock().unwrap().push(prompts.join(" | "));
        ModelResponse::text(format!("seen {} prompts", prompts.len()))
    });
    let agent = Agent::builder(model).capability(hooks).build().unwrap();
    let result = agent.run("status?").await.unwrap();
    // The delivery at the end asked the model once more, and its answer is the output.
    assert_eq!(result.output(), "seen 3 prompts");
    assert_eq!(
        entries(&seen),
        [r#""status?" | "note: the build is green""#, r#""status?" | "note: the build is green" | "note: deployed""#,]
    );
    assert_eq!(entries(&points), ["BeforeRequest", "RunEnd", "BeforeRequest", "RunEnd"]);
    // Each delivery is a request of its own in the history.
    let requests = result.all_messages().iter().filter(|m| matches!(m, ModelMessage::Request(_))).count();
    assert_eq!(requests, 3);
}
