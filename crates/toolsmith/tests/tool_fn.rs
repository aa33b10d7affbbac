//! The function behind a `#[tool]` stays callable beside its `ToolSpec`, and a tool can be
//! called with JSON arguments outside a run: the ways a unit test reaches a tool.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolsmith::prelude::*;
use toolsmith::tool::ToolOutput;

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

#[derive(Clone)]
struct Directory {
    people: Vec<(&'static str, u32)>,
}

/// Look up a person's age.
#[tool(retries = 2)]
async fn age(ctx: RunContext<Directory>, name: String) -> Result<u32, ModelRetry> {
    tokio::task::yield_now().await;
    ctx.deps
        .people
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, a)| *a)
        .ok_or_else(|| ModelRetry::new(format!("nobody is called {name}")))
}

/// Say hello.
#[tool(fn_name = hello_impl)]
fn hello(ctx: RunContext, name: String) -> ToolReturn {
    let _ = ctx.retry;
    ToolReturn::new(format!("hello {name}")).with_metadata(json!({"polite": true}))
}

/// The n-th triangular number.
#[tool]
fn triangle(n: u64) -> u64 {
    if n == 0 { 0 } else { n + triangle(n - 1) }
}

mod weather {
    use toolsmith::prelude::*;

    /// Tomorrow's weather.
    #[tool]
    pub fn forecast(city: String) -> Result<String, String> {
        if city.is_empty() { Err("no city".into()) } else { Ok(format!("sun in {city}")) }
    }
}

fn directory() -> Directory {
    Directory { people: vec![("Ada", 36), ("Alan", 41)] }
}

#[test]
fn the_constant_is_still_the_tool_in_arrays_builders_and_toolsets() {
    let spec: toolsmith::ToolSpec = add;
    assert_eq!(spec.name(), "add");
    let agent = Agent::builder(TestModel::default()).tools([add, sub]).build();
    assert!(agent.is_ok());
    let toolset: FunctionToolset<()> = FunctionToolset::new().with_tools([add, sub]);
    let _ = toolset;
    let _ = Agent::builder(TestModel::default()).deps::<Directory>().tool(age).build().unwrap();
}

#[tokio::test]
async fn the_function_is_called_with_rust_values() {
    assert_eq!(add_fn(2, 3), 5);
    assert_eq!(sub_fn(2, 3), -1);
    assert_eq!(triangle_fn(4), 10);
    assert_eq!(age_fn(RunContext::with_deps(directory()), "Ada".into()).await.unwrap(), 36);
    let missing = age_fn(RunContext::with_deps(directory()), "Bob".into()).await.unwrap_err();
    assert_eq!(missing.content, json!("nobody is called Bob"));
    assert_eq!(hello_impl(RunContext::detached(), "Ada".into()).return_value, json!("hello Ada"));
    assert_eq!(weather::forecast_fn("Oslo".into()), Ok("sun in Oslo".to_string()));
    assert_eq!(weather::forecast_fn(String::new()), Err("no city".to_string()));
}

#[tokio::test]
async fn call_json_goes_through_the_schema_and_deserialisation() {
    let out = add.call_json(RunContext::detached(), json!({"x": "2", "y": 3})).await.unwrap();
    assert_eq!(out, ToolOutput::Value(json!(5)));
    // As a model sends them: the arguments' text.
    let out = add.call_json(RunContext::detached(), json!(r#"{"x": 2, "y": 3}"#)).await.unwrap();
    assert_eq!(out, ToolOutput::Value(json!(5)));
    let missing = add.call_json(RunContext::detached(), json!({"x": 2})).await;
    match missing {
        Err(ToolError::Validation(errors)) => assert_eq!(errors[0].msg, "Field required"),
        other => panic!("expected a validation error, got {other:?}"),
    }

    let ctx = RunContext::with_deps(directory());
    let out = age.call_json(ctx.clone(), json!({"name": "Alan"})).await.unwrap();
    assert_eq!(out, ToolOutput::Value(json!(41)));
    let retry = age.call_json(ctx, json!({"name": "Bob"})).await;
    assert!(matches!(&retry, Err(ToolError::Retry(r)) if r.content == json!("nobody is called Bob")), "{retry:?}");

    let out = hello.call_json(RunContext::with_deps(7u8), json!({"name": "Ada"})).await.unwrap();
    assert!(matches!(&out, ToolOutput::Return(r) if r.metadata == Some(json!({"polite": true}))), "{out:?}");

    let failed = weather::forecast.call_json(RunContext::detached(), json!({"city": ""})).await;
    assert!(matches!(&failed, Err(ToolError::Failed { message, .. }) if message == "no city"), "{failed:?}");
}

#[tokio::test]
async fn call_json_reports_a_tool_the_agent_builder_would_reject() {
    // `age` reads `RunContext<Directory>`: with other dependencies it is a configuration error.
    let out = age.call_json(RunContext::detached(), json!({"name": "Ada"})).await;
    match out {
        Err(ToolError::Failed { kind, message, .. }) => {
            assert_eq!(kind, "UserError");
            assert!(message.starts_with("tool 'age' takes RunContext<"), "{message}");
        }
        other => panic!("expected a configuration error, got {other:?}"),
    }
}

#[tokio::test]
async fn tools_declared_in_a_function_body_use_its_local_items() {
    #[derive(Deserialize, JsonSchema)]
    struct Point {
        x: f64,
        y: f64,
    }

    const SCALE: f64 = 2.0;

    /// The length of a vector.
    #[tool]
    fn norm(p: Point) -> f64 {
        (p.x * p.x + p.y * p.y).sqrt() * SCALE
    }

    /// The length of a vector, later.
    #[tool]
    async fn norm_later(ctx: RunContext<f64>, p: Point) -> Result<f64, ModelRetry> {
        Ok(norm_fn(p) * ctx.deps)
    }

    assert_eq!(norm_fn(Point { x: 3.0, y: 4.0 }), 10.0);
    assert_eq!(norm_later_fn(RunContext::with_deps(0.5), Point { x: 3.0, y: 4.0 }).await.unwrap(), 5.0);
    let out = norm.call_json(RunContext::detached(), json!({"x": 3, "y": 4})).await.unwrap();
    assert_eq!(out, ToolOutput::Value(json!(10.0)));
    let _ = Agent::builder(TestModel::default()).deps::<f64>().tools([norm, norm_later]).build().unwrap();
}

/// A unit test as an application writes it, next to its tools.
mod tests {
    use super::*;

    #[tokio::test]
    async fn ada_is_36() {
        let ctx = RunContext::with_deps(directory());
        assert_eq!(age_fn(ctx.clone(), "Ada".into()).await.unwrap(), 36);
        assert_eq!(age.call_json(ctx, json!({"name": "Ada"})).await.unwrap(), ToolOutput::Value(json!(36)));
    }
}
