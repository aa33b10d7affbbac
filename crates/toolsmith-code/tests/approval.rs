//! `pause_for_approval`: a snippet's call to a tool that needs approval ends the run with
//! `run_code` waiting for approval; approved, the run resumes the snippet where it stopped.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use support::{returns, scripted};
use toolsmith::prelude::*;
use toolsmith_code::CodeMode;

static DELETED: AtomicUsize = AtomicUsize::new(0);

/// Delete a file.
#[tool(requires_approval)]
async fn delete(path: String) -> String {
    DELETED.fetch_add(1, Ordering::SeqCst);
    format!("deleted {path}")
}

/// Look a file up.
#[tool]
async fn stat(path: String) -> usize {
    path.len()
}

#[tokio::test]
async fn a_call_that_needs_approval_pauses_the_snippet_and_approval_resumes_it() {
    let code = "import asyncio\nsizes = await asyncio.gather(stat(path='a.txt'), stat(path='bb.txt'))\nprint('sizes', sizes)\nr = await delete(path='a.txt')\n[sizes, r]";
    let agent = Agent::builder(scripted(vec![code]))
        .tools([delete, stat])
        .capability(CodeMode::new().pause_for_approval(true))
        .allow_deferred()
        .build()
        .unwrap();
    let first = agent.run("clean up").await.unwrap();
    let requests = first.output().deferred().expect("run_code waits for approval").clone();
    assert_eq!(requests.approvals.len(), 1);
    assert_eq!(requests.approvals[0].tool_name, "run_code");
    assert_eq!(
        requests.metadata["c1"],
        json!({"code_mode": {"tool_name": "delete", "args": {"path": "a.txt"}, "tool_call_id": "c1__3"}})
    );
    assert_eq!(DELETED.load(Ordering::SeqCst), 0);

    let results = requests.results().approve("c1", ToolApproval::approved());
    let second =
        agent.resume().message_history(first.all_messages().to_vec()).deferred_tool_results(results).await.unwrap();
    assert_eq!(DELETED.load(Ordering::SeqCst), 1);
    let r = returns(second.all_messages());
    let last = r.last().unwrap();
    assert_eq!(last.content, json!({"output": "sizes [5, 6]\n", "result": [[5, 6], "deleted a.txt"]}));
    let meta = last.metadata.as_deref().unwrap();
    assert_eq!(meta["tool_returns"]["c1__3"]["content"], json!("deleted a.txt"));
    assert_eq!(second.output().output().map(String::as_str), Some("done"));
}
