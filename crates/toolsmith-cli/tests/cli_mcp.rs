//! `toolsmith mcp tools` and `toolsmith mcp call` against real MCP servers from the npm registry
//! (feature `mcp-tests`; the servers are installed by `scripts/install-mcp-servers.sh`):
//!
//! ```text
//! eval "$(scripts/install-mcp-servers.sh)"
//! cargo test -p toolsmith-cli --features mcp-tests --test cli_mcp
//! ```

#[allow(dead_code)]
#[path = "../../integration-tests/tests/mcp/support.rs"]
mod support;

use std::process::{Command, Output};

use serde_json::Value;
use support::*;

fn toolsmith(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolsmith")).args(args).output().expect("could not run toolsmith")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn everything_args() -> Vec<String> {
    vec!["--".into(), node(), everything_js(), "stdio".into()]
}

fn with_server<'a>(args: &[&'a str], server: &'a [String]) -> Vec<&'a str> {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(server.iter().map(String::as_str));
    all
}

#[test]
fn tools_lists_a_stdio_server_with_token_costs() {
    let server = everything_args();
    let out = toolsmith(&with_server(&["mcp", "tools"], &server));
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{}", text(&out.stderr));
    assert!(stdout.contains("tokens of definitions"), "{stdout}");
    assert!(stdout.contains("TOOL") && stdout.contains("TOKENS"), "{stdout}");
    let echo = stdout.lines().find(|l| l.starts_with("echo ")).unwrap_or_else(|| panic!("no echo line:\n{stdout}"));
    assert!(echo.contains("Echoes back the input string"), "{echo}");
    assert!(stdout.lines().any(|l| l.starts_with("get-sum ")), "{stdout}");
}

#[test]
fn tools_json_over_streamable_http() {
    let server = everything_http();
    let out = toolsmith(&["mcp", "tools", "--json", "--url", &server.url]);
    assert!(out.status.success(), "stderr:\n{}", text(&out.stderr));
    let listing: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tools = listing["tools"].as_array().unwrap();
    let echo = tools.iter().find(|t| t["name"] == "echo").unwrap();
    assert!(echo["tokens"].as_u64().unwrap() > 10, "{echo}");
    assert_eq!(echo["input_schema"]["properties"]["message"]["type"], "string");
    let sum: u64 = tools.iter().map(|t| t["tokens"].as_u64().unwrap()).sum();
    assert_eq!(listing["total_tokens"].as_u64().unwrap(), sum);
    assert_eq!(listing["token_count"], serde_json::json!({"encoding": "o200k_base", "exact": true}));
    assert!(listing["server"]["protocol_version"].is_string(), "{}", listing["server"]);
}

#[test]
fn call_prints_text_and_structured_results() {
    let server = everything_args();
    let out = toolsmith(&with_server(&["mcp", "call", "echo", r#"{"message": "hi there"}"#], &server));
    assert!(out.status.success(), "stderr:\n{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Echo: hi there\n");

    let out =
        toolsmith(&with_server(&["mcp", "call", "get-structured-content", r#"{"location": "Chicago"}"#], &server));
    assert!(out.status.success(), "stderr:\n{}", text(&out.stderr));
    let weather: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(weather["temperature"].is_number(), "{weather}");

    let http = everything_http();
    let out = toolsmith(&["mcp", "call", "get-sum", r#"{"a": 2, "b": 40}"#, "--json", "--url", &http.url]);
    assert!(out.status.success(), "stderr:\n{}", text(&out.stderr));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["isError"], false);
    assert!(result["content"][0]["text"].as_str().unwrap().contains("42"), "{result}");
}

#[test]
fn call_with_is_error_exits_1_with_the_servers_message() {
    let root = temp_dir("cli-fs");
    let root = root.canonicalize().unwrap();
    let outside = std::env::temp_dir().join("elsewhere.txt").to_string_lossy().into_owned();
    let server = vec!["--".to_string(), node(), filesystem_js(), root.to_string_lossy().into_owned()];
    let args = format!(r#"{{"path": "{outside}"}}"#);
    let out = toolsmith(&with_server(&["mcp", "call", "read_text_file", &args], &server));
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("Access denied - path outside allowed directories"), "{stderr}");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
}

#[test]
fn connection_failures_exit_1_and_usage_mistakes_exit_2() {
    let out = toolsmith(&["mcp", "tools", "--", "toolsmith-no-such-server"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("could not start MCP server"), "{}", text(&out.stderr));

    let out = toolsmith(&["mcp", "tools"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("say which server to use"), "{}", text(&out.stderr));

    let out = toolsmith(&["mcp", "tools", "--url", "http://127.0.0.1:1/mcp", "--", "node"]);
    assert_eq!(out.status.code(), Some(2));

    let out = toolsmith(&["mcp", "call", "echo", "{not json", "--", "node"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("not valid JSON"), "{}", text(&out.stderr));

    let out = toolsmith(&["mcp", "tools", "--help"]);
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("counted with a real tokenizer"), "{}", text(&out.stdout));

    let out = toolsmith(&["mcp", "tools", "--encoding", "p50k", "--", "node"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("p50k"), "{}", text(&out.stderr));
}
