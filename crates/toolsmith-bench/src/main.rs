//! The toolsmith side of the tool-layer benchmark (`shared/bench/BENCH.md`).
//!
//! ```sh
//! cargo run --release -p toolsmith-bench -- --json      # full run
//! cargo run --release -p toolsmith-bench -- --quick     # smoke run; numbers not comparable
//! cargo run --release -p toolsmith-bench -- --quick --only call_overhead_100   # one workload (profiling)
//! cargo run --release -p toolsmith-bench -- --dump-corpus 10000 > corpus10k.jsonl
//! cargo run --release -p toolsmith-bench -- --dump-history > history.json   # history_1000's input
//! cargo run --release -p toolsmith-bench -- --dump-history-toolsmith > written.json   # read, written back
//! ```
//!
//! Progress goes to stderr; with `--json` the last line of stdout is the result object of
//! BENCH.md §4. After BENCH.md's workloads come three more (`concurrent_10k`, `history_1000`,
//! `search_100k`; see `workloads`), whose Python side is `reference/extra_workloads.py`.
//! `--rss-child` and `--concurrent-child RUNS` are internal: one sample of `rss_1000_tools_mb`,
//! one of `concurrent_10k`'s memory.

mod alloc;
mod corpus;
mod workloads;

/// The system allocator, counting live heap bytes for `concurrent_10k` (off until it starts).
#[global_allocator]
static ALLOCATOR: alloc::Counting = alloc::Counting;

use std::process::{Command, ExitCode};
use std::time::Instant;

use serde_json::{Map, Value, json};

use corpus::{Naming, SHA256_1000_PLAIN, SHA256_10000_SERVICE, corpus, corpus_jsonl, sha256_hex};
use workloads::{Corpora, FULL, QUICK, log, median};

/// The version reported in the JSON: the workspace version, which toolsmith shares.
const VERSION: &str = env!("CARGO_PKG_VERSION");

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())
}

/// The three load averages of `/proc/loadavg`.
fn loadavg() -> [f64; 3] {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut it = text.split_whitespace().map(|v| v.parse().unwrap_or(f64::NAN));
    [(); 3].map(|_| it.next().unwrap_or(f64::NAN))
}

fn round(v: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (v * f).round() / f
}

/// Runs `--rss-child` `samples` times; the median peak RSS in MiB.
fn measure_rss(samples: usize) -> Result<f64, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut values = Vec::with_capacity(samples);
    for _ in 0..samples {
        let out = Command::new(&exe).arg("--rss-child").output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!("--rss-child failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
        let stdout = String::from_utf8_lossy(&out.stdout);
        let last: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default()).map_err(|e| e.to_string())?;
        let kib = last["vmhwm_kib"].as_f64().ok_or_else(|| format!("--rss-child printed {stdout:?}"))?;
        values.push(kib / 1024.0);
    }
    let med = median(&values);
    let shown: Vec<f64> = values.iter().map(|v| round(*v, 1)).collect();
    log(format!("  {:22} median {med:12.1} MiB  samples {shown:?}", "rss_1000_tools_mb"));
    Ok(med)
}

fn rss_child() -> Result<(), String> {
    let specs = corpus(1000, Naming::Plain);
    let kib = runtime()?.block_on(workloads::rss_child(&specs))?;
    println!("{}", json!({"vmhwm_kib": kib}));
    Ok(())
}

/// The value after flag `name`, parsed.
fn flag_value<T: std::str::FromStr>(args: &[String], name: &str) -> Option<Result<T, String>> {
    let pos = args.iter().position(|a| a == name)?;
    Some(args.get(pos + 1).and_then(|v| v.parse().ok()).ok_or_else(|| format!("{name} needs a number")))
}

