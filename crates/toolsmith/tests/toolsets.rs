//! Toolsets and their wrappers, driven through real agent runs: the definitions the model is
//! shown, the calls that reach each function, deferred requests and configuration errors.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolsmith::agent::Deferrable;
use toolsmith::deferred::{DeferredToolRequests, DeferredToolResults, ToolApproval};
use toolsmith::messages::{ModelRequestPart, ModelResponsePart, ToolCallPart, ToolOutcome, ToolReturnPart};
use toolsmith::prelude::*;
use toolsmith::tool::ToolKind;
use toolsmith::toolset::{CombinedToolset, DynamicToolset, ExternalToolset, PreparedToolset, ToolSelector, ToolsetExt};

// ---------------------------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------------------------

/// Add two integers.
#[tool]
fn add(x: i64, y: i64) -> i64 {
    x + y
}

/// Subtract two integers.
#[tool]
fn sub(x: i64, y: i64) -> i64 {
    x - y
}

/// Multiply two integers.
#[tool]
fn mul(x: i64, y: i64) -> i64 {
    x * y
}

/// The name the tool is called by, as it sees it.
#[tool]
fn whoami(ctx: RunContext) -> String {
    ctx.tool_name.unwrap_or_default()
}

type Counter = Arc<AtomicUsize>;

/// Delete a file (counts executions in the dependencies).
#[tool]
fn delete_file(ctx: RunContext<Counter>, path: String) -> String {
    ctx.deps.fetch_add(1, Ordering::SeqCst);
    format!("deleted {path}")
}

