//! Native tools with local fallbacks: which side a run uses, decided from the run's model
//! (kinds it runs, settings it cannot apply), refusals when the agent is built, the image
//! fallback model, and the spec entries.

use std::sync::{Arc, Mutex};

use serde_json::json;
use toolsmith::capability::{CapabilityRegistry, CapabilitySpec, ImageGeneration, Mcp, NativeOrLocalTool, WebSearch};
use toolsmith::messages::{BinaryContent, FilePart, ModelRequestPart, ModelResponsePart, ToolCallPart};
use toolsmith::native::{self, NativeTool, NativeToolKind, NativeToolKinds};
use toolsmith::prelude::*;

type Offers = Arc<Mutex<Vec<AgentInfo>>>;

/// A model running `kinds` natively that records what it is offered; it first calls `call`
/// (when given), then answers with text.
fn model(kinds: NativeToolKinds, call: Option<&'static str>) -> (FunctionModel, Offers) {
    let seen: Offers = Arc::default();
    let s = seen.clone();
    let model = FunctionModel::sync(move |messages, info| {
        s.lock().unwrap().push(info.clone());
        match call {
            Some(name) if messages.len() == 1 => ModelResponse::new(vec![ModelResponsePart::ToolCall(
                ToolCallPart::new(name, json!({"query": "rust"}), "c1"),
            )]),
            _ => ModelResponse::text("done"),
        }
    })
    .with_native_tools(kinds);
    (model, seen)
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query {
    query: String,
}

fn local_search() -> Tool<()> {
    Tool::new(
        "web_search",
        |_ctx, q: Query| async move { Ok::<_, ToolError>(format!("local results for {}", q.query)) },
    )
}

fn tool_names(info: &AgentInfo) -> Vec<String> {
    info.function_tools.iter().map(|t| t.name.clone()).collect()
}

#[tokio::test]
async fn a_model_running_the_native_tool_gets_it_and_not_the_local_tool() {
    let (m, seen) = model(NativeToolKinds::of([NativeToolKind::WebSearch]), None);
    let cap = WebSearch::new().allowed_domains(["docs.rs"]).local(local_search()).build().unwrap();
    let agent = Agent::builder(m).capability(cap).build().unwrap();
    agent.run("find").await.unwrap();
    let info = &seen.lock().unwrap()[0];
    assert!(tool_names(info).is_empty(), "{:?}", tool_names(info));
    assert_eq!(info.native_tools.len(), 1);
    let NativeTool::WebSearch(w) = &info.native_tools[0] else { panic!() };
    assert_eq!(w.allowed_domains.as_deref(), Some(&["docs.rs".to_string()][..]));
}

#[tokio::test]
async fn a_model_without_it_gets_the_local_tool_and_no_native_tool() {
    let (m, seen) = model(NativeToolKinds::NONE, Some("web_search"));
    let cap = WebSearch::new().local(local_search()).build().unwrap();
    let agent = Agent::builder(m).capability(cap).build().unwrap();
    let result = agent.run("find").await.unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(tool_names(&seen[0]), ["web_search"]);
    assert!(seen[0].native_tools.is_empty());
    let json = toolsmith::messages::history_to_json(result.all_messages());
    assert!(json.contains("local results for rust"), "{json}");
}

#[tokio::test]
async fn a_setting_the_model_cannot_apply_sends_the_run_to_the_local_tool() {
    // The provider runs web search but cannot limit the number of searches: with `max_uses`
    // set, the local tool (which counts) is used rather than dropping the limit.
    let kinds = NativeToolKinds::of([NativeToolKind::WebSearch]);
    let (m, seen) = model(kinds, None);
    let m = m.with_unapplied_native_settings([(NativeToolKind::WebSearch, "max_uses")]);
    let cap = WebSearch::new().max_uses(2).local(local_search()).build().unwrap();
    let agent = Agent::builder(m).capability(cap).build().unwrap();
    agent.run("find").await.unwrap();
    let info = &seen.lock().unwrap()[0];
    assert_eq!(tool_names(info), ["web_search"]);
    assert!(info.native_tools.is_empty());

    // Without a local tool the same agent is refused when it is built, naming the setting.
    let (m, _) = model(kinds, None);
    let m = m.with_unapplied_native_settings([(NativeToolKind::WebSearch, "max_uses")]);
    let cap = WebSearch::<()>::new().max_uses(2).no_local().build().unwrap();
    let err = Agent::builder(m).capability(cap).build().unwrap_err();
    assert!(err.to_string().contains("cannot apply `max_uses` of the native tool `web_search`"), "{err}");
}

#[tokio::test]
async fn behind_a_fallback_model_the_native_tool_is_used_only_if_every_model_runs_it() {
    let (native_model, native_seen) = model(NativeToolKinds::of([NativeToolKind::WebSearch]), None);
    let (plain_model, _) = model(NativeToolKinds::NONE, None);
    let fallback = toolsmith::model::FallbackModel::new(vec![
        toolsmith::model::AnyModel::from_model(native_model),
        toolsmith::model::AnyModel::from_model(plain_model),
    ])
    .unwrap();
    let cap = WebSearch::new().local(local_search()).build().unwrap();
    Agent::builder(fallback).capability(cap).build().unwrap().run("find").await.unwrap();
    // The first model answered, offered the local tool: the second could not have run the native one.
    let info = &native_seen.lock().unwrap()[0];
    assert_eq!(tool_names(info), ["web_search"]);
    assert!(info.native_tools.is_empty());
}

#[test]
fn a_capability_that_would_do_nothing_is_refused() {
    let err = WebSearch::<()>::new().native(false).no_local().build().unwrap_err();
    assert!(err.to_string().contains("needs a local tool"), "{err}");
    let err = NativeOrLocalTool::<()>::new(None, None).unwrap_err();
    assert!(err.to_string().contains("needs a local tool"), "{err}");
    let err = Mcp::<()>::new("https://example.com/mcp").native(false).no_local().build().unwrap_err();
    assert!(err.to_string().contains("Mcp"), "{err}");
}

#[tokio::test]
async fn native_off_always_uses_the_local_tool() {
    let (m, seen) = model(NativeToolKinds::of([NativeToolKind::WebSearch]), None);
    let cap = WebSearch::new().native(false).local(local_search()).build().unwrap();
    Agent::builder(m).capability(cap).build().unwrap().run("find").await.unwrap();
    let info = &seen.lock().unwrap()[0];
    assert_eq!(tool_names(info), ["web_search"]);
    assert!(info.native_tools.is_empty());
}

#[tokio::test]
async fn images_come_from_the_fallback_model_when_the_agents_model_cannot_make_them() {
    let png = BinaryContent::new(b"\x89PNG\r\n", "image/png");
    let image = png.clone();
    let asked: Arc<Mutex<Vec<AgentInfo>>> = Arc::default();
    let a = asked.clone();
    let painter = FunctionModel::sync(move |_, info| {
        a.lock().unwrap().push(info.clone());
        ModelResponse::new(vec![ModelResponsePart::File(FilePart::new(image.clone()))])
    })
    .with_native_tools(NativeToolKinds::of([NativeToolKind::ImageGeneration]));
    let cap = ImageGeneration::new()
        .native_tool(native::ImageGeneration::new().size("1024x1024"))
        .fallback_model(painter)
        .build()
        .unwrap();
    let agent = Agent::builder(FunctionModel::sync(|messages, _| match messages.len() {
        1 => ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
            "generate_image",
            json!({"prompt": "a crab"}),
            "c1",
        ))]),
        _ => ModelResponse::text("here it is"),
    }))
    .capability(cap)
    .build()
    .unwrap();
    let result = agent.run("draw a crab").await.unwrap();
    // The painter was asked with the image tool and its settings.
    let asked = asked.lock().unwrap();
    let NativeTool::ImageGeneration(g) = &asked[0].native_tools[0] else { panic!() };
    assert_eq!(g.size.as_deref(), Some("1024x1024"));
    // The image went to the model as a file.
    let request = result.all_messages()[2].as_request().unwrap().clone();
    let ModelRequestPart::ToolReturn(r) = &request.parts[0] else { panic!("{request:?}") };
    assert_eq!(r.files().len(), 1);
    assert!(matches!(&r.files()[0], toolsmith::messages::MediaContent::Binary(b) if b.data == png.data));

    // A fallback model that cannot make images is refused.
    let err = ImageGeneration::<()>::new().fallback_model(TestModel::default()).build().unwrap_err();
    assert!(err.to_string().contains("cannot make images"), "{err}");
}

