//! Values nested 100,000 levels deep, built in memory (by a model, by the application), on
//! every path of the library that walks them, run on a tokio worker thread with a 2 MiB stack.
//!
//! A recursive walk that comes back shows as a crash of this test binary. The deep values are
//! built, and what the tests keep of them taken apart, without recursion.

use serde_json::{Value, json};
use toolsmith::capability::Hooks;
use toolsmith::messages::{
    MAX_HISTORY_DEPTH, ModelMessage, ModelRequest, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart,
    ToolOutcome, ToolReturnPart, history_to_json, parse_history, try_history_to_json,
};
use toolsmith::prelude::*;
use toolsmith::validation::MAX_NESTING;

const DEEP: usize = 100_000;

/// Runs `f` as a task on a multi-threaded runtime whose workers have 2 MiB stacks.
fn on_worker<T: Send + 'static>(f: impl Future<Output = T> + Send + 'static) -> T {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_stack_size(2 << 20)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move { tokio::spawn(f).await.unwrap() })
}

/// Arrays nested `depth` levels deep around `null`.
fn deep_array(depth: usize) -> Value {
    let mut v = Value::Null;
    for _ in 0..depth {
        v = Value::Array(vec![v]);
    }
    v
}

/// `{"x": v}` (the `json!` macro would copy `v` by serialising it, which recurses).
fn x(v: Value) -> Value {
    Value::Object([("x".to_string(), v)].into_iter().collect())
}

