//! A run's own model (`RunBuilder::model`) and an agent's model override
//! (`Agent::override_model`): which model is asked, what is derived from it, settings merged per
//! run, concurrency, streaming, and models that cannot run the agent's configuration.

use std::sync::{Arc, Mutex};

use futures::{StreamExt, stream};
use serde_json::json;
use toolsmith::agent::AgentEvent;
use toolsmith::capability::WebSearch;
use toolsmith::model::{ModelStreamEvent, StreamDelta};
use toolsmith::native::{NativeTool, NativeToolKind, NativeToolKinds};
use toolsmith::prelude::*;

/// A model named `name` answering `text`.
fn answering(name: &str, text: &'static str) -> FunctionModel {
    FunctionModel::sync(move |_, _| ModelResponse::text(text)).with_name(name)
}

/// A model that first calls `which_model`, then answers with the tool's result.
fn calling_which_model(name: &str) -> FunctionModel {
    FunctionModel::sync(|messages, _| match messages.len() {
        1 => ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new("which_model", json!({}), "c1"))]),
        _ => ModelResponse::text(last_tool_return(messages)),
    })
    .with_name(name)
}

fn last_tool_return(messages: &[ModelMessage]) -> String {
    messages
        .iter()
        .rev()
        .find_map(|m| match m {
            ModelMessage::Request(r) => r.parts.iter().find_map(|p| match p {
                ModelRequestPart::ToolReturn(t) => Some(t.content.to_string()),
                _ => None,
            }),
            ModelMessage::Response(_) => None,
        })
        .unwrap_or_default()
}

/// A tool answering with the name of the model its run context holds.
fn which_model() -> Tool<()> {
    Tool::new("which_model", |ctx: RunContext, _: serde_json::Value| async move {
        Ok::<_, ToolError>(ctx.model.name.to_string())
    })
}

#[tokio::test]
async fn a_run_model_is_asked_and_the_agents_model_is_not() {
    let own = calling_which_model("own");
    let other = calling_which_model("other");
    let agent = Agent::builder(own.clone()).tool(which_model()).build().unwrap();
    let result = agent.run("which?").model(other.clone()).await.unwrap();
    // The tool saw the run's model in its context.
    assert_eq!(result.output(), "\"other\"");
    let params = other.last_model_request_parameters().expect("the run's model was asked");
    assert_eq!(params.function_tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["which_model"]);
    assert!(own.last_model_request_parameters().is_none());
    // The next run is the agent's model's.
    assert_eq!(agent.run("which?").await.unwrap().output(), "\"own\"");
    assert!(own.last_model_request_parameters().is_some());
}

#[tokio::test]
async fn run_settings_are_merged_over_the_agents_for_the_run_only() {
    let seen: Arc<Mutex<Vec<Option<ModelSettings>>>> = Arc::default();
    let s = seen.clone();
    let model = FunctionModel::sync(move |_, info| {
        s.lock().unwrap().push(info.model_settings.clone());
        ModelResponse::text("ok")
    });
    let agent = Agent::builder(TestModel::default())
        .model_settings(ModelSettings::new().temperature(0.2).max_tokens(100))
        .build()
        .unwrap();
    agent.run("a").model(model.clone()).model_settings(ModelSettings::new().temperature(0.9)).await.unwrap();
    agent.run("b").model(model).await.unwrap();
    let seen = seen.lock().unwrap();
    let first = seen[0].clone().unwrap();
    assert_eq!((first.temperature, first.max_tokens), (Some(0.9), Some(100)));
    let second = seen[1].clone().unwrap();
    assert_eq!((second.temperature, second.max_tokens), (Some(0.2), Some(100)));
}

type Offers = Arc<Mutex<Vec<AgentInfo>>>;

