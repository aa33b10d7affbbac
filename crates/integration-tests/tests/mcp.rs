//! `McpToolset` against real MCP servers from the npm registry (server-everything over stdio and
//! streamable HTTP, server-filesystem over stdio), an rmcp server run in-process for edge cases,
//! and the official conformance harness driving the `mcp_conformance_client` example.
//!
//! Needs the feature `mcp` and the servers installed by `scripts/install-mcp-servers.sh`:
//!
//! ```text
//! eval "$(scripts/install-mcp-servers.sh)"
//! cargo build -p toolsmith --features mcp --example mcp_conformance_client
//! cargo test -p integration-tests --features mcp-servers --test mcp
//! ```
//!
//! Without `TOOLSMITH_MCP_SERVERS` every test that needs a real server fails and says how to
//! install them.

#[path = "mcp/client.rs"]
mod client;
#[path = "mcp/edge_server.rs"]
mod edge_server;
#[path = "mcp/support.rs"]
mod support;

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolsmith::messages::{
    MediaContent, ModelMessage, ModelRequestPart, ModelResponsePart, ToolCallPart, ToolOutcome, ToolReturnPart,
    UserContent,
};
use toolsmith::prelude::*;
use toolsmith::toolset::{ElicitationResponse, McpError, McpToolset, SessionMode, ToolsetExt};

