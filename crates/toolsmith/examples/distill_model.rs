//! Distils a static embedding model (Model2Vec's layout) from a BERT sentence encoder, for the
//! semantic tool search: `scripts/embedding-model.sh` runs it after installing all-MiniLM-L6-v2.
//!
//! ```sh
//! cargo run -p toolsmith --features semantic --example distill_model -- FROM_FOLDER TO_FOLDER
//! ```

use std::time::Instant;

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [from, to] = args.as_slice() else {
        eprintln!("usage: distill_model FROM_FOLDER TO_FOLDER");
        return std::process::ExitCode::from(2);
    };
    let started = Instant::now();
    match toolsmith::search::semantic::distill(from, to) {
        Ok(()) => {
            eprintln!("distilled {from} into {to} in {:.1} s", started.elapsed().as_secs_f64());
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("distill_model: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