fn run(args: &[String]) -> Result<(), String> {
    if let Some(runs) = flag_value::<usize>(args, "--concurrent-child") {
        let v = runtime()?.block_on(workloads::concurrent::child(runs?))?;
        println!("{v}");
        return Ok(());
    }
    if args.iter().any(|a| a == "--dump-history") {
        print!("{}", workloads::history::pydantic_json(workloads::history::PAIRS));
        return Ok(());
    }
    if args.iter().any(|a| a == "--dump-history-toolsmith") {
        let text = workloads::history::pydantic_json(workloads::history::PAIRS);
        let messages = toolsmith::messages::parse_history(&text).map_err(|e| e.to_string())?;
        print!("{}", toolsmith::messages::history_to_json(&messages));
        return Ok(());
    }
    if let Some(pos) = args.iter().position(|a| a == "--dump-corpus") {
        let n: usize = args.get(pos + 1).and_then(|v| v.parse().ok()).ok_or("--dump-corpus needs a count")?;
        let naming = if n == 1000 { Naming::Plain } else { Naming::Service };
        print!("{}", corpus_jsonl(&corpus(n, naming)));
        return Ok(());
    }
    if args.iter().any(|a| a == "--rss-child") {
        return rss_child();
    }
    let cfg = if args.iter().any(|a| a == "--quick") { QUICK } else { FULL };

    let corpora = Corpora { plain_1000: corpus(1000, Naming::Plain), service_10k: corpus(10_000, Naming::Service) };
    let names: std::collections::HashSet<&str> = corpora.service_10k.iter().map(|s| s.name.as_str()).collect();
    if names.len() != 10_000 {
        return Err(format!("the 10k service corpus has {} distinct names", names.len()));
    }
    let (sha_1000, sha_10k) = (sha256_hex(&corpora.plain_1000), sha256_hex(&corpora.service_10k));
    log(format!("corpus sha256: 1000 {sha_1000}, 10000 {sha_10k}"));
    if sha_1000 != SHA256_1000_PLAIN || sha_10k != SHA256_10000_SERVICE {
        return Err(format!("corpus sha256 mismatch: expected {SHA256_1000_PLAIN} and {SHA256_10000_SERVICE}"));
    }

    let rt = runtime()?;
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    log(format!(
        "toolsmith {VERSION}; tokio current_thread; cpus {cpus}; load average {:?}; mode {}",
        loadavg(),
        cfg.mode
    ));
    let (t0, load0) = (Instant::now(), loadavg()[0]);
    let only = args.iter().position(|a| a == "--only").and_then(|i| args.get(i + 1)).map(String::as_str);
    let report = rt.block_on(workloads::run_all(&cfg, &corpora, only))?;
    let results = &report.timed;
    let mut wall = Map::new();
    let mut cpu = Map::new();
    for (key, m) in results {
        wall.insert(key.to_string(), json!(round(m.wall_us, 1)));
        cpu.insert(key.to_string(), json!(round(m.cpu_us, 1)));
    }
    let find = |key: &str| results.iter().find(|(k, _)| *k == key).map(|(_, m)| *m);
    if let (Some(step), Some(search)) = (find("step_10k_deferred"), find("search_10k")) {
        let (dw, dc) = (search.wall_us - step.wall_us, search.cpu_us - step.cpu_us);
        log(format!("  {:22} {dw:12.1} us   cpu {dc:12.1} us", "search_10k_delta"));
        wall.insert("search_10k_delta".into(), json!(round(dw, 1)));
        cpu.insert("search_10k_delta".into(), json!(round(dc, 1)));
    }
    if only.is_none() {
        wall.insert("rss_1000_tools_mb".into(), json!(round(measure_rss(cfg.rss_samples)?, 1)));
    }
    for (key, v) in &report.figures {
        let v = if v.fract() == 0.0 {
            json!(*v as i64)
        } else {
            json!(round(*v, if key.ends_with("_ratio") { 2 } else { 1 }))
        };
        wall.insert(key.to_string(), v);
    }
    if find("concurrent_10k").is_some() {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let m = workloads::concurrent::measure_memory(&exe, cfg.concurrent_runs, cfg.concurrent_samples)?;
        wall.insert("concurrent_10k_peak_rss_mb".into(), json!(round(m.peak_rss_mib, 1)));
        wall.insert("concurrent_10k_rss_per_run_bytes".into(), json!(round(m.rss_per_run, 1)));
        wall.insert("concurrent_10k_heap_per_run_bytes".into(), json!(round(m.heap_per_run, 1)));
    }
    let load1 = loadavg()[0];
    log(format!("total {:.1} s; load average {:?}", t0.elapsed().as_secs_f64(), loadavg()));

    let mut out = Map::new();
    out.insert("impl".into(), json!("toolsmith"));
    out.insert("version".into(), json!(VERSION));
    out.insert("mode".into(), json!(cfg.mode));
    out.insert("loadavg".into(), json!([round(load0, 2), round(load1, 2)]));
    out.extend(wall);
    out.insert("cpu_us".into(), Value::Object(cpu));
    if args.iter().any(|a| a == "--json") {
        println!("{}", Value::Object(out));
    } else {
        for (k, v) in &out {
            println!("{k}: {v}");
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            log(format!("toolsmith-bench: {e}"));
            ExitCode::FAILURE
        }
    }
}
