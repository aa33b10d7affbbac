//! The examples of the capabilities reference (Pydantic AI's `pydantic_ai.capabilities`), each
//! written with toolsmith's API and run against a scripted model, asserting what the reference
//! says it does.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use toolsmith::capability::{
    Hooks, IncludeToolReturnSchemas, PrefixTools, PrepareOutputTools, PrepareTools, SetToolMetadata, ThreadExecutor,
    Toolset,
};
use toolsmith::messages::{ModelResponsePart, ToolCallPart};
use toolsmith::prelude::*;
use toolsmith::search::{CustomSearch, SearchStrategy, ToolSearch};
use toolsmith::tool::ToolDefinition;

/// What the model was offered at each request.
type Offers = Arc<Mutex<Vec<AgentInfo>>>;

/// A model that records what it is offered and answers with text.
fn recording() -> (FunctionModel, Offers) {
    let seen: Offers = Arc::default();
    let s = seen.clone();
    let model = FunctionModel::sync(move |_, info| {
        s.lock().unwrap().push(info.clone());
        ModelResponse::text("ok")
    });
    (model, seen)
}

fn names(tools: &[Arc<ToolDefinition>]) -> Vec<String> {
    tools.iter().map(|t| t.name.clone()).collect()
}

/// Delete a user.
#[tool]
fn admin_delete_user(id: i64) -> String {
    format!("deleted {id}")
}

/// Look up a user.
#[tool]
fn lookup_user(id: i64) -> String {
    format!("user {id}")
}

