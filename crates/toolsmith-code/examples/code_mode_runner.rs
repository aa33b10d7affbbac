//! The harness scenarios runner (`crates/toolsmith/examples/harness_runner.rs`) with `CodeMode`
//! in its capability registry, for the code mode scenarios of `tests/harness/code_mode`.
//!
//! ```sh
//! cargo build -p toolsmith-code --example code_mode_runner
//! python3 tests/harness/compare.py --dir tests/harness/code_mode --runner target/debug/examples/code_mode_runner --python "$py"
//! ```

#[path = "../../toolsmith/examples/harness_runner.rs"]
#[allow(dead_code)]
mod runner;

fn main() -> std::process::ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: code_mode_runner SCENARIO.json");
        return std::process::ExitCode::from(2);
    };
    match runner::run_file_with(std::path::Path::new(&path), "main", toolsmith_code::register) {
        Ok(v) => {
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::ExitCode::from(2)
        }
    }
}