/// A model running `kinds` natively that records what it is offered and answers with text.
fn recording(name: &str, kinds: NativeToolKinds) -> (FunctionModel, Offers) {
    let seen: Offers = Arc::default();
    let s = seen.clone();
    let model = FunctionModel::sync(move |_, info| {
        s.lock().unwrap().push(info.clone());
        ModelResponse::text("done")
    })
    .with_name(name)
    .with_native_tools(kinds);
    (model, seen)
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query {
    #[allow(dead_code)]
    query: String,
}

fn local_search() -> Tool<()> {
    Tool::new("web_search", |_ctx, _q: Query| async move { Ok::<_, ToolError>("local results".to_string()) })
}

fn offered(seen: &Offers) -> (Vec<String>, usize) {
    let seen = seen.lock().unwrap();
    let info = seen.last().expect("the model was asked");
    (info.function_tools.iter().map(|t| t.name.clone()).collect(), info.native_tools.len())
}

#[tokio::test]
async fn native_tool_or_local_fallback_is_decided_by_the_runs_model() {
    let web = NativeToolKinds::of([NativeToolKind::WebSearch]);
    let (plain, plain_seen) = recording("plain", NativeToolKinds::NONE);
    let (native, native_seen) = recording("native", web);
    let cap = WebSearch::new().local(local_search()).build().unwrap();
    let agent = Agent::builder(plain).capability(cap).build().unwrap();

    agent.run("find").await.unwrap();
    assert_eq!(offered(&plain_seen), (vec!["web_search".to_string()], 0));

    agent.run("find").model(native.clone()).await.unwrap();
    assert_eq!(offered(&native_seen), (vec![], 1));
    assert!(matches!(native_seen.lock().unwrap()[0].native_tools[0], NativeTool::WebSearch(_)));

    // The same under an override, and back to the local tool once it is dropped.
    let guard = agent.override_model(native);
    agent.run("find").await.unwrap();
    assert_eq!(native_seen.lock().unwrap().len(), 2);
    assert_eq!(offered(&native_seen), (vec![], 1));
    drop(guard);
    agent.run("find").await.unwrap();
    assert_eq!(plain_seen.lock().unwrap().len(), 2);
    assert_eq!(offered(&plain_seen), (vec!["web_search".to_string()], 0));
}

#[tokio::test]
async fn a_run_model_that_cannot_run_the_agents_native_tool_fails_the_run_at_its_start() {
    let web = NativeToolKinds::of([NativeToolKind::WebSearch]);
    let (native, _) = recording("native", web);
    let (plain, plain_seen) = recording("plain", NativeToolKinds::NONE);
    let cap = WebSearch::<()>::new().no_local().build().unwrap();
    let agent = Agent::builder(native).capability(cap).build().unwrap();

    let err = agent.run("find").model(plain.clone()).await.unwrap_err();
    let AgentRunError::User(e) = &err else { panic!("expected a UserError, got {err:?}") };
    assert!(e.to_string().contains("model 'plain'"), "{e}");
    assert!(e.to_string().contains("cannot run the native tool `web_search`"), "{e}");
    assert!(plain_seen.lock().unwrap().is_empty());
    assert!(plain.last_model_request_parameters().is_none());

    // Under an override too, and even stepping the run by hand.
    let _guard = agent.override_model(plain);
    let Err(AgentRunError::User(e)) = agent.run("find").iter() else { panic!("the run should be refused") };
    assert!(e.to_string().contains("Agent::override_model"), "{e}");
    assert!(plain_seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_override_applies_to_every_run_and_clone_until_its_guard_drops() {
    let own = answering("own", "from own");
    let fake = answering("fake", "from fake");
    let agent = Agent::builder(own.clone()).build().unwrap();
    let clone = agent.clone();
    {
        let _guard = agent.override_model(fake.clone());
        assert_eq!(agent.run("a").await.unwrap().output(), "from fake");
        assert_eq!(clone.run("b").await.unwrap().output(), "from fake");
        // It wins over the run's own model, as Pydantic AI's does.
        assert_eq!(agent.run("c").model(answering("run", "from run")).await.unwrap().output(), "from fake");
        assert!(own.last_model_request_parameters().is_none());
    }
    assert_eq!(agent.run("d").await.unwrap().output(), "from own");
    assert_eq!(clone.run("e").await.unwrap().output(), "from own");
}

#[tokio::test]
async fn overrides_nest_and_may_be_dropped_in_any_order() {
    let agent = Agent::builder(answering("own", "own")).build().unwrap();
    let first = agent.override_model(answering("first", "first"));
    let second = agent.override_model(answering("second", "second"));
    assert_eq!(agent.run("a").await.unwrap().output(), "second");
    drop(first);
    assert_eq!(agent.run("b").await.unwrap().output(), "second");
    let third = agent.override_model(answering("third", "third"));
    drop(second);
    assert_eq!(agent.run("c").await.unwrap().output(), "third");
    drop(third);
    assert_eq!(agent.run("d").await.unwrap().output(), "own");
}

#[tokio::test]
async fn a_run_keeps_the_model_it_started_with_when_the_guard_drops() {
    let agent = Agent::builder(answering("own", "own")).build().unwrap();
    let guard = agent.override_model(answering("fake", "fake"));
    let mut run = agent.run("a").iter().unwrap();
    drop(guard);
    while !matches!(run.next().await.unwrap(), toolsmith::agent::Node::End) {}
    assert_eq!(run.into_result().unwrap().output(), "fake");
    assert_eq!(agent.run("b").await.unwrap().output(), "own");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_runs_each_use_their_own_model() {
    let agent = Agent::builder(calling_which_model("own")).tool(which_model()).build().unwrap();
    let mut tasks = Vec::new();
    for i in 0..16 {
        let agent = agent.clone();
        tasks.push(tokio::spawn(async move {
            let name = format!("run-{i}");
            let output = match i % 2 {
                0 => agent.run("which?").model(calling_which_model(&name)).await,
                _ => agent.run("which?").await,
            };
            (i, name, output.unwrap().into_output())
        }));
    }
    for task in tasks {
        let (i, name, output) = task.await.unwrap();
        let expected = if i % 2 == 0 { name } else { "own".to_string() };
        assert_eq!(output, format!("\"{expected}\""));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_runs_under_an_override_all_use_it_even_in_spawned_tasks() {
    let agent = Agent::builder(calling_which_model("own")).tool(which_model()).build().unwrap();
    let fake = calling_which_model("fake");
    let guard = agent.override_model(fake);
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let agent = agent.clone();
            tokio::spawn(async move {
                let run = agent.run("which?");
                let run = if i % 2 == 0 { run.model(calling_which_model("ignored")) } else { run };
                run.await.unwrap().into_output()
            })
        })
        .collect();
    for task in tasks {
        assert_eq!(task.await.unwrap(), "\"fake\"");
    }
    drop(guard);
    assert_eq!(agent.run("which?").await.unwrap().output(), "\"own\"");
}

fn streaming(text: &'static [&'static str]) -> FunctionModel {
    FunctionModel::stream(move |_, _| stream::iter(text.iter().map(|t| StreamDelta::text(*t))))
}

fn text_deltas(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Stream(ModelStreamEvent::TextDelta { delta, .. }) => Some(delta.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn streaming_runs_honour_the_run_model_and_the_override() {
    let agent = Agent::builder_streaming(streaming(&["o", "wn"])).build().unwrap();

    let (events, run) = agent.run("a").model_streaming(streaming(&["per ", "run"])).stream();
    let (result, events) = tokio::join!(run, events.collect::<Vec<_>>());
    assert_eq!(result.unwrap().output(), "per run");
    assert_eq!(text_deltas(&events), ["per ", "run"]);

    let guard = agent.override_model_streaming(streaming(&["over", "ride"]));
    let (events, run) = agent.run("b").stream();
    let (result, events) = tokio::join!(run, events.collect::<Vec<_>>());
    assert_eq!(result.unwrap().output(), "override");
    assert_eq!(text_deltas(&events), ["over", "ride"]);
    let outputs: Vec<String> = agent.run("c").stream_output().map(|o| o.unwrap()).collect().await;
    assert_eq!(outputs.last().map(String::as_str), Some("override"));
    drop(guard);

    // A model given without streaming answers in one piece, events still flowing.
    let _guard = agent.override_model(answering("plain", "whole"));
    let (events, run) = agent.run("d").stream();
    let (result, events) = tokio::join!(run, events.collect::<Vec<_>>());
    assert_eq!(result.unwrap().output(), "whole");
    assert!(text_deltas(&events).is_empty());
    assert!(events.iter().any(|e| matches!(e, AgentEvent::ModelResponse { .. })));
}

#[tokio::test]
async fn overridden_deps_replace_the_runs_until_the_guard_drops() {
    let tool = Tool::new("user", |ctx: RunContext<String>, _: serde_json::Value| async move {
        Ok::<_, ToolError>(ctx.deps.clone())
    });
    let model = FunctionModel::sync(|messages, _| match messages.len() {
        1 => ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new("user", json!({}), "c1"))]),
        _ => ModelResponse::text(last_tool_return(messages)),
    });
    let agent = Agent::builder(model).deps::<String>().tool(tool).default_deps("default".into()).build().unwrap();
    let guard = agent.override_deps("overridden".into());
    assert_eq!(agent.run("who?").deps("given".into()).await.unwrap().output(), "\"overridden\"");
    assert_eq!(agent.run("who?").await.unwrap().output(), "\"overridden\"");
    drop(guard);
    assert_eq!(agent.run("who?").deps("given".into()).await.unwrap().output(), "\"given\"");
    assert_eq!(agent.run("who?").await.unwrap().output(), "\"default\"");
}

/// A model whose provider runs a named tool search (as Anthropic's does).
struct NamedSearch;

impl Model for NamedSearch {
    fn name(&self) -> &str {
        "named-search"
    }

    fn tool_search_support(&self) -> toolsmith::model::ToolSearchSupport {
        toolsmith::model::ToolSearchSupport::Named
    }

    async fn request(
        &self,
        _: &[ModelMessage],
        _: Option<&ModelSettings>,
        _: &toolsmith::model::ModelRequestParameters,
    ) -> Result<ModelResponse, toolsmith::model::ModelError> {
        Ok(ModelResponse::text("searched"))
    }
}

#[tokio::test]
async fn a_run_model_without_the_agents_provider_side_tool_search_is_refused() {
    use toolsmith::search::{SearchStrategy, ToolSearch};
    let agent = Agent::builder(NamedSearch)
        .tool_search(ToolSearch::new().strategy(SearchStrategy::NativeBm25))
        .build()
        .unwrap();
    assert_eq!(agent.run("a").await.unwrap().output(), "searched");
    let plain = answering("plain", "plain");
    let err = agent.run("a").model(plain.clone()).await.unwrap_err();
    assert!(matches!(&err, AgentRunError::User(_)), "{err:?}");
    assert!(err.to_string().contains("SearchStrategy::NativeBm25"), "{err}");
    assert!(plain.last_model_request_parameters().is_none());
    // A model that runs it is accepted.
    assert_eq!(agent.run("a").model(NamedSearch).await.unwrap().output(), "searched");
}

#[tokio::test]
async fn a_run_model_without_native_output_is_refused_for_a_native_output_agent() {
    #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    struct City {
        name: String,
    }
    let agent = Agent::builder(FunctionModel::sync(|_, _| ModelResponse::text(r#"{"name": "Paris"}"#)))
        .output_type::<City>()
        .output_mode(OutputMode::Native)
        .build()
        .unwrap();
    assert_eq!(agent.run("a city").await.unwrap().output().name, "Paris");
    // NamedSearch takes no JSON-schema response format: the run is refused before it is asked.
    let err = agent.run("a city").model(NamedSearch).await.unwrap_err();
    let AgentRunError::User(e) = &err else { panic!("expected a UserError, got {err:?}") };
    assert!(e.message.contains("native output is not supported by the model `named-search`"), "{e}");
    let _guard = agent.override_model(NamedSearch);
    assert!(matches!(agent.run("a city").await, Err(AgentRunError::User(_))));
}
