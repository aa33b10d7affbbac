//! The workloads of BENCH.md §3 that rig can do the same way, each with its untimed setup, its
//! validation run and checks, its warm-ups and its timed runs; and `concurrent_10k`.
//!
//! Every agent is rig's ordinary one (`rig_agent::AgentBuilder`), run with
//! `agent.prompt("go").await` and two run settings that rig's defaults would otherwise refuse or
//! change:
//!
//! - `default_max_turns(50)`: rig's default budget is one model call per run, so a run whose
//!   first answer calls a tool fails with `MaxTurns`. 50 is the request limit of Pydantic AI and
//!   toolsmith.
//! - `tool_concurrency(n)`: rig runs a turn's tool calls one after the other unless a run asks for
//!   more; BENCH.md runs them in parallel. `call_overhead_100_sequential` is the same workload with
//!   rig's default (one at a time).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cpu_time::ProcessTime;
use rig_agent::{Agent, AgentBuilder, rig_tool};
use rig_core::completion::{CompletionRequest, Message};
use rig_core::message::{AssistantContent, ToolResult, ToolResultContent, UserContent};
use rig_core::tool::{DynamicTool, ToolExecutionError, ToolOutput};
use serde_json::{Map, Value, json};

use crate::corpus::Spec;
use crate::model::{Scripted, history_len, text, tool_name};

/// rig's model-call budget per run in every agent here (its default is 1).
const MAX_TURNS: usize = 50;

/// Warm-up and timed run counts of one workload.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Untimed warm-up runs.
    pub warmup: usize,
    /// Timed runs.
    pub iters: usize,
}

const fn plan(warmup: usize, iters: usize) -> Plan {
    Plan { warmup, iters }
}

/// The run counts of a mode (BENCH.md §1, table; the same as toolsmith-bench's).
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// `"full"` or `"quick"`.
    pub mode: &'static str,
    /// `call_overhead_100` and `call_overhead_100_sequential`.
    pub call_overhead_100: Plan,
    /// `test_model_100_tools`.
    pub test_model_100_tools: Plan,
    /// `register_1000_tools`.
    pub register_1000_tools: Plan,
    /// Child processes of `rss_1000_tools_mb`.
    pub rss_samples: usize,
    /// Child processes of `concurrent_10k`, one batch each.
    pub concurrent_samples: usize,
}

/// Full mode: the figures that are compared.
pub const FULL: Config = Config {
    mode: "full",
    call_overhead_100: plan(20, 200),
    test_model_100_tools: plan(10, 150),
    register_1000_tools: plan(5, 100),
    rss_samples: 3,
    concurrent_samples: 3,
};

/// Quick mode: a smoke run whose numbers are not comparable.
pub const QUICK: Config = Config {
    mode: "quick",
    call_overhead_100: plan(2, 10),
    test_model_100_tools: plan(2, 10),
    register_1000_tools: plan(1, 3),
    rss_samples: 1,
    concurrent_samples: 1,
};

/// Medians of one workload's timed runs, in µs.
#[derive(Debug, Clone, Copy)]
pub struct Measured {
    /// Wall time (the headline figure).
    pub wall_us: f64,
    /// Process CPU time of the same runs.
    pub cpu_us: f64,
}

/// Writes a progress line to stderr.
pub fn log(line: impl AsRef<str>) {
    eprintln!("{}", line.as_ref());
}

/// The median (the mean of the two middle values for an even count).
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

/// Warm-ups, then timed runs; returns the wall and CPU medians (Python: `measure`).
async fn measure(name: &str, mut run: impl AsyncFnMut(), p: Plan) -> Measured {
    for _ in 0..p.warmup {
        run().await;
    }
    let mut wall = Vec::with_capacity(p.iters);
    let mut cpu = Vec::with_capacity(p.iters);
    for _ in 0..p.iters {
        let t0 = Instant::now();
        let c0 = ProcessTime::now();
        run().await;
        let c1 = ProcessTime::now();
        let t1 = Instant::now();
        wall.push(t1.duration_since(t0).as_nanos() as f64 / 1000.0);
        cpu.push(c1.duration_since(c0).as_nanos() as f64 / 1000.0);
    }
    let (med, cmed) = (median(&wall), median(&cpu));
    let min = wall.iter().copied().fold(f64::INFINITY, f64::min);
    let max = wall.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    log(format!(
        "  {name:28} median {med:12.1} us   min {min:12.1}   max {max:12.1}   cpu median {cmed:12.1} us   (warmup {}, n={})",
        p.warmup, p.iters
    ));
    Measured { wall_us: med, cpu_us: cmed }
}

