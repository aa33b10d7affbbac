//! The process-wide blocking pool (`ThreadExecutor::install_default`): agents that set no bound
//! of their own share it. Its own test binary: the default is process-wide.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use toolsmith::capability::ThreadExecutor;
use toolsmith::prelude::*;

static RUNNING: AtomicUsize = AtomicUsize::new(0);
static MOST: AtomicUsize = AtomicUsize::new(0);

/// Hold a blocking slot for a while.
#[tool]
fn hold() -> String {
    let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
    MOST.fetch_max(now, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(30));
    RUNNING.fetch_sub(1, Ordering::SeqCst);
    "held".into()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn agents_without_a_bound_share_the_installed_executor() {
    ThreadExecutor::new(1).install_default().unwrap();
    assert!(ThreadExecutor::new(3).install_default().is_err(), "installed once");
    let agents: Vec<Arc<Agent>> =
        (0..4).map(|_| Arc::new(Agent::builder(TestModel::default()).tool(hold).build().unwrap())).collect();
    let runs =
        agents.iter().cloned().map(|a| tokio::spawn(async move { a.run("hold").await.map(|r| r.usage().tool_calls) }));
    for run in futures::future::join_all(runs).await {
        assert_eq!(run.unwrap().unwrap(), 1);
    }
    assert_eq!(MOST.load(Ordering::SeqCst), 1, "four agents, one shared slot");
}
