//! A deferred toolset that waits for the first search (`connect_on_search`): not entered nor
//! listed before the model searches, listed and searched with the others when it does, and a
//! failure to list it confined to the search that needed it.

use std::future::IntoFuture;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolsmith::ToolsetUnavailable;
use toolsmith::messages::{ModelMessage, ModelRequestPart, ModelResponsePart, ToolCallPart};
use toolsmith::prelude::*;
use toolsmith::toolset::{Toolset, ToolsetExt, ToolsetTool};

/// Get the weather forecast for a city.
#[tool]
fn weather_forecast(city: String) -> String {
    format!("sunny in {city}")
}

/// Convert an amount between two currencies.
#[tool(defer_loading)]
fn currency_converter(amount: f64) -> String {
    format!("{amount} EUR")
}

/// Echo a message back.
#[tool]
fn echo(message: String) -> String {
    message
}

/// Stands for an MCP server: counts how often it is entered and listed; may be down.
#[derive(Clone, Default)]
struct Server {
    entered: Arc<AtomicUsize>,
    exited: Arc<AtomicUsize>,
    listed: Arc<AtomicUsize>,
    down: bool,
}

impl Toolset<()> for Server {
    fn label(&self) -> String {
        "weather-server".into()
    }

    async fn enter(&self) -> Result<(), UserError> {
        self.entered.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    async fn exit(&self) {
        self.exited.fetch_add(1, Ordering::SeqCst);
    }

    async fn get_tools(&self, ctx: &RunContext<()>) -> Result<Vec<ToolsetTool<()>>, UserError> {
        self.listed.fetch_add(1, Ordering::SeqCst);
        if self.down {
            return Err(ToolsetUnavailable::new("weather", "the server exited with status 1").into());
        }
        FunctionToolset::new().with_tool(weather_forecast).get_tools(ctx).await
    }
}

fn call(name: &str, args: Value, id: &str) -> ModelResponse {
    ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(name, args, id))])
}

type Seen = Arc<Mutex<Vec<Vec<String>>>>;

/// Plays one response per request and records the tool names it was offered.
fn scripted(responses: Vec<ModelResponse>) -> (FunctionModel, Seen) {
    let seen: Seen = Arc::default();
    let responses = Arc::new(Mutex::new(responses.into_iter()));
    let record = seen.clone();
    let model = FunctionModel::sync(move |_messages, info: &AgentInfo| {
        record.lock().unwrap().push(info.function_tools.iter().map(|t| t.name.clone()).collect());
        responses.lock().unwrap().next().unwrap_or_else(|| ModelResponse::text("script exhausted"))
    });
    (model, seen)
}