#[tokio::test]
async fn prepare_tools_hides_admin_tools() {
    // async def hide_admin_tools(ctx, tool_defs):
    //     return [td for td in tool_defs if not td.name.startswith('admin_')]
    // agent = Agent('openai:gpt-5', capabilities=[PrepareTools(hide_admin_tools)])
    let hide_admin_tools = PrepareTools::new(|_ctx: &RunContext<()>, tool_defs: Vec<ToolDefinition>| {
        tool_defs.into_iter().filter(|td| !td.name.starts_with("admin_")).collect()
    });
    let (model, seen) = recording();
    let agent =
        Agent::builder(model).tool(admin_delete_user).tool(lookup_user).capability(hide_admin_tools).build().unwrap();
    agent.run("hi").await.unwrap();
    assert_eq!(names(&seen.lock().unwrap()[0].function_tools), ["lookup_user"]);
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct User {
    id: i64,
    name: String,
}

/// Get a user.
#[tool]
fn get_user(id: i64) -> User {
    User { id, name: "Ada".into() }
}

/// Get a user, without its return schema.
#[tool(include_return_schema = false)]
fn get_user_quietly(id: i64) -> User {
    User { id, name: "Ada".into() }
}

#[tokio::test]
async fn include_tool_return_schemas_puts_return_schemas_in_descriptions() {
    // agent = Agent('openai:gpt-5', capabilities=[IncludeToolReturnSchemas()])
    let (model, seen) = recording();
    let agent = Agent::builder(model)
        .tool(get_user)
        .tool(get_user_quietly)
        .capability(IncludeToolReturnSchemas::all())
        .build()
        .unwrap();
    agent.run("hi").await.unwrap();
    let tools = seen.lock().unwrap()[0].function_tools.clone();
    // Not a model with a return-schema field: the schema goes into the description as JSON text.
    let described = tools[0].description.clone().unwrap();
    assert!(described.starts_with("Get a user."), "{described}");
    assert!(described.contains("\"name\"") && described.contains("\"id\""), "{described}");
    // The tool's own opt-out wins.
    assert_eq!(tools[1].description.as_deref(), Some("Get a user, without its return schema."));
}

#[tokio::test]
async fn prefix_tools_prefixes_only_the_wrapped_capabilitys_tools() {
    // toolset = FunctionToolset()
    // agent = Agent('openai:gpt-5', capabilities=[PrefixTools(wrapped=Toolset(toolset), prefix='ns')])
    let toolset = FunctionToolset::new().with_tool(get_user);
    let (model, seen) = recording();
    let agent = Agent::builder(model)
        .tool(lookup_user)
        .capability(PrefixTools::new("ns", Toolset::new(toolset)))
        .build()
        .unwrap();
    agent.run("hi").await.unwrap();
    assert_eq!(names(&seen.lock().unwrap()[0].function_tools), ["lookup_user", "ns_get_user"]);
}

#[tokio::test]
async fn set_tool_metadata_merges_metadata_onto_the_tools() {
    // agent = Agent('openai:gpt-5', capabilities=[SetToolMetadata(code_mode=True)])
    let (model, seen) = recording();
    let agent = Agent::builder(model)
        .tool(lookup_user)
        .capability(SetToolMetadata::new(json!({"code_mode": true})))
        .build()
        .unwrap();
    agent.run("hi").await.unwrap();
    assert_eq!(seen.lock().unwrap()[0].function_tools[0].metadata, Some(json!({"code_mode": true})));
}

static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static MOST: AtomicUsize = AtomicUsize::new(0);

/// Resize an image (a blocking job).
#[tool]
fn resize(width: i64) -> String {
    let now = IN_FLIGHT.fetch_add(1, Ordering::SeqCst) + 1;
    MOST.fetch_max(now, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(30));
    IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    format!("{width}px")
}

#[tokio::test]
async fn thread_executor_bounds_the_threads_of_sync_tools() {
    // executor = ThreadPoolExecutor(max_workers=16, thread_name_prefix='agent-worker')
    // agent = Agent('openai:gpt-5.2', capabilities=[ThreadExecutor(executor)])
    // Here a pool of one: three calls of a sync tool in one step never overlap.
    let model = FunctionModel::sync(|messages, _| {
        if messages.len() == 1 {
            ModelResponse::new(
                (0..3)
                    .map(|i| {
                        ModelResponsePart::ToolCall(ToolCallPart::new("resize", json!({"width": i}), format!("c{i}")))
                    })
                    .collect(),
            )
        } else {
            ModelResponse::text("done")
        }
    });
    let agent = Agent::builder(model).tool(resize).capability(ThreadExecutor::new(1)).build().unwrap();
    agent.run("resize").await.unwrap();
    assert_eq!(MOST.load(Ordering::SeqCst), 1);
}

/// Get the weather in a city.
#[tool(defer_loading)]
fn get_weather(city: String) -> String {
    format!("sunny in {city}")
}

#[tokio::test]
async fn tool_search_strategies_as_the_reference_lists_them() {
    // Default: native search on supporting providers, local keyword matching elsewhere (a
    // scripted model searches nothing itself: the agent's `search_tools` is offered).
    let (model, seen) = recording();
    Agent::builder(model).tool(get_weather).capability(ToolSearch::new()).build().unwrap().run("hi").await.unwrap();
    assert_eq!(names(&seen.lock().unwrap()[0].function_tools), ["search_tools"]);

    // Force a specific Anthropic native strategy; errors on providers that can't honor it.
    let (model, _) = recording();
    let err = Agent::builder(model)
        .tool(get_weather)
        .capability(ToolSearch::new().strategy(SearchStrategy::NativeRegex))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("cannot run a named tool search strategy"), "{err}");

    // Always run the local keyword-overlap algorithm, regardless of provider.
    let (model, seen) = recording();
    let keywords = ToolSearch::new().strategy(SearchStrategy::Keywords);
    Agent::builder(model).tool(get_weather).capability(keywords).build().unwrap().run("hi").await.unwrap();
    assert_eq!(names(&seen.lock().unwrap()[0].function_tools), ["search_tools"]);

    // A custom search function of the run context, the queries and the tools.
    let my_search =
        CustomSearch::with_context(|_ctx: &RunContext<()>, queries: &[String], tools: &[ToolDefinition]| {
            tools
                .iter()
                .filter(|t| {
                    let d = t.description.as_deref().unwrap_or("").to_lowercase();
                    queries.iter().any(|q| d.contains(&q.to_lowercase()))
                })
                .map(|t| t.name.clone())
                .collect()
        });
    let model = FunctionModel::sync(|messages, _| {
        if messages.len() == 1 {
            ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
                "search_tools",
                json!({"queries": ["weather"]}),
                "s1",
            ))])
        } else {
            ModelResponse::text("found")
        }
    });
    let agent = Agent::builder(model)
        .tool(get_weather)
        .capability(ToolSearch::new().strategy(SearchStrategy::Custom(my_search)))
        .build()
        .unwrap();
    let result = agent.run("weather?").await.unwrap();
    let found = serde_json::to_value(result.all_messages()).unwrap().to_string();
    assert!(found.contains(r#"{"discovered_tools":[{"name":"get_weather"}]}"#), "{found}");
}

#[tokio::test]
async fn prepare_output_tools_offers_the_output_tool_only_after_the_first_step() {
    // async def only_after_first_step(ctx, tool_defs):
    //     return tool_defs if ctx.run_step > 0 else []
    // Here `> 1`: toolsmith counts the first request as step 1 when it prepares it.
    let only_after_first_step = PrepareOutputTools::new(
        |ctx: &RunContext<()>, tool_defs: Vec<ToolDefinition>| {
            if ctx.run_step > 1 { tool_defs } else { Vec::new() }
        },
    );
    let seen: Offers = Arc::default();
    let s = seen.clone();
    let model = FunctionModel::sync(move |_, info| {
        s.lock().unwrap().push(info.clone());
        match info.output_tools.first() {
            Some(t) => ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
                t.name.clone(),
                json!({"response": "done"}),
                "o1",
            ))]),
            None => ModelResponse::text("not yet"),
        }
    });
    let agent = Agent::builder(model).output_type::<String>().capability(only_after_first_step).build().unwrap();
    let result = agent.run("go").await.unwrap();
    assert_eq!(result.output(), "done");
    let offered: Vec<usize> = seen.lock().unwrap().iter().map(|i| i.output_tools.len()).collect();
    assert_eq!(offered, [0, 1]);
}

#[tokio::test]
async fn hooks_log_each_model_request() {
    // @hooks.on.before_model_request
    // async def log_request(ctx, request_context): print(...); return request_context
    let log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let hooks = Hooks::new().before_model_request(move |ctx: RunContext<()>, request| {
        l.lock().unwrap().push(format!("Request at step {}", ctx.run_step));
        async move { Ok(request) }
    });
    let (model, _) = recording();
    Agent::builder(model).capability(hooks).build().unwrap().run("hi").await.unwrap();
    assert_eq!(*log.lock().unwrap(), ["Request at step 1"]);
}
