//! Tool search strategies end to end: an agent discovering and calling deferred tools with BM25,
//! regex and custom strategies, and the rankings of a hand-made catalogue of MCP server tools.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolsmith::messages::{
    ModelMessage, ModelRequestPart, ModelResponsePart, ToolCallPart, ToolOutcome, ToolReturnPart,
};
use toolsmith::prelude::*;
use toolsmith::search::eval::{self, Metrics, SearchIndex};
use toolsmith::search::{CustomSearch, SearchStrategy, ToolSearch};
use toolsmith::toolset::ToolsetTool;

/// Calculate the monthly payment of a mortgage (home loan).
#[tool(defer_loading)]
fn mortgage_calculator(principal: f64, annual_rate: f64, years: i64) -> String {
    let r = annual_rate / 12.0;
    let n = (years * 12) as f64;
    format!("{:.2}", principal * r / (1.0 - (1.0 + r).powf(-n)))
}

/// Convert an amount between two currencies at today's exchange rate.
#[tool(defer_loading)]
fn currency_converter(amount: f64, from_currency: String, to_currency: String) -> String {
    format!("{amount} {from_currency} -> {to_currency}")
}

/// Get the weather forecast for a city.
#[tool(defer_loading)]
fn weather_forecast(city: String) -> String {
    format!("sunny in {city}")
}

/// Echo a message back.
#[tool]
fn echo(message: String) -> String {
    message
}

fn call(name: &str, args: Value, id: &str) -> ModelResponse {
    ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(name, args, id))])
}

/// A model that plays one response per request and records the tool names it was offered.
fn scripted(responses: Vec<ModelResponse>) -> (FunctionModel, Arc<Mutex<Vec<Vec<String>>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let responses = Arc::new(Mutex::new(responses.into_iter()));
    let record = seen.clone();
    let model = FunctionModel::sync(move |_messages, info: &AgentInfo| {
        record.lock().unwrap().push(info.function_tools.iter().map(|t| t.name.clone()).collect());
        responses.lock().unwrap().next().unwrap_or_else(|| ModelResponse::text("script exhausted"))
    });
    (model, seen)
}