use edge_server::edge_toolset;
use support::*;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// A model that makes the calls of `steps[k]` in its k-th response, then answers "done"; it
/// records every request's messages.
fn scripted(steps: Vec<Vec<(&'static str, Value)>>) -> FunctionModel {
    FunctionModel::sync(move |messages, _info| {
        let k = messages.iter().filter(|m| matches!(m, ModelMessage::Response(_))).count();
        match steps.get(k) {
            Some(calls) => ModelResponse::new(
                calls
                    .iter()
                    .enumerate()
                    .map(|(i, (name, args))| {
                        ModelResponsePart::ToolCall(ToolCallPart::new(*name, args.clone(), format!("c{k}_{i}")))
                    })
                    .collect(),
            ),
            None => ModelResponse::text("done"),
        }
    })
}

/// The tool returns (successes and retries) of a run, in order.
fn tool_returns(messages: &[ModelMessage]) -> Vec<ToolReturnPart> {
    messages
        .iter()
        .filter_map(ModelMessage::as_request)
        .flat_map(|r| r.parts.iter())
        .filter_map(|p| match p {
            ModelRequestPart::ToolReturn(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

/// The user content sent after tool returns (files).
fn user_contents(messages: &[ModelMessage]) -> Vec<UserContent> {
    messages
        .iter()
        .filter_map(ModelMessage::as_request)
        .flat_map(|r| r.parts.iter())
        .filter_map(|p| match p {
            ModelRequestPart::UserPrompt(u) => match &u.content {
                toolsmith::messages::UserPromptContent::Parts(parts) => Some(parts.clone()),
                _ => None,
            },
            _ => None,
        })
        .flatten()
        .collect()
}

fn names(defs: &[ToolDefinition]) -> Vec<String> {
    defs.iter().map(|d| d.name.clone()).collect()
}

// ---------------------------------------------------------------------------------------------
// server-everything and server-filesystem: listing and calling
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_everything_lists_tools_with_metadata_and_calls_them() {
    let mcp: McpToolset = everything_stdio();
    let tools = mcp.list_tools().await.unwrap();
    let listed = names(&tools);
    for expected in ["echo", "get-sum", "get-structured-content", "get-tiny-image", "get-resource-links"] {
        assert!(listed.contains(&expected.to_string()), "{expected} missing from {listed:?}");
    }
    // Tools that need sampling or elicitation are offered only to clients that advertise them.
    assert!(!listed.contains(&"trigger-sampling-request".to_string()), "{listed:?}");

    let sum = tools.iter().find(|t| t.name == "get-sum").unwrap();
    assert_eq!(sum.description.as_deref(), Some("Returns the sum of two numbers"));
    assert_eq!(sum.parameters_json_schema["properties"]["a"]["type"], "number");
    let meta = sum.metadata.as_ref().unwrap();
    assert_eq!(meta["title"], "Get Sum Tool");
    assert_eq!(meta["annotations"]["readOnlyHint"], true);
    let structured = tools.iter().find(|t| t.name == "get-structured-content").unwrap();
    let output_schema = &structured.metadata.as_ref().unwrap()["output_schema"];
    assert_eq!(output_schema["properties"]["temperature"]["type"], "number");
    assert_eq!(structured.return_schema.as_deref(), Some(output_schema));

    let echo = mcp.call_tool("echo", json!({"message": "hi"})).await.unwrap();
    assert!(!echo.is_error);
    assert_eq!(echo.text(), "Echo: hi");
    let sum = mcp.call_tool("get-sum", json!({"a": 2, "b": 3})).await.unwrap();
    assert!(sum.text().contains('5'), "{sum:?}");
    let info = mcp.server_info().await.unwrap();
    assert!(info.name.is_some());
    assert!(!info.protocol_version.is_empty());
    assert_eq!(mcp.connection_count(), 1, "one session serves every request");
    mcp.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http_everything_lists_and_calls() {
    let server = everything_http();
    let mcp: McpToolset = McpToolset::http(&server.url).name("everything-http");
    let tools = mcp.list_tools().await.unwrap();
    assert!(names(&tools).contains(&"echo".to_string()));
    let echo = mcp.call_tool("echo", json!({"message": "over http"})).await.unwrap();
    assert_eq!(echo.text(), "Echo: over http");
    let structured = mcp.call_tool("get-structured-content", json!({"location": "New York"})).await.unwrap();
    assert!(structured.structured_content.as_ref().is_some_and(|s| s["temperature"].is_number()), "{structured:?}");
    assert_eq!(mcp.connection_count(), 1);
    mcp.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_echoes_the_clients_credentials_puts_them_nowhere() {
    let server = echo_keys_http();
    const TOKEN: &str = "sk-test-0123456789abcdef";
    const KEY: &str = "key-ABCDEF0123456789";
    let mcp: McpToolset = McpToolset::http(&server.url).name("echo-keys").bearer_token(TOKEN).header("X-Api-Key", KEY);
    let leaks = |text: &str| text.contains(TOKEN) || text.contains(KEY);

    // Direct calls: the text, the structured content and `_meta` come back without them.
    let result = mcp.call_tool("whoami", json!({})).await.unwrap();
    let seen = format!("{result:?}");
    assert!(!leaks(&seen), "{seen}");
    assert!(result.text().starts_with("you sent Bearer [REDACTED] and [REDACTED]"), "{}", result.text());
    assert_eq!(result.structured_content.as_ref().unwrap()["authorization"], "Bearer [REDACTED]");
    // A failure the server reports as a result (`isError`), naming the key.
    let failed = mcp.call_tool("fail", json!({})).await.unwrap();
    assert!(failed.is_error);
    assert!(!leaks(&format!("{failed:?}")) && failed.text().ends_with("bad key [REDACTED]"), "{failed:?}");

    // Through a run: neither the model nor the history sees them.
    let seen_by_model = Arc::new(Mutex::new(String::new()));
    let seen = seen_by_model.clone();
    let model = FunctionModel::new(move |messages: &[ModelMessage], _info: &AgentInfo| {
        let first = messages.len() == 1;
        *seen.lock().unwrap() = serde_json::to_string(messages).unwrap();
        async move {
            Ok(if first {
                ModelResponse::new(vec![
                    ModelResponsePart::ToolCall(ToolCallPart::new("whoami", json!({}), "c1")),
                    ModelResponsePart::ToolCall(ToolCallPart::new("fail", json!({}), "c2")),
                ])
            } else {
                ModelResponse::text("done")
            })
        }
    });
    let agent = Agent::builder(model).toolset(mcp).build().unwrap();
    let result = agent.run("who am I?").await.unwrap();
    let history = serde_json::to_string(result.all_messages()).unwrap();
    assert!(history.contains("[REDACTED]"), "{history}");
    assert!(!leaks(&history), "{history}");
    assert!(!leaks(&seen_by_model.lock().unwrap()));
}

/// The variable names the everything server's `get-env` tool reports.
async fn server_env(mcp: &McpToolset) -> Vec<String> {
    let result = mcp.call_tool("get-env", json!({})).await.unwrap();
    let env: serde_json::Map<String, Value> = serde_json::from_str(&result.text()).unwrap();
    env.keys().cloned().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_gets_only_the_safe_part_of_the_environment() {
    // This process's environment has TOOLSMITH_MCP_SERVERS (these tests need it): a server sees
    // it only when told to inherit everything, as an API key would be.
    assert!(std::env::var_os("TOOLSMITH_MCP_SERVERS").is_some());
    let mcp: McpToolset = everything_stdio().env("GIVEN", "yes");
    let names = server_env(&mcp).await;
    assert!(names.contains(&"PATH".to_string()) && names.contains(&"GIVEN".to_string()), "{names:?}");
    assert!(!names.contains(&"TOOLSMITH_MCP_SERVERS".to_string()), "{names:?}");
    let allowed = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "GIVEN"];
    assert!(names.iter().all(|n| allowed.contains(&n.as_str())), "{names:?}");
    mcp.close().await;

    let everything: McpToolset = everything_stdio().inherit_env(true);
    assert!(server_env(&everything).await.contains(&"TOOLSMITH_MCP_SERVERS".to_string()));
    everything.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http_agent_run_end_to_end() {
    let server = everything_http();
    let mcp: McpToolset = McpToolset::http(&server.url).allowed_tools(["echo"]);
    let agent = Agent::builder(TestModel::new()).toolset(mcp).build().unwrap();
    let result = agent.run("echo something").await.unwrap();
    assert!(result.output().starts_with(r#"{"echo":"Echo: "#), "{}", result.output());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_capability_connects_itself_when_the_model_cannot() {
    // TestModel has no MCP connector: the capability's local toolset connects to the server over
    // streamable HTTP, with the allowed tools applied, and the run calls it.
    let server = everything_http();
    let cap = toolsmith::capability::Mcp::<()>::new(&server.url)
        .id("everything")
        .header("x-test", "1")
        .allowed_tools(["echo"])
        .build()
        .unwrap();
    let agent = Agent::builder(TestModel::new()).capability(cap).build().unwrap();
    let result = agent.run("echo something").await.unwrap();
    assert!(result.output().starts_with(r#"{"echo":"Echo: "#), "{}", result.output());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_read_outside_the_root_is_a_tool_error_and_a_retry() {
    let root = temp_dir("fs");
    std::fs::write(root.join("notes.txt"), "remember the milk").unwrap();
    let root = root.canonicalize().unwrap();
    let inside = root.join("notes.txt").to_string_lossy().into_owned();
    let outside = std::env::temp_dir().join("elsewhere.txt").to_string_lossy().into_owned();

    // Directly: the server's error is a result with is_error, not an Err.
    let mcp: McpToolset = filesystem_stdio(&root);
    let denied = mcp.call_tool("read_text_file", json!({"path": outside})).await.unwrap();
    assert!(denied.is_error);
    assert!(denied.error_message().contains("Access denied"), "{denied:?}");
    let read = mcp.call_tool("read_text_file", json!({"path": inside})).await.unwrap();
    assert_eq!(read.text(), "remember the milk");
    mcp.close().await;

    // In a run: the error goes back to the model as a retry with the server's message.
    let model = scripted(vec![
        vec![("read_text_file", json!({"path": outside}))],
        vec![("read_text_file", json!({"path": inside}))],
    ]);
    let agent = Agent::builder(model).toolset(filesystem_stdio::<()>(&root)).build().unwrap();
    let result = agent.run("read my notes").await.unwrap();
    let returns = tool_returns(result.all_messages());
    assert_eq!(returns.len(), 2);
    assert_eq!(returns[0].outcome, ToolOutcome::Retried);
    assert!(returns[0].content_text().contains("Access denied - path outside allowed directories"), "{returns:?}");
    assert_eq!(returns[1].outcome, ToolOutcome::Success);
    // The server sends structured content, which is preferred to the text.
    assert_eq!(returns[1].content, json!({"content": "remember the milk"}));
}

// ---------------------------------------------------------------------------------------------
// Agents calling server-everything end to end
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_model_agent_calls_echo_and_get_sum() {
    let mcp: McpToolset = everything_stdio().allowed_tools(["echo", "get-sum"]);
    let agent = Agent::builder(TestModel::new()).toolset(mcp.clone()).build().unwrap();
    let result = agent.run("go").await.unwrap();
    let output: Value = serde_json::from_str(result.output()).unwrap();
    assert!(output["echo"].as_str().unwrap().starts_with("Echo: "), "{output}");
    assert!(output["get-sum"].as_str().unwrap().starts_with("The sum of "), "{output}");
    // One session for the run: opened when it started, used by every step and call.
    assert_eq!(mcp.connection_count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_agent_gets_text_structured_content_and_images() {
    let model = scripted(vec![vec![
        ("echo", json!({"message": "hello"})),
        // "2" and "3.5" are coerced by validation as Pydantic would: the server gets numbers.
        ("get-sum", json!({"a": "2", "b": 3.5})),
        ("get-structured-content", json!({"location": "Chicago"})),
        ("get-tiny-image", json!({})),
    ]]);
    let agent = Agent::builder(model).toolset(everything_stdio::<()>()).build().unwrap();
    let result = agent.run("show me").await.unwrap();
    assert_eq!(result.output(), "done");
    let returns = tool_returns(result.all_messages());
    let by_name = |n: &str| returns.iter().find(|r| r.tool_name == n).unwrap();
    assert_eq!(by_name("echo").content, json!("Echo: hello"));
    assert!(by_name("get-sum").content_text().contains("5.5"), "{returns:?}");
    let weather = &by_name("get-structured-content").content;
    assert!(weather["temperature"].is_number() && weather["conditions"].is_string(), "{weather}");
    let image = by_name("get-tiny-image").content_text();
    assert!(image.contains("See file "), "{image}");
    let files: Vec<_> = user_contents(result.all_messages())
        .into_iter()
        .filter_map(|c| match c {
            UserContent::Media(MediaContent::Binary(b)) => Some(b),
            _ => None,
        })
        .collect();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].media_type, "image/png");
    assert!(image.contains(files[0].identifier.as_deref().unwrap()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adaptors_prefix_filter_and_defer_mcp_tools() {
    let mcp = everything_stdio::<()>().filtered(|_ctx, def| def.name == "echo" || def.name == "get-sum").prefixed("ev");
    let agent = Agent::builder(TestModel::new()).toolset(mcp).build().unwrap();
    let result = agent.run("go").await.unwrap();
    let output: Value = serde_json::from_str(result.output()).unwrap();
    assert!(output["ev_echo"].as_str().unwrap().starts_with("Echo: "), "{output}");
    assert!(output["ev_get-sum"].is_string(), "{output}");

    let deferred = everything_stdio::<()>().allowed_tools(["echo"]).defer_loading();
    let ctx = RunContext::detached();
    let tools = deferred.get_tools(&ctx).await.unwrap();
    assert_eq!(tools.len(), 1);
    assert!(tools[0].def.defer_loading);
    // With the catalogue cached, each step is handed the same list: nothing is rebuilt.
    let first = deferred.get_tools_shared(&ctx).await.unwrap();
    let second = deferred.get_tools_shared(&ctx).await.unwrap();
    assert!(std::sync::Arc::ptr_eq(&first, &second));
    assert!(first[0].def.defer_loading);
    deferred.inner().close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_and_elicitation_handlers_answer_server_everything() {
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let record = seen.clone();
    let mcp: McpToolset = everything_stdio()
        .sampling_handler(move |params| {
            record.lock().unwrap().push(params);
            async {
                Ok(json!({"role": "assistant", "content": {"type": "text", "text": "Sampled hello"},
                          "model": "scripted", "stopReason": "endTurn"}))
            }
        })
        .elicitation_handler(|_request| async { ElicitationResponse::Decline });
    let listed = names(&mcp.list_tools().await.unwrap());
    assert!(listed.contains(&"trigger-sampling-request".to_string()), "{listed:?}");
    assert!(listed.contains(&"trigger-elicitation-request".to_string()), "{listed:?}");
    let sampled =
        mcp.call_tool("trigger-sampling-request", json!({"prompt": "Say hello", "maxTokens": 5})).await.unwrap();
    assert!(sampled.text().contains("Sampled hello"), "{sampled:?}");
    assert!(seen.lock().unwrap()[0].to_string().contains("Say hello"));
    let elicited = mcp.call_tool("trigger-elicitation-request", json!({})).await.unwrap();
    assert!(elicited.text().to_lowercase().contains("decline"), "{elicited:?}");
}

/// Echo a text.
#[tool]
fn echo_text(text: String) -> String {
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_behind_tool_search_starts_at_the_first_search_not_before() {
    // The everything server, started through a shell that leaves a mark when it runs.
    let mark = temp_dir("lazy").join("started");
    let script = format!("touch '{}'; exec '{}' '{}' stdio", mark.display(), node(), everything_js());
    let server = || {
        McpToolset::<()>::stdio("sh", ["-c".to_string(), script.clone()])
            .name("everything")
            .defer_loading()
            .connect_on_search()
    };
    // A run that does not search: the server is never started.
    let agent = Agent::builder(scripted(vec![vec![("echo_text", json!({"text": "hi"}))]]))
        .tool(echo_text)
        .toolset(server())
        .build()
        .unwrap();
    agent.run("hi").await.unwrap();
    assert!(!mark.exists(), "the server was started before any search");

    // A run that searches: started then, its tool found and called.
    let agent = Agent::builder(scripted(vec![
        vec![("search_tools", json!({"queries": ["echo message"]}))],
        vec![("echo", json!({"message": "from a lazy server"}))],
    ]))
    .toolset(server())
    .build()
    .unwrap();
    let result = agent.run("echo").await.unwrap();
    assert!(mark.exists());
    let returns = tool_returns(result.all_messages());
    assert!(returns[0].content_text().contains("echo"), "{:?}", returns[0]);
    assert_eq!(returns[1].content_text(), "Echo: from a lazy server");
}

// ---------------------------------------------------------------------------------------------
// Failures: a dead server, a bad command
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_killed_mid_call_is_a_clear_error_and_the_next_call_reconnects() {
    let pid_file = temp_dir("pid").join("server.pid");
    let script = format!("echo $$ > '{}'; exec '{}' '{}' stdio", pid_file.display(), node(), everything_js());
    let mcp: McpToolset = McpToolset::stdio("sh", ["-c".to_string(), script]).name("everything");
    assert_eq!(mcp.call_tool("echo", json!({"message": "one"})).await.unwrap().text(), "Echo: one");
    let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();

    let slow = {
        let mcp = mcp.clone();
        tokio::spawn(async move {
            mcp.call_tool("trigger-long-running-operation", json!({"duration": 10, "steps": 2})).await
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let killed = Command::new("kill").args(["-9", &pid]).status().unwrap();
    assert!(killed.success());
    let started = Instant::now();
    let err = slow.await.unwrap().unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5), "the failure must be seen at once, not at a timeout");
    assert!(matches!(err, McpError::ConnectionLost { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("everything"), "{message}");
    assert!(message.contains("closed the connection"), "{message}");
    assert!(message.contains("The next call reconnects"), "{message}");

    // The next call starts the server again.
    assert_eq!(mcp.call_tool("echo", json!({"message": "two"})).await.unwrap().text(), "Echo: two");
    assert_eq!(mcp.connection_count(), 2);

    // In a run, a server that dies during a call ends the run with the same clear error, and
    // the next call reconnects.
    let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();
    let model = FunctionModel::sync(move |messages, _| {
        if messages.len() == 1 {
            let pid = pid.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(700));
                let _ = Command::new("kill").args(["-9", &pid]).status();
            });
            ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
                "trigger-long-running-operation",
                json!({"duration": 10, "steps": 2}),
                "c1",
            ))])
        } else {
            ModelResponse::text("done")
        }
    });
    let agent = Agent::builder(model).toolset(mcp.clone()).build().unwrap();
    let err = agent.run("go").await.unwrap_err();
    assert_eq!(err.kind(), "McpError", "{err}");
    assert!(err.to_string().contains("was lost during tools/call 'trigger-long-running-operation'"), "{err}");
    assert_eq!(mcp.call_tool("echo", json!({"message": "three"})).await.unwrap().text(), "Echo: three");
    assert_eq!(mcp.connection_count(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_command_or_a_crashing_server_is_a_clear_connect_error() {
    let mcp: McpToolset = McpToolset::stdio("toolsmith-no-such-server", ["--stdio"]);
    let err = mcp.list_tools().await.unwrap_err();
    assert!(matches!(err, McpError::Spawn { .. }), "{err:?}");
    assert!(err.to_string().contains("could not start MCP server 'toolsmith-no-such-server --stdio'"), "{err}");

    // A server that dies at start: its stderr is quoted.
    let missing = temp_dir("missing").join("missing.js").to_string_lossy().into_owned();
    let mcp: McpToolset = McpToolset::stdio(node(), [missing.clone()]).name("broken");
    let err = mcp.list_tools().await.unwrap_err();
    assert!(matches!(err, McpError::Connect { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("could not connect to MCP server 'broken'"), "{message}");
    assert!(message.contains("Cannot find module"), "{message}");

    // In a run, a server that will not start ends the run as an unavailable toolset (not a
    // configuration mistake), naming it, with the server's stderr said once; marked optional,
    // the run goes on without it.
    let agent = Agent::builder(TestModel::new())
        .toolset(McpToolset::<()>::stdio("toolsmith-no-such-server", ["x"]))
        .build()
        .unwrap();
    let err = agent.run("go").await.unwrap_err();
    assert_eq!(err.kind(), "ToolsetUnavailable");
    let agent = Agent::builder(TestModel::new())
        .toolset(McpToolset::<()>::stdio(node(), [missing.clone()]).name("broken"))
        .build()
        .unwrap();
    match agent.run("go").await.unwrap_err() {
        AgentRunError::ToolsetUnavailable(e) => {
            assert_eq!(e.toolset, "broken");
            assert_eq!(e.to_string().matches("Cannot find module").count(), 1, "{e}");
        }
        other => panic!("{other:?}"),
    }
    let agent = Agent::builder(TestModel::new())
        .toolset(McpToolset::<()>::stdio(node(), [missing]).name("broken").optional())
        .build()
        .unwrap();
    assert_eq!(agent.run("go").await.unwrap().output(), "success (no tool calls)");

    // A configuration mistake is reported by the agent builder.
    let bad = McpToolset::<()>::http("localhost:3000").header("bad header", "x");
    let err = Agent::builder(TestModel::new()).toolset(bad).build().unwrap_err();
    assert!(err.to_string().contains("must start with http:// or https://"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Edge cases with an in-process rmcp server
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn definitions_carry_annotations_output_schema_and_meta() {
    let (mcp, _state) = edge_toolset::<()>();
    let tools = mcp.list_tools().await.unwrap();
    let add = tools.iter().find(|t| t.name == "add").unwrap();
    assert_eq!(
        add.metadata.as_ref().unwrap(),
        &json!({
            "title": "Add",
            "annotations": {"readOnlyHint": true},
            "output_schema": {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"], "x-fastmcp-wrap-result": true},
            "meta": {"team": "maths"},
            "mcp": {"server": mcp.server_name()}
        })
    );
    // Bridge mode defers an MCP server's tools by that mark, whatever their names.
    assert!(toolsmith::search::bridge::BridgeConfig::default().is_deferrable(add));
    assert_eq!(add.parameters_json_schema["required"], json!(["a", "b"]));
    let info = mcp.server_info().await.unwrap();
    assert_eq!(info.name.as_deref(), Some("edge"));
    assert_eq!(info.instructions.as_deref(), Some("A server for edge cases."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_are_validated_and_every_error_goes_back_at_once() {
    let (mcp, state) = edge_toolset::<()>();
    let model = scripted(vec![vec![("add", json!({"a": "one"}))], vec![("add", json!({"a": "2", "b": 3}))]]);
    let agent = Agent::builder(model).toolset(mcp).build().unwrap();
    let result = agent.run("add").await.unwrap();
    let returns = tool_returns(result.all_messages());
    assert_eq!(returns[0].outcome, ToolOutcome::Retried);
    let errors = returns[0].content.as_array().unwrap();
    let kinds: Vec<&str> = errors.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["int_parsing", "missing"]);
    // The structured result, unwrapped from {"result": ...} as the output schema says.
    assert_eq!(returns[1].outcome, ToolOutcome::Success);
    assert_eq!(returns[1].content, json!(5));
    assert_eq!(state.calls.load(Ordering::SeqCst), 1, "invalid arguments never reach the server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn is_error_and_json_rpc_errors_are_retries_with_the_servers_message() {
    let (mcp, _state) = edge_toolset::<()>();
    let model = scripted(vec![vec![("fail", json!({}))]]);
    let agent = Agent::builder(model).toolset(mcp.clone()).build().unwrap();
    let result = agent.run("go").await.unwrap();
    let returns = tool_returns(result.all_messages());
    assert_eq!(returns[0].outcome, ToolOutcome::Retried);
    assert_eq!(returns[0].content, json!("the widget is broken"));

    // A JSON-RPC error answered to tools/call is a retry carrying the server's message.
    let model = scripted(vec![vec![("rpc_error", json!({}))]]);
    let agent = Agent::builder(model).toolset(mcp.clone()).build().unwrap();
    let result = agent.run("go").await.unwrap();
    let returns = tool_returns(result.all_messages());
    assert_eq!(returns[0].outcome, ToolOutcome::Retried);
    assert_eq!(returns[0].content, json!("database is down"));

    let (mcp, _state) = edge_toolset::<()>();
    let err = mcp.call_tool("nope", json!({})).await.unwrap_err();
    assert!(
        matches!(&err, McpError::Server { code: -32602, message, .. } if message == "Unknown tool: nope"),
        "{err:?}"
    );
    assert!(!err.is_connection_error());
    assert_eq!(mcp.connection_count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_tool_hits_the_request_timeout_and_the_next_call_reconnects() {
    let (mcp, _state) = edge_toolset::<()>();
    let mcp = mcp.request_timeout(Duration::from_millis(300));
    let started = Instant::now();
    let err = mcp.call_tool("slow", json!({"seconds": 5})).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(matches!(err, McpError::Timeout { .. }), "{err:?}");
    assert!(err.to_string().contains("did not answer tools/call 'slow' within 0.3 s"), "{err}");
    let ok = mcp.call_tool("slow", json!({"seconds": 0})).await.unwrap();
    assert_eq!(ok.text(), "slept 0 s");
    assert_eq!(mcp.connection_count(), 2, "a timed-out session is replaced");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_tool_with_a_tool_timeout_is_a_retry_for_the_model() {
    let (mcp, _state) = edge_toolset::<()>();
    let mcp = mcp.timeout(std::time::Duration::from_millis(200));
    let model = scripted(vec![vec![("slow", json!({"seconds": 3}))], vec![("slow", json!({"seconds": 0}))]]);
    let agent = Agent::builder(model).toolset(mcp).build().unwrap();
    let result = agent.run("go").await.unwrap();
    let returns = tool_returns(result.all_messages());
    assert_eq!(returns[0].outcome, ToolOutcome::Retried);
    assert_eq!(returns[0].content, json!("Timed out after 0.2 seconds."));
    assert_eq!(returns[1].content, json!("slept 0 s"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_results_arrive_whole_and_oversized_ones_fail_clearly() {
    let (mcp, _state) = edge_toolset::<()>();
    let bytes = 4 * 1024 * 1024;
    let big = mcp.call_tool("huge", json!({"bytes": bytes})).await.unwrap();
    assert_eq!(big.text().len(), bytes);

    // Past the 16 MiB limit the request fails at once (not after the request timeout), naming
    // the limit, and the next call reconnects.
    let started = Instant::now();
    let err = mcp.call_tool("huge", json!({"bytes": 17 * 1024 * 1024})).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    assert!(matches!(err, McpError::MessageTooLarge { max_bytes: 16_777_216, .. }), "{err:?}");
    assert!(err.to_string().contains("larger than 16777216 bytes, the limit"), "{err}");
    assert_eq!(mcp.call_tool("huge", json!({"bytes": 10})).await.unwrap().text().len(), 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_refreshes_the_tools() {
    let (mcp, state) = edge_toolset::<()>();
    let ctx = RunContext::detached();
    let before: Vec<String> = mcp.get_tools(&ctx).await.unwrap().iter().map(|t| t.def.name.clone()).collect();
    assert!(!before.contains(&"late".to_string()));
    // Cached: no new tools/list.
    mcp.get_tools(&ctx).await.unwrap();
    assert_eq!(state.lists.load(Ordering::SeqCst), 1);

    mcp.call_tool("add_tool", json!({})).await.unwrap();
    // The notification is processed asynchronously: wait for the refresh to show it.
    let started = Instant::now();
    loop {
        let now: Vec<String> = mcp.get_tools(&ctx).await.unwrap().iter().map(|t| t.def.name.clone()).collect();
        if now.contains(&"late".to_string()) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(5), "the tool list was not refreshed: {now:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(mcp.call_tool("late", json!({})).await.unwrap().text(), "I am new");

    // Without the cache, every step lists again.
    let (mcp, state) = edge_toolset::<()>();
    let mcp = mcp.cache_tools(false);
    mcp.get_tools(&ctx).await.unwrap();
    mcp.get_tools(&ctx).await.unwrap();
    assert_eq!(state.lists.load(Ordering::SeqCst), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_is_refused_without_a_handler() {
    let (mcp, _state) = edge_toolset::<()>();
    let refused = mcp.call_tool("sample", json!({})).await.unwrap();
    assert!(refused.text().starts_with("sampling failed"), "{refused:?}");
    assert!(refused.text().contains("does not support sampling"), "{refused:?}");

    let (mcp, _state) = edge_toolset::<()>();
    let mcp = mcp.sampling_handler(|_params| async {
        Ok(json!({"role": "assistant", "content": {"type": "text", "text": "hi there"}, "model": "m"}))
    });
    let answered = mcp.call_tool("sample", json!({})).await.unwrap();
    assert_eq!(answered.text(), "the model said: hi there");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_in_process_server_is_a_connection_error_then_a_new_session() {
    let (mcp, state) = edge_toolset::<()>();
    mcp.list_tools().await.unwrap();
    let slow = {
        let mcp = mcp.clone();
        tokio::spawn(async move { mcp.call_tool("slow", json!({"seconds": 5})).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    state.kill();
    let err = slow.await.unwrap().unwrap_err();
    assert!(err.is_connection_error(), "{err:?}");
    // get_tools reconnects transparently (listing has no side effects).
    let tools = mcp.get_tools(&RunContext::detached()).await.unwrap();
    assert!(!tools.is_empty());
    assert_eq!(mcp.connection_count(), 2);
}

/// Waits until `f` holds (the server side sees a closed session a moment after the client).
async fn eventually(what: &str, f: impl Fn() -> bool) {
    let started = Instant::now();
    while !f() {
        assert!(started.elapsed() < Duration::from_secs(5), "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_run_sessions_open_and_close_with_each_run() {
    let (mcp, state) = edge_toolset::<()>();
    assert_eq!(mcp.connection_count(), 0, "nothing is opened before it is needed");
    let agent = Agent::builder(TestModel::new().call_tools(["add"])).toolset(mcp.clone()).build().unwrap();
    agent.run("one").await.unwrap();
    eventually("the first run's session is closed", || state.open.load(Ordering::SeqCst) == 0).await;
    agent.run("two").await.unwrap();
    eventually("the second run's session is closed", || state.open.load(Ordering::SeqCst) == 0).await;
    assert_eq!(mcp.connection_count(), 2);

    // Runs that overlap share one session, closed when the last one ends.
    let model = scripted(vec![vec![("slow", json!({"seconds": 0.5}))]]);
    let agent = Agent::builder(model).toolset(mcp.clone()).build().unwrap();
    let (a, b) = tokio::join!(agent.run("a"), agent.run("b"));
    assert_eq!(a.unwrap().output(), "done");
    assert_eq!(b.unwrap().output(), "done");
    assert_eq!(mcp.connection_count(), 3);
    eventually("the shared session is closed", || state.open.load(Ordering::SeqCst) == 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_session_serves_every_run_until_closed() {
    let (mcp, state) = edge_toolset::<()>();
    let mcp = mcp.session_mode(SessionMode::Shared);
    let agent = Agent::builder(TestModel::new().call_tools(["add"])).toolset(mcp.clone()).build().unwrap();
    agent.run("one").await.unwrap();
    agent.run("two").await.unwrap();
    assert_eq!(mcp.connection_count(), 1);
    assert_eq!(state.open.load(Ordering::SeqCst), 1, "the session stays open between runs");
    mcp.close().await;
    eventually("the session is closed", || state.open.load(Ordering::SeqCst) == 0).await;
}

#[test]
fn run_sync_runs_open_and_close_their_own_sessions() {
    // Each run_sync has its own runtime: a per-run session lives and dies inside it.
    let mcp: McpToolset = everything_stdio().allowed_tools(["echo"]);
    let agent = Agent::builder(TestModel::new()).toolset(mcp.clone()).build().unwrap();
    for _ in 0..2 {
        let result = agent.run("go").run_sync().unwrap();
        assert!(result.output().contains("Echo: "), "{}", result.output());
    }
    assert_eq!(mcp.connection_count(), 2);
    // A shared session dies with the runtime that opened it and is reopened by the next run.
    let shared = mcp.session_mode(SessionMode::Shared);
    let agent = Agent::builder(TestModel::new()).toolset(shared.clone()).build().unwrap();
    for _ in 0..2 {
        let result = agent.run("go").run_sync().unwrap();
        assert!(result.output().contains("Echo: "), "{}", result.output());
    }
    assert_eq!(shared.connection_count(), 2);
}

// ---------------------------------------------------------------------------------------------
// The official conformance harness driving the example client
// ---------------------------------------------------------------------------------------------

/// The example binary, built (as a plain binary, not a test harness) by
/// `cargo build -p toolsmith --features mcp --example mcp_conformance_client`.
fn conformance_client() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let client = profile_dir.join("examples").join("mcp_conformance_client");
    if !client.exists() {
        panic!(
            "{} is missing: build it first with `cargo build -p toolsmith --features mcp --example mcp_conformance_client` (with the same target folder as the tests)",
            client.display()
        );
    }
    client
}

fn run_conformance(scenario: &str) {
    let client = conformance_client();
    let work = temp_dir(&format!("conformance-{scenario}"));
    let output = Command::new(node())
        .arg("--require")
        .arg(localhost_preload())
        .arg(conformance_js())
        .args(["client", "--scenario", scenario, "--timeout", "30000", "--output-dir", "results", "--command"])
        .arg(&client)
        .current_dir(&work)
        .env("RUST_LOG", "off")
        .output()
        .unwrap();
    // Every check the harness recorded passed (warnings allowed, failures not).
    assert_harness_passed(scenario, &output, &work, true);
}

#[test]
fn conformance_initialize() {
    run_conformance("initialize");
}

#[test]
fn conformance_tools_call() {
    run_conformance("tools_call");
}

#[test]
fn conformance_sse_retry() {
    run_conformance("sse-retry");
}

#[test]
fn conformance_elicitation_sep1034_client_defaults() {
    run_conformance("elicitation-sep1034-client-defaults");
}
