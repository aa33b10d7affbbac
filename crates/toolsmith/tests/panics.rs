//! Panics in the code a run calls: every capability hook, the model (a request, a stream), the
//! event handler, a tool's `prepare` and arguments validator. Each ends the run with an error that
//! says where it happened (never a panic out of `run()`), and the agent stays usable.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::StreamExt;
use serde_json::{Value, json};
use toolsmith::agent::RunOutput;
use toolsmith::capability::{
    AgentNode, Capability, CapabilityOrdering, EventBoxStream, ModelRequestContext, ModelRequestNext, NodeNext,
    NodeResult, OutputInfo, OutputNext, RunNext, ToolCallInfo, ToolExecuteNext, ToolValidateNext,
};
use toolsmith::deferred::{DeferredToolRequests, DeferredToolResults};
use toolsmith::messages::{ModelMessage, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::model::{
    Model, ModelError, ModelRequestParameters, ModelSettings, ModelStream, ModelStreamEvent, StreamingModel,
};
use toolsmith::prelude::*;
use toolsmith::tool::{ToolDefinition, ToolOutput};
use toolsmith::toolset::BoxedToolset;

/// A capability that panics in one hook (`hook`), once: while `armed`. Everywhere else it
/// behaves as the defaults do, except that it recovers from a tool's failure (so that the
/// run goes on to its output hooks).
#[derive(Clone)]
struct Panicky {
    hook: &'static str,
    armed: Arc<AtomicBool>,
}

impl Panicky {
    fn new(hook: &'static str) -> Self {
        Panicky { hook, armed: Arc::new(AtomicBool::new(true)) }
    }

    fn check(&self, hook: &str) {
        if self.hook == hook && self.armed.swap(false, Ordering::SeqCst) {
            panic!("{hook} exploded");
        }
    }
}

impl Capability<()> for Panicky {
    fn for_run(&self, _ctx: &RunContext<()>) -> Option<toolsmith::capability::BoxedCapability<()>> {
        self.check("for_run");
        None
    }
    fn wrapper_toolset(&self, _toolset: BoxedToolset<()>) -> Option<BoxedToolset<()>> {
        self.check("wrapper_toolset");
        None
    }
    async fn instructions(&self, _ctx: &RunContext<()>) -> Option<String> {
        self.check("instructions");
        None
    }
    fn model_settings(&self, _ctx: &RunContext<()>) -> Option<ModelSettings> {
        self.check("model_settings");
        None
    }
    async fn handle_deferred_tool_calls(
        &self,
        _ctx: &RunContext<()>,
        _requests: &DeferredToolRequests,
    ) -> Option<DeferredToolResults> {
        self.check("handle_deferred_tool_calls");
        None
    }
    fn has_prepare_tools(&self) -> bool {
        self.check("has_prepare_tools");
        true
    }
    async fn prepare_tools(
        &self,
        _ctx: &RunContext<()>,
        tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        self.check("prepare_tools");
        Ok(tools)
    }
    async fn prepare_output_tools(
        &self,
        _ctx: &RunContext<()>,
        tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        self.check("prepare_output_tools");
        Ok(tools)
    }
    async fn before_run(&self, _ctx: &RunContext<()>) -> Result<(), AgentRunError> {
        self.check("before_run");
        Ok(())
    }
    async fn after_run(&self, _ctx: &RunContext<()>, output: RunOutput) -> Result<RunOutput, AgentRunError> {
        self.check("after_run");
        Ok(output)
    }
    async fn wrap_run<'a>(&'a self, _ctx: &'a RunContext<()>, next: RunNext<'a>) -> Result<RunOutput, AgentRunError> {
        self.check("wrap_run");
        next.run().await
    }
    async fn on_run_error(&self, _ctx: &RunContext<()>, error: AgentRunError) -> Result<RunOutput, AgentRunError> {
        self.check("on_run_error");
        Err(error)
    }
    async fn before_node_run(&self, _ctx: &RunContext<()>, node: AgentNode) -> Result<AgentNode, AgentRunError> {
        self.check("before_node_run");
        Ok(node)
    }
    async fn after_node_run(
        &self,
        _ctx: &RunContext<()>,
        _node: &AgentNode,
        result: NodeResult,
    ) -> Result<NodeResult, AgentRunError> {
        self.check("after_node_run");
        Ok(result)
    }
    async fn wrap_node_run<'a>(
        &'a self,
        _ctx: &'a RunContext<()>,
        node: AgentNode,
        next: NodeNext<'a>,
    ) -> Result<NodeResult, AgentRunError> {
        self.check("wrap_node_run");
        next.run(node).await
    }
    async fn on_node_run_error(
        &self,
        _ctx: &RunContext<()>,
        _node: &AgentNode,
        error: AgentRunError,
    ) -> Result<NodeResult, AgentRunError> {
        self.check("on_node_run_error");
        Err(error)
    }
    fn wraps_event_stream(&self) -> bool {
        self.check("wraps_event_stream");
        matches!(self.hook, "wrap_event_stream" | "event stream")
    }
    fn wrap_event_stream(&self, _ctx: &RunContext<()>, events: EventBoxStream) -> EventBoxStream {
        self.check("wrap_event_stream");
        let me = self.clone();
        events
            .map(move |e| {
                me.check("event stream");
                e
            })
            .boxed()
    }
    async fn before_model_request(
        &self,
        _ctx: &RunContext<()>,
        request: ModelRequestContext,
    ) -> Result<ModelRequestContext, AgentRunError> {
        self.check("before_model_request");
        Ok(request)
    }
    async fn after_model_request(
        &self,
        _ctx: &RunContext<()>,
        _request: &ModelRequestContext,
        response: ModelResponse,
    ) -> Result<ModelResponse, AgentRunError> {
        self.check("after_model_request");
        Ok(response)
    }
    async fn wrap_model_request<'a>(
        &'a self,
        _ctx: &'a RunContext<()>,
        request: ModelRequestContext,
        next: ModelRequestNext<'a>,
    ) -> Result<ModelResponse, AgentRunError> {
        self.check("wrap_model_request");
        next.run(request).await
    }
    async fn on_model_request_error(
        &self,
        _ctx: &RunContext<()>,
        _request: &ModelRequestContext,
        error: AgentRunError,
    ) -> Result<ModelResponse, AgentRunError> {
        self.check("on_model_request_error");
        Err(error)
    }
    async fn before_tool_validate(
        &self,
        _ctx: &RunContext<()>,
        _call: ToolCallInfo<'_>,
        args: Value,
    ) -> Result<Value, ToolError> {
        self.check("before_tool_validate");
        Ok(args)
    }
    async fn after_tool_validate(
        &self,
        _ctx: &RunContext<()>,
        _call: ToolCallInfo<'_>,
        args: Value,
    ) -> Result<Value, ToolError> {
        self.check("after_tool_validate");
        Ok(args)
    }
    async fn wrap_tool_validate<'a>(
        &'a self,
        _ctx: &'a RunContext<()>,
        _call: ToolCallInfo<'a>,
        args: Value,
        next: ToolValidateNext<'a>,
    ) -> Result<Value, ToolError> {
        self.check("wrap_tool_validate");
        next.run(args).await
    }
    async fn on_tool_validate_error(
        &self,
        _ctx: &RunContext<()>,
        _call: ToolCallInfo<'_>,
        error: ToolError,
    ) -> Result<Value, ToolError> {
        self.check("on_tool_validate_error");
        Err(error)
    }
    async fn before_tool_execute(
        &self,
        _ctx: &RunContext<()>,
        _call: ToolCallInfo<'_>,
        args: Value,
    ) -> Result<Value, ToolError> {
        self.check("before_tool_execute");
        Ok(args)
    }
    async fn after_tool_execute(
        &self,
        _ctx: &RunContext<()>,
        _call: ToolCallInfo<'_>,
        _args: &Value,
        result: ToolOutput,
    ) -> Result<ToolOutput, ToolError> {
        self.check("after_tool_execute");
        Ok(result)
    }
    async fn wrap_tool_execute<'a>(
        &'a self,
        _ctx: &'a RunContext<()>,
        _call: ToolCallInfo<'a>,
        args: Value,
        next: ToolExecuteNext<'a>,
    ) -> Result<ToolOutput, ToolError> {
        self.check("wrap_tool_execute");
        next.run(args).await
    }
    async fn on_tool_execute_error(
        &self,
        _ctx: &RunContext<()>,
        _call: ToolCallInfo<'_>,
        _args: &Value,
        _error: ToolError,
    ) -> Result<ToolOutput, ToolError> {
        self.check("on_tool_execute_error");
        Ok(ToolOutput::Value(json!("recovered")))
    }
    async fn before_output_validate(
        &self,
        _ctx: &RunContext<()>,
        _output: OutputInfo<'_>,
        raw: Value,
    ) -> Result<Value, ToolError> {
        self.check("before_output_validate");
        Ok(raw)
    }
    async fn after_output_validate(
        &self,
        _ctx: &RunContext<()>,
        _output: OutputInfo<'_>,
        value: Value,
    ) -> Result<Value, ToolError> {
        self.check("after_output_validate");
        Ok(value)
    }
    async fn wrap_output_validate<'a>(
        &'a self,
        _ctx: &'a RunContext<()>,
        _output: OutputInfo<'a>,
        raw: Value,
        next: OutputNext<'a>,
    ) -> Result<Value, ToolError> {
        self.check("wrap_output_validate");
        next.run(raw).await
    }
    async fn on_output_validate_error(
        &self,
        _ctx: &RunContext<()>,
        _output: OutputInfo<'_>,
        _raw: &Value,
        error: ToolError,
    ) -> Result<Value, ToolError> {
        self.check("on_output_validate_error");
        Err(error)
    }
    async fn before_output_process(
        &self,
        _ctx: &RunContext<()>,
        _output: OutputInfo<'_>,
        value: Value,
    ) -> Result<Value, ToolError> {
        self.check("before_output_process");
        Ok(value)
    }
    async fn after_output_process(
        &self,
        _ctx: &RunContext<()>,
        _output: OutputInfo<'_>,
        value: Value,
    ) -> Result<Value, ToolError> {
        self.check("after_output_process");
        Ok(value)
    }
    async fn wrap_output_process<'a>(
        &'a self,
        _ctx: &'a RunContext<()>,
        _output: OutputInfo<'a>,
        value: Value,
        next: OutputNext<'a>,
    ) -> Result<Value, ToolError> {
        self.check("wrap_output_process");
        next.run(value).await
    }
}

