//! `concurrent_10k`: 10,000 agent runs started at once on the one `current_thread` runtime
//! (Python: `asyncio.gather` on the one loop). The scripted model sleeps 10 ms before each
//! answer; on the first request it calls `add` with `{"x": 1, "y": 2}`, on the second it
//! answers `"done"`. So the runs spend their time waiting, all of them in flight together.
//!
//! Besides the batch's wall and CPU time, this measures what a run in flight costs:
//! - CPU per run under concurrency (the batch's CPU time / runs) against one run done alone,
//!   with the same sleeps (`concurrent_10k_single_run`), and what the two sleeps cost alone,
//!   without the agent (`concurrent_10k_sleeps_only`: waking up from a sleep costs CPU time
//!   too, which a batch shares among its runs);
//! - memory, in a fresh child process (`--concurrent-child RUNS`) that does one batch: its peak
//!   RSS above the RSS before the batch, and the peak of the heap bytes allocated during the
//!   batch and not yet freed (the counting allocator of `crate::alloc`), each divided by the runs.
//!
//! tokio's timer counts whole milliseconds and rounds a sleep up, so the two sleeps of a run
//! take about 22 ms of wall time (about 20.5 ms with asyncio).

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::task::JoinSet;
use toolsmith::messages::{ModelMessage, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::model::{AgentInfo, FunctionModel};
use toolsmith::{Agent, AgentRunError, RunResult};

use super::{Measured, Plan, add, ensure, log, measure, median, request_parts, returns};

/// How long the scripted model waits before each answer.
const MODEL_DELAY: Duration = Duration::from_millis(10);

/// The agent of every run: `add`, and a model that waits 10 ms, then calls `add(1, 2)` on the
/// first request and answers `"done"` on the second.
fn agent() -> Result<Arc<Agent>, String> {
    let model = FunctionModel::new(|messages: &[ModelMessage], _info: &AgentInfo| {
        let first = messages.len() == 1;
        async move {
            tokio::time::sleep(MODEL_DELAY).await;
            Ok(if first {
                let call = ToolCallPart::new("add", json!({"x": 1, "y": 2}), "c0");
                ModelResponse::new(vec![ModelResponsePart::ToolCall(call)])
            } else {
                ModelResponse::text("done")
            })
        }
    });
    Agent::builder(model).tool(add).build().map(Arc::new).map_err(|e| e.to_string())
}

/// Starts `runs` runs at once, each a task on the current runtime, and waits for all of them.
async fn batch(agent: &Arc<Agent>, runs: usize) -> Vec<Result<RunResult<String>, AgentRunError>> {
    let mut tasks = JoinSet::new();
    for _ in 0..runs {
        let agent = agent.clone();
        tasks.spawn(async move { agent.run("go").await });
    }
    tasks.join_all().await
}

/// The checks of one run: output `"done"`, 4 messages, and the tool returned 3.
fn check(result: &Result<RunResult<String>, AgentRunError>) -> Result<(), String> {
    let r = result.as_ref().map_err(|e| e.to_string())?;
    let msgs = r.all_messages();
    ensure(r.output() == "done" && msgs.len() == 4, || format!("output {:?}, {} messages", r.output(), msgs.len()))?;
    let got = returns(request_parts(msgs, 2)?);
    ensure(got.len() == 1 && got[0].0 == "c0" && *got[0].1 == json!(3), || format!("tool returns {got:?}"))
}

fn check_all(results: &[Result<RunResult<String>, AgentRunError>], runs: usize) -> Result<(), String> {
    ensure(results.len() == runs, || format!("{} of {runs} runs finished", results.len()))?;
    results.iter().try_for_each(check)
}

/// What `concurrent_10k` measured in the benchmark process.
#[derive(Debug, Clone, Copy)]
pub struct Concurrent {
    /// The whole batch.
    pub batch: Measured,
    /// One run alone.
    pub single: Measured,
    /// The two 10 ms sleeps of a run alone, without the agent: what waiting costs by itself.
    pub sleeps: Measured,
}

/// `concurrent_10k`: the validation batch (every run checked), then the timed batches, then
/// one run alone and its two sleeps alone (timed with plan `alone`, for the CPU per run
/// without concurrency).
pub async fn concurrent_10k(runs: usize, p: Plan, alone: Plan) -> Result<Concurrent, String> {
    let agent = agent()?;
    check_all(&batch(&agent, runs).await, runs)?;
    log(format!("  ({runs} runs at once, each two 10 ms model waits and one call of `add`)"));
    let batch = measure(
        "concurrent_10k",
        async || {
            let results = batch(&agent, runs).await;
            // Inside the timing, as on the Python side (string comparisons: microseconds); the
            // results are dropped after it.
            assert!(results.iter().all(|r| r.as_ref().is_ok_and(|r| r.output() == "done")), "a run failed");
            results
        },
        p,
    )
    .await;
    check(&agent.run("go").await)?;
    let single = measure(
        "concurrent_10k_single_run",
        async || {
            agent.run("go").await.expect("concurrent_10k single run");
        },
        alone,
    )
    .await;
    let sleeps = measure(
        "concurrent_10k_sleeps_only",
        async || {
            tokio::time::sleep(MODEL_DELAY).await;
            tokio::time::sleep(MODEL_DELAY).await;
        },
        alone,
    )
    .await;
    let per_run = batch.cpu_us / runs as f64;
    log(format!(
        "  {:22} cpu per run {per_run:9.2} us under concurrency, {:9.2} us alone: ratio {:.2}",
        "concurrent_10k",
        single.cpu_us,
        per_run / single.cpu_us
    ));
    Ok(Concurrent { batch, single, sleeps })
}

/// `/proc/self/status` field `key` (kB).
fn status_kib(key: &str) -> Result<u64, String> {
    let status = std::fs::read_to_string("/proc/self/status").map_err(|e| e.to_string())?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("no {key} in /proc/self/status"))
}

