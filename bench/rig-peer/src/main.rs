//! The tool-layer benchmark of `shared/bench/BENCH.md`, run with rig (rig-core and rig-agent
//! 0.44), the Rust peer that toolsmith's figures are compared with.
//!
//! ```sh
//! cargo run --release --manifest-path bench/rig-peer/Cargo.toml -- --json     # full run
//! cargo run --release --manifest-path bench/rig-peer/Cargo.toml -- --quick    # smoke run
//! cargo run --release --manifest-path bench/rig-peer/Cargo.toml -- --quick --only call_overhead_100
//! ```
//!
//! The timing procedure and the output are toolsmith-bench's: progress on stderr; with `--json`
//! the last line of stdout is one object with the wall-time medians per workload key (µs),
//! `cpu_us`, `impl` (`"rig"`), `version` (rig-agent's), `mode` and `loadavg`.
//!
//! Workloads: `call_overhead_100` (and `call_overhead_100_sequential`, rig's default of one tool
//! call at a time), `test_model_100_tools` (with a scripted model doing `TestModel`'s work: rig
//! has none), `register_1000_tools`, `rss_1000_tools_mb` and `concurrent_10k` (with
//! `concurrent_10k_rss_mb` and `concurrent_10k_kib_per_run`). Left out: `step_10k_deferred` and
//! `search_10k` (rig has no deferred tools and no tool search the model calls; its
//! `retrieved_tools` picks tools per request from an embedding index instead).
//!
//! `--rss-child` and `--concurrent-child` are internal: one sample each, in a fresh process
//! (`--concurrent-child N` runs a batch of N runs instead of 10,000 and prints its figures).

// BENCH.md's corpus, the very file toolsmith's side uses (the two sides cannot drift apart).
#[path = "../../../crates/toolsmith-bench/src/corpus.rs"]
mod corpus;
mod model;
mod workloads;

use std::process::{Command, ExitCode};
use std::time::Instant;

use serde_json::{Map, Value, json};

use corpus::{Naming, SHA256_1000_PLAIN, SHA256_10000_SERVICE, corpus, corpus_jsonl, sha256_hex};
use workloads::{CONCURRENT_RUNS, FULL, QUICK, log, median};

/// The rig version measured (rig-core and rig-agent are pinned to it in Cargo.toml).
const RIG_VERSION: &str = "0.44.0";

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

/// Runs this binary with `flag` in a fresh process; the JSON object on its last stdout line.
fn child(flag: &str) -> Result<Value, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(&exe).arg(flag).output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("{flag} failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .map_err(|e| format!("{flag} printed {stdout:?}: {e}"))
}

/// Runs `--rss-child` `samples` times; the median peak RSS in MiB.
fn measure_rss(samples: usize) -> Result<f64, String> {
    let mut values = Vec::with_capacity(samples);
    for _ in 0..samples {
        let last = child("--rss-child")?;
        let kib = last["vmhwm_kib"].as_f64().ok_or_else(|| format!("--rss-child printed {last}"))?;
        values.push(kib / 1024.0);
    }
    let med = median(&values);
    let shown: Vec<f64> = values.iter().map(|v| round(*v, 1)).collect();
    log(format!("  {:28} median {med:12.1} MiB  samples {shown:?}", "rss_1000_tools_mb"));
    Ok(med)
}

/// The medians of `concurrent_10k` over `samples` child processes: wall µs, CPU µs, peak RSS MiB
/// and KiB per in-flight run.
fn measure_concurrent(samples: usize) -> Result<[f64; 4], String> {
    let mut columns: [Vec<f64>; 4] = Default::default();
    for _ in 0..samples {
        let b = child("--concurrent-child")?;
        let field = |k: &str| b[k].as_f64().ok_or_else(|| format!("--concurrent-child printed {b}"));
        let (hwm, before) = (field("vmhwm_kib")?, field("rss_before_kib")?);
        let row = [field("wall_us")?, field("cpu_us")?, hwm / 1024.0, (hwm - before) / CONCURRENT_RUNS as f64];
        log(format!(
            "  {:28} batch {:12.1} us   cpu {:12.1} us   peak RSS {:.1} MiB   {:.2} KiB per run",
            "concurrent_10k", row[0], row[1], row[2], row[3]
        ));
        for (column, value) in columns.iter_mut().zip(row) {
            column.push(value);
        }
    }
    Ok(columns.map(|c| median(&c)))
}