/// Add two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Always fails.
#[tool]
fn explode() -> Result<String, ToolError> {
    Err(ToolError::failed("kaboom"))
}

/// Delete a file.
#[tool(requires_approval)]
fn delete_file(path: String) -> String {
    format!("deleted {path}")
}

fn responses(messages: &[ModelMessage]) -> usize {
    messages.iter().filter(|m| matches!(m, ModelMessage::Response(_))).count()
}

fn calls(list: &[(&str, Value, &str)]) -> ModelResponse {
    ModelResponse::new(
        list.iter().map(|(n, a, id)| ModelResponsePart::ToolCall(ToolCallPart::new(*n, a.clone(), *id))).collect(),
    )
}

/// Tool calls (one valid, one invalid, one failing), then text that is not the output's JSON,
/// then the structured output: every tool, output, node, model-request and run hook is called.
fn full_agent(cap: Panicky) -> Agent<(), Value> {
    let model = FunctionModel::sync(|messages, _| match responses(messages) {
        0 => calls(&[
            ("add", json!({"a": 1, "b": 2}), "c1"),
            ("add", json!({"a": "x", "b": 1}), "c2"),
            ("explode", json!({}), "c3"),
        ]),
        1 => ModelResponse::text("not json"),
        _ => calls(&[("final_result", json!({"n": 3}), "c4")]),
    });
    Agent::builder(model)
        .tools([add, explode])
        .output_schema(json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}))
        .capability(cap)
        .build()
        .unwrap()
}

