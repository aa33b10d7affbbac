//! The workloads of BENCH.md §3, each with its untimed setup, its validation run and checks, its
//! warm-ups and its timed runs; then the workloads beyond BENCH.md, each in its own module
//! (`concurrent`, `history`, `search_100k`; their Python side is `reference/extra_workloads.py`).

pub mod concurrent;
pub mod history;
pub mod search_100k;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use cpu_time::ProcessTime;
use serde_json::{Value, json};
use toolsmith::messages::{ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::model::{AgentInfo, FunctionModel, TestModel};
use toolsmith::search::{SearchStrategy, ToolSearch};
use toolsmith::tool::ToolOutput;
use toolsmith::{Agent, RunContext, Tool, ToolError, tool};

use crate::corpus::Spec;

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

/// The run counts of a mode (BENCH.md §1, table).
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// `"full"` or `"quick"`.
    pub mode: &'static str,
    /// `call_overhead_100`.
    pub call_overhead_100: Plan,
    /// `test_model_100_tools`.
    pub test_model_100_tools: Plan,
    /// `register_1000_tools`.
    pub register_1000_tools: Plan,
    /// `step_10k_deferred`.
    pub step_10k_deferred: Plan,
    /// `search_10k`.
    pub search_10k: Plan,
    /// Child processes of `rss_1000_tools_mb`.
    pub rss_samples: usize,
    /// `concurrent_10k`: batches of `concurrent_runs` runs started at once (no warm-up in
    /// either mode: the validation batch is one, and a Python batch takes minutes).
    pub concurrent_10k: Plan,
    /// Runs in one `concurrent_10k` batch.
    pub concurrent_runs: usize,
    /// One run of the `concurrent_10k` agent alone (the sequential figure), and its two sleeps
    /// alone.
    pub concurrent_single: Plan,
    /// Child processes measuring one `concurrent_10k` batch's memory.
    pub concurrent_samples: usize,
    /// `history_1000_parse` and `history_1000_serialise`.
    pub history_1000: Plan,
    /// Tools in the `search_100k` catalogue.
    pub search_tools: usize,
    /// `search_100k_build_*`: one index build per run.
    pub search_build: Plan,
    /// `search_100k_query_*`: one pass over the strategy's queries per run.
    pub search_query: Plan,
}

/// Full mode: the figures that are compared.
pub const FULL: Config = Config {
    mode: "full",
    call_overhead_100: plan(20, 200),
    test_model_100_tools: plan(10, 150),
    register_1000_tools: plan(5, 100),
    step_10k_deferred: plan(3, 21),
    search_10k: plan(3, 21),
    rss_samples: 3,
    concurrent_10k: plan(0, 3),
    concurrent_runs: 10_000,
    concurrent_single: plan(3, 21),
    concurrent_samples: 3,
    history_1000: plan(5, 51),
    search_tools: 100_000,
    search_build: plan(1, 5),
    search_query: plan(3, 21),
};

/// Quick mode: a smoke run whose numbers are not comparable.
pub const QUICK: Config = Config {
    mode: "quick",
    call_overhead_100: plan(2, 10),
    test_model_100_tools: plan(2, 10),
    register_1000_tools: plan(1, 3),
    step_10k_deferred: plan(1, 2),
    search_10k: plan(1, 2),
    rss_samples: 1,
    concurrent_10k: plan(0, 1),
    concurrent_runs: 10_000,
    concurrent_single: plan(0, 3),
    concurrent_samples: 1,
    history_1000: plan(1, 5),
    search_tools: 10_000,
    search_build: plan(0, 2),
    search_query: plan(1, 5),
};

/// The corpora, generated (and checked against their sha256) before any timing.
#[derive(Debug)]
pub struct Corpora {
    /// `corpus(1000, plain)`.
    pub plain_1000: Vec<Spec>,
    /// `corpus(10000, service)`, for `step_10k_deferred` and `search_10k`.
    pub service_10k: Vec<Spec>,
}

/// The query of `search_10k`.
const SEARCH_QUERY: &str = "create issue github";

/// What `search_tools(["create issue github"])` must return over the 10k corpus, in order
/// (BENCH.md §3, `search_10k`).
pub const EXPECTED_SEARCH_RESULT: [&str; 10] = [
    "github_create_issue_1880",
    "github_get_issue_0000",
    "gcal_create_issue_0047",
    "github_create_webhook_0320",
    "dropbox_create_issue_0658",
    "github_create_document_0840",
    "azure_create_issue_1269",
    "github_create_role_1360",
    "github_create_channel_2400",
    "hubspot_create_issue_2491",
];

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

