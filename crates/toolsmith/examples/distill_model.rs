//! Distils a static embedding model (Model2Vec's layout) from a BERT sentence encoder, for the
//! semantic tool search, optionally fitted to a corpus (a JSON string a line):
//! `scripts/static-model.sh` runs it on all-MiniLM-L6-v2 and its corpus.
//!
//! ```sh
//! cargo run --release -p toolsmith --features semantic --example distill_model -- FROM TO [CORPUS.jsonl]
//! ```

use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (from, to, corpus) = match args.as_slice() {
        [from, to] => (from, to, None),
        [from, to, corpus] => (from, to, Some(corpus)),
        _ => {
            eprintln!("usage: distill_model FROM_FOLDER TO_FOLDER [CORPUS.jsonl]");
            return ExitCode::from(2);
        }
    };
    let started = Instant::now();
    let outcome = match corpus {
        None => toolsmith::search::semantic::distill(from, to).map(|()| String::new()),
        Some(path) => {
            let texts = match read_corpus(path) {
                Ok(texts) => texts,
                Err(e) => {
                    eprintln!("distill_model: {path}: {e}");
                    return ExitCode::FAILURE;
                }
            };
            toolsmith::search::semantic::distill_with_corpus(from, &texts, to).map(|r| {
                format!(
                    ", fitted {} word pieces on {} texts (mean squared error {:.4} distilled, {:.4} fitted)",
                    r.pieces_fitted, r.texts, r.error_distilled, r.error_fitted
                )
            })
        }
    };
    match outcome {
        Ok(fitted) => {
            eprintln!("distilled {from} into {to} in {:.1} s{fitted}", started.elapsed().as_secs_f64());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("distill_model: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The corpus: a JSON string a line (blank lines skipped).
fn read_corpus(path: &str) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| serde_json::from_str::<String>(line).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}