/// A model that fails: the error hooks of the model request, the node and the run are called.
fn failing_agent(cap: Panicky) -> Agent<(), String> {
    let model = FunctionModel::new(|_, _| async { Err(ModelError::new("ModelHttpError", "503 upstream")) });
    Agent::builder(model).capability(cap).build().unwrap()
}

/// A call that needs approval: `handle_deferred_tool_calls` is called.
fn deferring_agent(cap: Panicky) -> Agent<(), Deferrable<String>> {
    let model = FunctionModel::sync(|_, _| calls(&[("delete_file", json!({"path": "a.txt"}), "d1")]));
    Agent::builder(model).tool(delete_file).capability(cap).allow_deferred().build().unwrap()
}

fn assert_capability_panic(err: &AgentRunError, hook: &str) {
    match err {
        AgentRunError::CapabilityPanicked { capability, hook: h, message } => {
            assert_eq!(capability, "Panicky", "{err}");
            assert_eq!(h, hook, "{err}");
            assert_eq!(message, &format!("{hook} exploded"));
            assert!(err.is_panic());
            assert_eq!(err.kind(), "CapabilityPanicked");
            assert!(err.to_string().contains(&format!("capability 'Panicky' panicked in `{hook}`")), "{err}");
        }
        other => panic!("hook {hook}: expected CapabilityPanicked, got {other:?}"),
    }
}

