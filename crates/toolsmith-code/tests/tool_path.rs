//! The snippet's calls go through the run's path for a tool call: the capabilities' hooks see
//! them (and may change their arguments), the tool's timeout applies, a tool that needs approval
//! is refused inside the snippet.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use support::{returns, scripted, text};
use toolsmith::capability::{Capability, ToolCallInfo};
use toolsmith::prelude::*;
use toolsmith_code::CodeMode;

/// Records the calls whose execution it sees, and doubles `n`.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<String>>>);

impl Capability<()> for Recorder {
    async fn before_tool_execute(
        &self,
        _: &RunContext<()>,
        call: ToolCallInfo<'_>,
        mut args: Value,
    ) -> Result<Value, ToolError> {
        self.0.lock().unwrap().push(format!("{} {}", call.call.tool_name, call.call.tool_call_id));
        if let Some(n) = args.get("n").and_then(Value::as_i64) {
            args["n"] = json!(n * 2);
        }
        Ok(args)
    }
}

/// Echo a number.
#[tool]
async fn echo(n: i64) -> i64 {
    n
}

/// Never answers in time.
#[tool(timeout = "50ms")]
async fn slow() -> String {
    tokio::time::sleep(Duration::from_secs(5)).await;
    "late".into()
}

/// Delete a file.
#[tool(requires_approval)]
async fn delete(path: String) -> String {
    format!("deleted {path}")
}

#[tokio::test]
async fn hooks_see_the_nested_calls_and_their_changes_apply() {
    let recorder = Recorder::default();
    let agent = Agent::builder(scripted(vec!["a = await echo(n=1)\nb = await echo(n=2)\n[a, b]"]))
        .tool(echo)
        .capability(CodeMode::new())
        .capability(recorder.clone())
        .build()
        .unwrap();
    let result = agent.run("go").await.unwrap();
    assert_eq!(returns(result.all_messages())[0].content, json!([2, 4]));
    assert_eq!(*recorder.0.lock().unwrap(), ["run_code c1", "echo c1__1", "echo c1__2"]);
    assert_eq!(result.usage().tool_calls, 3);
}

#[tokio::test]
async fn a_nested_call_times_out_and_needs_approval_as_a_python_exception() {
    let agent = Agent::builder(scripted(vec![
        "try:\n    await slow()\nexcept Exception as e:\n    r = str(e)\nr",
        "await delete(path='a')",
    ]))
    .tools([slow, delete])
    .capability(CodeMode::new())
    .retries(3)
    .build()
    .unwrap();
    let result = agent.run("go").await.unwrap();
    let r = returns(result.all_messages());
    assert_eq!(r[0].content, json!("Timed out after 0.05 seconds."));
    assert!(
        text(&r[1]).contains("RuntimeError: Tool 'delete' raised ApprovalRequired inside code mode"),
        "{}",
        text(&r[1])
    );
}