/// Warm-ups, then timed runs; returns the wall and CPU medians (Python: `measure`). What a run
/// returns is dropped after its timing.
async fn measure<T>(name: &str, mut run: impl AsyncFnMut() -> T, p: Plan) -> Measured {
    for _ in 0..p.warmup {
        run().await;
    }
    let mut wall = Vec::with_capacity(p.iters);
    let mut cpu = Vec::with_capacity(p.iters);
    for _ in 0..p.iters {
        let t0 = Instant::now();
        let c0 = ProcessTime::now();
        let kept = run().await;
        let c1 = ProcessTime::now();
        let t1 = Instant::now();
        drop(kept);
        wall.push(t1.duration_since(t0).as_nanos() as f64 / 1000.0);
        cpu.push(c1.duration_since(c0).as_nanos() as f64 / 1000.0);
    }
    let (med, cmed) = (median(&wall), median(&cpu));
    let min = wall.iter().copied().fold(f64::INFINITY, f64::min);
    let max = wall.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    log(format!(
        "  {name:22} median {med:12.1} us   min {min:12.1}   max {max:12.1}   cpu median {cmed:12.1} us   (warmup {}, n={})",
        p.warmup, p.iters
    ));
    Measured { wall_us: med, cpu_us: cmed }
}

/// Fails the benchmark with `message` unless `ok`.
fn ensure(ok: bool, message: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(message()) }
}

/// The parts of message `index` of a history, when it is a request.
fn request_parts(messages: &[ModelMessage], index: usize) -> Result<&[ModelRequestPart], String> {
    match messages.get(index) {
        Some(ModelMessage::Request(r)) => Ok(&r.parts),
        other => Err(format!("message {index} is not a request: {other:?}")),
    }
}

/// `(tool_call_id, content)` of every tool return of a request.
fn returns(parts: &[ModelRequestPart]) -> Vec<(&str, &Value)> {
    parts
        .iter()
        .filter_map(|p| match p {
            ModelRequestPart::ToolReturn(t) => Some((t.tool_call_id.as_str(), &t.content)),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// call_overhead_100

/// Add two integers.
#[tool]
async fn add(x: i64, y: i64) -> i64 {
    x + y
}

fn call_overhead_agent() -> Result<Agent, String> {
    let model = FunctionModel::new(|messages: &[ModelMessage], _info: &AgentInfo| {
        let first = messages.len() == 1;
        async move {
            Ok(if first {
                let calls = (0..100)
                    .map(|i| {
                        ModelResponsePart::ToolCall(ToolCallPart::new(
                            "add",
                            json!({"x": i, "y": i + 1}),
                            format!("c{i}"),
                        ))
                    })
                    .collect();
                ModelResponse::new(calls)
            } else {
                ModelResponse::text("done")
            })
        }
    });
    Agent::builder(model).tool(add).build().map_err(|e| e.to_string())
}

/// `call_overhead_100`: one response with 100 calls of a `#[tool] async fn add`.
pub async fn call_overhead_100(p: Plan) -> Result<Measured, String> {
    let agent = call_overhead_agent()?;
    let r = agent.run("go").await.map_err(|e| e.to_string())?;
    let msgs = r.all_messages();
    ensure(r.output() == "done" && msgs.len() == 4, || format!("output {:?}, {} messages", r.output(), msgs.len()))?;
    let got = returns(request_parts(msgs, 2)?);
    let want: Vec<(String, Value)> = (0..100).map(|i| (format!("c{i}"), json!(2 * i + 1))).collect();
    let ok = got.len() == 100 && got.iter().zip(&want).all(|((id, v), (wid, wv))| id == wid && *v == wv);
    ensure(ok, || format!("message 3 returns: {:?}", &got[..got.len().min(3)]))?;
    Ok(measure(
        "call_overhead_100",
        async || {
            agent.run("go").await.expect("call_overhead_100 run");
        },
        p,
    )
    .await)
}

// ---------------------------------------------------------------------------------------------
// test_model_100_tools

async fn ident(_ctx: RunContext<()>, args: Value) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::Value(args["x"].clone()))
}

fn test_model_agent() -> Result<Agent, String> {
    let schema = json!({
        "type": "object",
        "properties": {"x": {"type": "integer"}},
        "required": ["x"],
        "additionalProperties": false,
    });
    let tools =
        (0..100).map(|i| Tool::from_schema(format!("t{i}"), format!("Trivial tool {i}."), schema.clone(), ident));
    Agent::builder(TestModel::default()).tools(tools).build().map_err(|e| e.to_string())
}

/// `test_model_100_tools`: `TestModel` calls 100 from-schema tools at once. Like Pydantic AI,
/// `Tool::from_schema` does not validate arguments.
pub async fn test_model_100_tools(p: Plan) -> Result<Measured, String> {
    let agent = test_model_agent()?;
    let r = agent.run("go").await.map_err(|e| e.to_string())?;
    let expected: String = format!("{{{}}}", (0..100).map(|i| format!("\"t{i}\":0")).collect::<Vec<_>>().join(","));
    let parsed: Value = serde_json::from_str(r.output()).map_err(|e| format!("output is not JSON: {e}"))?;
    let want: Value = serde_json::from_str(&expected).map_err(|e| e.to_string())?;
    ensure(parsed == want && *r.output() == expected, || format!("output {:?}", r.output()))?;
    let n = returns(request_parts(r.all_messages(), 2)?).len();
    ensure(n == 100, || format!("message 3 holds {n} returns"))?;
    Ok(measure(
        "test_model_100_tools",
        async || {
            agent.run("go").await.expect("test_model_100_tools run");
        },
        p,
    )
    .await)
}

// ---------------------------------------------------------------------------------------------
// register_1000_tools

/// The shared no-op function of the corpus tools.
async fn noop(_ctx: RunContext<()>, _args: Value) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::Value(Value::String("ok".into())))
}