/// Drops a value without recursing.
fn dismantle(value: Value) {
    let mut pending = vec![value];
    while let Some(v) = pending.pop() {
        match v {
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => pending.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// Drops a history whose deep values are tool-call arguments and tool-return contents.
fn dismantle_history(messages: Vec<ModelMessage>) {
    for mut m in messages {
        match &mut m {
            ModelMessage::Response(r) => {
                for p in &mut r.parts {
                    if let ModelResponsePart::ToolCall(c) = p {
                        dismantle(std::mem::take(&mut c.args));
                    }
                }
            }
            ModelMessage::Request(r) => {
                for p in &mut r.parts {
                    if let ModelRequestPart::ToolReturn(t) = p {
                        dismantle(std::mem::take(&mut t.content));
                    }
                }
            }
        }
    }
}

/// Takes any value.
#[tool]
fn take_any(x: Value) -> String {
    format!("{}", x.is_array())
}

/// A model whose first response calls `take_any` with arguments `DEEP` levels deep (and once
/// with small ones), and whose next one says "done".
fn deep_call_model() -> FunctionModel {
    let args = std::sync::Mutex::new(Some(x(deep_array(DEEP))));
    FunctionModel::sync(move |_, _| match args.lock().unwrap().take() {
        Some(args) => ModelResponse::new(vec![
            ModelResponsePart::ToolCall(ToolCallPart::new("take_any", args, "deep")),
            ModelResponsePart::ToolCall(ToolCallPart::new("take_any", json!({"x": [[1]]}), "small")),
        ]),
        None => ModelResponse::text("done"),
    })
}

fn returns(messages: &[ModelMessage]) -> Vec<ToolReturnPart> {
    messages
        .iter()
        .filter_map(ModelMessage::as_request)
        .flat_map(|r| r.parts.iter())
        .filter_map(|p| match p {
            ModelRequestPart::ToolReturn(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

/// What a run with `deep_call_model` must end with: the deep call retried with one
/// `recursion_loop` error, the small one run, the history written and read back.
fn check_deep_call_run(messages: &[ModelMessage]) {
    let returned = returns(messages);
    assert_eq!(returned.len(), 2);
    assert_eq!(returned[0].outcome, ToolOutcome::Retried, "{:?}", returned[0]);
    assert_eq!(returned[0].content[0]["type"], "recursion_loop");
    assert_eq!(returned[0].content[0]["loc"].as_array().unwrap().len(), MAX_NESTING);
    assert_eq!(returned[1].outcome, ToolOutcome::Success);
    assert_eq!(returned[1].content, json!("true"));
    // The arguments kept are cut to what a history holds: it is written whole and reads back.
    let text = try_history_to_json(messages).unwrap();
    assert_eq!(history_to_json(messages), text);
    assert_eq!(parse_history(&text).unwrap(), messages);
}

#[test]
fn deep_arguments_from_a_model_are_retried_on_a_worker() {
    on_worker(async {
        let agent = Agent::builder(deep_call_model()).tool(take_any).build().unwrap();
        let result = agent.run("go").await.unwrap();
        assert_eq!(result.output(), "done");
        check_deep_call_run(result.all_messages());
    });
}

#[test]
fn deep_arguments_reach_capabilities_and_event_handlers_cut() {
    on_worker(async {
        // Hooks that see (and copy) the response and the arguments, and a handler that sees
        // every event.
        let hooks = Hooks::new()
            .after_model_request(|_ctx, _req, response| async move { Ok(response) })
            .before_tool_execute(|_ctx, _call, args| async move { Ok(args) });
        let agent = Agent::builder(deep_call_model()).tool(take_any).capability(hooks).build().unwrap();
        let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = events.clone();
        let result =
            agent.run("go").event_handler(move |e| seen.lock().unwrap().push(format!("{e:?}").len())).await.unwrap();
        assert_eq!(result.output(), "done");
        check_deep_call_run(result.all_messages());
        assert!(!events.lock().unwrap().is_empty());
    });
}

/// A history whose one tool call has `args` as its arguments.
fn history_with_args(args: Value) -> Vec<ModelMessage> {
    vec![
        ModelRequest::user_prompt("go").into(),
        ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new("take_any", args, "c1"))]).into(),
        ModelRequest::new(vec![ModelRequestPart::ToolReturn(ToolReturnPart::success("take_any", json!("ok"), "c1"))])
            .into(),
    ]
}

/// A history whose one tool return has `content` as its content.
fn history_with_return(content: Value) -> Vec<ModelMessage> {
    vec![
        ModelRequest::user_prompt("go").into(),
        ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new("take_any", json!({}), "c1"))]).into(),
        ModelRequest::new(vec![ModelRequestPart::ToolReturn(ToolReturnPart::success("take_any", content, "c1"))])
            .into(),
    ]
}

#[test]
fn deep_histories_are_refused_or_flattened_when_written_on_a_worker() {
    on_worker(async {
        for history in [history_with_args(x(deep_array(DEEP))), history_with_return(deep_array(DEEP))] {
            let err = try_history_to_json(&history).unwrap_err();
            assert!(err.is_too_deep(), "{err}");
            assert!(err.to_string().contains("more than 512 levels deep"), "{err}");
            let text = history_to_json(&history);
            let read = parse_history(&text).unwrap();
            assert_eq!(try_history_to_json(&read).unwrap(), text);
            assert_eq!(read.len(), 3);
            dismantle_history(history);
            dismantle_history(read);
        }
        // At the limit, written whole; one level more, refused.
        let at_limit = history_with_args(deep_array(MAX_HISTORY_DEPTH - 4));
        assert_eq!(parse_history(&try_history_to_json(&at_limit).unwrap()).unwrap(), at_limit);
        assert!(try_history_to_json(&history_with_args(deep_array(MAX_HISTORY_DEPTH - 3))).is_err());
    });
}

#[test]
fn a_deep_history_given_to_a_run_is_refused_on_a_worker() {
    on_worker(async {
        let model = FunctionModel::sync(|_, _| ModelResponse::text("done"));
        let agent = Agent::builder(model).tool(take_any).build().unwrap();
        for history in [history_with_args(x(deep_array(DEEP))), history_with_return(deep_array(DEEP))] {
            let err = agent.run("again").message_history(history).await.unwrap_err();
            let AgentRunError::User(e) = &err else { panic!("{err}") };
            assert!(e.to_string().contains("more than 512 levels deep (in message "), "{e}");
        }
        // So is metadata for the run nested as deep.
        let err = agent.run("go").metadata(x(deep_array(DEEP))).await.unwrap_err();
        assert!(
            err.to_string().contains("the run's metadata nests arrays and objects more than 512 levels deep"),
            "{err}"
        );
        // A history at the limit runs.
        let history = history_with_args(deep_array(MAX_HISTORY_DEPTH - 4));
        assert_eq!(agent.run("again").message_history(history).await.unwrap().output(), "done");
    });
}

/// An argument schema whose `x` is arrays nested `depth` levels deep (a schema built in memory).
fn deep_schema(depth: usize) -> Value {
    let mut v = json!({"type": "integer"});
    for _ in 0..depth {
        v = Value::Object([("type".to_string(), json!("array")), ("items".to_string(), v)].into_iter().collect());
    }
    let properties = Value::Object([("x".to_string(), v)].into_iter().collect());
    Value::Object([("type".to_string(), json!("object")), ("properties".to_string(), properties)].into_iter().collect())
}

/// A tool `t` with `schema` as its argument schema.
fn schema_tool(schema: Value) -> Tool<()> {
    Tool::from_schema("t", "A tool.", schema, |_ctx, _args| async move {
        Ok(toolsmith::tool::ToolOutput::from(json!("ok")))
    })
}

#[test]
fn a_tool_schema_nested_too_deeply_is_refused_on_a_worker() {
    on_worker(async {
        // Refused when the agent is built (and dropped without recursion).
        let model = FunctionModel::sync(|_, _| ModelResponse::text("done"));
        let err = Agent::builder(model).tool(schema_tool(deep_schema(DEEP))).build().unwrap_err();
        assert!(
            err.to_string()
                .contains("the argument schema of tool 't' nests arrays and objects more than 512 levels deep"),
            "{err}"
        );
        // Nested as deep as a history may be, it runs.
        let model = FunctionModel::sync(|_, _| ModelResponse::text("done"));
        let agent = Agent::builder(model).tool(schema_tool(deep_schema(MAX_HISTORY_DEPTH - 4))).build().unwrap();
        assert_eq!(agent.run("go").await.unwrap().output(), "done");
    });
}

/// Returns a document nested `DEEP` levels deep.
#[tool]
fn deep_document() -> Value {
    deep_array(DEEP)
}

#[test]
fn a_deep_value_a_tool_returns_is_kept_as_text_past_the_history_depth() {
    on_worker(async {
        // A `#[tool]` function returns the deep value, one tool returns it plainly, another as
        // a rich return with metadata.
        let plain = Tool::<()>::from_schema("plain", "", json!({"type": "object"}), |_ctx, _args| async move {
            Ok(toolsmith::tool::ToolOutput::from(deep_array(DEEP)))
        });
        let rich = Tool::<()>::from_schema("rich", "", json!({"type": "object"}), |_ctx, _args| async move {
            let mut ret = toolsmith::tool::ToolReturn::new("ok");
            ret.return_value = deep_array(DEEP);
            ret.metadata = Some(x(deep_array(DEEP)));
            Ok(toolsmith::tool::ToolOutput::Return(ret))
        });
        let asked = std::sync::Mutex::new(true);
        let model = FunctionModel::sync(move |_, _| {
            if std::mem::take(&mut *asked.lock().unwrap()) {
                ModelResponse::new(vec![
                    ModelResponsePart::ToolCall(ToolCallPart::new("deep_document", json!({}), "d")),
                    ModelResponsePart::ToolCall(ToolCallPart::new("plain", json!({}), "p")),
                    ModelResponsePart::ToolCall(ToolCallPart::new("rich", json!({}), "r")),
                ])
            } else {
                ModelResponse::text("done")
            }
        });
        let agent = Agent::builder(model).tool(deep_document).tool(plain).tool(rich).build().unwrap();
        let result = agent.run("go").await.unwrap();
        assert_eq!(result.output(), "done");
        let returned = returns(result.all_messages());
        assert_eq!(returned.len(), 3);
        for part in &returned {
            assert_eq!(part.outcome, ToolOutcome::Success);
            // What lies past the depth a message keeps is the JSON text of the rest.
            let mut v = &part.content;
            let mut levels = 0;
            while let Value::Array(items) = v {
                v = &items[0];
                levels += 1;
            }
            assert_eq!(levels, MAX_HISTORY_DEPTH - 8);
            let Value::String(text) = v else { panic!("a string past the limit") };
            let rest = DEEP - levels;
            assert!(*text == format!("{}null{}", "[".repeat(rest), "]".repeat(rest)), "the JSON text of the rest");
        }
        assert!(returned[2].metadata.is_some());
        // The history is written whole and reads back.
        let text = try_history_to_json(result.all_messages()).unwrap();
        assert_eq!(parse_history(&text).unwrap(), result.all_messages());
    });
}

#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
mod providers {
    use toolsmith::model::{Model, ModelRequestParameters};

    use super::*;

    /// Each adapter's request body, for a history: `Ok` or the error's text.
    fn bodies(history: &[ModelMessage]) -> Vec<Result<(), String>> {
        bodies_with(history, &ModelRequestParameters::default())
    }

    /// Each adapter's request body, for a history and parameters.
    fn bodies_with(history: &[ModelMessage], params: &ModelRequestParameters) -> Vec<Result<(), String>> {
        let mut out = Vec::new();
        #[cfg(feature = "openai")]
        {
            use toolsmith::providers::{OpenAIChatModel, OpenAIResponsesModel};
            let chat = OpenAIChatModel::builder("gpt-4o").api_key("k").build().unwrap();
            out.push(chat.request_body(history, None, params, false).map(drop).map_err(|e| e.to_string()));
            let responses = OpenAIResponsesModel::builder("gpt-5").api_key("k").build().unwrap();
            out.push(responses.request_body(history, None, params, false).map(drop).map_err(|e| e.to_string()));
        }
        #[cfg(feature = "anthropic")]
        {
            let m = toolsmith::providers::AnthropicModel::builder("claude-sonnet-4-5").api_key("k").build().unwrap();
            out.push(m.request_body(history, None, params, false).map(drop).map_err(|e| e.to_string()));
        }
        #[cfg(feature = "gemini")]
        {
            let m = toolsmith::providers::GeminiModel::builder("gemini-2.5-flash").api_key("k").build().unwrap();
            out.push(m.request_body(history, None, params, false).map(drop).map_err(|e| e.to_string()));
        }
        out
    }

    #[test]
    fn provider_encoders_refuse_deep_histories_on_a_worker() {
        on_worker(async {
            for history in [history_with_args(x(deep_array(DEEP))), history_with_return(deep_array(DEEP))] {
                for body in bodies(&history) {
                    let err = body.unwrap_err();
                    assert!(err.starts_with("the message history (in message "), "{err}");
                    assert!(err.contains("more than 512 levels deep"), "{err}");
                }
                dismantle_history(history);
            }
            let at_limit = history_with_args(deep_array(MAX_HISTORY_DEPTH - 4));
            for body in bodies(&at_limit) {
                body.unwrap();
            }
        });
    }

    #[test]
    fn provider_encoders_refuse_deep_tool_schemas_on_a_worker() {
        on_worker(async {
            let history = vec![ModelMessage::Request(ModelRequest::user_prompt("go"))];
            let params = |depth| {
                let mut params = ModelRequestParameters::default();
                params.function_tools = vec![std::sync::Arc::new(schema_tool(deep_schema(depth)).definition().clone())];
                params
            };
            let mut deep = ModelRequestParameters::default();
            deep.function_tools =
                vec![std::sync::Arc::new(toolsmith::tool::ToolDefinition::new("t", deep_schema(DEEP)))];
            for body in bodies_with(&history, &deep) {
                let err = body.unwrap_err();
                assert!(
                    err.contains("the definition of tool 't' nests arrays and objects more than 512 levels deep"),
                    "{err}"
                );
            }
            // The test's own deep schema, taken apart without recursion.
            for def in std::mem::take(&mut deep.function_tools) {
                let def = std::sync::Arc::try_unwrap(def).unwrap();
                dismantle(std::sync::Arc::try_unwrap(def.parameters_json_schema).unwrap());
            }
            for body in bodies_with(&history, &params(MAX_HISTORY_DEPTH - 4)) {
                body.unwrap();
            }
        });
    }

    #[cfg(feature = "openai")]
    #[test]
    fn a_request_with_a_deep_history_fails_before_it_is_sent() {
        on_worker(async {
            let model = toolsmith::providers::OpenAIChatModel::builder("gpt-4o")
                .base_url("http://127.0.0.1:9/v1")
                .api_key("k")
                .build()
                .unwrap();
            let history = history_with_return(deep_array(DEEP));
            let err = model.request(&history, None, &ModelRequestParameters::default()).await.unwrap_err();
            assert!(err.to_string().contains("more than 512 levels deep"), "{err}");
            dismantle_history(history);
        });
    }
}

#[cfg(feature = "mcp")]
#[test]
fn mcp_call_tool_refuses_deep_arguments_before_connecting() {
    on_worker(async {
        // A server that is never started: the arguments are refused first.
        let toolset = toolsmith::toolset::McpToolset::<()>::stdio("toolsmith-no-such-server", Vec::<String>::new());
        let err = toolset.call_tool("t", x(deep_array(DEEP))).await.unwrap_err();
        assert!(
            err.to_string().contains("the arguments of tool 't' nest arrays and objects more than 127 levels deep"),
            "{err}"
        );
        let err = toolset.call_tool("t", deep_array(DEEP)).await.unwrap_err();
        assert!(err.to_string().contains("more than 127 levels deep"), "{err}");
    });
}

#[test]
fn normalising_a_deep_schema_stops_at_the_limit_on_a_worker() {
    on_worker(async {
        // Each level a property whose schema has a title (which normalising takes out).
        let mut schema = json!({"type": "integer"});
        for _ in 0..DEEP {
            let child = Value::Object(
                [("title".to_string(), json!("T")), ("type".to_string(), json!("object"))]
                    .into_iter()
                    .chain([(
                        "properties".to_string(),
                        Value::Object([("c".to_string(), schema)].into_iter().collect()),
                    )])
                    .collect(),
            );
            schema = child;
        }
        let mut schema = Value::Object(
            [
                ("type".to_string(), json!("object")),
                ("properties".to_string(), Value::Object([("c".to_string(), schema)].into_iter().collect())),
                ("required".to_string(), json!(["c"])),
            ]
            .into_iter()
            .collect(),
        );
        toolsmith::tool::schema::normalise(&mut schema);
        // The top property's title is gone.
        assert!(schema["properties"]["c"].get("title").is_none());
        dismantle(schema);
    });
}

/// Takes any value, once a user approves.
#[tool(requires_approval)]
fn guarded(x: Value) -> String {
    format!("{}", x.is_array())
}

#[test]
fn deep_override_arguments_of_an_approval_are_retried_on_a_worker() {
    on_worker(async {
        let model = FunctionModel::sync(|messages, _| {
            if messages.iter().any(|m| matches!(m, ModelMessage::Response(_))) {
                ModelResponse::text("done")
            } else {
                ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
                    "guarded",
                    json!({"x": 1}),
                    "c1",
                ))])
            }
        });
        let agent: Agent<(), toolsmith::agent::Deferrable<String>> =
            Agent::builder(model).tool(guarded).allow_deferred().build().unwrap();
        let first = agent.run("go").await.unwrap();
        let requests = first.output().deferred().unwrap().clone();
        let results =
            requests.results().approve("c1", toolsmith::deferred::ToolApproval::approved_with(x(deep_array(DEEP))));
        let resumed =
            agent.resume().message_history(first.all_messages().to_vec()).deferred_tool_results(results).await.unwrap();
        let returned = returns(resumed.all_messages());
        let answer = returned.iter().find(|r| r.tool_call_id == "c1").unwrap();
        assert_eq!(answer.outcome, ToolOutcome::Retried, "{answer:?}");
        assert_eq!(answer.content[0]["type"], "recursion_loop");
        assert!(try_history_to_json(resumed.all_messages()).is_ok());
    });
}
