//! `toolsmith mcp`: list the tools of an MCP server with their schema token cost, and call them.

use std::process::ExitCode;

use clap::{Args, Subcommand};

const TOKENS_HELP: &str = "Token costs are counted with a real tokenizer (tiktoken, --encoding) over each tool's \
definition as OpenAI-style APIs are sent it (the JSON of its name, description and parameters).";

const SERVER_HELP: &str = "The server is either a streamable HTTP endpoint (--url) or a command that starts a \
stdio server, given after `--`:\n\n  toolsmith mcp tools --url http://127.0.0.1:3001/mcp\n  toolsmith mcp tools -- \
npx -y @modelcontextprotocol/server-everything\n\nExit codes: 0 on success, 1 when the server could not be \
reached or the tool reported an error, 2 for a usage mistake.";

/// `toolsmith mcp ...`
#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(subcommand)]
    command: McpCommand,
}

#[derive(Debug, Subcommand)]
enum McpCommand {
    /// List the server's tools with the token cost of their definitions.
    #[command(after_help = format!("{TOKENS_HELP}\n\n{SERVER_HELP}"))]
    Tools {
        /// Print JSON (server, tools with their schemas and metadata, token costs) instead of a table.
        #[arg(long)]
        json: bool,
        /// The tokenizer: o200k_base (GPT-4o and later) or cl100k_base (GPT-4, GPT-3.5).
        #[arg(long, value_name = "NAME", default_value = "o200k_base")]
        encoding: String,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Call a tool with JSON arguments and print its result. If the tool reports an error
    /// (`isError`), its message goes to stderr and the exit code is 1.
    #[command(after_help = SERVER_HELP)]
    Call {
        /// The tool's name.
        tool: String,
        /// The arguments, as a JSON object.
        #[arg(default_value = "{}")]
        arguments: String,
        /// Print the result as MCP JSON (content blocks, structuredContent, isError) instead of
        /// its content.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Serve many MCP servers as one: their tools found through `search_tools` and called
    /// through `call_tool` (or listed directly with --expose-all), over stdio or --port.
    #[cfg(feature = "mcp")]
    Gateway(crate::gateway::GatewayArgs),
}

/// How to reach the server.
#[derive(Debug, Args)]
struct ServerArgs {
    /// The URL of a streamable HTTP server, e.g. http://127.0.0.1:3001/mcp.
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// An HTTP header sent with every request, as 'Name: value' (repeatable; --url only).
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// A bearer token, sent as 'Authorization: Bearer TOKEN' (--url only).
    #[arg(long, value_name = "TOKEN")]
    bearer_token: Option<String>,
    /// Log in with OAuth when the server asks (--url only): prints the URL to open in a browser,
    /// receives the answer on 127.0.0.1:--auth-port, and keeps the tokens in --token-file for the
    /// next runs.
    #[arg(long, conflicts_with = "bearer_token")]
    auth: bool,
    /// The loopback port the browser is sent back to (--auth).
    #[arg(long, value_name = "PORT", default_value_t = 33418, requires = "auth")]
    auth_port: u16,
    /// Where --auth keeps tokens (default: $XDG_CONFIG_HOME/toolsmith/mcp-tokens.json, else
    /// ~/.config/toolsmith/mcp-tokens.json).
    #[arg(long, value_name = "FILE", requires = "auth")]
    token_file: Option<std::path::PathBuf>,
    /// How long connecting may take, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    connect_timeout: f64,
    /// How long a request may take, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 120.0)]
    timeout: f64,
    /// Let a stdio server write to this terminal's stderr (by default it is captured and its last
    /// lines are shown when connecting fails).
    #[arg(long)]
    show_stderr: bool,
    /// An environment variable for a stdio server, as NAME=VALUE (repeatable). Of this
    /// process's environment the server gets only HOME, LOGNAME, PATH, SHELL, TERM and USER.
    #[arg(long = "env", short = 'e', value_name = "NAME=VALUE")]
    env: Vec<String>,
    /// Pass this process's whole environment to a stdio server (API keys included).
    #[arg(long)]
    inherit_env: bool,
    /// The command that starts a stdio server, and its arguments (after `--`).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

#[cfg(feature = "mcp")]
fn usage_error(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}

/// Runs `toolsmith mcp ...`.
pub fn run(args: McpArgs) -> ExitCode {
    imp::run(args)
}

#[cfg(not(feature = "mcp"))]
mod imp {
    use super::*;

    pub fn run(_args: McpArgs) -> ExitCode {
        eprintln!("error: this toolsmith was built without MCP support: rebuild it with `--features mcp`");
        ExitCode::FAILURE
    }
}

#[cfg(feature = "mcp")]
mod imp {
    use std::time::Duration;

    use serde_json::{Value, json};
    use toolsmith::ToolDefinition;
    use toolsmith::search::tokens::{self as token_count, Encoding, TokenCount};
    use toolsmith::toolset::{FileTokenStore, LoopbackAuthorizer, McpAuth, McpCallResult, McpToolset};

    use super::*;

    pub fn run(args: McpArgs) -> ExitCode {
        let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(rt) => rt,
            Err(e) => {
                eprintln!("error: could not start the async runtime: {e}");
                return ExitCode::FAILURE;
            }
        };
        runtime.block_on(async {
            match args.command {
                McpCommand::Tools { json, encoding, server } => match (encoding.parse(), toolset(&server)) {
                    (Err(e), _) => usage_error(e),
                    (_, Err(code)) => code,
                    (Ok(encoding), Ok(mcp)) => {
                        let code = tools(&mcp, json, encoding).await;
                        mcp.close().await;
                        code
                    }
                },
                McpCommand::Gateway(args) => crate::gateway::run(args).await,
                McpCommand::Call { tool, arguments, json, server } => {
                    let arguments: Value = match serde_json::from_str(&arguments) {
                        Ok(v @ Value::Object(_)) => v,
                        Ok(other) => {
                            return usage_error(format!(
                                "the arguments must be a JSON object, like '{{\"message\": \"hi\"}}', got {other}"
                            ));
                        }
                        Err(e) => {
                            return usage_error(format!(
                                "the arguments are not valid JSON ({e}): give a JSON object, like '{{\"message\": \"hi\"}}'"
                            ));
                        }
                    };
                    match toolset(&server) {
                        Ok(mcp) => {
                            let code = call(&mcp, &tool, arguments, json).await;
                            mcp.close().await;
                            code
                        }
                        Err(code) => code,
                    }
                }
            }
        })
    }

    /// OAuth from the terminal: the URL printed, the code received on the loopback port, the
    /// tokens kept in a file.
    fn login(server: &ServerArgs) -> Result<McpAuth, ExitCode> {
        let file = match &server.token_file {
            Some(file) => file.clone(),
            None => {
                let config = std::env::var_os("XDG_CONFIG_HOME")
                    .filter(|d| !d.is_empty())
                    .map(std::path::PathBuf::from)
                    .or_else(|| std::env::var_os("HOME").map(|home| std::path::PathBuf::from(home).join(".config")));
                match config {
                    Some(dir) => dir.join("toolsmith").join("mcp-tokens.json"),
                    None => {
                        return Err(usage_error("--auth needs --token-file (neither XDG_CONFIG_HOME nor HOME is set)"));
                    }
                }
            }
        };
        let authorizer = LoopbackAuthorizer::new(server.auth_port)
            .on_url(|url| eprintln!("The server asks you to log in. Open this URL in a browser:\n\n  {url}\n"));
        Ok(McpAuth::oauth().client_name("toolsmith-cli").authorizer(authorizer).token_store(FileTokenStore::new(file)))
    }

    fn seconds(value: f64, option: &str) -> Result<Duration, ExitCode> {
        if value.is_finite() && value > 0.0 {
            Ok(Duration::from_secs_f64(value))
        } else {
            Err(usage_error(format!("--{option} must be a number of seconds greater than 0, got {value}")))
        }
    }

    fn toolset(server: &ServerArgs) -> Result<McpToolset, ExitCode> {
        let mcp = match (&server.url, server.command.split_first()) {
            (Some(_), Some(_)) => {
                return Err(usage_error("give either --url URL or -- COMMAND ARGS..., not both"));
            }
            (None, None) => {
                return Err(usage_error(
                    "say which server to use: --url URL for a streamable HTTP server, or -- COMMAND ARGS... for a stdio server",
                ));
            }
            (Some(url), None) => {
                if !server.env.is_empty() || server.inherit_env {
                    return Err(usage_error(
                        "--env and --inherit-env apply only to stdio servers (-- COMMAND ARGS...)",
                    ));
                }
                let mut mcp = McpToolset::http(url.clone());
                for header in &server.headers {
                    let Some((name, value)) = header.split_once(':') else {
                        return Err(usage_error(format!("--header must look like 'Name: value', got '{header}'")));
                    };
                    mcp = mcp.header(name.trim(), value.trim());
                }
                if let Some(token) = &server.bearer_token {
                    mcp = mcp.bearer_token(token.clone());
                }
                if server.auth {
                    mcp = mcp.auth(login(server)?);
                }
                mcp
            }
            (None, Some((command, args))) => {
                if !server.headers.is_empty() || server.bearer_token.is_some() || server.auth {
                    return Err(usage_error("--header, --bearer-token and --auth apply only to --url servers"));
                }
                let mut mcp = McpToolset::stdio(command.clone(), args.iter().cloned())
                    .inherit_stderr(server.show_stderr)
                    .inherit_env(server.inherit_env);
                for var in &server.env {
                    let Some((name, value)) = var.split_once('=').filter(|(name, _)| !name.is_empty()) else {
                        return Err(usage_error(format!("--env must look like NAME=VALUE, got '{var}'")));
                    };
                    mcp = mcp.env(name, value);
                }
                mcp
            }
        };
        let mcp = mcp
            .connect_timeout(seconds(server.connect_timeout, "connect-timeout")?)
            .request_timeout(seconds(server.timeout, "timeout")?);
        if let Err(e) = mcp.check() {
            return Err(usage_error(e));
        }
        Ok(mcp)
    }

    /// The token cost of a definition as OpenAI-style APIs are sent it (exact with the
    /// `tiktoken` feature, which this binary enables).
    fn tokens(def: &ToolDefinition, encoding: Encoding) -> TokenCount {
        token_count::count_tokens(&token_count::tool_wire_text(def), encoding)
    }

    fn one_line(text: &str, max: usize) -> String {
        let line = text.lines().next().unwrap_or("").trim();
        if line.chars().count() <= max {
            line.to_string()
        } else {
            let cut: String = line.chars().take(max.saturating_sub(3)).collect();
            format!("{cut}...")
        }
    }

    fn thousands(n: usize) -> String {
        let digits = n.to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    }

    async fn tools(mcp: &McpToolset, as_json: bool, encoding: Encoding) -> ExitCode {
        let defs = match mcp.list_tools().await {
            Ok(defs) => defs,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
        let info = mcp.server_info().await.ok();
        let counts: Vec<TokenCount> = defs.iter().map(|d| tokens(d, encoding)).collect();
        let exact = counts.iter().all(|c| c.exact);
        let costs: Vec<usize> = counts.iter().map(|c| c.tokens as usize).collect();
        let total: usize = costs.iter().sum();
        let how = if exact { format!("{} (tiktoken)", encoding.name()) } else { "estimated at 4 bytes a token".into() };
        if as_json {
            let tools: Vec<Value> = defs
                .iter()
                .zip(&costs)
                .map(|(def, cost)| {
                    json!({
                        "name": def.name,
                        "description": def.description,
                        "tokens": cost,
                        "input_schema": *def.parameters_json_schema,
                        "metadata": def.metadata,
                    })
                })
                .collect();
            let server = info
                .as_ref()
                .map(|i| json!({"name": i.name, "version": i.version, "protocol_version": i.protocol_version}));
            let out = json!({
                "server": server,
                "token_count": {"encoding": encoding.name(), "exact": exact},
                "total_tokens": total,
                "tools": tools,
            });
            println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
            return ExitCode::SUCCESS;
        }
        let server = match &info {
            Some(i) => format!(
                "{} {} (protocol {})",
                i.name.as_deref().unwrap_or(mcp.server_name()),
                i.version.as_deref().unwrap_or(""),
                i.protocol_version
            ),
            None => mcp.server_name().to_string(),
        };
        let plural = if defs.len() == 1 { "" } else { "s" };
        let approx = if exact { "" } else { "~" };
        println!("{server}: {} tool{plural}, {approx}{} tokens of definitions\n", defs.len(), thousands(total));
        let width = defs.iter().map(|d| d.name.chars().count()).max().unwrap_or(4).max(4);
        println!("{:<width$}  {:>7}  DESCRIPTION", "TOOL", "TOKENS");
        for (def, cost) in defs.iter().zip(&costs) {
            let description = one_line(def.description.as_deref().unwrap_or(""), 80);
            println!("{:<width$}  {:>7}  {description}", def.name, thousands(*cost));
        }
        println!("\n(tokens: {how})");
        ExitCode::SUCCESS
    }

    fn describe_block(block: &Value) -> String {
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        let text = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or("");
        match kind {
            "text" => text("text").to_string(),
            "image" | "audio" => {
                format!("[{kind}: {}, {} bytes base64]", text("mimeType"), text("data").len())
            }
            "resource" => {
                let resource = block.get("resource").cloned().unwrap_or(Value::Null);
                match resource.get("text").and_then(Value::as_str) {
                    Some(t) => t.to_string(),
                    None => format!(
                        "[resource {}: {}, {} bytes base64]",
                        resource.get("uri").and_then(Value::as_str).unwrap_or(""),
                        resource.get("mimeType").and_then(Value::as_str).unwrap_or("application/octet-stream"),
                        resource.get("blob").and_then(Value::as_str).map(str::len).unwrap_or(0)
                    ),
                }
            }
            "resource_link" => format!("[resource link: {} ({})]", text("uri"), text("name")),
            _ => block.to_string(),
        }
    }

    fn raw_json(result: &McpCallResult) -> Value {
        let mut out = json!({"content": result.content, "isError": result.is_error});
        if let Some(s) = &result.structured_content {
            out["structuredContent"] = s.clone();
        }
        if let Some(m) = &result.meta {
            out["_meta"] = m.clone();
        }
        out
    }

    async fn call(mcp: &McpToolset, tool: &str, arguments: Value, as_json: bool) -> ExitCode {
        let result = match mcp.call_tool(tool, arguments).await {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
        if as_json {
            println!("{}", serde_json::to_string_pretty(&raw_json(&result)).unwrap_or_default());
        } else if !result.is_error {
            match &result.structured_content {
                Some(s) if !s.is_null() => println!("{}", serde_json::to_string_pretty(s).unwrap_or_default()),
                _ => {
                    for block in &result.content {
                        println!("{}", describe_block(block));
                    }
                }
            }
        }
        if result.is_error {
            eprintln!("{}", result.error_message());
            return ExitCode::FAILURE;
        }
        ExitCode::SUCCESS
    }
}