#[tokio::test]
async fn a_panic_in_any_hook_ends_the_run_with_an_error_naming_the_capability_and_the_hook() {
    // Sanity: without a panic, the full run reaches its structured output.
    let quiet = full_agent(Panicky::new("none"));
    assert_eq!(quiet.run("go").await.unwrap().output(), &json!({"n": 3}));

    let full = [
        "for_run",
        "wrapper_toolset",
        "instructions",
        "model_settings",
        "has_prepare_tools",
        "prepare_tools",
        "prepare_output_tools",
        "before_run",
        "after_run",
        "wrap_run",
        "before_node_run",
        "after_node_run",
        "wrap_node_run",
        "wraps_event_stream",
        "before_model_request",
        "after_model_request",
        "wrap_model_request",
        "before_tool_validate",
        "after_tool_validate",
        "wrap_tool_validate",
        "on_tool_validate_error",
        "before_tool_execute",
        "after_tool_execute",
        "wrap_tool_execute",
        "on_tool_execute_error",
        "before_output_validate",
        "after_output_validate",
        "wrap_output_validate",
        "on_output_validate_error",
        "before_output_process",
        "after_output_process",
        "wrap_output_process",
    ];
    for hook in full {
        let agent = full_agent(Panicky::new(hook));
        let err = agent.run("go").await.expect_err(hook);
        assert_capability_panic(&err, hook);
        // The same agent runs again (the capability no longer panics).
        assert_eq!(agent.run("go").await.unwrap().output(), &json!({"n": 3}), "after {hook}");
    }

    for hook in ["on_model_request_error", "on_node_run_error", "on_run_error"] {
        let agent = failing_agent(Panicky::new(hook));
        assert_capability_panic(&agent.run("go").await.unwrap_err(), hook);
        let again = agent.run("go").await.unwrap_err();
        assert!(matches!(again, AgentRunError::Model { .. }), "after {hook}: {again:?}");
    }

    let agent = deferring_agent(Panicky::new("handle_deferred_tool_calls"));
    assert_capability_panic(&agent.run("go").await.unwrap_err(), "handle_deferred_tool_calls");
    assert!(agent.run("go").await.unwrap().output().deferred().is_some());
}

#[tokio::test]
async fn a_panic_in_the_event_stream_of_a_capability_is_reported_not_lost() {
    for (armed, reported) in [("wrap_event_stream", "wrap_event_stream"), ("event stream", "wrap_event_stream")] {
        let agent = full_agent(Panicky::new(armed));
        let err = agent.run("go").event_handler(|_| {}).await.unwrap_err();
        match &err {
            AgentRunError::CapabilityPanicked { capability, hook, message } => {
                assert_eq!((capability.as_str(), hook.as_str()), ("Panicky", reported), "{err}");
                assert_eq!(message, &format!("{armed} exploded"));
            }
            other => panic!("{armed}: expected CapabilityPanicked, got {other:?}"),
        }
        let events = Arc::new(std::sync::Mutex::new(0));
        let seen = events.clone();
        let again = agent.run("go").event_handler(move |_| *seen.lock().unwrap() += 1).await.unwrap();
        assert_eq!(again.output(), &json!({"n": 3}));
        assert!(*events.lock().unwrap() > 0);
    }
}