fn rss_child() -> Result<(), String> {
    let specs = corpus(1000, Naming::Plain);
    let kib = runtime()?.block_on(workloads::rss_child(&specs))?;
    println!("{}", json!({"vmhwm_kib": kib}));
    Ok(())
}

/// One `concurrent_10k` batch; `runs` other than 10,000 is for checking how the batch scales.
fn concurrent_child(runs: usize) -> Result<(), String> {
    let b = runtime()?.block_on(workloads::concurrent_batch(runs))?;
    println!(
        "{}",
        json!({"wall_us": b.wall_us, "cpu_us": b.cpu_us, "rss_before_kib": b.rss_before_kib, "vmhwm_kib": b.hwm_kib})
    );
    Ok(())
}

fn run(args: &[String]) -> Result<(), String> {
    if let Some(pos) = args.iter().position(|a| a == "--dump-corpus") {
        let n: usize = args.get(pos + 1).and_then(|v| v.parse().ok()).ok_or("--dump-corpus needs a count")?;
        let naming = if n == 1000 { Naming::Plain } else { Naming::Service };
        print!("{}", corpus_jsonl(&corpus(n, naming)));
        return Ok(());
    }
    if args.iter().any(|a| a == "--rss-child") {
        return rss_child();
    }
    if let Some(pos) = args.iter().position(|a| a == "--concurrent-child") {
        let runs = args.get(pos + 1).and_then(|v| v.parse().ok()).unwrap_or(CONCURRENT_RUNS);
        return concurrent_child(runs);
    }
    let cfg = if args.iter().any(|a| a == "--quick") { QUICK } else { FULL };
    let only = args.iter().position(|a| a == "--only").and_then(|i| args.get(i + 1)).map(String::as_str);

    // Both corpora are checked, as toolsmith-bench does; only the 1,000-tool one is used.
    let plain_1000 = corpus(1000, Naming::Plain);
    let (sha_1000, sha_10k) = (sha256_hex(&plain_1000), sha256_hex(&corpus(10_000, Naming::Service)));
    log(format!("corpus sha256: 1000 {sha_1000}, 10000 {sha_10k}"));
    if sha_1000 != SHA256_1000_PLAIN || sha_10k != SHA256_10000_SERVICE {
        return Err(format!("corpus sha256 mismatch: expected {SHA256_1000_PLAIN} and {SHA256_10000_SERVICE}"));
    }

    let rt = runtime()?;
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    log(format!(
        "rig {RIG_VERSION}; tokio current_thread; cpus {cpus}; load average {:?}; mode {}",
        loadavg(),
        cfg.mode
    ));
    let (t0, load0) = (Instant::now(), loadavg()[0]);
    let results = rt.block_on(workloads::run_all(&cfg, &plain_1000, only))?;
    let mut wall = Map::new();
    let mut cpu = Map::new();
    for (key, m) in &results {
        wall.insert(key.to_string(), json!(round(m.wall_us, 1)));
        cpu.insert(key.to_string(), json!(round(m.cpu_us, 1)));
    }
    if only.is_none_or(|o| o.starts_with("concurrent_10k")) {
        let [w, c, rss, per_run] = measure_concurrent(cfg.concurrent_samples)?;
        wall.insert("concurrent_10k".into(), json!(round(w, 1)));
        cpu.insert("concurrent_10k".into(), json!(round(c, 1)));
        wall.insert("concurrent_10k_rss_mb".into(), json!(round(rss, 1)));
        wall.insert("concurrent_10k_kib_per_run".into(), json!(round(per_run, 2)));
    }
    if only.is_none_or(|o| o == "rss_1000_tools_mb") {
        wall.insert("rss_1000_tools_mb".into(), json!(round(measure_rss(cfg.rss_samples)?, 1)));
    }
    let load1 = loadavg()[0];
    log(format!("total {:.1} s; load average {:?}", t0.elapsed().as_secs_f64(), loadavg()));

    let mut out = Map::new();
    out.insert("impl".into(), json!("rig"));
    out.insert("version".into(), json!(RIG_VERSION));
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
            log(format!("rig-peer: {e}"));
            ExitCode::FAILURE
        }
    }
}
