//! `Capability::hooks_stage`: a capability is skipped in the stages it says it leaves alone, and
//! only there.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use toolsmith::capability::{BoxedCapability, Capability, HookStage, Hooks, ToolCallInfo, WrapperCapability};
use toolsmith::prelude::*;

type Log = Arc<Mutex<Vec<String>>>;

/// Add two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Logs `before_run`, `before_model_request` and `before_tool_execute`; says it hooks only
/// the stages in `stages`.
struct Partial {
    stages: Vec<HookStage>,
    log: Log,
}

impl Capability<()> for Partial {
    fn hooks_stage(&self, stage: HookStage) -> bool {
        self.stages.contains(&stage)
    }
    async fn before_run(&self, _: &RunContext<()>) -> Result<(), AgentRunError> {
        self.log.lock().unwrap().push("run".into());
        Ok(())
    }
    async fn before_model_request(
        &self,
        _: &RunContext<()>,
        request: toolsmith::capability::ModelRequestContext,
    ) -> Result<toolsmith::capability::ModelRequestContext, AgentRunError> {
        self.log.lock().unwrap().push("request".into());
        Ok(request)
    }
    async fn before_tool_execute(
        &self,
        _: &RunContext<()>,
        _: ToolCallInfo<'_>,
        args: Value,
    ) -> Result<Value, ToolError> {
        self.log.lock().unwrap().push("tool".into());
        Ok(args)
    }
}

async fn run_with(cap: impl Capability<()>) {
    let agent = Agent::builder(TestModel::default()).tool(add).capability(cap).build().unwrap();
    agent.run("go").await.unwrap();
}

#[tokio::test]
async fn a_capability_is_skipped_exactly_in_the_stages_it_leaves_alone() {
    let log: Log = Arc::default();
    run_with(Partial { stages: vec![HookStage::Run, HookStage::ToolExecute], log: log.clone() }).await;
    assert_eq!(*log.lock().unwrap(), ["run", "tool"]);

    let log: Log = Arc::default();
    run_with(Partial { stages: vec![HookStage::ModelRequest], log: log.clone() }).await;
    assert_eq!(*log.lock().unwrap(), ["request", "request"]);

    let log: Log = Arc::default();
    run_with(Partial { stages: HookStage::ALL.to_vec(), log: log.clone() }).await;
    assert_eq!(*log.lock().unwrap(), ["run", "request", "tool", "request"]);
}

/// Overrides `before_tool_execute` of a capability that says it hooks no stage.
#[derive(Clone)]
struct CountTools(BoxedCapability<()>, Log);

impl WrapperCapability<()> for CountTools {
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
        self.1.lock().unwrap().push(format!("wrapper saw {}", call.def.name));
        self.wrapped().before_tool_execute(ctx, call, args).await
    }
}

#[tokio::test]
async fn a_wrapper_is_not_skipped_because_what_it_wraps_hooks_nothing() {
    let log: Log = Arc::default();
    let inner = Partial { stages: vec![], log: log.clone() };
    run_with(CountTools(BoxedCapability::new(inner), log.clone()).into_capability()).await;
    // The wrapper hooks every stage by default, so its override runs; the wrapped capability's
    // hooks are reached through the wrapper's (whatever it says it hooks: a hook it leaves
    // alone does nothing, so calling it changes nothing).
    assert_eq!(*log.lock().unwrap(), ["run", "request", "wrapper saw add", "tool", "request"]);
}

#[test]
fn hooks_hook_the_stages_they_have_closures_for() {
    let hooks: Hooks<()> = Hooks::new().before_tool_execute(|_, _, args| async move { Ok(args) });
    let stages: Vec<HookStage> = HookStage::ALL.into_iter().filter(|s| hooks.hooks_stage(*s)).collect();
    assert_eq!(stages, [HookStage::ToolExecute]);
    assert!(HookStage::ALL.iter().all(|s| !Capability::<()>::hooks_stage(&Hooks::<()>::new(), *s)));
}

/// Answers every call of `add` from a record instead of running it, counting it as run when
/// `count` says so; records what `tool_ran` said after running the rest of the chain for the
/// others.
struct Recorded {
    count: bool,
    ran_after_next: Arc<Mutex<Vec<bool>>>,
}

impl Capability<()> for Recorded {
    fn hooks_stage(&self, stage: HookStage) -> bool {
        stage == HookStage::ToolExecute
    }
    async fn wrap_tool_execute(
        &self,
        _: &RunContext<()>,
        call: ToolCallInfo<'_>,
        args: Value,
        next: toolsmith::capability::ToolExecuteNext<'_>,
    ) -> Result<toolsmith::tool::ToolOutput, toolsmith::tool::ToolError> {
        if call.call.tool_name == "add" {
            assert!(!next.tool_ran());
            if self.count {
                next.count_as_ran();
            }
            return Ok(toolsmith::tool::ToolOutput::Value(serde_json::json!(42)));
        }
        let output = next.run(args).await;
        self.ran_after_next.lock().unwrap().push(next.tool_ran());
        output
    }
}

/// Fails.
#[tool]
fn broken() -> Result<i64, ToolError> {
    Err(ToolError::failed("no"))
}

#[tokio::test]
async fn a_call_answered_from_a_record_counts_as_run_only_when_the_wrapper_says_so() {
    for count in [false, true] {
        let ran = Arc::new(Mutex::new(Vec::new()));
        let model = TestModel::default().call_tools(["add", "double"]);
        let agent = Agent::builder(model)
            .tool(add)
            .tool(double)
            .capability(Recorded { count, ran_after_next: ran.clone() })
            .build()
            .unwrap();
        let result = agent.run("go").await.unwrap();
        // `double` ran for real (counted by the run itself); `add` was answered from the record.
        assert_eq!(result.usage().tool_calls, if count { 2 } else { 1 }, "count_as_ran: {count}");
        assert_eq!(*ran.lock().unwrap(), [true], "tool_ran after a successful tool");
    }
    // A tool that fails did not run successfully: `tool_ran` says so.
    let ran = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder(TestModel::default().call_tools(["broken"]))
        .tool(broken)
        .capability(Recorded { count: false, ran_after_next: ran.clone() })
        .build()
        .unwrap();
    let _ = agent.run("go").await;
    assert_eq!(ran.lock().unwrap().first(), Some(&false));
}

/// Double a number.
#[tool]
fn double(x: i64) -> i64 {
    x * 2
}