/// In the child process: build the agent and do one run (so that what is set up once is
/// there), read the RSS, reset the peak (`5` to `/proc/self/clear_refs`) and the heap counter,
/// run one batch, check every run, read the peak RSS and the heap peak.
pub async fn child(runs: usize) -> Result<Value, String> {
    let agent = agent()?;
    check(&agent.run("go").await)?;
    let baseline = status_kib("VmRSS")?;
    // Without the reset, VmHWM would hold the peak of anything before (none is larger here).
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    crate::alloc::start();
    let results = batch(&agent, runs).await;
    let heap_peak = crate::alloc::peak();
    let hwm = status_kib("VmHWM")?;
    check_all(&results, runs)?;
    Ok(
        json!({"runs": runs, "rss_before_kib": baseline, "vmhwm_kib": hwm, "hwm_reset": reset, "heap_peak_bytes": heap_peak}),
    )
}

/// The memory figures of `concurrent_10k`, medians over the child processes.
#[derive(Debug, Clone, Copy)]
pub struct Memory {
    /// Peak RSS during the batch above the RSS before it, MiB.
    pub peak_rss_mib: f64,
    /// That in bytes, per run.
    pub rss_per_run: f64,
    /// Peak of the heap bytes allocated during the batch and still live, per run.
    pub heap_per_run: f64,
}

/// Runs `exe --concurrent-child RUNS` `samples` times.
pub fn measure_memory(exe: &Path, runs: usize, samples: usize) -> Result<Memory, String> {
    let (mut rss, mut heap) = (Vec::new(), Vec::new());
    for _ in 0..samples {
        let out =
            Command::new(exe).args(["--concurrent-child", &runs.to_string()]).output().map_err(|e| e.to_string())?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(format!("--concurrent-child failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
        let v: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default()).map_err(|e| e.to_string())?;
        let field = |k: &str| v[k].as_f64().ok_or_else(|| format!("--concurrent-child printed {stdout:?}"));
        if v["hwm_reset"] != json!(true) {
            log("  (could not reset VmHWM in the child: its peak RSS includes the setup's)");
        }
        rss.push((field("vmhwm_kib")? - field("rss_before_kib")?) * 1024.0);
        heap.push(field("heap_peak_bytes")?);
    }
    let (rss, heap) = (median(&rss), median(&heap));
    let m = Memory {
        peak_rss_mib: rss / 1024.0 / 1024.0,
        rss_per_run: rss / runs as f64,
        heap_per_run: heap / runs as f64,
    };
    log(format!(
        "  {:22} peak RSS {:8.1} MiB above the start ({:8.0} B per run), heap peak {:8.0} B per run   ({samples} child processes, {runs} runs each)",
        "concurrent_10k", m.peak_rss_mib, m.rss_per_run, m.heap_per_run
    ));
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The validation of a small batch, its timing, and the child's measurement.
    #[test]
    fn a_small_batch_passes_its_checks() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let c = rt.block_on(concurrent_10k(50, super::super::plan(0, 1), super::super::plan(0, 1))).unwrap();
        assert!(c.batch.wall_us >= 20_000.0 && c.single.wall_us >= 20_000.0, "{c:?}");
        let v = rt.block_on(child(50)).unwrap();
        assert_eq!(v["runs"], 50);
        assert!(v["vmhwm_kib"].as_u64().unwrap() > 0);
    }
}
