//! The code mode scenarios (tests/harness/code_mode) on toolsmith, compared with the results the
//! real pydantic-ai-harness 0.62 (with pydantic-monty 1.4) gave for them (`NAME.expected.json`,
//! written by `tests/harness/compare.py --update`). CI also runs them against the harness itself.

#[path = "../../toolsmith/examples/harness_runner.rs"]
#[allow(dead_code)]
mod runner;

use std::path::PathBuf;

use serde_json::Value;

#[test]
fn every_code_mode_scenario_matches_the_harness() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/harness/code_mode");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("the scenarios folder")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".json") && !n.ends_with(".expected.json"))
        .map(|n| n.trim_end_matches(".json").to_string())
        .collect();
    names.sort();
    assert!(names.len() >= 6, "{} scenarios", names.len());
    let mut failed = Vec::new();
    for name in &names {
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{name}.expected.json"))).unwrap()).unwrap();
        match runner::run_file_with(&dir.join(format!("{name}.json")), name, toolsmith_code::register) {
            Ok(actual) if actual == expected => {}
            Ok(_) => failed.push(format!(
                "{name}: differs (python3 tests/harness/compare.py --dir tests/harness/code_mode ... {name})"
            )),
            Err(e) => failed.push(format!("{name}: {e}")),
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} scenarios differ from the harness:\n{}",
        failed.len(),
        names.len(),
        failed.join("\n")
    );
}
