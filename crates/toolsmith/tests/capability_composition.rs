//! Capabilities made of capabilities: `CombinedCapability` (spread in the agent's list, or one
//! unit inside a wrapper) and `WrapperCapability` (override some hooks, pass the others on).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith::capability::{
    BoxedCapability, Capability, CapabilityOrdering, CombinedCapability, DynamicCapability, Hooks, PrefixTools,
    ThreadExecutor, ToolCallInfo, ToolExecuteNext, Toolset, WrapperCapability,
};
use toolsmith::messages::{ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::prelude::*;
use toolsmith::tool::ToolOutput;

type Log = Arc<Mutex<Vec<String>>>;

fn entries(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

/// Add two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Logs its tool hooks and `before_run` with its label.
struct Tracer {
    label: &'static str,
    ordering: Option<CapabilityOrdering>,
    log: Log,
}

fn tracer(label: &'static str, log: &Log) -> Tracer {
    Tracer { label, ordering: None, log: log.clone() }
}

impl Tracer {
    fn note(&self, what: &str) {
        self.log.lock().unwrap().push(format!("{what} {}", self.label));
    }
}

impl Capability<()> for Tracer {
    fn name(&self) -> String {
        self.label.into()
    }
    fn ordering(&self) -> Option<CapabilityOrdering> {
        self.ordering.clone()
    }
    async fn before_run(&self, _: &RunContext<()>) -> Result<(), AgentRunError> {
        self.note("run");
        Ok(())
    }
    async fn before_tool_execute(
        &self,
        _: &RunContext<()>,
        _: ToolCallInfo<'_>,
        args: Value,
    ) -> Result<Value, ToolError> {
        self.note("before");
        Ok(args)
    }
    async fn after_tool_execute(
        &self,
        _: &RunContext<()>,
        _: ToolCallInfo<'_>,
        _: &Value,
        result: ToolOutput,
    ) -> Result<ToolOutput, ToolError> {
        self.note("after");
        Ok(result)
    }
    async fn wrap_tool_execute<'a>(
        &'a self,
        _: &'a RunContext<()>,
        _: ToolCallInfo<'a>,
        args: Value,
        next: ToolExecuteNext<'a>,
    ) -> Result<ToolOutput, ToolError> {
        self.note("in");
        let out = next.run(args).await;
        self.note("out");
        out
    }
}

#[tokio::test]
async fn a_combination_added_to_an_agent_is_spread_each_member_keeping_its_ordering() {
    let log: Log = Arc::default();
    let mut last = tracer("last", &log);
    last.ordering = Some(CapabilityOrdering::innermost());
    let mut wraps_free = tracer("wraps_free", &log);
    wraps_free.ordering = Some(CapabilityOrdering::new().wraps(["free"]));
    let group = CombinedCapability::new().with(last).with(tracer("grouped", &log)).with(wraps_free);
    let agent = Agent::builder(TestModel::default())
        .capability(tracer("free", &log))
        .capability(group)
        .capability(tracer("after_group", &log))
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    // `last` goes innermost and `wraps_free` before `free`, as if added one by one.
    // (Among those free to go next, the one added first: `grouped` before `wraps_free`, which
    // takes `free` with it.)
    assert_eq!(entries(&log), ["run grouped", "run wraps_free", "run free", "run after_group", "run last"]);
}

#[tokio::test]
async fn a_combination_inside_a_wrapper_dispatches_like_the_agent_it_stands_for() {
    let run = |spread: bool| async move {
        let log: Log = Arc::default();
        let members = || {
            CombinedCapability::new()
                .with(tracer("a", &log))
                .with(tracer("b", &log))
                .with(Toolset::new(FunctionToolset::new().with_tool(add)))
        };
        let builder = Agent::builder(TestModel::default());
        let builder =
            if spread { builder.capability(members()) } else { builder.capability(PrefixTools::new("m", members())) };
        let result = builder.build().unwrap().run("go").await.unwrap();
        (result.output().to_string(), entries(&log))
    };
    let (prefixed_output, nested) = run(false).await;
    let (plain_output, spread) = run(true).await;
    assert_eq!(prefixed_output, r#"{"m_add":0}"#);
    assert_eq!(plain_output, r#"{"add":0}"#);
    let expected = ["run a", "run b", "in a", "in b", "before a", "before b", "after b", "after a", "out b", "out a"];
    assert_eq!(nested, expected);
    assert_eq!(spread, expected);
}

#[tokio::test]
async fn a_combination_made_for_one_run_is_spread_so_its_members_are_named_in_errors() {
    let dynamic = DynamicCapability::new(|_: &RunContext<()>| {
        let slow = Hooks::new().named("slow").timeout(Duration::from_millis(20)).before_run(|_| async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            Ok(())
        });
        Some(BoxedCapability::new(CombinedCapability::new().with(Hooks::new().named("quick")).with(slow)))
    });
    let agent = Agent::builder(TestModel::default()).capability(dynamic).build().unwrap();
    let err = agent.run("go").await.unwrap_err();
    match err {
        AgentRunError::HookTimeout { capability, hook, .. } => {
            assert_eq!((capability.as_str(), hook.as_str()), ("slow", "before_run"));
        }
        other => panic!("expected a hook timeout, got {other}"),
    }
}

#[tokio::test]
async fn a_run_refuses_a_thread_executor_hidden_in_a_combination() {
    let agent = Agent::builder(TestModel::default()).build().unwrap();
    let group = CombinedCapability::new().with(Hooks::new()).with(ThreadExecutor::new(2));
    let err = agent.run("x").capability(group).await.unwrap_err();
    assert!(err.to_string().contains("`ThreadExecutor` sets the agent's blocking pool"), "{err}");
}

#[test]
fn nested_combinations_are_flattened_and_report_their_members() {
    let log: Log = Arc::default();
    let inner = CombinedCapability::new().with(tracer("b", &log)).with(tracer("c", &log));
    let outer = CombinedCapability::new().with(tracer("a", &log)).with(inner);
    assert_eq!(outer.len(), 3);
    assert_eq!(format!("{outer:?}"), r#"["a", "b", "c"]"#);
    let collected: CombinedCapability<()> =
        [BoxedCapability::new(outer), BoxedCapability::new(tracer("d", &log))].into_iter().collect();
    let names: Vec<String> = collected.capabilities().iter().map(|c| c.name()).collect();
    assert_eq!(names, ["a", "b", "c", "d"]);
}

// ---------------------------------------------------------------------------------------------
// WrapperCapability

/// Refuses every tool call with a retry, and logs its other hooks.
struct Refuse(Log);

impl Capability<()> for Refuse {
    fn ordering(&self) -> Option<CapabilityOrdering> {
        Some(CapabilityOrdering::outermost())
    }
    async fn before_run(&self, _: &RunContext<()>) -> Result<(), AgentRunError> {
        self.0.lock().unwrap().push("refuse: run".into());
        Ok(())
    }
    async fn before_tool_execute(
        &self,
        _: &RunContext<()>,
        call: ToolCallInfo<'_>,
        _: Value,
    ) -> Result<Value, ToolError> {
        Err(ModelRetry::new(format!("`{}` is refused", call.def.name)).into())
    }
}

/// Lets `add` through the wrapped guard; every other hook passes on.
#[derive(Clone)]
struct AllowAdd(BoxedCapability<()>);

impl WrapperCapability<()> for AllowAdd {
    fn wrapped(&self) -> &BoxedCapability<()> {
        &self.0
    }
    fn wrapped_mut(&mut self) -> &mut BoxedCapability<()> {
        &mut self.0
    }
    async fn before_tool_execute(
        &self,
        ctx: &RunContext<()>,
        call: ToolCallInfo<'_>,
        args: Value,
    ) -> Result<Value, ToolError> {
        if call.def.name == "add" {
            return Ok(args);
        }
        self.wrapped().before_tool_execute(ctx, call, args).await
    }
}

/// Multiply two numbers.
#[tool]
fn mul(a: i64, b: i64) -> i64 {
    a * b
}

#[tokio::test]
async fn a_wrapper_overrides_one_hook_and_passes_the_others_on() {
    let log: Log = Arc::default();
    let guard = AllowAdd(BoxedCapability::new(Refuse(log.clone()))).into_capability();
    assert_eq!(Capability::<()>::name(&guard), "Refuse");
    assert_eq!(Capability::<()>::ordering(&guard), Some(CapabilityOrdering::outermost()));
    let mut visited = Vec::new();
    Capability::<()>::apply(&guard, &mut |leaf| {
        visited.push(if leaf.is::<AllowAdd>() {
            "AllowAdd"
        } else if leaf.is::<Refuse>() {
            "Refuse"
        } else {
            "?"
        })
    });
    assert_eq!(visited, ["AllowAdd", "Refuse"]);

    // Calls `add` and `mul` once, then answers with what came back.
    let model = FunctionModel::sync(|messages, _| {
        let returns: Vec<String> = messages
            .iter()
            .filter_map(|m| match m {
                ModelMessage::Request(r) => Some(r),
                _ => None,
            })
            .flat_map(|r| r.parts.iter())
            .filter_map(|p| match p {
                ModelRequestPart::ToolReturn(t) => Some(t.content_text()),
                ModelRequestPart::RetryPrompt(r) => r.content.as_str().map(String::from),
                _ => None,
            })
            .collect();
        if returns.is_empty() {
            ModelResponse::new(vec![
                ModelResponsePart::ToolCall(ToolCallPart::new("add", json!({"a": 1, "b": 2}), "c1")),
                ModelResponsePart::ToolCall(ToolCallPart::new("mul", json!({"a": 3, "b": 4}), "c2")),
            ])
        } else {
            ModelResponse::text(returns.join(" | "))
        }
    });
    let agent = Agent::builder(model).tool(add).tool(mul).capability(guard).build().unwrap();
    let result = agent.run("go").await.unwrap();
    // `add` ran; `mul` was refused by the wrapped guard.
    assert!(result.output().starts_with("3 | `mul` is refused"), "{}", result.output());
    assert_eq!(entries(&log), ["refuse: run"]);
}

/// Counts its runs; made fresh for each run by a `DynamicCapability`.
struct PerRun(Log, usize);

impl Capability<()> for PerRun {
    async fn before_run(&self, _: &RunContext<()>) -> Result<(), AgentRunError> {
        self.0.lock().unwrap().push(format!("run #{}", self.1));
        Ok(())
    }
}

/// Adds a note before the wrapped `before_run`.
#[derive(Clone)]
struct Announce(BoxedCapability<()>, Log);

impl WrapperCapability<()> for Announce {
    fn wrapped(&self) -> &BoxedCapability<()> {
        &self.0
    }
    fn wrapped_mut(&mut self) -> &mut BoxedCapability<()> {
        &mut self.0
    }
    async fn before_run(&self, ctx: &RunContext<()>) -> Result<(), AgentRunError> {
        self.1.lock().unwrap().push("announce".into());
        self.wrapped().before_run(ctx).await
    }
}

#[tokio::test]
async fn a_wrapper_is_cloned_around_the_instance_its_capability_makes_for_a_run() {
    let log: Log = Arc::default();
    let runs = Arc::new(Mutex::new(0));
    let l = log.clone();
    let dynamic = DynamicCapability::new(move |_: &RunContext<()>| {
        let mut n = runs.lock().unwrap();
        *n += 1;
        Some(BoxedCapability::new(PerRun(l.clone(), *n)))
    });
    let agent = Agent::builder(TestModel::default())
        .capability(Announce(BoxedCapability::new(dynamic), log.clone()).into_capability())
        .build()
        .unwrap();
    agent.run("one").await.unwrap();
    agent.run("two").await.unwrap();
    assert_eq!(entries(&log), ["announce", "run #1", "announce", "run #2"]);
}
