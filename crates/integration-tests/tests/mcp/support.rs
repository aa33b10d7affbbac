//! Finding and starting the real MCP servers installed by `scripts/install-mcp-servers.sh`.

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use toolsmith::toolset::McpToolset;

const HOW_TO_INSTALL: &str = "These tests run real MCP servers from the npm registry. Install them (once; it takes \
about 20 s and needs npm) and point the tests at them with, from the repository root:\n\n    eval \"$(scripts/install-mcp-servers.sh)\"\n    cargo build -p toolsmith --features mcp --example mcp_conformance_client\n    cargo test -p integration-tests --features mcp-servers --test mcp\n    cargo test -p toolsmith-cli --features mcp-tests --test cli_mcp\n";

/// The folder made by `scripts/install-mcp-servers.sh` (`$TOOLSMITH_MCP_SERVERS`); fails the
/// test with instructions when it is not set.
pub fn servers_dir() -> PathBuf {
    match std::env::var_os("TOOLSMITH_MCP_SERVERS") {
        Some(dir) if !dir.is_empty() => {
            let dir = PathBuf::from(dir);
            if !dir.join("node_modules").is_dir() {
                panic!("TOOLSMITH_MCP_SERVERS={} has no node_modules folder.\n{HOW_TO_INSTALL}", dir.display());
            }
            dir
        }
        _ => panic!("TOOLSMITH_MCP_SERVERS is not set.\n{HOW_TO_INSTALL}"),
    }
}

fn installed(relative: &str) -> String {
    let path = servers_dir().join(relative);
    if !path.exists() {
        panic!("{} is missing: the install is incomplete.\n{HOW_TO_INSTALL}", path.display());
    }
    path.to_string_lossy().into_owned()
}

/// node 22.
pub fn node() -> String {
    installed("node_modules/.bin/node")
}

/// `server-everything`'s entry point.
pub fn everything_js() -> String {
    installed("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

/// `server-filesystem`'s entry point.
pub fn filesystem_js() -> String {
    installed("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
}

/// The conformance harness's entry point.
pub fn conformance_js() -> String {
    installed("node_modules/@modelcontextprotocol/conformance/dist/index.js")
}

/// The `--require` preload that keeps servers on 127.0.0.1.
pub fn localhost_preload() -> String {
    installed("listen-localhost.cjs")
}

/// server-everything over stdio.
pub fn everything_stdio<D>() -> McpToolset<D> {
    McpToolset::stdio(node(), [everything_js(), "stdio".to_string()]).name("everything")
}

/// server-filesystem over stdio, allowed to read `root` only.
pub fn filesystem_stdio<D>(root: &Path) -> McpToolset<D> {
    McpToolset::stdio(node(), [filesystem_js(), root.to_string_lossy().into_owned()]).name("filesystem")
}

/// A port that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("no free port")
}

/// A server process, killed when dropped.
pub struct ServerProcess {
    child: Child,
    /// The MCP endpoint.
    pub url: String,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// server-everything over streamable HTTP on 127.0.0.1, ready to take requests.
pub fn everything_http() -> ServerProcess {
    let port = free_port();
    let mut child = Command::new(node())
        .arg("--require")
        .arg(localhost_preload())
        .arg(everything_js())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("could not start server-everything");
    // Drain stderr so the server never blocks on a full pipe.
    if let Some(stderr) = child.stderr.take() {
        std::thread::spawn(move || for _ in BufReader::new(stderr).lines() {});
    }
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("server-everything did not listen on 127.0.0.1:{port} within 20 s");
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("server-everything exited early with {status}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    ServerProcess { child, url: format!("http://127.0.0.1:{port}/mcp") }
}

/// A hostile server over streamable HTTP (`mcp/echo_keys_server.cjs`, on the official
/// TypeScript SDK) that echoes the credentials it receives in its results and errors.
pub fn echo_keys_http() -> ServerProcess {
    let port = free_port();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/echo_keys_server.cjs");
    let mut child = Command::new(node())
        .arg(script)
        .arg(port.to_string())
        .env("NODE_PATH", servers_dir().join("node_modules"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("could not start the echo-keys server");
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("the echo-keys server did not listen on 127.0.0.1:{port} within 20 s");
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the echo-keys server exited early with {status}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    ServerProcess { child, url: format!("http://127.0.0.1:{port}/mcp") }
}

/// A fresh empty folder under the system's temporary folder.
pub fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolsmith-mcp-{tag}-{}-{}", std::process::id(), nanos()));
    std::fs::create_dir_all(&dir).expect("could not create a temporary folder");
    dir
}

fn nanos() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
}

/// Asserts that a run of the official conformance harness passed: it exited 0 and every check it
/// wrote under `work/results` (at any depth: an `auth/x` scenario writes
/// `results/auth/x-<time>/checks.json`) is a success: no failure, and no warning unless
/// `warnings_allowed`. Removes `work`.
pub fn assert_harness_passed(scenario: &str, output: &std::process::Output, work: &Path, warnings_allowed: bool) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report = format!("harness exit {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}", output.status.code());
    assert!(output.status.success(), "scenario {scenario} failed:\n{report}");
    let checks = checks_under(&work.join("results"));
    assert!(!checks.is_empty(), "the harness recorded no checks\n{report}");
    let bad: Vec<&serde_json::Value> =
        checks.iter().filter(|c| c["status"] == "FAILURE" || (!warnings_allowed && c["status"] == "WARNING")).collect();
    assert!(bad.is_empty(), "failed checks: {bad:#?}\n{report}");
    assert!(checks.iter().any(|c| c["status"] == "SUCCESS"), "no check passed\n{report}");
    let _ = std::fs::remove_dir_all(work);
}

/// The checks the harness wrote under `dir`, at any depth.
fn checks_under(dir: &Path) -> Vec<serde_json::Value> {
    let mut checks = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            checks.extend(checks_under(&path));
        } else if path.file_name().is_some_and(|n| n == "checks.json") {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            checks.extend(serde_json::from_str::<Vec<serde_json::Value>>(&text).unwrap_or_default());
        }
    }
    checks
}
