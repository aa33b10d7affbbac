//! `toolsmith search`, `toolsmith search-eval` and `toolsmith tokens`: tool search over a corpus
//! of tool definitions, its retrieval quality and speed, and what deferring the tools saves.
//!
//! Files are JSON lines: a corpus has one tool a line (`name`, `description`, `parameters`),
//! queries have one request a line (`id`, `query`, and for `search-eval` `relevant`, the names
//! of the tools it needs).

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::json;
use toolsmith::search::eval::{self, EvalQuery, SearchIndex};
use toolsmith::search::tokens::{self, Encoding};
use toolsmith::search::{SearchStrategy, ToolSearch};
use toolsmith::tool::ToolDefinition;

const STRATEGY_HELP: &str = "pydantic-ai (Pydantic AI's keyword overlap, undiscovered tools first), keywords \
(keyword overlap), bm25 (BM25 with identifier splitting, stemming, a name bonus, synonyms and the catalogue's \
abbreviations: the default strategy), bm25-plain (BM25 without the name bonus, synonyms and abbreviations), regex \
(each query is a regular expression)";

/// Arguments of `toolsmith search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The tools, one JSON object a line: name, description, parameters.
    #[arg(long, value_name = "CORPUS.jsonl")]
    corpus: PathBuf,
    /// The requests, one JSON object a line: id, query.
    #[arg(long, value_name = "QUERIES.jsonl")]
    queries: PathBuf,
    /// The search strategy [default: the library's default strategy, bm25].
    #[arg(long, value_name = "NAME", long_help = format!("The search strategy: {STRATEGY_HELP}. Without it, the \
        library's default strategy (ToolSearch::new(), bm25)."))]
    strategy: Option<String>,
    /// How many tools to rank per query.
    #[arg(long, default_value_t = 10)]
    k: usize,
}

/// Arguments of `toolsmith search-eval`.
#[derive(Debug, Args)]
pub struct SearchEvalArgs {
    /// The tools, one JSON object a line: name, description, parameters.
    #[arg(long, value_name = "CORPUS.jsonl")]
    corpus: PathBuf,
    /// The requests, one JSON object a line: id, query, relevant (the needed tools' names).
    #[arg(long, value_name = "QUERIES.jsonl")]
    queries: PathBuf,
    /// A strategy name, or `all`.
    #[arg(long, value_name = "NAME|all", default_value = "all", long_help = format!("A strategy, or all of them: \
        {STRATEGY_HELP}."))]
    strategy: String,
    /// Also time searches (and the index build) with the catalogue cut or grown to these sizes
    /// (renamed copies), e.g. `1000,10000`; 0 to skip.
    #[arg(long, value_name = "N,...", value_delimiter = ',', default_value = "10000")]
    scale: Vec<usize>,
    /// Print one JSON object per strategy instead of a table.
    #[arg(long)]
    json: bool,
}

/// Arguments of `toolsmith tokens`.
#[derive(Debug, Args)]
pub struct TokensArgs {
    /// The tools, one JSON object a line: name, description, parameters.
    #[arg(long, value_name = "CORPUS.jsonl")]
    corpus: PathBuf,
    /// The tokenizer: o200k_base (GPT-4o and later) or cl100k_base (GPT-4, GPT-3.5).
    #[arg(long, value_name = "NAME", default_value = "o200k_base")]
    encoding: String,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("toolsmith: {message}");
    ExitCode::FAILURE
}

fn usage(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("toolsmith: {message}");
    ExitCode::from(2)
}

fn load(corpus: &PathBuf, queries: Option<&PathBuf>) -> Result<(Vec<ToolDefinition>, Vec<EvalQuery>), ExitCode> {
    let tools = eval::load_corpus(corpus).map_err(|e| fail(format!("{}: {e}", corpus.display())))?;
    let queries = match queries {
        Some(q) => eval::load_queries(q).map_err(|e| fail(format!("{}: {e}", q.display())))?,
        None => Vec::new(),
    };
    Ok((tools, queries))
}

