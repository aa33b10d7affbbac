//! The `Instrumentation` capability's spans, seen by a capturing `tracing` subscriber.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolsmith::capability::{EventMode, Hooks, Instrumentation, InstrumentationSettings, InstrumentationVersion};
use toolsmith::messages::{ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::prelude::*;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// A span as the test sees it.
#[derive(Debug, Clone)]
struct Captured {
    name: &'static str,
    parent: Option<usize>,
    fields: BTreeMap<String, String>,
    events: Vec<String>,
}

#[derive(Default)]
struct Store {
    spans: Vec<Captured>,
    by_id: HashMap<u64, usize>,
}

/// A layer that keeps every span with its parent, fields (recorded late or not) and events.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Store>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_string(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), value.to_string());
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut store = self.0.lock().unwrap();
        let parent = ctx.span(id).and_then(|s| s.parent()).and_then(|p| store.by_id.get(&p.id().into_u64()).copied());
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let index = store.spans.len();
        store.spans.push(Captured { name: attrs.metadata().name(), parent, fields, events: Vec::new() });
        store.by_id.insert(id.into_u64(), index);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let mut store = self.0.lock().unwrap();
        if let Some(&i) = store.by_id.get(&id.into_u64()) {
            values.record(&mut Fields(&mut store.spans[i].fields));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut store = self.0.lock().unwrap();
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        // An event without a message (a `logs`-mode content event) is named by its `event.name`
        // and the fields it carries.
        let message = fields.remove("message").unwrap_or_else(|| {
            let name = fields.remove("event.name").unwrap_or_default();
            format!("{name}: {}", fields.keys().cloned().collect::<Vec<_>>().join(","))
        });
        if let Some(span) = ctx.event_span(event)
            && let Some(&i) = store.by_id.get(&span.id().into_u64())
        {
            store.spans[i].events.push(message);
        }
    }
}

/// Runs `agent` on `prompt` under the capturing subscriber; returns the spans and the result.
fn capture<O: Send + 'static>(agent: &Agent<(), O>, prompt: &str) -> (Vec<Captured>, Result<(), AgentRunError>) {
    let layer = Capture::default();
    let subscriber = tracing_subscriber::registry().with(layer.clone());
    let result = tracing::subscriber::with_default(subscriber, || agent.run(prompt).run_sync().map(|_| ()));
    let spans = layer.0.lock().unwrap().spans.clone();
    (spans, result)
}

fn only<'a>(spans: &'a [Captured], name: &str) -> Vec<(usize, &'a Captured)> {
    spans.iter().enumerate().filter(|(_, s)| s.name == name).collect()
}

/// Calls `add` (async, logging an event) once, then answers.
fn model() -> FunctionModel {
    FunctionModel::sync(|messages, _| {
        let returned = messages.iter().any(|m| {
            matches!(m, ModelMessage::Request(r) if r.parts.iter().any(|p| matches!(p, ModelRequestPart::ToolReturn(_))))
        });
        if returned {
            let mut r = ModelResponse::text("the sum is 3");
            r.usage.input_tokens = 20;
            r.usage.output_tokens = 5;
            r
        } else {
            let mut r = ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
                "add",
                json!({"a": 1, "b": 2}),
                "call_1",
            ))]);
            r.usage.input_tokens = 10;
            r.usage.output_tokens = 3;
            r.model_name = Some("scripted-1".into());
            r.provider_response_id = Some("resp_1".into());
            r
        }
    })
    .with_name("scripted")
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

fn add_tool() -> Tool<()> {
    Tool::new("add", |_ctx: RunContext<()>, args: AddArgs| async move {
        tracing::info!("adding");
        Ok::<_, ToolError>(args.a + args.b)
    })
    .description("Add two numbers.")
}

fn agent(settings: InstrumentationSettings) -> Agent<()> {
    Agent::builder(model())
        .name("calculator")
        .system_prompt("You add.")
        .tool(add_tool())
        // Added first but wrapped by the Instrumentation, which asks to be outermost.
        .capability(Hooks::new().wrap_tool_execute(|_ctx, _call, args, next| {
            Box::pin(async move {
                tracing::info!("inner hook");
                next.run(args).await
            })
        }))
        .capability(Instrumentation::new(settings))
        .build()
        .unwrap()
}

