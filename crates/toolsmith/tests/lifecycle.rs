//! Toolset lifecycle (enter / exit once per run, also when the run fails) and agent-wide
//! `prepare_tools`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::json;
use toolsmith::messages::{ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::prelude::*;
use toolsmith::toolset::ToolsetTool;

/// Echo the message back.
#[tool]
fn echo(message: String) -> String {
    message
}

/// Counts how often runs open and close it.
struct Counting {
    inner: FunctionToolset<()>,
    entered: Arc<AtomicU32>,
    exited: Arc<AtomicU32>,
}

impl Toolset<()> for Counting {
    fn label(&self) -> String {
        "Counting".into()
    }

    async fn get_tools(&self, ctx: &RunContext<()>) -> Result<Vec<ToolsetTool<()>>, UserError> {
        assert_eq!(
            self.entered.load(Ordering::SeqCst),
            self.exited.load(Ordering::SeqCst) + 1,
            "tools listed outside a run"
        );
        self.inner.get_tools(ctx).await
    }

    async fn enter(&self) -> Result<(), UserError> {
        self.entered.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    async fn exit(&self) {
        self.exited.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn toolsets_are_entered_and_exited_once_per_run_even_when_it_fails() {
    let entered = Arc::new(AtomicU32::new(0));
    let exited = Arc::new(AtomicU32::new(0));
    let toolset =
        Counting { inner: FunctionToolset::new().with_tool(echo), entered: entered.clone(), exited: exited.clone() };
    let model = FunctionModel::sync(|messages, _| match messages.len() {
        1 => ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
            "echo",
            json!({"message": "hi"}),
            "c1",
        ))]),
        _ => ModelResponse::text("done"),
    });
    let agent = Agent::builder(model).toolset(toolset.prefixed("x")).build().unwrap();
    let ok = agent.run("go").await;
    // The model calls `echo`, which is `x_echo` here: an unknown tool, retried, then "done".
    assert_eq!(ok.unwrap().output(), "done");
    assert_eq!((entered.load(Ordering::SeqCst), exited.load(Ordering::SeqCst)), (1, 1));

    let failing = Agent::builder(FunctionModel::sync(|_, _| ModelResponse::new(vec![])))
        .toolset(Counting { inner: FunctionToolset::new(), entered: entered.clone(), exited: exited.clone() })
        .output_retries(0)
        .build()
        .unwrap();
    assert!(failing.run("go").await.is_err());
    assert_eq!((entered.load(Ordering::SeqCst), exited.load(Ordering::SeqCst)), (2, 2));
}

#[tokio::test]
async fn agent_wide_prepare_tools_runs_after_each_tools_prepare() {
    /// Add two integers.
    #[tool]
    fn add(x: i64, y: i64) -> i64 {
        x + y
    }
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen_in_model = seen.clone();
    let model = FunctionModel::sync(move |_, info| {
        seen_in_model.lock().unwrap().push(
            info.function_tools.iter().map(|t| (t.name.clone(), t.strict, t.description.clone())).collect::<Vec<_>>(),
        );
        ModelResponse::text("ok")
    });
    let agent = Agent::builder(model)
        .tool(Tool::from(echo).prepare(|_, d| Some(d.with_description("prepared"))))
        .tool(add)
        .prepare_tools(|_, defs| defs.into_iter().filter(|d| d.name != "add").map(|d| d.strict(true)).collect())
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![vec![("echo".to_string(), Some(true), Some("prepared".to_string()))]]);
}