/// Fails the benchmark with `message` unless `ok`.
fn ensure(ok: bool, message: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(message()) }
}

/// The tool results of message `index` of a run's transcript, when it is a user message.
fn tool_results(messages: &[Message], index: usize) -> Result<Vec<&ToolResult>, String> {
    match messages.get(index) {
        Some(Message::User { content }) => Ok(content
            .iter()
            .filter_map(|c| match c {
                UserContent::ToolResult(r) => Some(r),
                _ => None,
            })
            .collect()),
        other => Err(format!("message {index} is not a user message: {other:?}")),
    }
}

/// `(call id, the JSON the tool returned)` of a tool result (`None` for any other content).
fn id_and_value(r: &ToolResult) -> (String, Option<&Value>) {
    let value = match r.content.as_slice() {
        [ToolResultContent::Json { value }] => Some(value),
        _ => None,
    };
    (r.call.to_string(), value)
}

/// The tool results of the last message of a request (the model's view of the previous turn).
fn last_results(request: &CompletionRequest) -> Vec<&ToolResult> {
    match request.chat_history.last() {
        Some(Message::User { content }) => content
            .iter()
            .filter_map(|c| match c {
                UserContent::ToolResult(r) => Some(r),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

// ---------------------------------------------------------------------------------------------
// call_overhead_100

/// Add two integers.
#[rig_tool]
async fn add(x: i64, y: i64) -> Result<i64, ToolExecutionError> {
    Ok(x + y)
}

/// The `add` agent: the first request is answered with `calls` calls of `add` (args
/// `{"x": i, "y": i+1}`, ids `c{i}`), any other with "done"; each answer after `delay`.
fn add_agent(calls: i64, delay: Option<Duration>) -> Agent {
    let mut model = Scripted::new(move |request| {
        if history_len(request) == 1 {
            (0..calls)
                .map(|i| AssistantContent::tool_call(format!("c{i}"), tool_name("add"), json!({"x": i, "y": i + 1})))
                .collect()
        } else {
            text("done")
        }
    });
    if let Some(delay) = delay {
        model = model.with_delay(delay);
    }
    AgentBuilder::new(model.model()).tool(Add).default_max_turns(MAX_TURNS).build()
}

/// The checks of a run of the `add` agent: output "done", 4 messages, and message 3 holding the
/// `calls` results in call order, ids `c{i}`, JSON integers `2i + 1`.
fn check_add_run(output: &str, messages: &[Message], calls: i64) -> Result<(), String> {
    ensure(output == "done" && messages.len() == 4, || format!("output {output:?}, {} messages", messages.len()))?;
    let got: Vec<(String, Option<&Value>)> = tool_results(messages, 2)?.into_iter().map(id_and_value).collect();
    let want: Vec<(String, Value)> = (0..calls).map(|i| (format!("c{i}"), json!(2 * i + 1))).collect();
    let ok = got.len() == want.len() && got.iter().zip(&want).all(|((id, v), (wid, wv))| id == wid && *v == Some(wv));
    ensure(ok, || format!("message 3 holds {} results, the first {:?}", got.len(), &got[..got.len().min(3)]))
}

/// `call_overhead_100`: one response with 100 calls of a `#[rig_tool] async fn add`, run with
/// `concurrency` tool calls at once (100: all in parallel, as BENCH.md asks; 1: rig's default).
pub async fn call_overhead_100(p: Plan, concurrency: usize, name: &str) -> Result<Measured, String> {
    let agent = add_agent(100, None);
    let r = agent.prompt("go").tool_concurrency(concurrency).await.map_err(|e| e.to_string())?;
    check_add_run(&r.output(), r.messages(), 100)?;
    Ok(measure(
        name,
        async || {
            agent.prompt("go").tool_concurrency(concurrency).await.expect("call_overhead_100 run");
        },
        p,
    )
    .await)
}

// ---------------------------------------------------------------------------------------------
// test_model_100_tools

/// Arguments for a tool's schema as Pydantic AI's `TestModel` makes them by default: every
/// required property with a value of its type (integers 0).
fn generate_args(schema: &Value) -> Value {
    let mut args = Map::new();
    let props = schema["properties"].as_object();
    for name in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        let value = match props.and_then(|p| p.get(name)).and_then(|p| p["type"].as_str()) {
            Some("integer") => json!(0),
            Some("number") => json!(0.0),
            Some("boolean") => json!(false),
            Some("array") => json!([]),
            Some("object") => json!({}),
            _ => json!("a"),
        };
        args.insert(name.to_string(), value);
    }
    Value::Object(args)
}

/// rig has no `TestModel`; this scripted model does its work. First request: a call of every
/// tool offered, with args generated from its schema and id `pyd_ai_tool_call_id__{name}`. Any
/// other: the compact JSON text of `{tool name: its return}`.
fn test_model() -> Scripted {
    Scripted::new(|request| {
        if history_len(request) == 1 {
            request
                .tools
                .iter()
                .map(|t| {
                    let id = format!("pyd_ai_tool_call_id__{}", t.name);
                    AssistantContent::tool_call(id, t.name.clone(), generate_args(&t.parameters))
                })
                .collect()
        } else {
            let mut out = Map::new();
            for r in last_results(request) {
                let value = match r.content.as_slice() {
                    [ToolResultContent::Json { value }] => value.clone(),
                    [ToolResultContent::Text(t)] => Value::String(t.text.clone()),
                    _ => Value::Null,
                };
                out.insert(r.name.to_string(), value);
            }
            text(&Value::Object(out).to_string())
        }
    })
}

fn test_model_agent() -> Agent {
    let schema = json!({
        "type": "object",
        "properties": {"x": {"type": "integer"}},
        "required": ["x"],
        "additionalProperties": false,
    });
    let tools = (0..100)
        .map(|i| {
            DynamicTool::new(tool_name(format!("t{i}")), format!("Trivial tool {i}."), schema.clone(), |args| {
                Box::pin(async move { Ok(ToolOutput::json(args["x"].clone())) })
            })
        })
        .collect();
    AgentBuilder::new(test_model().model()).dynamic_tools(tools).default_max_turns(MAX_TURNS).build()
}

/// `test_model_100_tools`: 100 from-schema tools (`DynamicTool`: no validation of the args, as
/// Pydantic AI's `Tool.from_schema`), all called at once.
pub async fn test_model_100_tools(p: Plan) -> Result<Measured, String> {
    let agent = test_model_agent();
    let r = agent.prompt("go").tool_concurrency(100).await.map_err(|e| e.to_string())?;
    let expected = format!("{{{}}}", (0..100).map(|i| format!("\"t{i}\":0")).collect::<Vec<_>>().join(","));
    ensure(r.output() == expected, || format!("output {:?}", r.output()))?;
    let n = tool_results(r.messages(), 2)?.len();
    ensure(n == 100, || format!("message 3 holds {n} results"))?;
    Ok(measure(
        "test_model_100_tools",
        async || {
            agent.prompt("go").tool_concurrency(100).await.expect("test_model_100_tools run");
        },
        p,
    )
    .await)
}

// ---------------------------------------------------------------------------------------------
// register_1000_tools

/// A scripted model that answers "done" to every request, telling `seen` how many tools each
/// request offered.
fn answer_done(seen: Option<Arc<AtomicUsize>>) -> Scripted {
    Scripted::new(move |request| {
        if let Some(seen) = &seen {
            seen.store(request.tools.len(), Ordering::SeqCst);
        }
        text("done")
    })
}

/// 1,000 `DynamicTool`s from the corpus (names, descriptions and schemas copied: rig's tools own
/// them) sharing one async no-op, and an agent over them.
pub fn build_1000_agent(specs: &[Spec], model: Scripted) -> Agent {
    let tools = specs
        .iter()
        .map(|s| {
            DynamicTool::new(tool_name(s.name.clone()), s.description.clone(), (*s.schema).clone(), |_args| {
                Box::pin(async { Ok(ToolOutput::text("ok")) })
            })
        })
        .collect();
    AgentBuilder::new(model.model()).dynamic_tools(tools).default_max_turns(MAX_TURNS).build()
}

/// `register_1000_tools`: build 1,000 from-schema tools and the agent, run once (all timed).
pub async fn register_1000_tools(specs: &[Spec], p: Plan) -> Result<Measured, String> {
    let seen = Arc::new(AtomicUsize::new(0));
    let r = build_1000_agent(specs, answer_done(Some(seen.clone()))).prompt("go").await.map_err(|e| e.to_string())?;
    let n = seen.load(Ordering::SeqCst);
    ensure(r.output() == "done" && n == 1000, || format!("output {:?}; the request offered {n} tools", r.output()))?;
    Ok(measure(
        "register_1000_tools",
        async || {
            let agent = build_1000_agent(specs, answer_done(None));
            agent.prompt("go").await.expect("register_1000_tools run");
        },
        p,
    )
    .await)
}

// ---------------------------------------------------------------------------------------------
// concurrent_10k

/// Runs of `concurrent_10k`.
pub const CONCURRENT_RUNS: usize = 10_000;
/// The scripted model's delay per request in `concurrent_10k`.
pub const CONCURRENT_DELAY: Duration = Duration::from_millis(10);

/// One `concurrent_10k` batch, measured in a fresh process.
#[derive(Debug, Clone, Copy)]
pub struct Batch {
    /// Wall time of the batch, µs.
    pub wall_us: f64,
    /// Process CPU time of the batch, µs.
    pub cpu_us: f64,
    /// `VmRSS` before the batch (agent built), KiB.
    pub rss_before_kib: u64,
    /// `VmHWM` after the batch, KiB.
    pub hwm_kib: u64,
}

/// A field (kB) of `/proc/self/status`.
pub fn proc_status_kib(field: &str) -> Result<u64, String> {
    let status = std::fs::read_to_string("/proc/self/status").map_err(|e| e.to_string())?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field).and_then(|v| v.strip_prefix(':')))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("no {field} in /proc/self/status"))
}