#[test]
fn specs_build_the_native_entries() {
    let spec = CapabilitySpec::from_json(
        r#"{"capabilities": [
            {"NativeTool": {"tool": {"kind": "code_execution"}}},
            {"WebSearch": {"max_uses": 2, "local": false}},
            {"MCP": "https://mcp.example.com/mcp"},
            {"ImageGeneration": {"quality": "high", "native": true}}
        ]}"#,
    )
    .unwrap();
    let loaded = CapabilityRegistry::<()>::new().load(&spec).unwrap();
    assert_eq!(loaded.capabilities.len(), 4);
    for (entry, message) in [
        (r#"{"WebSearch": {"local": "bing"}}"#, "local `bing` is not a known strategy"),
        (r#"{"WebFetch": {"native": false, "local": false}}"#, "needs a local tool"),
        (r#"{"WebSearch": {"max_use": 2}}"#, "unknown field `max_use`"),
        (r#"{"ImageGeneration": {"local": true}}"#, "cannot be written in a spec"),
    ] {
        let spec = CapabilitySpec::from_json(&format!(r#"{{"capabilities": [{entry}]}}"#)).unwrap();
        let err = CapabilityRegistry::<()>::new().load(&spec).unwrap_err();
        assert!(err.to_string().contains(message), "{entry}: {err}");
    }
}
