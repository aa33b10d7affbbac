//! `#[tool]` used the way applications use it: the definitions it produces and the calls it runs.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolsmith::messages::{ModelRequestPart, ModelResponsePart, ToolCallPart, ToolOutcome, ToolReturnPart};
use toolsmith::prelude::*;

// ---------------------------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------------------------

/// Get me foobar.
///
/// # Arguments
/// * `a` - apple pie
/// * `b` - banana cake
#[tool(retries = 3, timeout = 5.0)]
async fn foobar(ctx: RunContext<String>, a: i64, b: String) -> Result<String, ModelRetry> {
    if a < 0 {
        return Err(ModelRetry::new("a must not be negative"));
    }
    Ok(format!("{} {a} {b}", ctx.deps))
}

/// Add two integers.
#[tool]
fn add(
    /// first addend
    x: i64,
    /// second addend
    y: i64,
) -> i64 {
    x + y
}

#[tool]
fn undocumented(n: u32) -> u32 {
    n
}

/// A point on the plane.
#[derive(Deserialize, JsonSchema)]
struct Point {
    /// The horizontal coordinate.
    x: f64,
    /// The vertical coordinate.
    y: f64,
}

/// The distance of a point from the origin.
#[tool]
fn norm(point: Point) -> f64 {
    (point.x * point.x + point.y * point.y).sqrt()
}

#[tool]
fn norm_without_doc(point: Point) -> f64 {
    point.x.abs() + point.y.abs()
}

/// The sum of a point's coordinates.
///
/// # Arguments
/// * `point` - the point
#[tool(flatten = false)]
fn wrapped(point: Point) -> f64 {
    point.x + point.y
}

/// Everything at once.
#[tool(
    name = "renamed",
    description = "An explicit description.",
    strict,
    sequential,
    requires_approval = true,
    defer_loading,
    metadata = r#"{"team": "search", "tags": ["a", "b"]}"#
)]
fn options_tool() {}

/// Needs descriptions.
///
/// # Arguments
/// * `a` - described
#[tool(require_parameter_descriptions)]
fn half_documented(a: i64, b: i64) -> i64 {
    a + b
}

/// Needs descriptions.
#[tool(require_parameter_descriptions)]
fn fully_documented(
    /// described
    a: i64,
) -> i64 {
    a
}