#[test]
fn spans_for_the_run_each_model_request_and_each_tool_without_content() {
    let (spans, result) = capture(&agent(InstrumentationSettings::new()), "1 + 2?");
    result.unwrap();

    let runs = only(&spans, "invoke_agent");
    assert_eq!(runs.len(), 1);
    let (run_index, run) = runs[0];
    assert_eq!(run.parent, None);
    let f = &run.fields;
    assert_eq!(f["otel.name"], "invoke_agent calculator");
    assert_eq!(f["gen_ai.operation.name"], "invoke_agent");
    assert_eq!(f["gen_ai.agent.name"], "calculator");
    assert_eq!(f["gen_ai.provider.name"], "function");
    assert_eq!(f["gen_ai.request.model"], "scripted");
    // The run's usage under the aggregated names, so that it is not counted twice with the
    // model spans'.
    assert_eq!(f["gen_ai.aggregated_usage.input_tokens"], "30");
    assert_eq!(f["gen_ai.aggregated_usage.output_tokens"], "8");
    assert!(!f.contains_key("gen_ai.usage.input_tokens"));
    assert_eq!(f["toolsmith.requests"], "2");
    assert_eq!(f["toolsmith.tool_calls"], "1");
    assert!(f.contains_key("gen_ai.conversation.id") && f.contains_key("toolsmith.run_id"));
    assert!(!f.contains_key("error.type"));

    let chats = only(&spans, "chat");
    assert_eq!(chats.len(), 2);
    for (_, chat) in &chats {
        assert_eq!(chat.parent, Some(run_index));
        assert_eq!(chat.fields["otel.name"], "chat scripted");
        assert_eq!(chat.fields["otel.kind"], "client");
        assert_eq!(chat.fields["gen_ai.operation.name"], "chat");
    }
    let first = &chats[0].1.fields;
    assert_eq!(first["gen_ai.response.model"], "scripted-1");
    assert_eq!(first["gen_ai.response.id"], "resp_1");
    assert_eq!(first["gen_ai.response.finish_reasons"], r#"["tool_call"]"#);
    assert_eq!(first["gen_ai.usage.input_tokens"], "10");
    assert_eq!(chats[1].1.fields["gen_ai.response.finish_reasons"], r#"["stop"]"#);

    let tools = only(&spans, "execute_tool");
    assert_eq!(tools.len(), 1);
    let (_, tool) = tools[0];
    assert_eq!(tool.parent, Some(run_index));
    assert_eq!(tool.fields["otel.name"], "execute_tool add");
    assert_eq!(tool.fields["gen_ai.tool.name"], "add");
    assert_eq!(tool.fields["gen_ai.tool.call.id"], "call_1");
    assert_eq!(tool.fields["gen_ai.tool.type"], "function");
    assert_eq!(tool.fields["gen_ai.tool.description"], "Add two numbers.");
    // The other capability's hook and the tool itself run inside the tool span.
    assert_eq!(tool.events, ["inner hook", "adding"]);

    // No content unless asked for.
    for s in &spans {
        for key in [
            "gen_ai.input.messages",
            "gen_ai.output.messages",
            "gen_ai.system_instructions",
            "gen_ai.tool.definitions",
            "gen_ai.tool.call.arguments",
            "gen_ai.tool.call.result",
            "toolsmith.all_messages",
        ] {
            assert!(!s.fields.contains_key(key), "{key} recorded on {}", s.name);
        }
    }
}

#[test]
fn version_6_and_the_other_settings_change_what_is_recorded() {
    let settings = InstrumentationSettings::new()
        .include_content(true)
        .version(InstrumentationVersion::V6)
        .use_aggregated_usage_attribute_names(false)
        .include_model_request_parameters(false);
    let (spans, result) = capture(&agent(settings), "1 + 2?");
    result.unwrap();
    let chats = only(&spans, "chat");
    let second: Value = serde_json::from_str(&chats[1].1.fields["gen_ai.input.messages"]).unwrap();
    assert_eq!(second[3]["role"], "tool");
    assert!(!chats[0].1.fields.contains_key("model_request_parameters"));
    let (_, run) = only(&spans, "invoke_agent")[0];
    assert_eq!(run.fields["gen_ai.usage.input_tokens"], "30");
    assert!(!run.fields.contains_key("gen_ai.aggregated_usage.input_tokens"));
}

#[test]
fn a_deferred_call_is_an_error_on_its_span_only_before_version_5() {
    let deferring = || {
        Tool::new("add", |_ctx: RunContext<()>, _args: AddArgs| async move {
            Err::<i64, _>(ToolError::CallDeferred(toolsmith::tool::CallDeferred::default()))
        })
    };
    for (version, error) in [(InstrumentationVersion::V4, Some("CallDeferred")), (InstrumentationVersion::V5, None)] {
        let agent = Agent::builder(model())
            .tool(deferring())
            .allow_deferred()
            .capability(Instrumentation::new(InstrumentationSettings::new().version(version)))
            .build()
            .unwrap();
        let (spans, result) = capture(&agent, "1 + 2?");
        result.unwrap();
        let (_, tool) = only(&spans, "execute_tool")[0];
        assert_eq!(tool.fields.get("error.type").map(String::as_str), error, "{version:?}");
    }
}

#[test]
fn content_is_recorded_when_enabled() {
    let (spans, result) = capture(&agent(InstrumentationSettings::new().include_content(true)), "1 + 2?");
    result.unwrap();
    let chats = only(&spans, "chat");
    let input: Value = serde_json::from_str(&chats[0].1.fields["gen_ai.input.messages"]).unwrap();
    assert_eq!(
        input,
        json!([
            {"role": "system", "parts": [{"type": "text", "content": "You add."}]},
            {"role": "user", "parts": [{"type": "text", "content": "1 + 2?"}]}
        ])
    );
    let output: Value = serde_json::from_str(&chats[0].1.fields["gen_ai.output.messages"]).unwrap();
    assert_eq!(
        output,
        json!([{"role": "assistant", "finish_reason": "tool_call", "parts": [
            {"type": "tool_call", "id": "call_1", "name": "add", "arguments": {"a": 1, "b": 2}}
        ]}])
    );
    let defs: Value = serde_json::from_str(&chats[0].1.fields["gen_ai.tool.definitions"]).unwrap();
    assert_eq!(defs[0]["name"], "add");
    let second: Value = serde_json::from_str(&chats[1].1.fields["gen_ai.input.messages"]).unwrap();
    // Version 5 (the default): a tool result is a `user` message.
    assert_eq!(
        second[3],
        json!({"role": "user", "parts": [{"type": "tool_call_response", "id": "call_1", "response": 3}]})
    );
    // What the request offered the model, recorded by default.
    let params: Value = serde_json::from_str(&chats[0].1.fields["model_request_parameters"]).unwrap();
    assert_eq!(params["function_tools"][0]["name"], "add");
    assert_eq!(params["allow_text_output"], true);
    let (_, tool) = only(&spans, "execute_tool")[0];
    assert_eq!(tool.fields["gen_ai.tool.call.arguments"], r#"{"a":1,"b":2}"#);
    assert_eq!(tool.fields["gen_ai.tool.call.result"], "3");
    let (_, run) = only(&spans, "invoke_agent")[0];
    let all: Value = serde_json::from_str(&run.fields["toolsmith.all_messages"]).unwrap();
    assert_eq!(all.as_array().map(Vec::len), Some(5));
}

/// Always fails.
#[tool]
async fn boom() -> Result<String, ToolError> {
    Err(ToolError::failed("kaboom"))
}

/// Asks for a retry.
#[tool]
async fn picky() -> Result<String, ModelRetry> {
    Err(ModelRetry::new("try again"))
}

#[test]
fn failures_mark_the_spans() {
    let model = FunctionModel::sync(|messages, _| {
        let step = messages.iter().filter(|m| matches!(m, ModelMessage::Response(_))).count();
        let name = if step == 0 { "picky" } else { "boom" };
        ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(name, json!({}), format!("c{step}")))])
    });
    let agent = Agent::builder(model)
        .tools([boom, picky])
        .capability(Instrumentation::new(InstrumentationSettings::new()))
        .build()
        .unwrap();
    let (spans, result) = capture(&agent, "go");
    assert_eq!(result.unwrap_err().kind(), "ToolError");
    let tools = only(&spans, "execute_tool");
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0].1.fields["error.type"], "ModelRetry");
    assert_eq!(tools[0].1.fields["otel.status_description"], "try again");
    assert_eq!(tools[1].1.fields["error.type"], "ToolError");
    assert_eq!(tools[1].1.fields["otel.status_code"], "ERROR");
    let (_, run) = only(&spans, "invoke_agent")[0];
    assert_eq!(run.fields["error.type"], "ToolError");
    assert_eq!(run.fields["otel.status_code"], "ERROR");
    assert!(run.fields["otel.status_description"].contains("kaboom"), "{:?}", run.fields);
    assert_eq!(run.fields["gen_ai.agent.name"], "agent");
}

