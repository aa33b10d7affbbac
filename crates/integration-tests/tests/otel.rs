//! OpenTelemetry export of the `Instrumentation` spans (feature `otel` of this crate): the SDK's
//! in-memory exporter receives spans with OpenTelemetry names, kinds, statuses and attributes.

use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use serde_json::json;
use toolsmith::capability::otel::opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
use toolsmith::capability::{Instrumentation, InstrumentationSettings};
use toolsmith::messages::{ModelMessage, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::prelude::*;
use tracing_subscriber::layer::SubscriberExt;

/// Add two numbers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Always fails.
#[tool]
async fn boom() -> Result<String, ToolError> {
    Err(ToolError::failed("kaboom"))
}

#[test]
fn spans_are_exported_with_their_opentelemetry_names_kinds_and_attributes() {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
    let subscriber =
        tracing_subscriber::registry().with(toolsmith::capability::otel::layer(provider.tracer("toolsmith-test")));

    let model = FunctionModel::sync(|messages, _| {
        let responses = messages.iter().filter(|m| matches!(m, ModelMessage::Response(_))).count();
        match responses {
            0 => ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
                "add",
                json!({"a": 1, "b": 2}),
                "c1",
            ))]),
            1 => ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new("boom", json!({}), "c2"))]),
            _ => ModelResponse::text("done"),
        }
    });
    let agent = Agent::builder(model)
        .name("exporter")
        .tools([add, boom])
        .capability(Instrumentation::new(InstrumentationSettings::new()))
        .build()
        .unwrap();
    let result = tracing::subscriber::with_default(subscriber, || agent.run("go").run_sync());
    assert_eq!(result.unwrap_err().kind(), "ToolError");
    provider.force_flush().unwrap();

    let spans = exporter.get_finished_spans().unwrap();
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_ref()).collect();
    for expected in ["invoke_agent exporter", "chat function", "execute_tool add", "execute_tool boom"] {
        assert!(names.contains(&expected), "{expected} not in {names:?}");
    }
    let span = |name: &str| spans.iter().find(|s| s.name == name).unwrap();
    let attr = |name: &str, key: &str| {
        span(name).attributes.iter().find(|kv| kv.key.as_str() == key).map(|kv| kv.value.to_string())
    };

    let run = span("invoke_agent exporter");
    assert_eq!(run.span_kind, SpanKind::Internal);
    assert!(matches!(&run.status, Status::Error { description } if description.contains("kaboom")));
    assert_eq!(attr("invoke_agent exporter", "gen_ai.agent.name").as_deref(), Some("exporter"));

    let chat = span("chat function");
    assert_eq!(chat.span_kind, SpanKind::Client);
    assert_eq!(chat.parent_span_id, run.span_context.span_id());
    assert_eq!(attr("chat function", "gen_ai.operation.name").as_deref(), Some("chat"));

    let added = span("execute_tool add");
    assert_eq!(added.parent_span_id, run.span_context.span_id());
    assert_eq!(added.status, Status::Unset);
    assert_eq!(attr("execute_tool add", "gen_ai.tool.call.id").as_deref(), Some("c1"));
    assert!(matches!(&span("execute_tool boom").status, Status::Error { .. }));
    assert_eq!(attr("execute_tool boom", "error.type").as_deref(), Some("ToolError"));
}

#[test]
fn attributes_other_capabilities_record_on_the_current_span_are_exported() {
    use toolsmith::capability::Hooks;
    use toolsmith::capability::otel::tracing_opentelemetry::OpenTelemetrySpanExt;

    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
    let subscriber =
        tracing_subscriber::registry().with(toolsmith::capability::otel::layer(provider.tracer("toolsmith-test")));
    // A capability inside `Instrumentation` tags the model request's span and the tool's span
    // with keys of its own (no field of the span declares them).
    let tagging = Hooks::new()
        .before_model_request(|_ctx, request| async move {
            tracing::Span::current().set_attribute("app.tenant", "acme");
            Ok(request)
        })
        .before_tool_execute(|_ctx, call, args| async move {
            tracing::Span::current().set_attribute("app.tool.cost", 3);
            let _ = call;
            Ok(args)
        });
    let model = FunctionModel::sync(|messages, _| {
        if messages.len() == 1 {
            ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
                "add",
                json!({"a": 1, "b": 2}),
                "c1",
            ))])
        } else {
            ModelResponse::text("3")
        }
    });
    let agent = Agent::builder(model)
        .tool(add)
        .capability(Instrumentation::new(InstrumentationSettings::new()))
        .capability(tagging)
        .build()
        .unwrap();
    tracing::subscriber::with_default(subscriber, || agent.run("1 + 2?").run_sync()).unwrap();
    provider.force_flush().unwrap();
    let spans = exporter.get_finished_spans().unwrap();
    let attr = |name: &str, key: &str| {
        spans
            .iter()
            .filter(|s| s.name == name)
            .flat_map(|s| s.attributes.iter())
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| kv.value.to_string())
    };
    assert_eq!(attr("chat function", "app.tenant").as_deref(), Some("acme"));
    assert_eq!(attr("execute_tool add", "app.tool.cost").as_deref(), Some("3"));
}