/// Read a file.
#[tool]
fn read_file(path: String) -> String {
    format!("contents of {path}")
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// The definitions shown to the model, one list per request.
type Seen = Arc<Mutex<Vec<Vec<ToolDefinition>>>>;

/// A model that makes the calls of `steps[k]` in its k-th response (ids `c{k}_{i}`), then
/// answers "done"; it records the definitions it is shown.
fn scripted(steps: Vec<Vec<(&'static str, Value)>>) -> (FunctionModel, Seen) {
    let seen: Seen = Arc::default();
    let record = seen.clone();
    let model = FunctionModel::sync(move |_messages, info| {
        let mut seen = record.lock().unwrap();
        let k = seen.len();
        seen.push(info.function_tools.iter().map(|t| (**t).clone()).collect());
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
    });
    (model, seen)
}

fn names(defs: &[ToolDefinition]) -> Vec<&str> {
    defs.iter().map(|d| d.name.as_str()).collect()
}

/// The tool returns recorded in a run's messages, in message order.
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

fn return_of(messages: &[ModelMessage], call_id: &str) -> ToolReturnPart {
    returns(messages)
        .into_iter()
        .find(|p| p.tool_call_id == call_id)
        .unwrap_or_else(|| panic!("no return for {call_id} in {messages:#?}"))
}

fn deferred(output: &Deferrable<String>) -> &DeferredToolRequests {
    output.deferred().unwrap_or_else(|| panic!("expected deferred requests, the run answered {output:?}"))
}

fn call_names(calls: &[ToolCallPart]) -> Vec<(&str, &str)> {
    calls.iter().map(|c| (c.tool_name.as_str(), c.tool_call_id.as_str())).collect()
}

fn user_error(err: AgentRunError) -> String {
    match err {
        AgentRunError::User(e) => e.message,
        other => panic!("expected a UserError, got {other:?}"),
    }
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
}

fn schema(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}

// ---------------------------------------------------------------------------------------------
// Prefix and filter
// ---------------------------------------------------------------------------------------------

#[test]
fn the_filter_sees_unprefixed_names_and_the_model_sees_prefixed_ones() {
    let toolset =
        FunctionToolset::new().with_tools([add, sub, mul]).filtered(|_, def| def.name != "sub").prefixed("calc");
    assert_eq!(toolset.label(), "PrefixedToolset(FilteredToolset(FunctionToolset))");
    let (model, seen) =
        scripted(vec![vec![("calc_add", json!({"x": 1, "y": 2})), ("calc_sub", json!({"x": 1, "y": 2}))]]);
    let agent = Agent::builder(model).toolset(toolset).build().unwrap();
    let result = agent.run("go").run_sync().unwrap();
    assert_eq!(result.output(), "done");

    let seen = seen.lock().unwrap();
    assert_eq!(names(&seen[0]), ["calc_add", "calc_mul"]);
    // The definition is the tool's own, apart from the name.
    assert_eq!(seen[0][0].description.as_deref(), Some("Add two integers."));
    assert_eq!(seen[0][0].parameters_json_schema["required"], json!(["x", "y"]));

    let add_return = return_of(result.all_messages(), "c0_0");
    assert_eq!((add_return.tool_name.as_str(), &add_return.content), ("calc_add", &json!(3)));
    // The filtered-out tool is unknown to the model.
    let sub_return = return_of(result.all_messages(), "c0_1");
    assert_eq!(sub_return.outcome, ToolOutcome::Retried);
    assert!(sub_return.content_text().starts_with("Unknown tool name: 'calc_sub'"), "{}", sub_return.content_text());
}

#[test]
fn a_prefixed_tool_sees_its_own_name() {
    let toolset = FunctionToolset::new().with_tool(whoami).prefixed("a").prefixed("b");
    let (model, seen) = scripted(vec![vec![("b_a_whoami", json!({}))]]);
    let agent = Agent::builder(model).toolset(toolset).build().unwrap();
    let result = agent.run("go").run_sync().unwrap();
    assert_eq!(names(&seen.lock().unwrap()[0]), ["b_a_whoami"]);
    let part = return_of(result.all_messages(), "c0_0");
    assert_eq!(part.tool_name, "b_a_whoami");
    assert_eq!(part.content, json!("whoami"));
}

#[test]
fn the_filter_reads_the_run_context() {
    let toolset = FunctionToolset::<bool>::new()
        .with_tools([add, sub])
        .filtered(|ctx: &RunContext<bool>, def: &ToolDefinition| ctx.deps || def.name == "add");
    let agent = Agent::builder(TestModel::default()).deps::<bool>().toolset(toolset).build().unwrap();
    assert_eq!(agent.run("go").deps(false).run_sync().unwrap().output(), r#"{"add":0}"#);
    assert_eq!(agent.run("go").deps(true).run_sync().unwrap().output(), r#"{"add":0,"sub":0}"#);
}

// ---------------------------------------------------------------------------------------------
// Renamed
// ---------------------------------------------------------------------------------------------

#[test]
fn renamed_calls_reach_the_original_function() {
    // Swap the names: a call of `sub` must run `add`.
    let toolset = FunctionToolset::new().with_tools([add, sub, whoami]).renamed([
        ("sub", "add"),
        ("add", "sub"),
        ("me", "whoami"),
    ]);
    assert_eq!(toolset.label(), "RenamedToolset(FunctionToolset)");
    let (model, seen) = scripted(vec![vec![
        ("sub", json!({"x": 5, "y": 3})),
        ("add", json!({"x": 5, "y": 3})),
        ("me", json!({})),
        ("whoami", json!({})),
    ]]);
    let agent = Agent::builder(model).toolset(toolset).build().unwrap();
    let result = agent.run("go").run_sync().unwrap();

    let seen = seen.lock().unwrap();
    assert_eq!(names(&seen[0]), ["sub", "add", "me"]);
    assert_eq!(seen[0][0].description.as_deref(), Some("Add two integers."));

    let messages = result.all_messages();
    assert_eq!(return_of(messages, "c0_0").content, json!(8));
    assert_eq!(return_of(messages, "c0_1").content, json!(2));
    let me = return_of(messages, "c0_2");
    assert_eq!((me.tool_name.as_str(), &me.content), ("me", &json!("whoami")));
    // The original name is no longer offered.
    assert_eq!(return_of(messages, "c0_3").outcome, ToolOutcome::Retried);
}

#[test]
fn renaming_onto_an_existing_name_is_a_user_error() {
    let toolset = FunctionToolset::new().with_tools([add, sub]).renamed([("add", "sub")]);
    let agent = Agent::builder(scripted(vec![]).0).toolset(toolset).build().unwrap();
    let err = user_error(agent.run("go").run_sync().unwrap_err());
    assert_eq!(err, "Renaming tool 'sub' to 'add' conflicts with existing tool.");

    let toolset = FunctionToolset::new().with_tools([sub, add]).renamed([("add", "sub")]);
    let agent = Agent::builder(scripted(vec![]).0).toolset(toolset).build().unwrap();
    let err = user_error(agent.run("go").run_sync().unwrap_err());
    assert_eq!(err, "Tool name conflicts with previously renamed tool: 'add'.");
}

// ---------------------------------------------------------------------------------------------
// Approval required
// ---------------------------------------------------------------------------------------------

fn files_agent(
    toolset: impl Toolset<Counter>,
    steps: Vec<Vec<(&'static str, Value)>>,
) -> (Agent<Counter, Deferrable<String>>, Seen) {
    let (model, seen) = scripted(steps);
    let agent = Agent::builder(model).deps::<Counter>().toolset(toolset).allow_deferred().build().unwrap();
    (agent, seen)
}

#[test]
fn approval_required_calls_end_the_run_as_deferred_requests() {
    let toolset = FunctionToolset::new()
        .with_tools([delete_file, read_file])
        .approval_required_for(["delete_file"])
        .prefixed("fs");
    let (agent, seen) = files_agent(
        toolset,
        vec![vec![
            ("fs_delete_file", json!({"path": "a.txt"})),
            ("fs_read_file", json!({"path": "b.txt"})),
            // Arguments are validated before approval is asked for: this one is a retry.
            ("fs_delete_file", json!({})),
        ]],
    );
    let deletions = Counter::default();
    let result = agent.run("go").deps(deletions.clone()).run_sync().unwrap();

    // The model is shown the tools as ordinary function tools.
    let defs = seen.lock().unwrap()[0].clone();
    assert_eq!(names(&defs), ["fs_delete_file", "fs_read_file"]);
    assert!(defs.iter().all(|d| d.kind == ToolKind::Function), "{defs:?}");

    let requests = deferred(result.output());
    assert_eq!(call_names(&requests.approvals), [("fs_delete_file", "c0_0")]);
    assert!(requests.calls.is_empty(), "{requests:?}");
    assert_eq!(deletions.load(Ordering::SeqCst), 0, "the tool must not run before approval");
    let messages = result.all_messages();
    assert_eq!(return_of(messages, "c0_1").content, json!("contents of b.txt"));
    assert_eq!(return_of(messages, "c0_2").outcome, ToolOutcome::Retried);
    assert!(returns(messages).iter().all(|p| p.tool_call_id != "c0_0"), "no return for the deferred call yet");

    // Approved, the call runs the tool.
    let resumed = agent
        .resume()
        .deps(deletions.clone())
        .message_history(messages.to_vec())
        .deferred_tool_results(DeferredToolResults::new().approve("c0_0", ToolApproval::approved()))
        .run_sync()
        .unwrap();
    assert_eq!(resumed.output(), &Deferrable::Output("done".to_string()));
    assert_eq!(deletions.load(Ordering::SeqCst), 1);
    let part = return_of(resumed.all_messages(), "c0_0");
    assert_eq!((part.tool_name.as_str(), &part.content), ("fs_delete_file", &json!("deleted a.txt")));
}

#[test]
fn approval_required_for_every_tool_and_by_arguments() {
    let (agent, _) = files_agent(
        FunctionToolset::new().with_tools([delete_file, read_file]).approval_required(),
        vec![vec![("delete_file", json!({"path": "a"})), ("read_file", json!({"path": "b"}))]],
    );
    let result = agent.run("go").deps(Counter::default()).run_sync().unwrap();
    let requests = deferred(result.output());
    assert_eq!(call_names(&requests.approvals), [("delete_file", "c0_0"), ("read_file", "c0_1")]);

    // Only deletions outside /tmp need approval.
    let toolset =
        FunctionToolset::new().with_tools([delete_file, read_file]).approval_required_when(|_ctx, def, args| {
            def.name == "delete_file" && !args["path"].as_str().unwrap_or("").starts_with("/tmp/")
        });
    let (agent, _) = files_agent(
        toolset,
        vec![vec![("delete_file", json!({"path": "/tmp/x"})), ("delete_file", json!({"path": "/etc/passwd"}))]],
    );
    let deletions = Counter::default();
    let result = agent.run("go").deps(deletions.clone()).run_sync().unwrap();
    let requests = deferred(result.output());
    assert_eq!(call_names(&requests.approvals), [("delete_file", "c0_1")]);
    assert_eq!(deletions.load(Ordering::SeqCst), 1);
    assert_eq!(return_of(result.all_messages(), "c0_0").content, json!("deleted /tmp/x"));
}

#[test]
fn approval_selected_by_a_predicate_over_the_definition() {
    let toolset =
        toolsmith::toolset::ApprovalRequiredToolset::new(FunctionToolset::new().with_tools([delete_file, read_file]))
            .for_tools(ToolSelector::predicate(|_, def| def.name.starts_with("delete")));
    let (agent, _) =
        files_agent(toolset, vec![vec![("read_file", json!({"path": "b"})), ("delete_file", json!({"path": "a"}))]]);
    let result = agent.run("go").deps(Counter::default()).run_sync().unwrap();
    assert_eq!(call_names(&deferred(result.output()).approvals), [("delete_file", "c0_1")]);
}

// ---------------------------------------------------------------------------------------------
// External
// ---------------------------------------------------------------------------------------------

fn browser() -> ExternalToolset<()> {
    ExternalToolset::new(vec![
        ToolDefinition::new("open_page", schema(json!({"url": {"type": "string"}}), &["url"]))
            .with_description("Open a page."),
        ToolDefinition::new("click", schema(json!({"selector": {"type": "string"}}), &["selector"])),
    ])
}

#[test]
fn external_calls_end_the_run_deferred_without_validation() {
    let (model, seen) = scripted(vec![vec![
        ("open_page", json!({"url": "https://example.com"})),
        // Not validated against the schema: still deferred.
        ("click", json!({"wrong": 1})),
        ("add", json!({"x": 1, "y": 1})),
    ]]);
    let agent = Agent::builder(model).tool(add).toolset(browser()).allow_deferred().build().unwrap();
    let result = agent.run("go").run_sync().unwrap();

    let defs = seen.lock().unwrap()[0].clone();
    assert_eq!(names(&defs), ["add", "open_page", "click"]);
    assert_eq!(defs[0].kind, ToolKind::Function);
    assert!(defs[1..].iter().all(|d| d.kind == ToolKind::External), "{defs:?}");
    assert_eq!(defs[1].description.as_deref(), Some("Open a page."));

    let requests = deferred(result.output());
    assert_eq!(call_names(&requests.calls), [("open_page", "c0_0"), ("click", "c0_1")]);
    assert_eq!(requests.calls[1].args, json!({"wrong": 1}));
    assert!(requests.approvals.is_empty());
    assert_eq!(return_of(result.all_messages(), "c0_2").content, json!(2));
}

#[test]
fn wrappers_apply_to_external_toolsets_in_the_documented_order() {
    // filter_out, approval_required, defer_loading, prefix.
    let toolset = ExternalToolset::new(vec![
        ToolDefinition::new("a", schema(json!({}), &[])),
        ToolDefinition::new("b", schema(json!({}), &[])),
        ToolDefinition::new("c", schema(json!({}), &[])),
    ])
    .filtered(|_, def| def.name != "c")
    .approval_required_for(["a"])
    .defer_loading_for(["b"])
    .prefixed("ext");
    let tools = block_on(toolset.get_tools(&RunContext::detached())).unwrap();
    let flags: Vec<(&str, bool, ToolKind)> =
        tools.iter().map(|t| (t.def.name.as_str(), t.def.defer_loading, t.def.kind)).collect();
    assert_eq!(flags, [("ext_a", false, ToolKind::External), ("ext_b", true, ToolKind::External)]);

    // Calls of external tools are deferred as calls without running any handler, so an approval
    // wrapper does not change where they go (as in Pydantic AI); the prefix does apply.
    let toolset = browser().approval_required_for(["open_page"]).prefixed("web");
    let (model, _) =
        scripted(vec![vec![("web_open_page", json!({"url": "u"})), ("web_click", json!({"selector": "s"}))]]);
    let agent = Agent::builder(model).toolset(toolset).allow_deferred().build().unwrap();
    let result = agent.run("go").run_sync().unwrap();
    let requests = deferred(result.output());
    assert!(requests.approvals.is_empty(), "{requests:?}");
    assert_eq!(call_names(&requests.calls), [("web_open_page", "c0_0"), ("web_click", "c0_1")]);
}

#[test]
fn an_external_toolset_with_a_repeated_name_is_rejected_by_the_builder() {
    let toolset: ExternalToolset<()> = ExternalToolset::new(vec![
        ToolDefinition::new("a", schema(json!({}), &[])),
        ToolDefinition::new("a", schema(json!({}), &[])),
    ]);
    let Err(err) = Agent::builder(TestModel::default()).toolset(toolset).build() else {
        panic!("a repeated external tool name must be rejected");
    };
    assert!(err.message.contains("'a' more than once"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Combined
// ---------------------------------------------------------------------------------------------

#[test]
fn combined_toolsets_keep_their_order() {
    let combined = CombinedToolset::new()
        .with(FunctionToolset::new().with_tools([mul, add]))
        .with(browser())
        .with(FunctionToolset::new().with_tool(sub).prefixed("p"));
    assert_eq!(combined.len(), 3);
    assert_eq!(combined.label(), "CombinedToolset(FunctionToolset, ExternalToolset, PrefixedToolset(FunctionToolset))");
    let (model, seen) = scripted(vec![vec![("p_sub", json!({"x": 3, "y": 1})), ("mul", json!({"x": 3, "y": 4}))]]);
    let agent = Agent::builder(model).tool(whoami).toolset(combined).allow_deferred().build().unwrap();
    let result = agent.run("go").run_sync().unwrap();
    assert_eq!(names(&seen.lock().unwrap()[0]), ["whoami", "mul", "add", "open_page", "click", "p_sub"]);
    assert_eq!(return_of(result.all_messages(), "c0_0").content, json!(2));
    assert_eq!(return_of(result.all_messages(), "c0_1").content, json!(12));
}

#[test]
fn duplicate_names_across_toolsets_are_a_user_error() {
    let cases: Vec<(CombinedToolset<()>, &str)> = vec![
        (
            CombinedToolset::new()
                .with(FunctionToolset::new().with_tools([add, sub]))
                .with(FunctionToolset::new().with_tool(add)),
            "FunctionToolset defines a tool whose name conflicts with existing tool from FunctionToolset: 'add'. Rename the tool or wrap the toolset in a `PrefixedToolset` to avoid name conflicts.",
        ),
        (
            CombinedToolset::new()
                .with(browser())
                .with(FunctionToolset::new().with_tool(mul).renamed([("click", "mul")])),
            "RenamedToolset(FunctionToolset) defines a tool whose name conflicts with existing tool from ExternalToolset: 'click'. Rename the tool or wrap the toolset in a `PrefixedToolset` to avoid name conflicts.",
        ),
        (
            CombinedToolset::new()
                .with(FunctionToolset::new().with_tool(add).prefixed("x"))
                .with(ExternalToolset::new(vec![ToolDefinition::new("x_add", schema(json!({}), &[]))])),
            "ExternalToolset defines a tool whose name conflicts with existing tool from PrefixedToolset(FunctionToolset): 'x_add'. Rename the tool or wrap the toolset in a `PrefixedToolset` to avoid name conflicts.",
        ),
    ];
    for (combined, expected) in cases {
        // The combined toolset reports the conflict itself...
        let err = block_on(combined.get_tools(&RunContext::detached())).unwrap_err();
        assert_eq!(err.message, expected);
        // ...and a run fails with it before the model is asked anything.
        let (model, seen) = scripted(vec![]);
        let agent = Agent::builder(model).toolset(combined).build().unwrap();
        assert_eq!(user_error(agent.run("go").run_sync().unwrap_err()), expected);
        assert!(seen.lock().unwrap().is_empty());
    }
}

#[test]
fn wrappers_forward_configuration_problems_to_the_builder() {
    let broken = || FunctionToolset::<()>::new().with_tools([add, add]);
    let expected = broken().check().unwrap_err();
    let results = [
        Agent::builder(TestModel::default()).toolset(broken().prefixed("p")).build().err(),
        Agent::builder(TestModel::default()).toolset(broken().renamed([("a", "add")])).build().err(),
        Agent::builder(TestModel::default()).toolset(broken().filtered(|_, _| true)).build().err(),
        Agent::builder(TestModel::default()).toolset(broken().prepared(|_, d| Some(d))).build().err(),
        Agent::builder(TestModel::default()).toolset(broken().approval_required()).build().err(),
        Agent::builder(TestModel::default()).toolset(broken().defer_loading()).build().err(),
        Agent::builder(TestModel::default()).toolset(broken().with_metadata(json!({}))).build().err(),
        Agent::builder(TestModel::default())
            .toolset(CombinedToolset::new().with(browser()).with(broken()))
            .build()
            .err(),
    ];
    for (i, err) in results.into_iter().enumerate() {
        assert_eq!(err.as_ref(), Some(&expected), "case {i}");
    }
}

// ---------------------------------------------------------------------------------------------
// Prepared
// ---------------------------------------------------------------------------------------------

#[test]
fn prepared_toolsets_edit_drop_and_reorder_definitions() {
    // The function runs before every model request.
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let toolset = FunctionToolset::new().with_tools([add, sub, mul]).prepared(
        move |_ctx: &RunContext, defs: Vec<ToolDefinition>| {
            let step = counter.fetch_add(1, Ordering::SeqCst) + 1;
            let mut defs: Vec<ToolDefinition> = defs.into_iter().filter(|d| d.name != "sub").collect();
            defs.reverse();
            for d in &mut defs {
                d.description = Some(format!("{} (step {step})", d.description.clone().unwrap_or_default()));
            }
            Some(defs)
        },
    );
    let (model, seen) = scripted(vec![vec![
        ("mul", json!({"x": 2, "y": 5})),
        ("add", json!({"x": 2, "y": 5})),
        ("sub", json!({"x": 2, "y": 5})),
    ]]);
    let agent = Agent::builder(model).toolset(toolset).build().unwrap();
    let result = agent.run("go").run_sync().unwrap();

    let seen = seen.lock().unwrap();
    assert_eq!(names(&seen[0]), ["mul", "add"]);
    assert_eq!(seen[0][0].description.as_deref(), Some("Multiply two integers. (step 1)"));
    assert_eq!(seen[1][1].description.as_deref(), Some("Add two integers. (step 2)"));
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    // Definitions are matched back to their own tools.
    let messages = result.all_messages();
    assert_eq!(return_of(messages, "c0_0").content, json!(10));
    assert_eq!(return_of(messages, "c0_1").content, json!(7));
    assert_eq!(return_of(messages, "c0_2").outcome, ToolOutcome::Retried);
}

#[test]
fn prepared_toolsets_share_schemas_and_can_hide_everything() {
    let prepared = FunctionToolset::<()>::new().with_tools([add, sub]).prepared(|_, defs| Some(defs));
    let tools = block_on(prepared.get_tools(&RunContext::detached())).unwrap();
    assert_eq!(names(&tools.iter().map(|t| (*t.def).clone()).collect::<Vec<_>>()), ["add", "sub"]);
    // Schemas are shared with the wrapped toolset's definitions, not copied.
    let inner = block_on(prepared.inner().get_tools(&RunContext::detached())).unwrap();
    for (t, i) in tools.iter().zip(&inner) {
        assert!(Arc::ptr_eq(&t.def.parameters_json_schema, &i.def.parameters_json_schema), "{}", t.def.name);
    }

    let hidden = FunctionToolset::<()>::new().with_tools([add, sub]).prepared(|_, _| None);
    assert!(block_on(hidden.get_tools(&RunContext::detached())).unwrap().is_empty());

    // Async variant, returning a name twice: first position, last definition.
    let twice =
        PreparedToolset::new_async(FunctionToolset::<()>::new().with_tools([add, sub]), |_ctx, defs| async move {
            let mut late = defs[0].clone();
            late.description = Some("late".into());
            Some(vec![defs[1].clone(), defs[0].clone(), late])
        });
    let tools = block_on(twice.get_tools(&RunContext::detached())).unwrap();
    let got: Vec<(&str, Option<&str>)> =
        tools.iter().map(|t| (t.def.name.as_str(), t.def.description.as_deref())).collect();
    assert_eq!(got, [("sub", Some("Subtract two integers.")), ("add", Some("late"))]);
}

#[test]
fn a_prepare_function_that_adds_or_renames_a_tool_is_a_user_error() {
    let adds = FunctionToolset::new().with_tools([add]).prepared(|_, mut defs| {
        defs.push(ToolDefinition::new("new_tool", json!({"type": "object"})));
        Some(defs)
    });
    let agent = Agent::builder(scripted(vec![]).0).toolset(adds).build().unwrap();
    let err = user_error(agent.run("go").run_sync().unwrap_err());
    assert!(err.starts_with("Prepare function cannot add or rename tools"), "{err}");
    assert!(err.contains("'new_tool'"), "{err}");

    let renames = FunctionToolset::new().with_tools([add]).prepared(|_, mut defs| {
        defs[0].name = "plus".into();
        Some(defs)
    });
    let agent = Agent::builder(scripted(vec![]).0).toolset(renames).build().unwrap();
    let err = user_error(agent.run("go").run_sync().unwrap_err());
    assert!(err.starts_with("Prepare function cannot add or rename tools"), "{err}");
    assert!(err.contains("'plus'"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Deferred loading and metadata
// ---------------------------------------------------------------------------------------------

#[test]
fn defer_loading_marks_all_or_the_listed_tools() {
    let ctx = RunContext::detached();
    let flags = |tools: Vec<toolsmith::toolset::ToolsetTool<()>>| -> Vec<(String, bool)> {
        tools.into_iter().map(|t| (t.def.name.clone(), t.def.defer_loading)).collect()
    };
    let all = FunctionToolset::new().with_tools([add, sub]).defer_loading();
    assert_eq!(all.label(), "DeferredLoadingToolset(FunctionToolset)");
    assert_eq!(flags(block_on(all.get_tools(&ctx)).unwrap()), [("add".into(), true), ("sub".into(), true)]);
    let some = FunctionToolset::new().with_tools([add, sub]).defer_loading_for(["sub"]);
    assert_eq!(flags(block_on(some.get_tools(&ctx)).unwrap()), [("add".into(), false), ("sub".into(), true)]);
}

#[test]
fn metadata_is_merged_into_the_definitions() {
    let toolset = FunctionToolset::new()
        .with_tools([add.tool().metadata(json!({"team": "maths", "cost": 1})), sub.tool()])
        .with_metadata(json!({"cost": 2, "safe": true}));
    let (model, seen) = scripted(vec![]);
    let agent = Agent::builder(model).toolset(toolset).build().unwrap();
    agent.run("go").run_sync().unwrap();
    let defs = seen.lock().unwrap()[0].clone();
    assert_eq!(defs[0].metadata, Some(json!({"team": "maths", "cost": 2, "safe": true})));
    assert_eq!(defs[1].metadata, Some(json!({"cost": 2, "safe": true})));

    let selected = toolsmith::toolset::SetMetadataToolset::new(
        FunctionToolset::<()>::new().with_tools([add, sub]),
        json!({"k": 1}),
    )
    .for_tools(["sub"]);
    let tools = block_on(selected.get_tools(&RunContext::detached())).unwrap();
    assert_eq!((tools[0].def.metadata.clone(), tools[1].def.metadata.clone()), (None, Some(json!({"k": 1}))));

    let Err(err) = Agent::builder(TestModel::default())
        .toolset(FunctionToolset::new().with_tool(add).with_metadata(json!(["x"])))
        .build()
    else {
        panic!("metadata that is not an object must be rejected");
    };
    assert!(err.message.contains("JSON object"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Dynamic
// ---------------------------------------------------------------------------------------------

#[test]
fn a_dynamic_toolset_is_rebuilt_for_every_step() {
    let steps = AtomicUsize::new(0);
    let toolset = DynamicToolset::new(move |_ctx: &RunContext| {
        let tools = FunctionToolset::new().with_tool(add);
        match steps.fetch_add(1, Ordering::SeqCst) {
            0 => Some(tools),
            1 => Some(tools.with_tool(mul)),
            _ => None,
        }
    });
    assert_eq!(toolset.label(), "DynamicToolset");
    let (model, seen) = scripted(vec![vec![("add", json!({"x": 1, "y": 1}))], vec![("mul", json!({"x": 2, "y": 3}))]]);
    let agent = Agent::builder(model).toolset(toolset).build().unwrap();
    let result = agent.run("go").run_sync().unwrap();
    let seen = seen.lock().unwrap();
    let per_step: Vec<Vec<&str>> = seen.iter().map(|d| names(d)).collect();
    assert_eq!(per_step, [vec!["add"], vec!["add", "mul"], vec![]]);
    assert_eq!(return_of(result.all_messages(), "c1_0").content, json!(6));
}

#[test]
fn a_dynamic_toolset_can_be_async_and_reports_problems_at_run_time() {
    let toolset = DynamicToolset::new_async(|ctx: RunContext<bool>| async move {
        ctx.deps.then(|| FunctionToolset::new().with_tools([add, sub]).prefixed("d"))
    });
    let agent = Agent::builder(TestModel::default()).deps::<bool>().toolset(toolset).build().unwrap();
    assert_eq!(agent.run("go").deps(true).run_sync().unwrap().output(), r#"{"d_add":0,"d_sub":0}"#);
    assert_eq!(agent.run("go").deps(false).run_sync().unwrap().output(), "success (no tool calls)");

    let broken = DynamicToolset::from_tools(|_ctx: &RunContext| vec![add.tool(), add.tool()]);
    let agent = Agent::builder(TestModel::default()).toolset(broken).build().unwrap();
    let err = user_error(agent.run("go").run_sync().unwrap_err());
    assert!(err.contains("'add'"), "{err}");
}

#[test]
fn selectors_do_not_need_defaultable_dependencies() {
    struct NoDefault;
    let selector: ToolSelector<NoDefault> = ToolSelector::default();
    assert!(matches!(selector, ToolSelector::All));
}

// ---------------------------------------------------------------------------------------------
// Shared lists through wrappers: made once per inner list, so a step costs nothing per tool

#[test]
fn wrappers_hand_out_the_same_shared_list_while_their_inner_list_is_the_same() {
    let ctx = RunContext::detached();
    let base = || FunctionToolset::new().with_tools([add, sub, mul]);
    let deferred = base().defer_loading_for(["sub", "mul"]).prefixed("m").renamed([("plus", "m_add")]);
    let first = block_on(deferred.get_tools_shared(&ctx)).unwrap();
    let second = block_on(deferred.get_tools_shared(&ctx)).unwrap();
    assert!(Arc::ptr_eq(&first, &second), "the wrapped list is reused");
    let flags: Vec<(&str, bool)> = first.iter().map(|t| (t.def.name.as_str(), t.def.defer_loading)).collect();
    assert_eq!(flags, [("plus", false), ("m_sub", true), ("m_mul", true)]);
    // The shared list and the per-call list agree.
    let fresh = block_on(deferred.get_tools(&ctx)).unwrap();
    assert_eq!(
        fresh.iter().map(|t| (*t.def).clone()).collect::<Vec<_>>(),
        first.iter().map(|t| (*t.def).clone()).collect::<Vec<_>>()
    );

    let combined = CombinedToolset::new().with(base().prefixed("a")).with(base().prefixed("b").approval_required());
    let one = block_on(combined.get_tools_shared(&ctx)).unwrap();
    let two = block_on(combined.get_tools_shared(&ctx)).unwrap();
    assert!(Arc::ptr_eq(&one, &two));
    assert_eq!(one.len(), 6);

    // A conflict is still found through the shared path.
    let clash = CombinedToolset::new().with(base()).with(FunctionToolset::new().with_tool(add));
    let err = block_on(clash.get_tools_shared(&ctx)).unwrap_err();
    assert!(err.message.contains("conflicts with existing tool"), "{err}");
}

#[test]
fn a_predicate_selector_is_evaluated_again_each_time() {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let toolset = FunctionToolset::new().with_tools([add, sub]).defer_loading().for_tools(ToolSelector::predicate(
        move |_ctx: &RunContext, def: &ToolDefinition| {
            c.fetch_add(1, Ordering::SeqCst);
            def.name == "sub"
        },
    ));
    let ctx = RunContext::detached();
    block_on(toolset.get_tools_shared(&ctx)).unwrap();
    block_on(toolset.get_tools_shared(&ctx)).unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 4, "two tools, two lists");
}
