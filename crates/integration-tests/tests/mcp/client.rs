//! The client side of MCP through the public API: elicitation, sampling with a model, roots,
//! notifications (logs, progress, resource updates, list changes), cancellation, structured
//! results checked against their output schema, resources and prompts, the protocol revision.
//! Against server-everything where it has the feature, and the in-process edge server for the
//! bad cases.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolsmith::messages::{ModelMessage, ModelRequestPart, ToolOutcome};
use toolsmith::prelude::*;
use toolsmith::toolset::{
    ElicitationMode, ElicitationResponse, McpLogLevel, McpNotification, McpResourceContents, McpRoot, McpToolset,
};

use super::edge_server::edge_toolset;
use super::support::*;
use super::{eventually, scripted, tool_returns, user_contents};

/// A callback that keeps every notification, and what it keeps.
fn recorder() -> (Arc<Mutex<Vec<McpNotification>>>, impl Fn(McpNotification) + Send + Sync + 'static) {
    let seen: Arc<Mutex<Vec<McpNotification>>> = Arc::default();
    let record = seen.clone();
    (seen, move |note| record.lock().unwrap().push(note))
}

// ---------------------------------------------------------------------------------------------
// Elicitation
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicitation_forms_get_the_schemas_defaults_from_server_everything() {
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = asked.clone();
    let mcp: McpToolset = everything_stdio().elicitation_handler(move |request| {
        record.lock().unwrap().push(request.message.clone());
        async move {
            let ElicitationMode::Form { schema } = &request.mode else { return ElicitationResponse::Decline };
            assert!(schema["properties"]["firstLine"].is_object(), "{schema}");
            // Only the fields without a default; the toolset fills in the rest.
            ElicitationResponse::accept(json!({"name": "Ada Lovelace", "check": true}))
        }
    });
    let result = mcp.call_tool("trigger-elicitation-request", json!({})).await.unwrap();
    let text = result.text();
    assert!(text.contains("Ada Lovelace"), "{text}");
    assert!(text.contains("It was a dark and stormy night."), "{text}");
    assert!(text.contains("\"integer\": 42"), "{text}");
    assert!(text.contains("\"untitledSingleSelectEnum\": \"Monica\""), "{text}");
    assert_eq!(asked.lock().unwrap().len(), 1);
    mcp.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn url_elicitation_reaches_the_handler_and_its_answer_the_server() {
    let urls: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = urls.clone();
    let mcp: McpToolset = everything_stdio().elicitation_handler(move |request| {
        if let Some(url) = request.url() {
            record.lock().unwrap().push(url.to_string());
        }
        async { ElicitationResponse::accept_defaults() }
    });
    let result = mcp.call_tool("trigger-url-elicitation", json!({"url": "https://example.com/sign-in"})).await.unwrap();
    assert!(result.text().contains("completed the URL elicitation"), "{result:?}");
    assert_eq!(*urls.lock().unwrap(), vec!["https://example.com/sign-in".to_string()]);
    let declining: McpToolset = everything_stdio().elicitation_handler(|_| async { ElicitationResponse::Cancel });
    let result =
        declining.call_tool("trigger-url-elicitation", json!({"url": "https://example.com/sign-in"})).await.unwrap();
    assert!(result.text().contains("cancelled the URL elicitation"), "{result:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicitation_without_a_handler_is_refused_at_once() {
    let (mcp, _state) = edge_toolset::<()>();
    let started = Instant::now();
    let result = mcp.call_tool("elicit", json!({})).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    assert!(result.text().starts_with("elicitation failed"), "{result:?}");
    assert!(result.text().contains("does not support elicitation"), "{result:?}");

    // With a handler: accepted, and the default filled in.
    let (mcp, _state) = edge_toolset::<()>();
    let mcp = mcp.elicitation_handler(|_| async { ElicitationResponse::accept(json!({"name": "Ada"})) });
    let answered: Value = serde_json::from_str(&mcp.call_tool("elicit", json!({})).await.unwrap().text()).unwrap();
    assert_eq!(answered, json!({"action": "accept", "content": {"name": "Ada", "team": "maths"}}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_elicitation_handler_that_never_answers_is_bounded_by_the_request_timeout() {
    let (mcp, state) = edge_toolset::<()>();
    let mcp = mcp
        .request_timeout(Duration::from_secs(1))
        .elicitation_handler(|_| std::future::pending::<ElicitationResponse>());
    assert_eq!(mcp.call_tool("elicit_later", json!({})).await.unwrap().text(), "asked");
    let started = Instant::now();
    eventually("the server got an answer", || !state.elicited.lock().unwrap().is_empty()).await;
    let elapsed = started.elapsed();
    assert!(elapsed > Duration::from_millis(700) && elapsed < Duration::from_secs(3), "{elapsed:?}");
    let outcome = state.elicited.lock().unwrap()[0].clone();
    assert!(outcome.contains("did not answer within 1 s"), "{outcome}");

    // A handler that panics is answered for, and so is a notification callback that panics.
    let (mcp, _state) = edge_toolset::<()>();
    let mcp = mcp
        .elicitation_handler(|_| async { panic!("the form broke") })
        .on_notification(|_| panic!("the callback broke"));
    let result = mcp.call_tool("elicit", json!({})).await.unwrap();
    assert!(result.text().contains("the client's elicitation handler failed"), "{result:?}");
    assert_eq!(mcp.call_tool("report", json!({})).await.unwrap().text(), "reported");
    assert_eq!(mcp.call_tool("late", json!({})).await.unwrap().text(), "I am new");
}

// ---------------------------------------------------------------------------------------------
// Structured results and resources in results
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_structured_result_that_breaks_its_output_schema_is_a_retry() {
    let (mcp, _state) = edge_toolset::<()>();
    let model = scripted(vec![vec![("weather", json!({"broken": true}))], vec![("weather", json!({}))]]);
    let agent = Agent::builder(model).toolset(mcp.clone()).build().unwrap();
    let result = agent.run("weather?").await.unwrap();
    let returns = tool_returns(result.all_messages());
    assert_eq!(returns.len(), 2, "{returns:?}");
    assert_eq!(returns[0].outcome, ToolOutcome::Retried, "{returns:?}");
    let message = returns[0].content_text();
    assert!(message.contains("does not match the tool's output schema"), "{message}");
    assert!(message.contains("temperature"), "{message}");
    // The valid one: the structured content is the value, and the resources still reach the model.
    assert_eq!(returns[1].content, json!({"temperature": 21.5}));
    let sent: Vec<String> = user_contents(result.all_messages()).iter().map(|c| format!("{c:?}")).collect();
    assert!(sent.iter().any(|c| c.contains("Station 7, on the hill")), "{sent:?}");
    assert!(sent.iter().any(|c| c.contains("test://forecast")), "{sent:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everythings_structured_content_is_the_tools_value() {
    let mcp: McpToolset = everything_stdio();
    let model = scripted(vec![vec![("get-structured-content", json!({"location": "New York"}))]]);
    let agent = Agent::builder(model).toolset(mcp.clone()).build().unwrap();
    let result = agent.run("weather?").await.unwrap();
    let returns = tool_returns(result.all_messages());
    assert_eq!(returns[0].outcome, ToolOutcome::Success, "{returns:?}");
    assert!(returns[0].content["temperature"].is_number(), "{:?}", returns[0].content);
}

// ---------------------------------------------------------------------------------------------
// Resources and prompts
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_and_prompts_of_server_everything() {
    let mcp: McpToolset = everything_stdio();
    let resources = mcp.list_resources().await.unwrap();
    assert!(resources.iter().any(|r| r.uri.starts_with("demo://resource/")), "{resources:?}");
    let templates = mcp.list_resource_templates().await.unwrap();
    assert!(templates.iter().any(|t| t.uri_template == "demo://resource/dynamic/text/{resourceId}"), "{templates:?}");

    let text = mcp.read_resource("demo://resource/dynamic/text/1").await.unwrap();
    assert!(matches!(&text[0], McpResourceContents::Text { text, .. } if !text.is_empty()), "{text:?}");
    let blob = mcp.read_resource("demo://resource/dynamic/blob/2").await.unwrap();
    assert!(matches!(&blob[0], McpResourceContents::Blob { data, .. } if !data.is_empty()), "{blob:?}");
    let err = mcp.read_resource("demo://nothing/here").await.unwrap_err();
    assert!(err.to_string().contains("resources/read 'demo://nothing/here'"), "{err}");
    mcp.subscribe_resource("demo://resource/dynamic/text/1").await.unwrap();
    mcp.unsubscribe_resource("demo://resource/dynamic/text/1").await.unwrap();

    let prompts = mcp.list_prompts().await.unwrap();
    let args = prompts.iter().find(|p| p.name == "args-prompt").expect("args-prompt");
    assert!(args.arguments.iter().any(|a| a.name == "city" && a.required), "{args:?}");
    let messages = mcp.get_prompt("args-prompt", [("city", "Paris")]).await.unwrap();
    assert_eq!(messages[0].role, "user");
    assert!(messages[0].text().unwrap_or_default().contains("Paris"), "{messages:?}");
    mcp.close().await;
}

// ---------------------------------------------------------------------------------------------
// Sampling
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_requests_go_to_the_named_model() {
    let asked: Arc<Mutex<Vec<Vec<ModelMessage>>>> = Arc::default();
    let record = asked.clone();
    let model = FunctionModel::sync(move |messages, _info| {
        record.lock().unwrap().push(messages.to_vec());
        ModelResponse::text("Bonjour from the client's model")
    });
    let mcp: McpToolset = everything_stdio().sampling_model(model);
    let listed: Vec<String> = mcp.list_tools().await.unwrap().into_iter().map(|d| d.name).collect();
    assert!(listed.contains(&"trigger-sampling-request".to_string()), "{listed:?}");
    let result =
        mcp.call_tool("trigger-sampling-request", json!({"prompt": "Say hello", "maxTokens": 50})).await.unwrap();
    assert!(result.text().contains("Bonjour from the client's model"), "{result:?}");
    let asked = asked.lock().unwrap();
    let request = asked[0].last().and_then(ModelMessage::as_request).unwrap();
    let prompt = request.parts.iter().find_map(|p| match p {
        ModelRequestPart::UserPrompt(u) => Some(format!("{:?}", u.content)),
        _ => None,
    });
    assert!(prompt.unwrap_or_default().contains("Say hello"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_without_a_model_is_an_error_to_the_server_at_once() {
    let (mcp, _state) = edge_toolset::<()>();
    let started = Instant::now();
    let refused = mcp.call_tool("sample", json!({})).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(refused.text().contains("does not support sampling"), "{refused:?}");
    let (mcp, _state) = edge_toolset::<()>();
    let mcp = mcp.sampling_model(TestModel::new().custom_output_text("hi there"));
    assert_eq!(mcp.call_tool("sample", json!({})).await.unwrap().text(), "the model said: hi there");
}

// ---------------------------------------------------------------------------------------------
// Roots
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roots_are_listed_and_their_changes_announced() {
    let mcp: McpToolset = everything_stdio().roots([McpRoot::new("file:///srv/data").name("data")]);
    let listed = mcp.call_tool("get-roots-list", json!({})).await.unwrap();
    assert!(listed.text().contains("file:///srv/data"), "{listed:?}");
    mcp.set_roots([McpRoot::new("file:///srv/other").name("other")]).await;
    // The server lists the roots again when told they changed.
    let started = Instant::now();
    loop {
        let text = mcp.call_tool("get-roots-list", json!({})).await.unwrap().text();
        if text.contains("file:///srv/other") {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(5), "the new roots were not listed: {text}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let (edge, _state) = edge_toolset::<()>();
    let edge = edge.roots([McpRoot::new("file:///tmp")]);
    let roots: Value = serde_json::from_str(&edge.call_tool("roots", json!({})).await.unwrap().text()).unwrap();
    assert_eq!(roots, json!({"roots": [{"uri": "file:///tmp"}]}));
    let (without, _state) = edge_toolset::<()>();
    let refused = without.call_tool("roots", json!({})).await.unwrap().text();
    assert!(refused.starts_with("roots failed") && refused.contains("does not offer roots"), "{refused}");
}

// ---------------------------------------------------------------------------------------------
// Notifications, cancellation, the protocol revision
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribed_resource_updates_reach_the_callback() {
    let (seen, record) = recorder();
    let mcp: McpToolset = everything_stdio().on_notification(record);
    let uri = "demo://resource/dynamic/text/1";
    mcp.subscribe_resource(uri).await.unwrap();
    mcp.call_tool("toggle-subscriber-updates", json!({})).await.unwrap();
    eventually("a resource update", || {
        seen.lock().unwrap().iter().any(|n| matches!(n, McpNotification::ResourceUpdated { uri: u, .. } if u == uri))
    })
    .await;
    mcp.unsubscribe_resource(uri).await.unwrap();
    mcp.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_and_progress_reach_the_application() {
    let (seen, record) = recorder();
    let (mcp, state) = edge_toolset::<()>();
    let mcp = mcp.on_notification(record).log_level(McpLogLevel::Warning);
    assert_eq!(mcp.call_tool("report", json!({})).await.unwrap().text(), "reported");
    assert_eq!(state.log_level.lock().unwrap().as_deref(), Some("warning"), "logging/setLevel was sent");
    let progress = |seen: &Mutex<Vec<McpNotification>>| {
        seen.lock().unwrap().iter().filter(|n| matches!(n, McpNotification::Progress { .. })).count()
    };
    eventually("two progress notifications", || progress(&seen) == 2).await;
    eventually("a log message", || {
        seen.lock().unwrap().iter().any(|n| {
            matches!(n, McpNotification::Log { level: McpLogLevel::Warning, data, .. } if data == "disk almost full")
        })
    })
    .await;
    let notes = seen.lock().unwrap().clone();
    assert!(
        notes
            .iter()
            .any(|n| matches!(n, McpNotification::Progress { progress, total: Some(total), message: Some(m), .. }
            if *progress == 2.0 && *total == 2.0 && m == "step 2")),
        "{notes:?}"
    );

    // server-everything: progress of a long operation, and its simulated logging.
    let (seen, record) = recorder();
    let mcp: McpToolset = everything_stdio().on_notification(record);
    mcp.call_tool("trigger-long-running-operation", json!({"duration": 0.2, "steps": 2})).await.unwrap();
    eventually("progress from server-everything", || progress(&seen) >= 2).await;
    mcp.call_tool("toggle-simulated-logging", json!({})).await.unwrap();
    eventually("a log message from server-everything", || {
        seen.lock().unwrap().iter().any(|n| matches!(n, McpNotification::Log { .. }))
    })
    .await;
    mcp.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_call_is_cancelled_on_the_server() {
    // The tool timeout drops the call: the server hears of it.
    let (mcp, state) = edge_toolset::<()>();
    let mcp = mcp.timeout(Duration::from_millis(300));
    let model = scripted(vec![vec![("cancellable", json!({}))]]);
    let agent = Agent::builder(model).toolset(mcp.clone()).build().unwrap();
    let result = agent.run("go").await.unwrap();
    assert_eq!(tool_returns(result.all_messages())[0].outcome, ToolOutcome::Retried);
    eventually("the server saw the cancellation", || state.cancelled.load(Ordering::SeqCst) == 1).await;

    // A direct call whose future is dropped.
    let (mcp, state) = edge_toolset::<()>();
    mcp.list_tools().await.unwrap();
    let dropped = tokio::time::timeout(Duration::from_millis(200), mcp.call_tool("cancellable", json!({}))).await;
    assert!(dropped.is_err());
    eventually("the server saw the cancellation", || state.cancelled.load(Ordering::SeqCst) == 1).await;
    // The session is still usable.
    assert_eq!(mcp.call_tool("late", json!({})).await.unwrap().text(), "I am new");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_list_change_is_announced() {
    let (seen, record) = recorder();
    let (mcp, _state) = edge_toolset::<()>();
    let mcp = mcp.on_notification(record);
    mcp.call_tool("add_tool", json!({})).await.unwrap();
    eventually("tools changed", || {
        seen.lock().unwrap().iter().any(|n| matches!(n, McpNotification::ToolsChanged { server } if server == "edge"))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_protocol_revision_is_the_newest_with_a_handshake() {
    let mcp: McpToolset = everything_stdio();
    let info = mcp.server_info().await.unwrap();
    assert_eq!(info.protocol_version, "2025-11-25");
    mcp.close().await;
    let server = everything_http();
    let mcp: McpToolset = McpToolset::http(&server.url);
    assert_eq!(mcp.server_info().await.unwrap().protocol_version, "2025-11-25");
    mcp.close().await;

    // A server on an older revision answers with it, and the session goes on in it.
    let (mcp, state) = edge_toolset::<()>();
    state.legacy.store(true, Ordering::SeqCst);
    assert_eq!(mcp.server_info().await.unwrap().protocol_version, "2025-06-18");
    assert_eq!(mcp.call_tool("late", json!({})).await.unwrap().text(), "I am new");
}