/// Panics in `ordering`, `name`, `toolset` and `apply`: `build()` is an error, not a panic.
struct BadAtBuild(&'static str);

impl Capability<()> for BadAtBuild {
    fn name(&self) -> String {
        if self.0 == "name" {
            panic!("name exploded");
        }
        "BadAtBuild".into()
    }
    fn ordering(&self) -> Option<CapabilityOrdering> {
        if self.0 == "ordering" {
            panic!("ordering exploded");
        }
        None
    }
    fn toolset(&self) -> Option<BoxedToolset<()>> {
        if self.0 == "toolset" {
            panic!("toolset exploded");
        }
        None
    }
    fn apply(&self, visitor: &mut dyn FnMut(&dyn std::any::Any)) {
        if self.0 == "apply" {
            panic!("apply exploded");
        }
        visitor(self)
    }
}

#[test]
fn a_capability_that_panics_while_the_agent_is_built_is_a_build_error() {
    for method in ["name", "ordering", "toolset", "apply"] {
        let err = Agent::builder(TestModel::default()).capability(BadAtBuild(method)).build().unwrap_err();
        assert!(err.message.contains(&format!("panicked in `{method}`")), "{method}: {err}");
        assert!(err.message.contains(&format!("{method} exploded")), "{method}: {err}");
        assert!(err.message.contains("capability 1"), "{method}: {err}");
    }
}

#[tokio::test]
async fn a_panicking_model_ends_the_run_with_an_error_naming_it() {
    let armed = Arc::new(AtomicBool::new(true));
    let once = armed.clone();
    let model = FunctionModel::new(move |_, _| {
        if once.swap(false, Ordering::SeqCst) {
            panic!("the model exploded");
        }
        async { Ok(ModelResponse::text("fine")) }
    })
    .with_name("flaky-model");
    let agent = Agent::builder(model).build().unwrap();
    match agent.run("go").await.unwrap_err() {
        AgentRunError::ModelPanicked { model, message } => {
            assert_eq!((model.as_str(), message.as_str()), ("flaky-model", "the model exploded"))
        }
        other => panic!("expected ModelPanicked, got {other:?}"),
    }
    assert_eq!(agent.run("go").await.unwrap().output(), "fine");

    // A panic inside the model's future (after its first poll) too.
    let armed = Arc::new(AtomicBool::new(true));
    let model = FunctionModel::new(move |_, _| {
        let armed = armed.clone();
        async move {
            tokio::task::yield_now().await;
            if armed.swap(false, Ordering::SeqCst) {
                panic!("the model's future exploded");
            }
            Ok(ModelResponse::text("fine"))
        }
    });
    let agent = Agent::builder(model).capability(Panicky::new("none")).build().unwrap();
    let err = agent.run("go").await.unwrap_err();
    assert!(matches!(&err, AgentRunError::ModelPanicked { message, .. } if message == "the model's future exploded"));
    assert_eq!(agent.run("go").await.unwrap().output(), "fine");
}

/// A streaming model that panics where `mode` says: in `request_stream`, or while its stream is
/// read (after a first delta).
struct PanickyStream {
    mode: &'static str,
    armed: Arc<AtomicBool>,
}

impl Model for PanickyStream {
    fn name(&self) -> &str {
        "panicky-stream"
    }
    async fn request(
        &self,
        _messages: &[ModelMessage],
        _settings: Option<&ModelSettings>,
        _params: &ModelRequestParameters,
    ) -> Result<ModelResponse, ModelError> {
        Ok(ModelResponse::text("fine"))
    }
}

impl StreamingModel for PanickyStream {
    async fn request_stream(
        &self,
        _messages: &[ModelMessage],
        _settings: Option<&ModelSettings>,
        _params: &ModelRequestParameters,
    ) -> Result<ModelStream, ModelError> {
        let fire = self.armed.swap(false, Ordering::SeqCst);
        if fire && self.mode == "request_stream" {
            panic!("request_stream exploded");
        }
        let poll_panics = fire && self.mode == "poll";
        let events = vec![
            Ok(ModelStreamEvent::TextDelta { index: 0, delta: "fi".into() }),
            Ok(ModelStreamEvent::TextDelta { index: 0, delta: "ne".into() }),
            Ok(ModelStreamEvent::Final(ModelResponse::text("fine"))),
        ];
        Ok(futures::stream::iter(events)
            .enumerate()
            .map(move |(i, e)| {
                if poll_panics && i == 1 {
                    panic!("the stream exploded");
                }
                e
            })
            .boxed())
    }
}

#[tokio::test]
async fn a_panicking_streaming_model_ends_the_run_with_an_error_naming_it() {
    for (mode, expected) in [("request_stream", "request_stream exploded"), ("poll", "the stream exploded")] {
        let model = PanickyStream { mode, armed: Arc::new(AtomicBool::new(true)) };
        let agent = Agent::builder_streaming(model).build().unwrap();
        let err = agent.run("go").event_handler(|_| {}).await.unwrap_err();
        match &err {
            AgentRunError::ModelPanicked { model, message } => {
                assert_eq!((model.as_str(), message.as_str()), ("panicky-stream", expected))
            }
            other => panic!("{mode}: expected ModelPanicked, got {other:?}"),
        }
        let again = agent.run("go").event_handler(|_| {}).await.unwrap();
        assert_eq!(again.output(), "fine");
    }
}

#[tokio::test]
async fn a_panicking_event_handler_ends_the_run_with_an_error() {
    let agent = Agent::builder(TestModel::default()).build().unwrap();
    let err = agent.run("go").event_handler(|_| panic!("the handler exploded")).await.unwrap_err();
    match &err {
        AgentRunError::Panicked { during, message } => {
            assert_eq!(message, "the handler exploded");
            assert!(during.contains("event handler"), "{err}");
        }
        other => panic!("expected Panicked, got {other:?}"),
    }
    // Through a capability that wraps the event stream, the same.
    let agent = Agent::builder(TestModel::default()).capability(Panicky::new("none")).build().unwrap();
    let err = agent
        .run("go")
        .event_handler(|_| panic!("the handler exploded"))
        .await
        .expect_err("the handler's panic is an error");
    assert!(matches!(&err, AgentRunError::Panicked { message, .. } if message == "the handler exploded"), "{err:?}");
    assert_eq!(agent.run("go").await.unwrap().output(), "success (no tool calls)");
}

#[tokio::test]
async fn a_panicking_prepare_or_arguments_validator_ends_the_run_with_an_error() {
    let armed = Arc::new(AtomicBool::new(true));
    let fire = armed.clone();
    let prepared = Tool::<()>::from(add).prepare(move |_ctx, def| {
        if fire.swap(false, Ordering::SeqCst) {
            panic!("prepare exploded");
        }
        Some(def)
    });
    let agent = Agent::builder(TestModel::default()).tool(prepared).build().unwrap();
    let err = agent.run("go").await.unwrap_err();
    assert!(matches!(&err, AgentRunError::Panicked { message, .. } if message == "prepare exploded"), "{err:?}");
    assert!(agent.run("go").await.is_ok());

    let armed = Arc::new(AtomicBool::new(true));
    let validated = Tool::<()>::from(add).args_validator(move |_ctx, _args| {
        if armed.swap(false, Ordering::SeqCst) {
            panic!("validator exploded");
        }
        Ok(())
    });
    let agent = Agent::builder(TestModel::default()).tool(validated).build().unwrap();
    let err = agent.run("go").await.unwrap_err();
    assert!(
        matches!(&err, AgentRunError::ToolPanicked { tool, message } if tool == "add" && message == "validator exploded"),
        "{err:?}"
    );
    assert!(agent.run("go").await.is_ok());
}

/// A toolset that panics in one of its methods.
struct PanickyToolset {
    method: &'static str,
    armed: Arc<AtomicBool>,
}

impl PanickyToolset {
    fn check_method(&self, method: &str) {
        if self.method == method && self.armed.swap(false, Ordering::SeqCst) {
            panic!("{method} exploded");
        }
    }
}

impl Toolset<()> for PanickyToolset {
    fn label(&self) -> String {
        "PanickyToolset".into()
    }
    async fn get_tools(&self, _ctx: &RunContext<()>) -> Result<Vec<toolsmith::toolset::ToolsetTool<()>>, UserError> {
        self.check_method("get_tools");
        Ok(Vec::new())
    }
    fn check(&self) -> Result<(), UserError> {
        self.check_method("check");
        Ok(())
    }
    async fn enter(&self) -> Result<(), UserError> {
        self.check_method("enter");
        Ok(())
    }
    async fn exit(&self) {
        self.check_method("exit");
    }
}

#[tokio::test]
async fn a_panicking_toolset_is_an_error_at_build_or_in_the_run() {
    let toolset = PanickyToolset { method: "check", armed: Arc::new(AtomicBool::new(true)) };
    let err = Agent::builder(TestModel::default()).toolset(toolset).build().unwrap_err();
    assert!(err.message.contains("check exploded"), "{err}");

    for method in ["get_tools", "enter", "exit"] {
        let toolset = PanickyToolset { method, armed: Arc::new(AtomicBool::new(true)) };
        let agent = Agent::builder(TestModel::default()).toolset(toolset).build().unwrap();
        let err = agent.run("go").await.unwrap_err();
        assert!(
            matches!(&err, AgentRunError::Panicked { message, .. } if message == &format!("{method} exploded")),
            "{method}: {err:?}"
        );
        assert_eq!(agent.run("go").await.unwrap().output(), "success (no tool calls)", "after {method}");
    }
}
