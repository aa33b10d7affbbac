//! The MCP server (`toolsmith::mcp_server`): every server scenario of the official conformance
//! harness against the `mcp_conformance_server` example, and toolsmith's own `McpToolset`
//! against `McpServer` in process (validation errors, retries, approval, timeouts, unknown
//! tools, bearer tokens and origin checks over HTTP).
//!
//! ```text
//! eval "$(scripts/install-mcp-servers.sh)"
//! cargo build -p toolsmith --features mcp-server --example mcp_conformance_server
//! cargo test -p integration-tests --features mcp-servers --test mcp_server
//! ```

#[path = "mcp_server/cancellation.rs"]
mod cancellation;
#[path = "mcp_server/in_process.rs"]
mod in_process;
#[path = "mcp_server/list_changed.rs"]
mod list_changed;
#[allow(dead_code)]
#[path = "mcp/support.rs"]
mod support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use support::{assert_harness_passed, conformance_js, node, temp_dir};

/// The example binary, built by `cargo build -p toolsmith --features mcp-server --example
/// mcp_conformance_server` into the same target folder.
fn conformance_server() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let server = profile_dir.join("examples").join("mcp_conformance_server");
    assert!(
        server.exists(),
        "{} is missing: build it first with `cargo build -p toolsmith --features mcp-server --example mcp_conformance_server`",
        server.display()
    );
    server
}

/// The example, started once for every scenario, and its URL (it reports the port it got).
struct Running {
    _child: Child,
    /// Held open: the server exits when the test process ends and closes it.
    _stdin: std::process::ChildStdin,
    url: String,
}

fn server_url() -> &'static str {
    static SERVER: OnceLock<Running> = OnceLock::new();
    &SERVER
        .get_or_init(|| {
            let mut child = Command::new(conformance_server())
                .args(["--port", "0", "--exit-with-stdin"])
                .stdin(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut line = String::new();
            BufReader::new(child.stderr.take().unwrap()).read_line(&mut line).unwrap();
            let url = line.trim().strip_prefix("listening on ").expect("the server reports its URL").to_string();
            let stdin = child.stdin.take().unwrap();
            Running { _child: child, _stdin: stdin, url }
        })
        .url
}

/// Runs one server scenario; every check must pass (no failure, no warning).
fn run_conformance(scenario: &str) {
    let url = server_url();
    let work = temp_dir(&format!("conformance-server-{scenario}"));
    let output = Command::new(node())
        .arg(conformance_js())
        .args(["server", "--url", url, "--scenario", scenario, "--output-dir", "results"])
        .current_dir(&work)
        .output()
        .unwrap();
    assert_harness_passed(scenario, &output, &work, false);
}

/// Every active server scenario the pinned harness lists (`conformance list`).
#[test]
fn the_suite_lists_no_server_scenario_left_out() {
    let output = Command::new(node()).arg(conformance_js()).arg("list").output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    let listed: Vec<&str> = text
        .split("Client scenarios")
        .next()
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let known: Vec<&str> = SCENARIOS.to_vec();
    assert_eq!(listed, known, "the harness's server scenarios changed");
}

macro_rules! conformance {
    ($($test:ident => $scenario:literal,)*) => {
        const SCENARIOS: &[&str] = &[$($scenario),*];
        $(
            #[test]
            fn $test() {
                run_conformance($scenario);
            }
        )*
    };
}

conformance! {
    conformance_server_initialize => "server-initialize",
    conformance_logging_set_level => "logging-set-level",
    conformance_ping => "ping",
    conformance_completion_complete => "completion-complete",
    conformance_tools_list => "tools-list",
    conformance_tools_call_simple_text => "tools-call-simple-text",
    conformance_tools_call_image => "tools-call-image",
    conformance_tools_call_audio => "tools-call-audio",
    conformance_tools_call_embedded_resource => "tools-call-embedded-resource",
    conformance_tools_call_mixed_content => "tools-call-mixed-content",
    conformance_tools_call_with_logging => "tools-call-with-logging",
    conformance_tools_call_error => "tools-call-error",
    conformance_tools_call_with_progress => "tools-call-with-progress",
    conformance_tools_call_sampling => "tools-call-sampling",
    conformance_tools_call_elicitation => "tools-call-elicitation",
    conformance_json_schema_2020_12 => "json-schema-2020-12",
    conformance_elicitation_sep1034_defaults => "elicitation-sep1034-defaults",
    conformance_server_sse_polling => "server-sse-polling",
    conformance_server_sse_multiple_streams => "server-sse-multiple-streams",
    conformance_elicitation_sep1330_enums => "elicitation-sep1330-enums",
    conformance_resources_list => "resources-list",
    conformance_resources_read_text => "resources-read-text",
    conformance_resources_read_binary => "resources-read-binary",
    conformance_resources_templates_read => "resources-templates-read",
    conformance_resources_subscribe => "resources-subscribe",
    conformance_resources_unsubscribe => "resources-unsubscribe",
    conformance_prompts_list => "prompts-list",
    conformance_prompts_get_simple => "prompts-get-simple",
    conformance_prompts_get_with_args => "prompts-get-with-args",
    conformance_prompts_get_embedded_resource => "prompts-get-embedded-resource",
    conformance_prompts_get_with_image => "prompts-get-with-image",
    conformance_dns_rebinding_protection => "dns-rebinding-protection",
}
