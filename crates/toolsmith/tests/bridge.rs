//! PraisonAI-style bridge mode: deferrable tools behind tool_search / tool_describe / tool_call.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolsmith::messages::{
    ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart, ToolOutcome,
};
use toolsmith::prelude::*;
use toolsmith::search::bridge::BridgeConfig;

/// Create an issue in a GitHub repository.
#[tool]
fn mcp_github_create_issue(title: String, body: Option<String>) -> String {
    format!("created '{title}' ({})", body.unwrap_or_default())
}

/// List the messages of a Slack channel.
#[tool]
fn mcp_slack_history(channel: String) -> String {
    format!("history of {channel}")
}

/// Read a file.
#[tool]
fn read_file(path: String) -> String {
    format!("contents of {path}")
}

fn call(name: &str, args: Value, id: &str) -> ModelResponse {
    ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(name, args, id))])
}

/// The tool returns of the run, as (tool name, outcome, content).
fn returns(messages: &[ModelMessage]) -> Vec<(String, ToolOutcome, Value)> {
    messages
        .iter()
        .filter_map(|m| match m {
            ModelMessage::Request(r) => Some(r.parts.iter().filter_map(|p| match p {
                ModelRequestPart::ToolReturn(t) => Some((t.tool_name.clone(), t.outcome, t.content.clone())),
                _ => None,
            })),
            _ => None,
        })
        .flatten()
        .collect()
}

#[tokio::test]
async fn the_model_finds_describes_and_calls_a_hidden_tool_through_the_bridge() {
    let shown = Arc::new(Mutex::new(Vec::new()));
    let shown_in_model = shown.clone();
    let script = Arc::new(Mutex::new(
        vec![
            call("tool_search", json!({"query": "create a github issue"}), "s1"),
            call("tool_describe", json!({"tool_name": "mcp_github_create_issue"}), "d1"),
            call("tool_call", json!({"tool_name": "mcp_github_create_issue", "tool_args": {"titel": "Bug"}}), "c1"),
            call("tool_call", json!({"tool_name": "mcp_github_create_issue", "tool_args": {"title": "Bug"}}), "c2"),
            call("tool_call", json!({"tool_name": "mcp_nope", "tool_args": {}}), "c3"),
            ModelResponse::text("done"),
        ]
        .into_iter(),
    ));
    let model = FunctionModel::sync(move |_, info| {
        shown_in_model.lock().unwrap().push(info.function_tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>());
        script.lock().unwrap().next().unwrap_or_else(|| ModelResponse::text("?"))
    });
    let agent = Agent::builder(model)
        .tools([mcp_github_create_issue, mcp_slack_history, read_file])
        .tool_search_bridge(BridgeConfig::on())
        .retries(2)
        .build()
        .unwrap();
    let result = agent.run("file a bug").await.unwrap();
    assert_eq!(result.output(), "done");
    assert_eq!(shown.lock().unwrap()[0], ["read_file", "tool_search", "tool_describe", "tool_call"]);

    let r = returns(result.all_messages());
    assert_eq!(r[0].0, "tool_search");
    assert_eq!(r[0].2["tools"][0]["name"], "mcp_github_create_issue");
    assert_eq!(r[1].2["function"]["name"], "mcp_github_create_issue");
    assert_eq!(r[1].2["function"]["parameters"]["required"], json!(["title"]));
    // Bad arguments through the bridge: the real tool's validation errors, as a retry of tool_call.
    assert_eq!((r[2].0.as_str(), r[2].1), ("tool_call", ToolOutcome::Retried));
    assert_eq!(r[2].2[0]["type"], "missing");
    assert_eq!(r[2].2[1]["loc"], json!(["titel"]));
    assert_eq!((r[3].0.as_str(), r[3].1, &r[3].2), ("tool_call", ToolOutcome::Success, &json!("created 'Bug' ()")));
    assert_eq!(r[4].1, ToolOutcome::Retried);
    assert!(r[4].2.as_str().unwrap().contains("tool_search"));
    assert_eq!(result.usage().tool_calls, 3, "search, describe and the real call");
}

