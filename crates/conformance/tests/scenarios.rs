//! Runs the conformance scenarios this version supports through the `conformance` binary and
//! compares each result with the reference output, exactly (number types included).
//!
//! Public scenarios live in `../shared/conformance/scenarios` and are listed in `supported.txt`
//! (the list only grows); the project's own live in `tests/scenarios` at the workspace root, with
//! expected outputs from the reference runner (`tests/reference/run_pydantic_ai.py`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn check(scenario: &Path) -> Result<(), String> {
    let expected_path = scenario.with_extension("expected.json");
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(&expected_path).map_err(|e| format!("{}: {e}", expected_path.display()))?,
    )
    .map_err(|e| format!("{}: {e}", expected_path.display()))?;
    let out = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .arg(scenario)
        .output()
        .map_err(|e| format!("cannot run the conformance binary: {e}"))?;
    if !out.status.success() {
        return Err(format!("exit {}: {}", out.status, String::from_utf8_lossy(&out.stderr)));
    }
    let actual: Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("output is not JSON: {e}"))?;
    if actual != expected {
        return Err(format!(
            "differs from {}\n--- expected\n{}\n--- actual\n{}",
            expected_path.display(),
            serde_json::to_string(&expected).unwrap_or_default(),
            serde_json::to_string(&actual).unwrap_or_default()
        ));
    }
    Ok(())
}

fn run_all(scenarios: Vec<PathBuf>) {
    let mut failures = Vec::new();
    let total = scenarios.len();
    for s in &scenarios {
        if let Err(e) = check(s) {
            failures.push(format!("{}: {e}", s.display()));
        }
    }
    assert!(failures.is_empty(), "{} of {total} scenarios failed:\n{}", failures.len(), failures.join("\n\n"));
}

#[test]
fn supported_public_scenarios_match_the_reference() {
    let dir = workspace().join("../shared/conformance/scenarios");
    let list = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("supported.txt"))
        .expect("crates/conformance/supported.txt lists the supported public scenarios");
    let names: Vec<&str> = list.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    assert!(!names.is_empty());
    if !dir.is_dir() {
        eprintln!("note: {} is not present; only the project's own scenarios are checked", dir.display());
        return;
    }
    run_all(names.iter().map(|n| dir.join(format!("{n}.json"))).collect());
}

#[test]
fn own_scenarios_match_the_reference() {
    let dir = workspace().join("tests/scenarios");
    let mut scenarios: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/scenarios holds the project's own scenarios")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            name.ends_with(".json") && !name.ends_with(".expected.json")
        })
        .collect();
    scenarios.sort();
    assert!(scenarios.len() >= 50, "expected the project's own scenarios in {}", dir.display());
    run_all(scenarios);
}