/// `concurrent_10k`, in the child process: 10,000 runs of one `add` agent at once (one tokio task
/// each, on the current-thread runtime), every model request answered after 10 ms; the first
/// calls `add` {"x": 1, "y": 2}, the second answers "done". Timed from before the first spawn to
/// after the last run returned; every run is checked as it returns (inside the timing: a string
/// comparison and a look at message 3, well under a microsecond).
/// `runs` other than [`CONCURRENT_RUNS`] is for scaling checks (`--concurrent-child N`).
pub async fn concurrent_batch(runs: usize) -> Result<Batch, String> {
    let agent = Arc::new(concurrent_agent());
    let rss_before_kib = proc_status_kib("VmRSS")?;
    let t0 = Instant::now();
    let c0 = ProcessTime::now();
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..runs {
        let agent = agent.clone();
        set.spawn(async move { agent.prompt("go").await });
    }
    // Each run is checked as it returns and then dropped, so that the peak RSS is that of the
    // runs in flight, not of 10,000 finished transcripts kept for checking.
    let mut first_failure = None;
    let mut done = 0;
    while let Some(r) = set.join_next().await {
        done += 1;
        let checked = match r {
            Ok(Ok(r)) => check_concurrent_run(&r.output(), r.messages()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        if let Err(e) = checked {
            first_failure.get_or_insert(e);
        }
    }
    let c1 = ProcessTime::now();
    let t1 = Instant::now();
    let hwm_kib = proc_status_kib("VmHWM")?;
    if let Some(e) = first_failure {
        return Err(format!("a concurrent run failed its checks: {e}"));
    }
    ensure(done == runs, || format!("{done} of {runs} runs returned"))?;
    Ok(Batch {
        wall_us: t1.duration_since(t0).as_nanos() as f64 / 1000.0,
        cpu_us: c1.duration_since(c0).as_nanos() as f64 / 1000.0,
        rss_before_kib,
        hwm_kib,
    })
}

/// The `concurrent_10k` agent: `add`, and a model that waits 10 ms per request.
fn concurrent_agent() -> Agent {
    let model = Scripted::new(|request| {
        if history_len(request) == 1 {
            vec![AssistantContent::tool_call("c0", tool_name("add"), json!({"x": 1, "y": 2}))]
        } else {
            text("done")
        }
    })
    .with_delay(CONCURRENT_DELAY);
    AgentBuilder::new(model.model()).tool(Add).default_max_turns(MAX_TURNS).build()
}

/// Output "done", 4 messages, message 3 the one result 3 of call `c0`.
fn check_concurrent_run(output: &str, messages: &[Message]) -> Result<(), String> {
    ensure(output == "done" && messages.len() == 4, || format!("output {output:?}, {} messages", messages.len()))?;
    let got: Vec<(String, Option<&Value>)> = tool_results(messages, 2)?.into_iter().map(id_and_value).collect();
    ensure(got.len() == 1 && got[0].0 == "c0" && got[0].1 == Some(&json!(3)), || format!("message 3: {got:?}"))
}

// ---------------------------------------------------------------------------------------------

/// Every in-process workload, in order, as `(key, medians)`; or only `only`.
pub async fn run_all(
    cfg: &Config,
    plain_1000: &[Spec],
    only: Option<&str>,
) -> Result<Vec<(&'static str, Measured)>, String> {
    let wanted = |name: &str| only.is_none_or(|o| o == name);
    let mut out = Vec::new();
    if wanted("call_overhead_100") {
        out.push(("call_overhead_100", call_overhead_100(cfg.call_overhead_100, 100, "call_overhead_100").await?));
    }
    if wanted("call_overhead_100_sequential") {
        let key = "call_overhead_100_sequential";
        out.push((key, call_overhead_100(cfg.call_overhead_100, 1, key).await?));
    }
    if wanted("test_model_100_tools") {
        out.push(("test_model_100_tools", test_model_100_tools(cfg.test_model_100_tools).await?));
    }
    if wanted("register_1000_tools") {
        out.push(("register_1000_tools", register_1000_tools(plain_1000, cfg.register_1000_tools).await?));
    }
    Ok(out)
}

/// `rss_1000_tools_mb`, in the child process: build and run the 1,000-tool agent once, then
/// read the peak RSS (`VmHWM`, kB).
pub async fn rss_child(specs: &[Spec]) -> Result<u64, String> {
    let r = build_1000_agent(specs, answer_done(None)).prompt("go").await.map_err(|e| e.to_string())?;
    ensure(r.output() == "done", || format!("output {:?}", r.output()))?;
    proc_status_kib("VmHWM")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{Naming, corpus};

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn generated_args_fill_the_required_properties() {
        let schema = json!({"type": "object", "properties": {"x": {"type": "integer"}, "s": {"type": "string"}}, "required": ["x"]});
        assert_eq!(generate_args(&schema), json!({"x": 0}));
    }

    /// The validation run and checks of every in-process workload, plus one timed run.
    #[test]
    fn validation_runs_pass() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let one = plan(0, 1);
        let specs = corpus(1000, Naming::Plain);
        rt.block_on(async {
            call_overhead_100(one, 100, "call_overhead_100").await.unwrap();
            call_overhead_100(one, 1, "call_overhead_100_sequential").await.unwrap();
            test_model_100_tools(one).await.unwrap();
            register_1000_tools(&specs, one).await.unwrap();
            assert!(rss_child(&specs).await.unwrap() > 0);
        });
    }

    /// A few concurrent runs of the `concurrent_10k` agent pass their checks.
    #[test]
    fn concurrent_runs_pass_their_checks() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let agent = Arc::new(concurrent_agent());
            let mut set = tokio::task::JoinSet::new();
            for _ in 0..20 {
                let agent = agent.clone();
                set.spawn(async move { agent.prompt("go").await });
            }
            while let Some(r) = set.join_next().await {
                let r = r.unwrap().unwrap();
                check_concurrent_run(&r.output(), r.messages()).unwrap();
            }
        });
    }
}