/// A scripted model that answers `"done"` to every request.
fn answer_done() -> FunctionModel {
    FunctionModel::new(|_messages: &[ModelMessage], _info: &AgentInfo| async { Ok(ModelResponse::text("done")) })
}

/// 1,000 from-schema tools from the corpus (names, descriptions and schemas cloned: the tools
/// own them) and an agent over them.
pub fn build_1000_agent(specs: &[Spec], model: FunctionModel) -> Result<Agent, String> {
    let tools: Vec<Tool<()>> = specs
        .iter()
        .map(|s| Tool::from_schema(s.name.clone(), s.description.clone(), s.schema.clone(), noop))
        .collect();
    Agent::builder(model).tools(tools).build().map_err(|e| e.to_string())
}

/// `register_1000_tools`: build 1,000 from-schema tools and the agent, run once (all timed).
pub async fn register_1000_tools(specs: &[Spec], p: Plan) -> Result<Measured, String> {
    let agent = build_1000_agent(specs, answer_done())?;
    let r = agent.run("go").await.map_err(|e| e.to_string())?;
    ensure(r.output() == "done", || format!("output {:?}", r.output()))?;
    let seen = Arc::new(AtomicUsize::new(0));
    let probe = {
        let seen = seen.clone();
        FunctionModel::new(move |_messages: &[ModelMessage], info: &AgentInfo| {
            seen.store(info.function_tools.len(), Ordering::SeqCst);
            async { Ok(ModelResponse::text("done")) }
        })
    };
    let r = build_1000_agent(specs, probe)?.run("go").await.map_err(|e| e.to_string())?;
    let n = seen.load(Ordering::SeqCst);
    ensure(r.output() == "done" && n == 1000, || format!("the probe saw {n} function tools"))?;
    Ok(measure(
        "register_1000_tools",
        async || {
            let agent = build_1000_agent(specs, answer_done()).expect("register_1000_tools agent");
            agent.run("go").await.expect("register_1000_tools run");
        },
        p,
    )
    .await)
}

// ---------------------------------------------------------------------------------------------
// step_10k_deferred and search_10k

/// The names of the function tools offered on each model request.
type Seen = Arc<Mutex<Vec<Vec<String>>>>;

fn record(seen: &Seen, info: &AgentInfo) {
    let names = info.function_tools.iter().map(|t| t.name.clone()).collect();
    seen.lock().unwrap_or_else(|p| p.into_inner()).push(names);
}

fn take(seen: &Seen) -> Vec<Vec<String>> {
    std::mem::take(&mut *seen.lock().unwrap_or_else(|p| p.into_inner()))
}

