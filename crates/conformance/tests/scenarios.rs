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
    let mut actual: Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("output is not JSON: {e}"))?;
    accept_worded_errors(&expected, &mut actual);
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

/// A run's error message is compared as SCENARIOS.md (and `compare.py`) says: it may be worded
/// for a Rust developer, but must hold every fact of the expected one (each quoted value, each
/// number, as a whole word; API names in backticks are not facts). A message that does is
/// replaced by the expected one, so that the exact comparison passes.
fn accept_worded_errors(expected: &Value, actual: &mut Value) {
    accept_worded_hook_errors(expected, actual);
    let (Some(expected_runs), Some(actual_runs)) =
        (expected["runs"].as_array(), actual.get_mut("runs").and_then(Value::as_array_mut))
    else {
        return;
    };
    for (e, a) in expected_runs.iter().zip(actual_runs.iter_mut()) {
        let (Some(want), Some(got)) =
            (e.pointer("/error/message").and_then(Value::as_str), a.pointer("/error/message"))
        else {
            continue;
        };
        let got = got.as_str().unwrap_or_default();
        if message_facts(want).iter().all(|f| has_word(got, f))
            && let Some(m) = a.pointer_mut("/error/message")
        {
            *m = Value::String(want.to_string());
        }
    }
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The values quoted in `message` ('x' or "x") and the numbers outside them, backtick spans
/// left out.
fn message_facts(message: &str) -> Vec<String> {
    let mut text = String::new();
    let mut rest = message;
    while let Some(open) = rest.find('`') {
        let Some(close) = rest[open + 1..].find('`') else { break };
        text.push_str(&rest[..open]);
        text.push(' ');
        rest = &rest[open + 1 + close + 1..];
    }
    text.push_str(rest);
    let chars: Vec<char> = text.chars().collect();
    let mut facts = Vec::new();
    let mut rest = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if (c == '\'' || c == '"')
            && let Some(len) = chars[i + 1..].iter().position(|&d| d == c)
        {
            let quoted: String = chars[i + 1..i + 1 + len].iter().collect();
            if !quoted.is_empty() {
                facts.push(quoted);
            }
            rest.push(' ');
            i += len + 2;
            continue;
        }
        rest.push(c);
        i += 1;
    }
    let chars: Vec<char> = rest.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let before_ok = i == 0 || !(is_word(chars[i - 1]) || chars[i - 1] == '.');
        if chars[i].is_ascii_digit() && before_ok {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            if i + 1 < chars.len() && chars[i] == '.' && chars[i + 1].is_ascii_digit() {
                i += 1;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            let after_ok = i == chars.len() || !(is_word(chars[i]) || chars[i] == '.');
            if after_ok {
                facts.push(chars[start..i].iter().collect());
            }
            continue;
        }
        i += 1;
    }
    facts
}

/// The same rule for a run-ending error logged in a hook-log line (`LABEL.HOOK [TOOL] TYPE:
/// MESSAGE`), as `tests/differential/relax.py` (and `scripts/compare-scenarios.py`) apply it: the
/// prefix and the type must be the expected ones, the message must hold the expected facts.
fn accept_worded_hook_errors(expected: &Value, actual: &mut Value) {
    let (Some(want), Some(got)) =
        (expected["hook_log"].as_array(), actual.get_mut("hook_log").and_then(Value::as_array_mut))
    else {
        return;
    };
    for (w, g) in want.iter().zip(got.iter_mut()) {
        let (Some(w), Some(gs)) = (w.as_str(), g.as_str()) else { continue };
        if w == gs {
            continue;
        }
        if let (Some((wp, wt, wm)), Some((gp, gt, gm))) = (split_error(w), split_error(gs))
            && wp == gp
            && wt == gt
            && message_facts(wm).iter().all(|f| has_word(gm, f))
        {
            *g = Value::String(w.to_string());
        }
    }
}

/// A hook-log line's prefix, run-ending error type and message (the earliest type in the line).
fn split_error(line: &str) -> Option<(&str, &str, &str)> {
    ["UserError", "UnexpectedModelBehavior", "UsageLimitExceeded"]
        .iter()
        .filter_map(|t| line.find(&format!(" {t}: ")).map(|at| (at, *t)))
        .min_by_key(|(at, _)| *at)
        .map(|(at, t)| (&line[..at + 1], t, &line[at + 1 + t.len() + 2..]))
}

/// Whether `fact` occurs in `text` with no word character right before or after it.
fn has_word(text: &str, fact: &str) -> bool {
    text.match_indices(fact).any(|(at, _)| {
        let before = text[..at].chars().next_back().is_none_or(|c| !is_word(c));
        let after = text[at + fact.len()..].chars().next().is_none_or(|c| !is_word(c));
        before && after
    })
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