#[test]
fn every_run_has_its_own_span() {
    let agent = agent(InstrumentationSettings::new());
    let layer = Capture::default();
    let subscriber = tracing_subscriber::registry().with(layer.clone());
    tracing::subscriber::with_default(subscriber, || {
        agent.run("one").run_sync().unwrap();
        agent.run("two").run_sync().unwrap();
    });
    let spans = layer.0.lock().unwrap().spans.clone();
    let runs = only(&spans, "invoke_agent");
    assert_eq!(runs.len(), 2);
    let chats = only(&spans, "chat");
    assert_eq!(chats.iter().filter(|(_, c)| c.parent == Some(runs[0].0)).count(), 2);
    assert_eq!(chats.iter().filter(|(_, c)| c.parent == Some(runs[1].0)).count(), 2);
}

/// Add two numbers, on the blocking pool.
#[tool]
fn add_blocking(a: i64, b: i64) -> i64 {
    tracing::info!("adding on a pool thread");
    a + b
}

#[test]
fn a_blocking_tool_runs_inside_its_span_on_the_pool() {
    let model = FunctionModel::sync(|messages, _| {
        if messages.iter().any(|m| matches!(m, ModelMessage::Response(_))) {
            ModelResponse::text("done")
        } else {
            ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
                "add_blocking",
                json!({"a": 1, "b": 2}),
                "call_1",
            ))])
        }
    });
    let agent = Agent::builder(model)
        .tool(add_blocking)
        .capability(toolsmith::capability::ThreadExecutor::new(2))
        .capability(Instrumentation::new(InstrumentationSettings::new()))
        .build()
        .unwrap();
    let (spans, result) = capture(&agent, "add");
    result.unwrap();
    let tools = only(&spans, "execute_tool");
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].1.events, ["adding on a pool thread"]);
}

#[test]
fn in_logs_mode_message_content_goes_to_events_in_the_model_span() {
    let settings = InstrumentationSettings::new().include_content(true).event_mode(EventMode::Logs);
    let (spans, result) = capture(&agent(settings), "add 1 and 2");
    result.unwrap();
    let chats = only(&spans, "chat");
    assert_eq!(chats.len(), 2);
    for (_, chat) in &chats {
        assert!(!chat.fields.contains_key("gen_ai.input.messages"), "{:?}", chat.fields);
        assert!(!chat.fields.contains_key("gen_ai.output.messages"), "{:?}", chat.fields);
        assert_eq!(
            chat.events,
            [
                "gen_ai.client.inference.operation.details: gen_ai.input.messages",
                "gen_ai.client.inference.operation.details: gen_ai.output.messages"
            ]
        );
    }
}
