//! `toolsmith`: the command-line companion of the toolsmith library.
//!
//! Each subcommand lives in its own module; this file only parses the command line and
//! dispatches. Exit codes: 0 on success, 1 when the command ran and failed (a tool reported an
//! error, a server could not be reached), 2 for a usage mistake.

#[cfg(feature = "mcp")]
mod gateway;
mod mcp;
mod search;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The tool layer for LLM agents, from the command line.
#[derive(Debug, Parser)]
#[command(name = "toolsmith", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Inspect and call the tools of an MCP server (stdio or streamable HTTP).
    Mcp(mcp::McpArgs),
    /// Rank a corpus of tools for each query: one JSON line per query, {"id", "ranked"}.
    Search(search::SearchArgs),
    /// Measure search strategies on a corpus and queries: R@1/5/10, MRR@10, latency.
    SearchEval(search::SearchEvalArgs),
    /// Count the schema tokens of a corpus of tools, and what deferring them saves.
    Tokens(search::TokensArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Mcp(args) => mcp::run(args),
        Command::Search(args) => search::run_search(args),
        Command::SearchEval(args) => search::run_search_eval(args),
        Command::Tokens(args) => search::run_tokens(args),
    }
}
