//! Micro-benchmarks of streamed output, through the public API only.
//!
//! ```sh
//! cargo bench -p toolsmith-bench --bench stream_output
//! ```
//!
//! - `structured_pieces`: a run whose model streams its structured output (the output tool's
//!   arguments: a title and a list of `n / 4` short strings) in `n` pieces of a few bytes,
//!   consumed with `stream_output` (each partial output validated against the schema as it
//!   grows). Reported per piece.
//! - `text_pieces`: the same run streaming a text answer of `n` pieces, consumed with
//!   `stream_output` too: the floor a structured piece is measured against. Reported per piece.

use divan::Bencher;
use divan::counter::ItemsCount;
use futures::{StreamExt, stream};
use serde_json::json;
use toolsmith::Agent;
use toolsmith::model::{FunctionModel, StreamDelta};

fn main() {
    divan::main();
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

/// The output's arguments, cut in `n` pieces.
fn pieces(n: usize) -> Vec<String> {
    let items: Vec<String> = (0..n / 4).map(|i| format!("item {i}")).collect();
    let text = json!({"title": "a report", "items": items}).to_string();
    let size = text.len().div_ceil(n);
    text.as_bytes().chunks(size).map(|c| String::from_utf8(c.to_vec()).expect("ASCII")).collect()
}

fn structured_agent(n: usize) -> Agent<(), serde_json::Value> {
    let pieces = pieces(n);
    let model = FunctionModel::stream(move |_, info| {
        let tool = info.output_tools[0].name.clone();
        let deltas: Vec<StreamDelta> = pieces
            .iter()
            .enumerate()
            .map(|(i, p)| {
                if i == 0 {
                    StreamDelta::tool_call(0, tool.clone(), p.clone())
                } else {
                    StreamDelta::tool_args(0, p.clone())
                }
            })
            .collect();
        stream::iter(deltas)
    });
    let schema = json!({
        "type": "object",
        "properties": {"title": {"type": "string"}, "items": {"type": "array", "items": {"type": "string"}}},
        "required": ["title", "items"],
    });
    Agent::builder_streaming(model).output_schema(schema).build().expect("agent builds")
}

fn text_agent(n: usize) -> Agent {
    let model = FunctionModel::stream(move |_, _| stream::iter((0..n).map(|i| StreamDelta::text(format!("w{i} ")))));
    Agent::builder_streaming(model).build().expect("agent builds")
}

/// A structured output streamed in `n` pieces, reported per piece.
#[divan::bench(args = [40, 400, 4_000], sample_count = 20)]
fn structured_pieces(bencher: Bencher, n: usize) {
    let rt = runtime();
    let agent = structured_agent(n);
    bencher.counter(ItemsCount::new(n)).bench_local(|| {
        rt.block_on(async {
            let mut outputs = agent.run("report").stream_output();
            let mut seen = 0usize;
            while let Some(o) = outputs.next().await {
                o.expect("partial output");
                seen += 1;
            }
            assert!(seen > 0);
            outputs.result().await.expect("run")
        })
    });
}

/// A text answer streamed in `n` pieces, reported per piece.
#[divan::bench(args = [40, 400, 4_000], sample_count = 20)]
fn text_pieces(bencher: Bencher, n: usize) {
    let rt = runtime();
    let agent = text_agent(n);
    bencher.counter(ItemsCount::new(n)).bench_local(|| {
        rt.block_on(async {
            let mut outputs = agent.run("answer").stream_output();
            while let Some(o) = outputs.next().await {
                o.expect("partial output");
            }
            outputs.result().await.expect("run")
        })
    });
}