/// `toolsmith search`: one JSON line per query, in input order: `{"id", "ranked"}` (and
/// `"error"`, the retry the model would get, when the query is rejected).
pub fn run_search(args: SearchArgs) -> ExitCode {
    let strategy = match &args.strategy {
        None => ToolSearch::new().strategy,
        Some(name) => match name.parse::<SearchStrategy>() {
            Ok(s) => s,
            Err(e) => return usage(e),
        },
    };
    let (tools, queries) = match load(&args.corpus, Some(&args.queries)) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let index = SearchIndex::new(&tools);
    let mut out = BufWriter::new(std::io::stdout().lock());
    for q in &queries {
        let line = match index.rank(&strategy, &q.query, args.k) {
            Ok(ranked) => json!({"id": q.id, "ranked": ranked}),
            Err(retry) => json!({"id": q.id, "ranked": [], "error": retry.message()}),
        };
        if writeln!(out, "{line}").is_err() {
            return ExitCode::FAILURE;
        }
    }
    if out.flush().is_err() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The time to build a strategy's index over these tools (a fresh catalogue).
fn build_time(tools: &[ToolDefinition], strategy: &SearchStrategy) -> Duration {
    let index = SearchIndex::new(tools);
    let start = Instant::now();
    index.prepare(strategy);
    start.elapsed()
}

/// `toolsmith search-eval`: R@1/5/10, MRR@10 and median latency per strategy.
pub fn run_search_eval(args: SearchEvalArgs) -> ExitCode {
    let strategies: Vec<SearchStrategy> = if args.strategy.eq_ignore_ascii_case("all") {
        eval::STRATEGY_NAMES.iter().map(|n| n.parse().expect("built-in names parse")).collect()
    } else {
        match args.strategy.parse() {
            Ok(s) => vec![s],
            Err(e) => return usage(e),
        }
    };
    let (tools, queries) = match load(&args.corpus, Some(&args.queries)) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let default = eval::strategy_name(&ToolSearch::new().strategy);
    let n = tools.len();
    let index = SearchIndex::new(&tools);
    let scaled: Vec<(Vec<ToolDefinition>, SearchIndex)> = args
        .scale
        .iter()
        .filter(|&&size| size > 0)
        .map(|&size| {
            let t = eval::scale(&tools, size);
            let i = SearchIndex::new(&t);
            (t, i)
        })
        .collect();
    if !args.json {
        println!("{} tools, {} queries", n, queries.len());
        print!(
            "{:<12} {:>6} {:>6} {:>6} {:>7} {:>13} {:>13}",
            "strategy",
            "R@1",
            "R@5",
            "R@10",
            "MRR@10",
            format!("p50 @{n}"),
            format!("build @{n}")
        );
        for (t, _) in &scaled {
            print!(" {:>13} {:>13}", format!("p50 @{}", t.len()), format!("build @{}", t.len()));
        }
        println!();
    }
    for strategy in &strategies {
        let name = eval::strategy_name(strategy);
        let build = build_time(&tools, strategy);
        let e = eval::evaluate(&index, strategy, &queries);
        let sized: Vec<(usize, Duration, Duration)> = scaled
            .iter()
            .map(|(t, big)| {
                let latency = eval::median_latency(big, strategy, queries.iter().map(|q| q.query.as_str()));
                (t.len(), latency, build_time(t, strategy))
            })
            .collect();
        let m = e.metrics;
        if args.json {
            let line = json!({
                "strategy": name,
                "default": name == default,
                "tools": n,
                "queries": m.queries,
                "recall_at_1": m.recall_at_1,
                "recall_at_5": m.recall_at_5,
                "recall_at_10": m.recall_at_10,
                "mrr_at_10": m.mrr_at_10,
                "retries": e.retries,
                "median_latency_us": micros(e.median_latency),
                "build_ms": millis(build),
                "scaled": sized.iter().map(|(size, latency, build)| json!({
                    "tools": size, "median_latency_us": micros(*latency), "build_ms": millis(*build)
                })).collect::<Vec<_>>(),
            });
            println!("{line}");
        } else {
            let label = if name == default { format!("{name}*") } else { name.clone() };
            print!(
                "{:<12} {:>6.3} {:>6.3} {:>6.3} {:>7.3} {:>10.1} µs {:>10.1} ms",
                label,
                m.recall_at_1,
                m.recall_at_5,
                m.recall_at_10,
                m.mrr_at_10,
                micros(e.median_latency),
                millis(build)
            );
            for (_, latency, build) in &sized {
                print!(" {:>10.1} µs {:>10.1} ms", micros(*latency), millis(*build));
            }
            if e.retries > 0 {
                print!("  ({} queries rejected)", e.retries);
            }
            println!();
        }
    }
    if !args.json {
        println!("\n* the default strategy (ToolSearch::new()). p50: median time of one search, index built.");
        if strategies.contains(&SearchStrategy::Regex) {
            println!(
                "regex uses each request verbatim as a pattern: it is meant for patterns a model writes, not prose."
            );
        }
    }
    ExitCode::SUCCESS
}

/// `toolsmith tokens`: the schema tokens of a corpus, and what deferring it behind `search_tools`
/// saves.
pub fn run_tokens(args: TokensArgs) -> ExitCode {
    let encoding: Encoding = match args.encoding.parse() {
        Ok(e) => e,
        Err(e) => return usage(e),
    };
    if let Err(e) = tokens::exact_tokens("", encoding) {
        return fail(e);
    }
    let (tools, _) = match load(&args.corpus, None) {
        Ok(x) => x,
        Err(code) => return code,
    };
    // The tokenizer loaded above: counting cannot fail from here on.
    let count =
        |def: &ToolDefinition| tokens::exact_tokens(&tokens::tool_wire_text(def), encoding).unwrap_or(0) as usize;
    let mut per_tool: Vec<(usize, &str)> = tools.iter().map(|d| (count(d), d.name.as_str())).collect();
    let total: usize = per_tool.iter().map(|t| t.0).sum();
    let search = count(&ToolSearch::new().definition());
    let saved = total.saturating_sub(search);
    let share = if total > 0 { 100.0 * saved as f64 / total as f64 } else { 0.0 };
    per_tool.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    let mean = if tools.is_empty() { 0.0 } else { total as f64 / tools.len() as f64 };
    let median = if per_tool.is_empty() { 0 } else { per_tool[per_tool.len() / 2].0 };
    // What the library assumes without its `tiktoken` feature, for comparison.
    let estimated: u64 = tools.iter().map(|d| tokens::estimate_tokens(&tokens::tool_wire_text(d))).sum();
    if args.json {
        println!(
            "{}",
            json!({
                "encoding": args.encoding,
                "tools": tools.len(),
                "total_tokens": total,
                "mean_tokens": mean,
                "median_tokens": median,
                "largest": per_tool.iter().take(5).map(|(t, n)| json!({"name": n, "tokens": t})).collect::<Vec<_>>(),
                "search_tool_tokens": search,
                "deferred_saving_tokens": saved,
                "deferred_saving_pct": share,
                "estimated_tokens": estimated,
            })
        );
        return ExitCode::SUCCESS;
    }
    println!("{} tools, {} schema tokens ({}, OpenAI function format)", tools.len(), total, args.encoding);
    println!("  per tool: mean {mean:.1}, median {median}");
    println!("  estimated at 4 bytes a token (the library without its `tiktoken` feature): {estimated}");
    for (t, n) in per_tool.iter().take(5) {
        println!("  {t:>6}  {n}");
    }
    println!("search_tools definition: {search} tokens");
    println!(
        "deferring every tool behind search_tools sends {search} tokens instead of {total}: {saved} fewer per request ({share:.1}%), \
         plus the schemas of the tools the model discovers"
    );
    ExitCode::SUCCESS
}