fn tool_returns(messages: &[ModelMessage]) -> Vec<ToolReturnPart> {
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

fn agent(model: FunctionModel, search: ToolSearch) -> Agent {
    Agent::builder(model)
        .tool(echo)
        .tool(mortgage_calculator)
        .tool(currency_converter)
        .tool(weather_forecast)
        .tool_search(search)
        .build()
        .unwrap()
}

#[tokio::test]
async fn an_agent_with_bm25_discovers_and_calls_a_deferred_tool() {
    let (model, seen) = scripted(vec![
        call("search_tools", json!({"queries": ["monthly payments on a home loan"]}), "s1"),
        call("mortgage_calculator", json!({"principal": 100000.0, "annual_rate": 0.06, "years": 30}), "c1"),
        ModelResponse::text("Your payment is 599.55 a month."),
    ]);
    let agent = agent(model, ToolSearch::new().strategy(SearchStrategy::Bm25));
    let result = agent.run("What would I pay monthly on a 100k mortgage at 6% over 30 years?").await.unwrap();
    assert_eq!(result.output(), "Your payment is 599.55 a month.");

    let seen = seen.lock().unwrap().clone();
    // First request: the ordinary tool and the search tool only; the catalogue stays hidden.
    assert_eq!(seen[0], ["echo", "search_tools"]);
    // After the search, the discovered tool is offered, and only it.
    assert_eq!(seen[1], ["echo", "mortgage_calculator", "search_tools"]);

    let returns = tool_returns(result.all_messages());
    assert_eq!(returns[0].tool_name, "search_tools");
    assert_eq!(returns[0].tool_kind.as_deref(), Some("tool-search"));
    assert_eq!(returns[0].content, json!({"discovered_tools": [{"name": "mortgage_calculator"}]}));
    assert_eq!(returns[1].tool_name, "mortgage_calculator");
    assert_eq!(returns[1].outcome, ToolOutcome::Success);
    assert_eq!(returns[1].content, json!("599.55"));
}

#[tokio::test]
async fn bm25_merges_several_queries_round_robin() {
    let (model, _) = scripted(vec![
        call("search_tools", json!({"queries": ["weather forecast", "exchange rate between currencies"]}), "s1"),
        ModelResponse::text("ok"),
    ]);
    let agent = agent(model, ToolSearch::recommended().max_results(2));
    let result = agent.run("go").await.unwrap();
    let returns = tool_returns(result.all_messages());
    assert_eq!(
        returns[0].content,
        json!({"discovered_tools": [{"name": "weather_forecast"}, {"name": "currency_converter"}]})
    );
}

#[tokio::test]
async fn bm25_answers_no_match_and_blank_queries_like_the_reference() {
    let (model, _) = scripted(vec![
        call("search_tools", json!({"queries": ["quantum chromodynamics"]}), "s1"),
        call("search_tools", json!({"queries": ["  ", "?!"]}), "s2"),
        ModelResponse::text("ok"),
    ]);
    let agent = agent(model, ToolSearch::recommended());
    let result = agent.run("go").await.unwrap();
    let returns = tool_returns(result.all_messages());
    assert_eq!(
        returns[0].content,
        json!({"discovered_tools": [], "message": "No matching tools found. The tools you need may not be available."})
    );
    assert_eq!(returns[1].outcome, ToolOutcome::Retried);
    assert_eq!(returns[1].content, json!("Please provide at least one non-empty search query."));
}

#[tokio::test]
async fn regex_strategy_finds_tools_and_retries_invalid_patterns() {
    let (model, seen) = scripted(vec![
        call("search_tools", json!({"queries": ["(weather"]}), "s1"),
        call("search_tools", json!({"queries": ["^(weather|currency)_"]}), "s2"),
        ModelResponse::text("ok"),
    ]);
    let agent = agent(model, ToolSearch::new().strategy(SearchStrategy::Regex));
    let result = agent.run("go").await.unwrap();
    let returns = tool_returns(result.all_messages());
    assert_eq!(returns[0].outcome, ToolOutcome::Retried);
    let message = returns[0].content.as_str().unwrap();
    assert!(message.starts_with("Invalid search pattern `(weather`: unclosed group."), "{message}");
    assert_eq!(
        returns[1].content,
        json!({"discovered_tools": [{"name": "currency_converter"}, {"name": "weather_forecast"}]})
    );
    assert_eq!(seen.lock().unwrap()[2], ["echo", "currency_converter", "weather_forecast", "search_tools"]);
}

#[tokio::test]
async fn custom_strategies_sync_and_async_rank_the_catalogue() {
    // A sync function: receives the queries and the deferred definitions (catalogue order), and
    // may return names outside the catalogue or repeats, which are dropped.
    let calls = Arc::new(Mutex::new(Vec::new()));
    let log = calls.clone();
    let sync = CustomSearch::new(move |queries, tools| {
        log.lock().unwrap().push((queries.to_vec(), tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>()));
        vec!["weather_forecast".into(), "echo".into(), "made_up".into(), "weather_forecast".into()]
    });
    let (model, seen) =
        scripted(vec![call("search_tools", json!({"queries": ["anything"]}), "s1"), ModelResponse::text("ok")]);
    let result = agent(model, ToolSearch::new().strategy(SearchStrategy::Custom(sync))).run("go").await.unwrap();
    assert_eq!(
        tool_returns(result.all_messages())[0].content,
        json!({"discovered_tools": [{"name": "weather_forecast"}]})
    );
    assert_eq!(
        calls.lock().unwrap().as_slice(),
        [(
            vec!["anything".to_string()],
            vec!["mortgage_calculator".to_string(), "currency_converter".to_string(), "weather_forecast".to_string()]
        )]
    );
    assert_eq!(seen.lock().unwrap()[1], ["echo", "weather_forecast", "search_tools"]);

    // An async function, cut to max_results.
    let asynchronous = CustomSearch::new_async(|queries, tools| async move {
        tokio::task::yield_now().await;
        let mut names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
        if queries.iter().any(|q| q.contains("reverse")) {
            names.reverse();
        }
        names
    });
    let (model, _) = scripted(vec![
        call("search_tools", json!({"queries": ["reverse"]}), "s1"),
        call("search_tools", json!({"queries": [""]}), "s2"),
        ModelResponse::text("ok"),
    ]);
    let config = ToolSearch::new().strategy(SearchStrategy::Custom(asynchronous)).max_results(2);
    let result = agent(model, config).run("go").await.unwrap();
    let returns = tool_returns(result.all_messages());
    assert_eq!(
        returns[0].content,
        json!({"discovered_tools": [{"name": "weather_forecast"}, {"name": "currency_converter"}]})
    );
    // Blank queries never reach the function.
    assert_eq!(returns[1].outcome, ToolOutcome::Retried);
}

#[derive(Clone)]
struct Deps {
    region: &'static str,
}

#[tokio::test]
async fn a_custom_search_function_gets_the_run_context() {
    // Only the tools of the user's region (here: whose name holds it).
    let search = CustomSearch::with_context(|ctx: &RunContext<Deps>, _queries, tools| {
        tools.iter().filter(|t| t.name.contains(ctx.deps.region)).map(|t| t.name.clone()).collect()
    });
    let (model, _) =
        scripted(vec![call("search_tools", json!({"queries": ["anything"]}), "s1"), ModelResponse::text("ok")]);
    let agent = Agent::builder(model)
        .deps::<Deps>()
        .tool(mortgage_calculator)
        .tool(weather_forecast)
        .tool_search(ToolSearch::new().strategy(SearchStrategy::Custom(search)))
        .build()
        .unwrap();
    let result = agent.run("go").deps(Deps { region: "weather" }).await.unwrap();
    assert_eq!(
        tool_returns(result.all_messages())[0].content,
        json!({"discovered_tools": [{"name": "weather_forecast"}]})
    );

    // The async form, and a function for other dependencies: refused when the agent is built.
    let asynchronous = CustomSearch::with_context_async(|ctx: RunContext<Deps>, _queries, tools| async move {
        tools.iter().filter(|t| !t.name.contains(ctx.deps.region)).map(|t| t.name.clone()).collect::<Vec<_>>()
    });
    let (model, _) =
        scripted(vec![call("search_tools", json!({"queries": ["anything"]}), "s1"), ModelResponse::text("ok")]);
    let result = Agent::builder(model)
        .deps::<Deps>()
        .tool(mortgage_calculator)
        .tool(weather_forecast)
        .tool_search(ToolSearch::new().strategy(SearchStrategy::Custom(asynchronous.clone())))
        .build()
        .unwrap()
        .run("go")
        .deps(Deps { region: "weather" })
        .await
        .unwrap();
    assert_eq!(
        tool_returns(result.all_messages())[0].content,
        json!({"discovered_tools": [{"name": "mortgage_calculator"}]})
    );
    let err = Agent::builder(TestModel::default())
        .tool(mortgage_calculator)
        .tool_search(ToolSearch::new().strategy(SearchStrategy::Custom(asynchronous)))
        .build()
        .unwrap_err();
    assert!(
        err.to_string().contains(
            "the tool search function takes `RunContext<search::Deps>`, but this agent's dependencies are `()`"
        ),
        "{err}"
    );
}

#[tokio::test]
async fn tool_search_is_a_capability_like_the_others() {
    use toolsmith::capability::{CombinedCapability, DynamicCapability};
    // Added as a capability (here inside a bundle): the same as the builder's shortcut.
    let (model, seen) =
        scripted(vec![call("search_tools", json!({"queries": ["weather"]}), "s1"), ModelResponse::text("ok")]);
    let bundle = CombinedCapability::new().with(ToolSearch::recommended().tool_description("Find a tool."));
    let agent = Agent::builder(model).tool(echo).tool(weather_forecast).capability(bundle).build().unwrap();
    let result = agent.run("go").await.unwrap();
    assert_eq!(
        tool_returns(result.all_messages())[0].content,
        json!({"discovered_tools": [{"name": "weather_forecast"}]})
    );
    assert_eq!(seen.lock().unwrap()[1], ["echo", "weather_forecast", "search_tools"]);

    // Twice (the shortcut and a capability) is a mistake.
    let err = Agent::builder(TestModel::default())
        .tool(weather_forecast)
        .tool_search(ToolSearch::new())
        .capability(ToolSearch::recommended())
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("tool search (`ToolSearch`) is configured 2 times"), "{err}");

    // The agent's tool search is read when it is built: not for one run.
    let agent = Agent::builder(TestModel::default()).tool(weather_forecast).build().unwrap();
    let err = agent.run("go").capability(ToolSearch::recommended()).await.unwrap_err();
    assert!(err.to_string().contains("`ToolSearch` configures the agent's tool search"), "{err}");
    let dynamic = DynamicCapability::new(|_: &RunContext<()>| {
        Some(toolsmith::capability::BoxedCapability::new(ToolSearch::recommended()))
    });
    let agent = Agent::builder(TestModel::default()).tool(weather_forecast).capability(dynamic).build().unwrap();
    let err = agent.run("go").await.unwrap_err();
    assert!(err.to_string().contains("'DynamicCapability' made it for one run"), "{err}");
}