#[test]
fn auto_mode_passes_small_catalogues_through_and_bridges_large_ones() {
    let names = |model_window: u64| {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let seen_in_model = seen.clone();
        let model = FunctionModel::sync(move |_, info| {
            *seen_in_model.lock().unwrap() = info.function_tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
            ModelResponse::text("ok")
        });
        let agent = Agent::builder(model)
            .tools([mcp_github_create_issue, mcp_slack_history, read_file])
            .tool_search_bridge(BridgeConfig::auto().context_window(model_window))
            .build()
            .unwrap();
        agent.run("hi").run_sync().unwrap();
        seen.lock().unwrap().clone()
    };
    assert_eq!(names(128_000), ["mcp_github_create_issue", "mcp_slack_history", "read_file"]);
    assert_eq!(names(500), ["read_file", "tool_search", "tool_describe", "tool_call"]);
}

/// A model known by its name only: its context window comes from the model profile table.
struct Named(&'static str, Arc<Mutex<Vec<String>>>);

impl Model for Named {
    fn name(&self) -> &str {
        self.0
    }

    async fn request(
        &self,
        _messages: &[ModelMessage],
        _settings: Option<&toolsmith::model::ModelSettings>,
        params: &toolsmith::model::ModelRequestParameters,
    ) -> Result<ModelResponse, toolsmith::model::ModelError> {
        *self.1.lock().unwrap() = params.function_tools.iter().map(|t| t.name.clone()).collect();
        Ok(ModelResponse::text("ok"))
    }
}

#[test]
fn auto_mode_takes_the_window_from_the_model_profile_or_the_agent() {
    let names = |model: &'static str, window: Option<u64>| {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut builder = Agent::builder(Named(model, seen.clone()))
            .tools([mcp_github_create_issue, mcp_slack_history, read_file])
            .tool_search_bridge(BridgeConfig::auto().threshold_pct(0.1));
        if let Some(w) = window {
            builder = builder.context_window(w);
        }
        let agent = builder.build().unwrap();
        agent.run("hi").run_sync().unwrap();
        seen.lock().unwrap().clone()
    };
    let bridged = ["read_file", "tool_search", "tool_describe", "tool_call"];
    let all = ["mcp_github_create_issue", "mcp_slack_history", "read_file"];
    // 0.1% of gpt-4's 8,192 tokens is 8 tokens: the two MCP schemas are more.
    assert_eq!(names("gpt-4", None), bridged);
    // 0.1% of gpt-4.1's 1,047,576 tokens is about 1,048: they are less.
    assert_eq!(names("gpt-4.1", None), all);
    // The agent's window overrides the model's.
    assert_eq!(names("gpt-4.1", Some(8_000)), bridged);
    assert_eq!(names("gpt-4", Some(1_000_000)), all);
}

#[test]
fn bridge_mode_is_a_capability_in_code_and_in_specs() {
    use toolsmith::capability::{CapabilityRegistry, CapabilitySpec};
    let run = |builder: toolsmith::AgentBuilder<(), String>, seen: Arc<Mutex<Vec<String>>>| {
        builder
            .tools([mcp_github_create_issue, mcp_slack_history, read_file])
            .build()
            .unwrap()
            .run("hi")
            .run_sync()
            .unwrap();
        seen.lock().unwrap().clone()
    };
    let bridged = ["read_file", "tool_search", "tool_describe", "tool_call"];
    let seen = Arc::new(Mutex::new(Vec::new()));
    let builder = Agent::builder(Named("gpt-4.1", seen.clone())).capability(BridgeConfig::on());
    assert_eq!(run(builder, seen), bridged);

    let spec =
        CapabilitySpec::from_json(r#"[{"ToolSearchBridge": {"enabled": "on", "search_default_limit": 3}}]"#).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let builder =
        Agent::builder(Named("gpt-4.1", seen.clone())).capabilities_from_spec(&spec, &CapabilityRegistry::new());
    assert_eq!(run(builder, seen), bridged);

    let typo = CapabilitySpec::from_json(r#"[{"ToolSearchBridge": {"enabeld": "on"}}]"#).unwrap();
    let err = CapabilityRegistry::<()>::new().load(&typo).unwrap_err();
    assert!(err.message.contains("(did you mean 'enabled'?)"), "{}", err.message);
}