/// A model that answers `"done"` to every request, recording the tools offered.
fn answer_recording(seen: Seen) -> FunctionModel {
    FunctionModel::new(move |_messages: &[ModelMessage], info: &AgentInfo| {
        record(&seen, info);
        async { Ok(ModelResponse::text("done")) }
    })
}

/// A model that searches first, then answers `"done"`, recording the tools offered.
fn search_then_answer(seen: Seen) -> FunctionModel {
    FunctionModel::new(move |messages: &[ModelMessage], info: &AgentInfo| {
        record(&seen, info);
        let first = messages.len() == 1;
        async move {
            Ok(if first {
                let args = json!({"queries": [SEARCH_QUERY]});
                ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new("search_tools", args, "s0"))])
            } else {
                ModelResponse::text("done")
            })
        }
    })
}

/// The names in the `discovered_tools` of the first part of message 3 (the search's return).
fn discovered(messages: &[ModelMessage]) -> Result<Vec<String>, String> {
    let parts = request_parts(messages, 2)?;
    let content = match parts.first() {
        Some(ModelRequestPart::ToolReturn(t)) => &t.content,
        other => return Err(format!("message 3 starts with {other:?}")),
    };
    let tools = content["discovered_tools"].as_array().ok_or_else(|| format!("search returned {content}"))?;
    Ok(tools.iter().filter_map(|t| t["name"].as_str().map(String::from)).collect())
}

/// `step_10k_deferred` and `search_10k`: 10,000 deferred from-schema tools, found through the
/// `search_tools` tool that toolsmith offers whenever deferred tools exist, ranked with Pydantic
/// AI's strategy (keyword overlap: the model has no native tool search), as the reference
/// workload is. Each agent keeps its keyword index across runs and rebuilds it only when the
/// deferred tools change.
pub async fn deferred_10k(specs: &[Spec], step: Plan, search: Plan) -> Result<(Measured, Measured), String> {
    let t0 = Instant::now();
    let tools: Vec<Tool<()>> = specs
        .iter()
        .map(|s| Tool::from_schema(s.name.clone(), s.description.clone(), s.schema.clone(), noop).defer_loading(true))
        .collect();
    let seen: Seen = Arc::default();
    let pydantic = || ToolSearch::new().strategy(SearchStrategy::PydanticAi);
    let step_agent = Agent::builder(answer_recording(seen.clone()))
        .tools(tools.clone())
        .tool_search(pydantic())
        .build()
        .map_err(|e| e.to_string())?;
    let search_agent = Agent::builder(search_then_answer(seen.clone()))
        .tools(tools)
        .tool_search(pydantic())
        .build()
        .map_err(|e| e.to_string())?;
    log(format!("  (built the 10k deferred agents in {:.2} s, outside the timing)", t0.elapsed().as_secs_f64()));

    let r = step_agent.run("go").await.map_err(|e| e.to_string())?;
    let s = take(&seen);
    ensure(r.output() == "done" && s == [["search_tools"]], || format!("output {:?}, tools seen {s:?}", r.output()))?;

    let r = search_agent.run("go").await.map_err(|e| e.to_string())?;
    let msgs = r.all_messages();
    ensure(r.output() == "done" && msgs.len() == 4, || format!("output {:?}, {} messages", r.output(), msgs.len()))?;
    let found = discovered(msgs)?;
    let s = take(&seen);
    let mut want: Vec<String> = found.iter().cloned().chain(["search_tools".to_string()]).collect();
    want.sort();
    let mut second = s.get(1).cloned().unwrap_or_default();
    second.sort();
    ensure(s.len() == 2 && s[0] == ["search_tools"] && second == want, || format!("tools seen {s:?}"))?;
    log(format!("  search_tools([{SEARCH_QUERY:?}]) -> {found:?}"));
    ensure(found == EXPECTED_SEARCH_RESULT, || format!("the search returned {found:?}"))?;

    let step = measure(
        "step_10k_deferred",
        async || {
            step_agent.run("go").await.expect("step_10k_deferred run");
        },
        step,
    )
    .await;
    let search = measure(
        "search_10k",
        async || {
            search_agent.run("go").await.expect("search_10k run");
        },
        search,
    )
    .await;
    Ok((step, search))
}