#[test]
fn the_default_configuration_uses_bm25() {
    assert_eq!(ToolSearch::new().strategy, SearchStrategy::Bm25);
    assert_eq!(ToolSearch::new().max_results, 10);
    assert_eq!(SearchStrategy::default(), SearchStrategy::Bm25);
    assert_eq!(ToolSearch::recommended().strategy, ToolSearch::new().strategy);
    assert_eq!(ToolSearch::recommended().definition(), ToolSearch::new().definition());
}

// ---------------------------------------------------------------------------------------------
// A hand-made catalogue of MCP server tools (GitHub, filesystem, Slack, web search, browser,
// maps, time, git, memory, Postgres, Sentry): 62 tools, 40 requests of which 8 need several.

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/search/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn mcp_index() -> SearchIndex {
    SearchIndex::new(&eval::load_corpus(fixture("mcp_corpus.jsonl")).unwrap())
}

#[test]
fn bm25_rankings_of_model_written_queries_on_mcp_tools_make_sense() {
    let index = mcp_index();
    let top = |q: &str, n: usize| index.rank(&SearchStrategy::Bm25, q, n).unwrap();
    // (query, tools any of which is a good answer, how high the first of them must rank)
    let cases: &[(&str, &[&str], usize)] = &[
        ("create github issue", &["github_create_issue"], 1),
        ("create a pull request", &["github_create_pull_request"], 1),
        ("merge pull request", &["github_merge_pull_request"], 1),
        ("send slack message", &["slack_post_message"], 1),
        ("slack thread reply", &["slack_reply_to_thread", "slack_get_thread_replies"], 1),
        // `list_allowed_directories` ("the list of directories") is a fair first.
        ("list directory contents", &["filesystem_list_directory"], 2),
        ("write file", &["filesystem_write_file"], 1),
        ("rename file", &["filesystem_move_file"], 1),
        ("web search", &["brave_web_search"], 1),
        ("browser screenshot", &["puppeteer_screenshot"], 1),
        ("timezone conversion", &["time_convert_time"], 1),
        ("directions between two places", &["maps_directions"], 1),
        ("sql query", &["postgres_query"], 1),
        ("knowledge graph entities", &["memory_create_entities"], 1),
        ("git commit log history", &["git_log"], 1),
        ("fetch url", &["fetch"], 1),
        ("read multiple files at once", &["filesystem_read_multiple_files"], 1),
        ("getFileContents", &["github_get_file_contents"], 1),
        ("sentry stacktrace", &["sentry_get_issue"], 1),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|(query, good, within)| {
            let ranked = top(query, 3);
            let ok = ranked.iter().take(*within).any(|n| good.contains(&n.as_str()));
            (!ok).then(|| format!("{query}: {ranked:?}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
    // A brand name written either way finds that server's tools.
    for query in ["GitHub", "github", "git hub"] {
        assert!(top(query, 5).iter().all(|n| n.starts_with("github_") || n.starts_with("git_")), "{query}");
    }
    // Stemming: "commits" and "committed" meet "commit".
    assert_eq!(top("committed changes", 1), top("commits changes", 1));
}

#[test]
fn bm25_beats_keyword_overlap_on_mcp_requests() {
    let index = mcp_index();
    let queries = eval::load_queries(fixture("mcp_queries.jsonl")).unwrap();
    let score = |strategy: &SearchStrategy| {
        let mut m = Metrics::default();
        for q in &queries {
            m.add(&index.rank(strategy, &q.query, 10).unwrap_or_default(), &q.relevant);
        }
        m.mean()
    };
    let bm25 = score(&SearchStrategy::Bm25);
    let keywords = score(&SearchStrategy::Keywords);
    assert_eq!(bm25.queries, 40);
    assert!(bm25.recall_at_5 >= 0.7, "{bm25:?}");
    assert!(bm25.recall_at_5 > keywords.recall_at_5 + 0.1, "{bm25:?} vs {keywords:?}");
    assert!(bm25.mrr_at_10 > keywords.mrr_at_10, "{bm25:?} vs {keywords:?}");
}

#[test]
fn regex_patterns_a_model_would_write_on_mcp_tools() {
    let index = mcp_index();
    let rank = |p: &str| index.rank(&SearchStrategy::Regex, p, 10).unwrap();
    assert_eq!(rank("^slack_(post|reply)"), ["slack_post_message", "slack_reply_to_thread"]);
    assert_eq!(
        rank("pull_request$"),
        ["github_create_pull_request", "github_get_pull_request", "github_merge_pull_request"]
    );
    // Name matches first, then description matches.
    let screenshot = rank("screenshot");
    assert_eq!(screenshot, ["puppeteer_screenshot"]);
    let timezone = rank("timezone");
    assert_eq!(timezone, ["time_get_current_time", "time_convert_time"]);
    assert!(index.rank(&SearchStrategy::Regex, "[unclosed", 10).is_err());
}

/// Deferred tools that grow after the first step: `weather_forecast`, then `mortgage_calculator`
/// too. The lists are new every step, so the agent compares them with the previous step's.
struct Growing {
    first: FunctionToolset<()>,
    later: FunctionToolset<()>,
}

impl Toolset<()> for Growing {
    fn label(&self) -> String {
        "Growing".into()
    }

    async fn get_tools(&self, ctx: &RunContext<()>) -> Result<Vec<ToolsetTool<()>>, UserError> {
        if ctx.run_step <= 1 { self.first.get_tools(ctx).await } else { self.later.get_tools(ctx).await }
    }
}

#[tokio::test]
async fn a_changed_deferred_catalogue_is_searched_and_discoveries_stay_offered() {
    let (model, seen) = scripted(vec![
        call("search_tools", json!({"queries": ["mortgage"]}), "s1"),
        call("search_tools", json!({"queries": ["mortgage"]}), "s2"),
        call("mortgage_calculator", json!({"principal": 100000.0, "annual_rate": 0.06, "years": 30}), "c1"),
        call("currency_converter", json!({"amount": 1.0, "from_currency": "EUR", "to_currency": "USD"}), "c2"),
        ModelResponse::text("done"),
    ]);
    let growing = Growing {
        first: FunctionToolset::new().with_tool(weather_forecast),
        later: FunctionToolset::new().with_tools([
            Tool::from(weather_forecast),
            Tool::from(mortgage_calculator),
            Tool::from(currency_converter),
        ]),
    };
    let agent = Agent::builder(model)
        .tool(echo)
        .toolset(growing)
        .tool_search(ToolSearch::new().strategy(SearchStrategy::Bm25))
        .build()
        .unwrap();
    let result = agent.run("mortgage?").await.unwrap();
    assert_eq!(result.output(), "done");
    let returns = tool_returns(result.all_messages());
    // The first search sees only the first catalogue; the second, the grown one.
    assert_eq!(returns[0].content["discovered_tools"], json!([]));
    assert_eq!(returns[1].content["discovered_tools"], json!([{"name": "mortgage_calculator"}]));
    assert_eq!(returns[2].outcome, ToolOutcome::Success);
    // A deferred tool not discovered is refused without revealing the catalogue.
    assert_eq!(returns[3].tool_name, "currency_converter");
    assert_ne!(returns[3].outcome, ToolOutcome::Success);
    assert!(!returns[3].content.to_string().contains("weather_forecast"));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[0], ["echo", "search_tools"]);
    assert_eq!(seen[1], ["echo", "search_tools"]);
    assert_eq!(seen[2], ["echo", "mortgage_calculator", "search_tools"]);
    assert_eq!(seen[3], seen[2]);
    assert_eq!(seen[4], seen[2]);
}

#[tokio::test]
async fn the_same_deferred_catalogue_serves_every_run_of_an_agent() {
    let responses = || {
        vec![
            call("search_tools", json!({"queries": ["weather"]}), "s1"),
            call("weather_forecast", json!({"city": "Paris"}), "c1"),
            ModelResponse::text("done"),
        ]
    };
    let script = Arc::new(Mutex::new(responses().into_iter().chain(responses())));
    let model = FunctionModel::sync(move |_messages, _info: &AgentInfo| {
        script.lock().unwrap().next().unwrap_or_else(|| ModelResponse::text("script exhausted"))
    });
    let agent = agent(model, ToolSearch::recommended());
    for _ in 0..2 {
        let result = agent.run("weather in Paris?").await.unwrap();
        assert_eq!(result.output(), "done");
        let returns = tool_returns(result.all_messages());
        assert_eq!(returns[0].content, json!({"discovered_tools": [{"name": "weather_forecast"}]}));
        assert_eq!(returns[1].outcome, ToolOutcome::Success);
    }
}

#[tokio::test]
async fn blank_queries_find_nothing_under_keywords_and_are_asked_again_by_default() {
    for (strategy, retried) in [(SearchStrategy::Keywords, false), (SearchStrategy::PydanticAi, true)] {
        let (model, _) =
            scripted(vec![call("search_tools", json!({"queries": ["  ", "?!"]}), "s1"), ModelResponse::text("ok")]);
        let agent = agent(model, ToolSearch::new().strategy(strategy.clone()));
        let result = agent.run("go").await.unwrap();
        let returns = tool_returns(result.all_messages());
        if retried {
            assert_eq!(returns[0].outcome, ToolOutcome::Retried);
            assert_eq!(returns[0].content, json!("Please provide at least one non-empty search query."));
        } else {
            assert_eq!(returns[0].outcome, ToolOutcome::Success, "{strategy:?}");
            assert_eq!(
                returns[0].content,
                json!({"discovered_tools": [], "message": "No matching tools found. The tools you need may not be available."})
            );
            assert_eq!(result.usage().tool_calls, 1);
        }
    }
}

#[tokio::test]
async fn keyword_queries_are_scored_together_and_all_blank_is_asked_again() {
    for strategy in [SearchStrategy::PydanticAi, SearchStrategy::Keywords] {
        // "weather" alone matches one tool by one token; "currency converter" another by two:
        // the tokens of both queries score every tool once, the best first.
        let (model, _) = scripted(vec![
            call("search_tools", json!({"queries": ["weather", "currency converter"]}), "s1"),
            call("search_tools", json!({"queries": ["  ", "\t"]}), "s2"),
            ModelResponse::text("ok"),
        ]);
        let agent = agent(model, ToolSearch::new().strategy(strategy.clone()));
        let result = agent.run("go").await.unwrap();
        let returns = tool_returns(result.all_messages());
        assert_eq!(
            returns[0].content,
            json!({"discovered_tools": [{"name": "currency_converter"}, {"name": "weather_forecast"}]}),
            "{strategy:?}"
        );
        assert_eq!(returns[1].outcome, ToolOutcome::Retried, "{strategy:?}");
        assert_eq!(returns[1].content, json!("Please provide at least one non-empty search query."));
    }
}

/// Tools that come and go between runs (a per-run toolset): each run's search finds exactly
/// the deferred tools that run has, the index being carried from one catalogue to the next.
#[tokio::test]
async fn searches_follow_a_deferred_catalogue_that_changes() {
    let search = |id: &str| call("search_tools", json!({"queries": ["weather forecast for a city"]}), id);
    let (model, _) = scripted(vec![
        search("s1"),
        ModelResponse::text("one"),
        search("s2"),
        ModelResponse::text("two"),
        search("s3"),
        ModelResponse::text("three"),
    ]);
    let agent = Agent::builder(model)
        .tool(echo)
        .tool(mortgage_calculator)
        .tool(currency_converter)
        .tool_search(ToolSearch::new())
        .build()
        .unwrap();
    let with_weather = || toolsmith::capability::Toolset::new(FunctionToolset::new().with_tool(weather_forecast));
    let found = |result: &toolsmith::RunResult<String>| tool_returns(result.all_messages())[0].content.clone();

    let first = agent.run("weather?").capability(with_weather()).await.unwrap();
    assert_eq!(found(&first), json!({"discovered_tools": [{"name": "weather_forecast"}]}));
    let second = agent.run("weather?").await.unwrap();
    assert_eq!(
        found(&second),
        json!({"discovered_tools": [], "message": "No matching tools found. The tools you need may not be available."})
    );
    let third = agent.run("weather?").capability(with_weather()).await.unwrap();
    assert_eq!(found(&third), json!({"discovered_tools": [{"name": "weather_forecast"}]}));
}
