//! `toolsmith mcp gateway`: one MCP server in front of many. The upstream servers of a TOML
//! file are searched through `search_tools` and called through `call_tool` (or, with
//! `--expose-all`, listed directly), so that a client sees two tool definitions instead of
//! hundreds.

mod config;
mod tools;
mod upstreams;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};

use clap::Args;
use toolsmith::mcp_server::{HttpOptions, McpServer};

use upstreams::{OnToolsChanged, Upstreams};

const INSTRUCTIONS: &str = "This server is a gateway to several MCP servers. Find the tool you need with \
`search_tools` (a few words on what it should do), then call it with `call_tool` and the name and parameters \
the search returned. Tool names are the server's name, an underscore and the tool's own name.";

/// Arguments of `toolsmith mcp gateway`.
#[derive(Debug, Args)]
pub struct GatewayArgs {
    /// The configuration: `[servers.NAME]` tables with `command` + `args` (+ `env`) for a stdio
    /// server, or `url` (+ `headers`, `bearer_token`) for a streamable HTTP one; optional
    /// `allow` / `deny` / `approve` lists of tool names, `timeout_secs` and
    /// `max_message_bytes`.
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// Serve over streamable HTTP at http://127.0.0.1:PORT/mcp instead of stdio.
    #[arg(long, value_name = "PORT")]
    port: Option<u16>,
    /// Require this bearer token from HTTP clients (--port only).
    #[arg(long, value_name = "TOKEN", requires = "port")]
    bearer_token: Option<String>,
    /// List every upstream tool directly (as NAME_tool) instead of search_tools and call_tool.
    #[arg(long)]
    expose_all: bool,
}

/// Runs the gateway until the client closes stdio (or, over HTTP, until stopped).
pub async fn run(args: GatewayArgs) -> ExitCode {
    let config = match config::load(&args.config) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    // With --expose-all the client lists the upstream tools itself: an upstream's
    // `tools/list_changed` is passed on to it (search re-reads the lists at each search).
    let served_server: Arc<OnceLock<McpServer>> = Arc::default();
    let on_tools_changed: Option<OnToolsChanged> = args.expose_all.then(|| {
        let served = served_server.clone();
        Arc::new(move || {
            if let Some(server) = served.get().cloned() {
                tokio::spawn(async move { server.notify_tools_changed().await });
            }
        }) as OnToolsChanged
    });
    let upstreams = Arc::new(Upstreams::new(config, on_tools_changed));
    let server = if args.expose_all {
        McpServer::builder(tools::expose_all_toolset(&upstreams)).name("toolsmith-gateway").build()
    } else {
        McpServer::builder(tools::search_toolset(upstreams.clone()))
            .name("toolsmith-gateway")
            .instructions(INSTRUCTIONS)
            .build()
    };
    let _ = served_server.set(server.clone());
    let served = match args.port {
        None => server.serve_stdio().await,
        Some(port) => {
            let mut options = HttpOptions::new().port(port);
            if let Some(token) = args.bearer_token {
                options = options.bearer_token(token);
            }
            match server.serve_http(options).await {
                Ok(running) => {
                    eprintln!("toolsmith gateway listening on {}", running.url());
                    running.wait().await;
                    Ok(())
                }
                Err(e) => Err(e),
            }
        }
    };
    for upstream in upstreams.servers() {
        upstream.mcp.close().await;
    }
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