/// Optional and defaulted parameters.
#[tool]
fn optional(
    /// the query
    query: String,
    /// how many
    #[serde(default)]
    limit: u32,
    /// the language
    lang: Option<String>,
    r#type: Option<String>,
) -> String {
    format!("{query} {limit} {lang:?} {:?}", r#type)
}

/// Read the retry counter.
#[tool]
fn unit_context(ctx: RunContext) -> u32 {
    ctx.retry
}

/// Rich return.
#[tool]
async fn rich(label: String) -> ToolReturn {
    ToolReturn::new(format!("got {label}")).with_metadata(json!({"label": label}))
}

/// Rich return or error.
#[tool]
fn rich_result(fail: bool) -> Result<ToolReturn, ModelRetry> {
    if fail { Err(ModelRetry::new("try again")) } else { Ok(ToolReturn::new(42)) }
}

/// Always fails.
#[tool]
fn broken() -> std::io::Result<String> {
    Err(std::io::Error::other("disk on fire"))
}

mod nested {
    use toolsmith::prelude::*;

    /// A public tool in a module.
    #[tool]
    pub fn shout(text: String) -> String {
        text.to_uppercase()
    }

    /// Calls itself: the function is still reachable by name inside its tool.
    #[tool]
    pub fn triangle(n: u64) -> u64 {
        if n == 0 { 0 } else { n + triangle(n - 1) }
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn def<D: Clone + Send + Sync + 'static>(tool: impl Into<Tool<D>>) -> ToolDefinition {
    let tool: Tool<D> = tool.into();
    tool.definition().clone()
}

/// A model that makes the given calls in its first response, then answers "done".
fn script(calls: Vec<(&'static str, Value)>) -> FunctionModel {
    FunctionModel::sync(move |messages, _info| {
        if messages.len() == 1 {
            ModelResponse::new(
                calls
                    .iter()
                    .enumerate()
                    .map(|(i, (name, args))| {
                        ModelResponsePart::ToolCall(ToolCallPart::new(*name, args.clone(), format!("call{i}")))
                    })
                    .collect(),
            )
        } else {
            ModelResponse::text("done")
        }
    })
}

/// The tool returns recorded in a run's messages, by call id order.
fn returns(messages: &[ModelMessage]) -> Vec<ToolReturnPart> {
    let mut parts: Vec<ToolReturnPart> = messages
        .iter()
        .filter_map(ModelMessage::as_request)
        .flat_map(|r| r.parts.iter())
        .filter_map(|p| match p {
            ModelRequestPart::ToolReturn(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    parts.sort_by(|a, b| a.tool_call_id.cmp(&b.tool_call_id));
    parts
}

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

#[test]
fn the_constant_is_a_copy_tool_spec() {
    let spec: toolsmith::ToolSpec = foobar;
    let copy = spec;
    assert_eq!(spec.name(), "foobar");
    assert_eq!(copy.name(), "foobar");
    let specs = [add, undocumented, nested::shout];
    assert_eq!(specs.map(|s| s.name()), ["add", "undocumented", "shout"]);
}

#[test]
fn description_and_parameter_descriptions_from_the_doc_comment() {
    let d = def::<String>(foobar);
    assert_eq!(d.name, "foobar");
    assert_eq!(d.description.as_deref(), Some("Get me foobar."));
    assert_eq!(
        *d.parameters_json_schema,
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "description": "apple pie"},
                "b": {"type": "string", "description": "banana cake"}
            },
            "required": ["a", "b"],
            "additionalProperties": false
        })
    );
    assert_eq!(d.timeout, Some(std::time::Duration::from_secs(5)));
    let tool: Tool<String> = foobar.into();
    assert_eq!(tool.max_retries(), Some(3));
    assert!(tool.check().is_ok());
}

#[test]
fn parameter_doc_comments() {
    let d = def::<()>(add);
    assert_eq!(d.description.as_deref(), Some("Add two integers."));
    assert_eq!(d.parameters_json_schema["properties"]["x"]["description"], "first addend");
    assert_eq!(d.parameters_json_schema["properties"]["y"]["description"], "second addend");
}

#[test]
fn no_doc_comment_means_no_description() {
    let d = def::<()>(undocumented);
    assert_eq!(d.description, None);
    assert_eq!(d.parameters_json_schema["properties"]["n"].get("description"), None);
}

#[test]
fn a_single_struct_parameter_is_the_whole_schema() {
    let d = def::<()>(norm);
    assert_eq!(d.description.as_deref(), Some("The distance of a point from the origin."));
    let schema = &*d.parameters_json_schema;
    assert_eq!(schema["title"], "Point");
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["x"]["description"], "The horizontal coordinate.");
    assert_eq!(schema["required"], json!(["x", "y"]));
    assert_eq!(schema.get("description"), None);

    // Without a doc comment, the struct's doc comment describes the tool.
    assert_eq!(def::<()>(norm_without_doc).description.as_deref(), Some("A point on the plane."));
}

#[test]
fn flatten_false_keeps_the_wrapper() {
    let d = def::<()>(wrapped);
    let schema = &*d.parameters_json_schema;
    assert_eq!(schema.get("title"), None);
    assert_eq!(schema["required"], json!(["point"]));
    assert_eq!(schema["properties"]["point"]["description"], "the point");
    assert_eq!(schema["properties"]["point"]["properties"]["y"]["type"], "number");
}

#[test]
fn options_reach_the_tool() {
    let tool: Tool<()> = options_tool.into();
    let d = tool.definition();
    assert_eq!(d.name, "renamed");
    assert_eq!(tool.name(), "renamed");
    assert_eq!(options_tool.name(), "renamed");
    assert_eq!(d.description.as_deref(), Some("An explicit description."));
    assert_eq!(d.strict, Some(true));
    assert!(d.sequential);
    assert!(d.defer_loading);
    assert_eq!(d.metadata, Some(json!({"team": "search", "tags": ["a", "b"]})));
    assert!(tool.requires_approval_flag());
    assert_eq!(tool.max_retries(), None);
    assert_eq!(d.timeout, None);

    let plain = def::<()>(add);
    assert_eq!(plain.strict, None);
    assert!(!plain.sequential && !plain.defer_loading);
    assert_eq!(plain.metadata, None);
}

#[test]
fn require_parameter_descriptions_reports_the_missing_ones() {
    let tool: Tool<()> = half_documented.into();
    let err = tool.check().unwrap_err().to_string();
    assert!(err.contains("'b'"), "{err}");
    assert!(!err.contains("'a'"), "{err}");
    let tool: Tool<()> = fully_documented.into();
    assert!(tool.check().is_ok());
}

#[test]
fn optional_parameters_are_not_required() {
    let d = def::<()>(optional);
    let schema = &*d.parameters_json_schema;
    assert_eq!(schema["required"], json!(["query"]));
    let props = schema["properties"].as_object().unwrap();
    assert_eq!(props.keys().collect::<Vec<_>>(), ["query", "limit", "lang", "type"]);
    assert_eq!(schema["properties"]["limit"]["description"], "how many");
}

#[test]
fn the_dependency_type_must_match() {
    let tool: Tool<()> = foobar.into();
    let err = tool.check().unwrap_err().to_string();
    assert!(err.contains("RunContext<alloc::string::String>"), "{err}");
    // A tool taking `RunContext` works with any dependency type.
    let tool: Tool<Vec<u8>> = unit_context.into();
    assert!(tool.check().is_ok());
    let tool: Tool<String> = add.into();
    assert!(tool.check().is_ok());
}

// ---------------------------------------------------------------------------------------------
// Calls
// ---------------------------------------------------------------------------------------------

#[test]
fn calls_async_and_blocking_tools_with_context() {
    let model = script(vec![
        ("foobar", json!({"a": 1, "b": "pie"})),
        ("add", json!({"x": 2, "y": 3})),
        ("unit_context", json!({})),
        ("norm", json!({"x": 3.0, "y": 4.0})),
        // The same tool called with its struct under the parameter's name (the envelope).
        ("norm", json!({"point": {"x": 6.0, "y": 8.0}})),
        ("wrapped", json!({"point": {"x": 1.5, "y": 2.0}})),
        ("optional", json!({"query": "q", "type": "t"})),
        ("shout", json!({"text": "hi"})),
        ("triangle", json!({"n": 4})),
    ]);
    let agent = Agent::builder(model)
        .deps::<String>()
        .tools([foobar, add, unit_context, norm, wrapped, optional, nested::shout, nested::triangle])
        .build()
        .unwrap();
    let result = agent.run("go").deps("Anne".to_string()).run_sync().unwrap();
    assert_eq!(result.output(), "done");
    let contents: Vec<(String, Value)> =
        returns(result.all_messages()).into_iter().map(|p| (p.tool_name, p.content)).collect();
    assert_eq!(
        contents,
        [
            ("foobar".to_string(), json!("Anne 1 pie")),
            ("add".to_string(), json!(5)),
            ("unit_context".to_string(), json!(0)),
            ("norm".to_string(), json!(5.0)),
            ("norm".to_string(), json!(10.0)),
            ("wrapped".to_string(), json!(3.5)),
            ("optional".to_string(), json!("q 0 None Some(\"t\")")),
            ("shout".to_string(), json!("HI")),
            ("triangle".to_string(), json!(10)),
        ]
    );
}

#[test]
fn model_retry_and_rich_returns() {
    let model = script(vec![
        ("foobar", json!({"a": -1, "b": "pie"})),
        ("rich", json!({"label": "x"})),
        ("rich_result", json!({"fail": false})),
        ("rich_result", json!({"fail": true})),
    ]);
    let agent = Agent::builder(model).deps::<String>().tools([foobar, rich, rich_result]).build().unwrap();
    let result = agent.run("go").deps("Anne".to_string()).run_sync().unwrap();
    let parts = returns(result.all_messages());
    assert_eq!(parts.len(), 4, "{parts:?}");
    assert_eq!(parts[0].outcome, ToolOutcome::Retried);
    assert_eq!(parts[0].content_text(), "a must not be negative");
    assert_eq!(parts[1].outcome, ToolOutcome::Success);
    assert_eq!(parts[1].content, json!("got x"));
    assert_eq!(parts[1].metadata.as_deref(), Some(&json!({"label": "x"})));
    assert_eq!(parts[2].content, json!(42));
    assert_eq!(parts[3].outcome, ToolOutcome::Retried);
    assert_eq!(parts[3].content_text(), "try again");
}

#[test]
fn invalid_arguments_are_sent_back_to_the_model() {
    let model = script(vec![("add", json!({"x": 1, "y": "two"})), ("add", json!({"x": 1, "y": 2, "z": 3}))]);
    let agent = Agent::builder(model).tools([add]).build().unwrap();
    let result = agent.run("go").run_sync().unwrap();
    let parts = returns(result.all_messages());
    assert_eq!(parts.len(), 2, "{parts:?}");
    assert!(parts.iter().all(|p| p.outcome == ToolOutcome::Retried), "{parts:?}");
}

#[test]
fn a_failing_tool_ends_the_run() {
    let model = script(vec![("broken", json!({}))]);
    let agent = Agent::builder(model).tools([broken]).build().unwrap();
    let err = agent.run("go").run_sync().unwrap_err();
    assert!(err.to_string().contains("disk on fire"), "{err}");
}

#[test]
fn the_agent_builder_rejects_a_dependency_mismatch() {
    let Err(err) = Agent::builder(script(vec![])).tools([foobar]).build() else {
        panic!("a tool taking RunContext<String> on an agent without dependencies must be rejected");
    };
    assert!(err.to_string().contains("RunContext<alloc::string::String>"), "{err}");
}