fn returns(messages: &[ModelMessage]) -> Vec<String> {
    messages
        .iter()
        .filter_map(ModelMessage::as_request)
        .flat_map(|r| r.parts.iter())
        .filter_map(|p| match p {
            ModelRequestPart::ToolReturn(t) => Some(format!("{}: {}", t.tool_name, t.content_text())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_run_that_never_searches_never_enters_nor_lists_the_toolset() {
    let server = Server::default();
    let echo_then_done = || [call("echo", json!({"message": "hi"}), "c1"), ModelResponse::text("done")];
    let (model, seen) = scripted(echo_then_done().into_iter().chain(echo_then_done()).collect());
    let agent =
        Agent::builder(model).tool(echo).toolset(server.clone().defer_loading().connect_on_search()).build().unwrap();
    for _ in 0..2 {
        assert_eq!(agent.run("hi").await.unwrap().output(), "done");
    }
    assert_eq!((server.entered.load(Ordering::SeqCst), server.listed.load(Ordering::SeqCst)), (0, 0));
    // `search_tools` is offered: the model may look for what the server has.
    assert_eq!(seen.lock().unwrap()[0], ["echo", "search_tools"]);
}

#[tokio::test]
async fn the_first_search_lists_the_toolset_and_finds_its_tools_with_the_others() {
    let server = Server::default();
    let (model, seen) = scripted(vec![
        call("search_tools", json!({"queries": ["weather forecast city"]}), "s1"),
        call("weather_forecast", json!({"city": "Paris"}), "c1"),
        call("search_tools", json!({"queries": ["currency"]}), "s2"),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(currency_converter)
        .toolset(server.clone().defer_loading().connect_on_search())
        .build()
        .unwrap();
    let result = agent.run("weather in Paris?").await.unwrap();
    let returned = returns(result.all_messages());
    assert!(returned[0].starts_with("search_tools: ") && returned[0].contains("weather_forecast"), "{returned:?}");
    assert!(!returned[0].contains("currency_converter"), "{returned:?}");
    assert_eq!(returned[1], "weather_forecast: sunny in Paris");
    // The server's tools stay in the catalogue: the agent's own deferred tool is found beside them.
    assert!(returned[2].contains("currency_converter"), "{returned:?}");
    let offered = seen.lock().unwrap().clone();
    assert_eq!(offered[0], ["search_tools"]);
    assert_eq!(offered[1], ["weather_forecast", "search_tools"]);
    // Entered by the run when it first listed it, exited when the run ended.
    assert_eq!((server.entered.load(Ordering::SeqCst), server.exited.load(Ordering::SeqCst)), (1, 1));
    assert!(server.listed.load(Ordering::SeqCst) >= 1);

    // A later run lists it from its first step (its tools are known) and enters it once.
    let (model, seen) = scripted(vec![ModelResponse::text("done")]);
    let agent = Agent::builder(model).toolset(server.clone().defer_loading().connect_on_search()).build().unwrap();
    agent.run("again").await.unwrap();
    assert_eq!(seen.lock().unwrap()[0], ["search_tools"]);
    assert_eq!(server.entered.load(Ordering::SeqCst), 1, "a new toolset value waits again");
}

#[tokio::test]
async fn runs_sharing_the_toolset_each_enter_and_exit_it_once() {
    let server = Server::default();
    let search = || call("search_tools", json!({"queries": ["weather"]}), "s1");
    let (model, _) = scripted(vec![search(), ModelResponse::text("one"), ModelResponse::text("two")]);
    let agent = Agent::builder(model).toolset(server.clone().defer_loading().connect_on_search()).build().unwrap();
    assert_eq!(agent.run("first").await.unwrap().output(), "one");
    // The second run lists it at once (it was searched), and enters it for itself.
    assert_eq!(agent.run("second").await.unwrap().output(), "two");
    assert_eq!((server.entered.load(Ordering::SeqCst), server.exited.load(Ordering::SeqCst)), (2, 2));
}

#[tokio::test]
async fn a_toolset_that_is_down_fails_the_search_that_needs_it_not_the_run_start() {
    let server = Server { down: true, ..Server::default() };
    let (model, _) = scripted(vec![ModelResponse::text("no search")]);
    let agent = Agent::builder(model).toolset(server.clone().defer_loading().connect_on_search()).build().unwrap();
    assert_eq!(agent.run("hi").await.unwrap().output(), "no search");

    let search = || call("search_tools", json!({"queries": ["weather"]}), "s1");
    let (model, _) = scripted(vec![search(), ModelResponse::text("done")]);
    let agent = Agent::builder(model).toolset(server.clone().defer_loading().connect_on_search()).build().unwrap();
    let err = agent.run("hi").await.unwrap_err();
    assert!(err.to_string().contains("the server exited with status 1"), "{err}");

    // Optional: the search finds nothing there and the run goes on.
    let (model, _) = scripted(vec![search(), ModelResponse::text("done")]);
    let agent = Agent::builder(model).toolset(server.defer_loading().connect_on_search().optional()).build().unwrap();
    let result = agent.run("hi").await.unwrap();
    assert_eq!(result.output(), "done");
    assert!(!returns(result.all_messages())[0].contains("weather_forecast"));
}

#[test]
fn every_tool_must_be_deferred() {
    let err = Agent::builder(TestModel::default())
        .toolset(Server::default().defer_loading_for(["weather_forecast"]).connect_on_search())
        .build()
        .unwrap_err();
    assert!(err.message.contains("connect_on_search needs every tool of the toolset deferred"), "{err}");
}

#[tokio::test]
async fn outside_a_run_the_toolset_lists_its_tools() {
    let server = Server::default();
    let lazy = server.clone().defer_loading().connect_on_search();
    let tools = lazy.get_tools(&RunContext::detached()).await.unwrap();
    assert_eq!(
        tools.iter().map(|t| (t.def.name.as_str(), t.def.defer_loading)).collect::<Vec<_>>(),
        [("weather_forecast", true)]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_runs_enter_and_exit_it_each_for_itself_in_any_order() {
    // Runs that search and runs that do not, overlapping: every entry has its exit, whichever
    // run ends first.
    for searching_first in [true, false] {
        let server = Server::default();
        let model = FunctionModel::sync(|messages, info: &AgentInfo| {
            let prompt = messages[0].as_request().map(|r| format!("{:?}", r.parts)).unwrap_or_default();
            let answered = messages.iter().filter(|m| matches!(m, ModelMessage::Response(_))).count();
            if prompt.contains("search") && answered == 0 {
                return call("search_tools", json!({"queries": ["weather"]}), "s1");
            }
            ModelResponse::text(format!("{} tools", info.function_tools.len()))
        });
        let agent = Agent::builder(model).toolset(server.clone().defer_loading().connect_on_search()).build().unwrap();
        let searching = agent.run("search");
        let quiet = agent.run("quiet");
        let (a, b) = if searching_first {
            tokio::join!(searching.into_future(), quiet.into_future())
        } else {
            let (b, a) = tokio::join!(quiet.into_future(), searching.into_future());
            (a, b)
        };
        a.unwrap();
        b.unwrap();
        let (entered, exited) = (server.entered.load(Ordering::SeqCst), server.exited.load(Ordering::SeqCst));
        assert!(entered >= 1, "the searching run entered it");
        assert_eq!(entered, exited, "searching first: {searching_first}");
    }
}
