//! The memory limit, with Monty's counting allocator as this test binary's global allocator (one
//! test: the allocator's limit is the process's).

mod support;

use serde_json::json;
use support::{returns, scripted, text};
use toolsmith::prelude::*;
use toolsmith_code::{CodeMode, CodeModeLimits, SandboxAllocator};

#[global_allocator]
static ALLOC: SandboxAllocator = SandboxAllocator;

#[tokio::test]
async fn a_snippet_that_allocates_without_bound_is_stopped_and_the_host_goes_on() {
    let mode = CodeMode::new().limits(CodeModeLimits::default().max_memory(64 * 1024 * 1024));
    let agent = Agent::builder(scripted(vec![
        "x = []\nwhile True:\n    x.append('a' * 100000)",
        "big = 'a' * (10 ** 10)",
        "x = None\n1 + 1",
    ]))
    .capability(mode)
    .retries(5)
    .build()
    .unwrap();
    let result = agent.run("go").await.unwrap();
    let r = returns(result.all_messages());
    assert!(text(&r[0]).contains("MemoryError: memory limit exceeded"), "{}", text(&r[0]));
    assert!(text(&r[1]).contains("MemoryError"), "{}", text(&r[1]));
    assert_eq!(r[2].content, json!(2));
    assert_eq!(result.output(), "done");
}