/// What the workloads measured in the benchmark process.
#[derive(Debug, Default)]
pub struct Report {
    /// Wall and CPU medians per key, in µs, in the order run.
    pub timed: Vec<(&'static str, Measured)>,
    /// Other figures (run counts, CPU per run, ratios), as they are.
    pub figures: Vec<(&'static str, f64)>,
}

/// Whether `--only` selects the workload `name`: its name, one of its keys (`name_…`), or
/// `*_10k_deferred` for the 10k pair.
fn selects(only: Option<&str>, name: &str) -> bool {
    only.is_none_or(|o| {
        o == name
            || o.strip_prefix(name).is_some_and(|rest| rest.starts_with('_'))
            || (name == "deferred_10k" && (o.ends_with("_10k_deferred") || o == "search_10k"))
    })
}

/// Runs every workload, or only `only` (the 10k pair runs together, and so do each new
/// workload's keys): BENCH.md's in its order, then `concurrent_10k`, `history_1000` and
/// `search_100k`.
pub async fn run_all(cfg: &Config, corpora: &Corpora, only: Option<&str>) -> Result<Report, String> {
    let wanted = |name: &str| selects(only, name);
    let mut out = Report::default();
    if wanted("call_overhead_100") {
        out.timed.push(("call_overhead_100", call_overhead_100(cfg.call_overhead_100).await?));
    }
    if wanted("test_model_100_tools") {
        out.timed.push(("test_model_100_tools", test_model_100_tools(cfg.test_model_100_tools).await?));
    }
    if wanted("register_1000_tools") {
        out.timed
            .push(("register_1000_tools", register_1000_tools(&corpora.plain_1000, cfg.register_1000_tools).await?));
    }
    if wanted("deferred_10k") {
        let (step, search) = deferred_10k(&corpora.service_10k, cfg.step_10k_deferred, cfg.search_10k).await?;
        out.timed.push(("step_10k_deferred", step));
        out.timed.push(("search_10k", search));
    }
    if wanted("concurrent_10k") {
        let runs = cfg.concurrent_runs;
        let c = concurrent::concurrent_10k(runs, cfg.concurrent_10k, cfg.concurrent_single).await?;
        out.timed.push(("concurrent_10k", c.batch));
        out.timed.push(("concurrent_10k_single_run", c.single));
        out.timed.push(("concurrent_10k_sleeps_only", c.sleeps));
        let per_run = c.batch.cpu_us / runs as f64;
        out.figures.push(("concurrent_10k_runs", runs as f64));
        out.figures.push(("concurrent_10k_cpu_per_run_us", per_run));
        out.figures.push(("concurrent_10k_cpu_ratio", per_run / c.single.cpu_us));
    }
    if wanted("history_1000") {
        let (parse, serialise) = history::history_1000(cfg.history_1000).await?;
        out.timed.push(("history_1000_parse", parse));
        out.timed.push(("history_1000_serialise", serialise));
    }
    if wanted("search_100k") {
        out.timed.extend(search_100k::search_100k(cfg.search_tools, cfg.search_build, cfg.search_query).await?);
        out.figures.push(("search_100k_tools", cfg.search_tools as f64));
    }
    Ok(out)
}

/// `rss_1000_tools_mb`, in the child process: build and run the 1,000-tool agent once, then
/// read the peak RSS (`VmHWM`, kB) from `/proc/self/status`.
pub async fn rss_child(specs: &[Spec]) -> Result<u64, String> {
    let r = build_1000_agent(specs, answer_done())?.run("go").await.map_err(|e| e.to_string())?;
    ensure(r.output() == "done", || format!("output {:?}", r.output()))?;
    let status = std::fs::read_to_string("/proc/self/status").map_err(|e| e.to_string())?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| "no VmHWM in /proc/self/status".to_string())
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

    /// The validation run and checks of the small workloads, plus one timed run (no warm-up).
    #[test]
    fn validation_runs_pass() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let one = plan(0, 1);
        let specs = corpus(1000, Naming::Plain);
        rt.block_on(async {
            call_overhead_100(one).await.unwrap();
            test_model_100_tools(one).await.unwrap();
            register_1000_tools(&specs, one).await.unwrap();
            assert!(rss_child(&specs).await.unwrap() > 0);
        });
    }

    /// The validation runs and checks of the 10k workloads (no timed run: slow in debug builds).
    #[test]
    fn deferred_10k_validation_runs_pass() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let none = plan(0, 0);
        rt.block_on(deferred_10k(&corpus(10_000, Naming::Service), none, none)).unwrap();
    }
}
