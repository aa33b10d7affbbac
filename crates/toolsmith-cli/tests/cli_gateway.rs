//! `toolsmith mcp gateway` driven by the official TypeScript SDK client over stdio, in front of
//! the real `server-everything` and `server-filesystem` and a server that does not start
//! (feature `mcp-tests`; installed by `scripts/install-mcp-servers.sh`):
//!
//! ```text
//! eval "$(scripts/install-mcp-servers.sh)"
//! cargo test -p toolsmith-cli --features mcp-tests --test cli_gateway
//! ```

#[allow(dead_code)]
#[path = "../../integration-tests/tests/mcp/support.rs"]
mod support;
#[path = "cli_gateway/upstreams.rs"]
mod upstreams;

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use support::*;

/// A configuration with the filesystem server as `files` (rooted at `root`), everything as
/// `everything`, and `down`, whose command does not exist.
fn write_config(dir: &Path, root: &Path) -> std::path::PathBuf {
    let config = format!(
        "[servers.files]\ncommand = {node:?}\nargs = [{fs:?}, {root:?}]\n\n\
         [servers.everything]\ncommand = {node:?}\nargs = [{everything:?}, \"stdio\"]\n\n\
         [servers.down]\ncommand = \"/nonexistent/mcp-server\"\n",
        node = node(),
        fs = filesystem_js(),
        everything = everything_js(),
        root = root.display().to_string(),
    );
    let path = dir.join("gateway.toml");
    std::fs::write(&path, config).unwrap();
    path
}

/// Runs the SDK client script; what it printed.
fn sdk_client(config: &Path, file: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gateway/sdk_client.cjs");
    let output = Command::new(node())
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_toolsmith"))
        .arg(config)
        .arg(file)
        .env("NODE_PATH", servers_dir().join("node_modules"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the SDK client failed:\nstdout:\n{stdout}\nstderr:\n{stderr}");
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn the_sdk_client_searches_and_calls_through_the_gateway() {
    let dir = temp_dir("gateway-sdk");
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let file = root.join("notes.txt");
    std::fs::write(&file, "hello from the gateway\n").unwrap();
    let root = root.canonicalize().unwrap();
    let file = file.canonicalize().unwrap();
    let out = sdk_client(&write_config(&dir, &root), &file);

    // Exactly two tools.
    assert_eq!(out["tools"], serde_json::json!(["search_tools", "call_tool"]));
    // Search over every upstream finds the filesystem server's read_text_file first.
    let found: Vec<&str> =
        out["search"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(found.first(), Some(&"files_read_text_file"), "{found:?}");
    assert!(out["search"]["tools"][0]["parameters"]["properties"]["path"].is_object(), "{}", out["search"]);
    // The dead server is reported, and does not take the others down.
    let down = &out["search"]["unavailable_servers"][0];
    assert_eq!(down["server"], "down", "{}", out["search"]);
    // call_tool returns the file's text.
    assert_eq!(out["read"]["isError"], false, "{}", out["read"]);
    assert_eq!(out["read"]["text"], "hello from the gateway\n");
    assert_eq!(out["echo"]["text"], "Echo: hi");
    // Bad input: an unknown tool, invalid arguments for a real one, no name at all.
    assert_eq!(out["unknown"]["isError"], true);
    assert!(out["unknown"]["text"].as_str().unwrap().contains("Unknown tool `nowhere_tool`"), "{}", out["unknown"]);
    assert_eq!(out["invalid"]["isError"], true, "{}", out["invalid"]);
    assert_eq!(out["missing_name"]["isError"], true);
    assert!(out["missing_name"]["text"].as_str().unwrap().contains("validation error"), "{}", out["missing_name"]);
    // The dead server is asked again at the next search, and still reported.
    assert_eq!(out["dead"]["unavailable_servers"][0]["server"], "down");
    let _ = std::fs::remove_dir_all(&dir);
}
