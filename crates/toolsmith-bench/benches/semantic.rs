//! Semantic and hybrid tool search (feature `semantic`): embedding a request, building the
//! index, and searching at 1,000, 10,000 and 100,000 deferred tools, with the heap allocated.
//!
//! ```sh
//! export TOOLSMITH_EMBEDDING_MODEL="$(scripts/embedding-model.sh)"
//! cargo bench -p toolsmith-bench --features semantic --bench semantic
//! ```
//!
//! The catalogue is the one of the `search` bench (the shared BFCL corpus, grown with renamed
//! copies). The real model (all-MiniLM-L6-v2) embeds about a hundred tools a second on one
//! core, so the benches at 10,000 and 100,000 tools would spend hours building their index:
//!
//! - `*_model`: the real model, at 1,000 tools. `embed_request` is the part of every search that
//!   does not depend on the catalogue's size; `build_model` embeds every tool (linear in the
//!   tools embedded); `update_model` replaces the catalogue by one with a tool more or less,
//!   which embeds at most that tool.
//! - `*_scan`: the same index and search code with a stand-in embedding function
//!   (`SemanticModel::from_fn`, 384 values from a hash of the text, about a microsecond), so
//!   that what is timed is what grows with the catalogue: assembling the index from the cache,
//!   comparing the request with every tool, and, for `hybrid`, BM25 and the fusion. A search at
//!   a size costs `embed_request` plus its `search_*_scan`.
//!
//! Memory: divan's allocation profiler reports the bytes each build allocates (the embeddings
//! are 1.5 KiB a tool, held once, by the model's cache, which the index shares).

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::OnceLock;

use divan::Bencher;
use toolsmith::ToolDefinition;
use toolsmith::search::SearchStrategy;
use toolsmith::search::eval::{self, SearchIndex};
use toolsmith::search::semantic::{MODEL_ENV, SemanticModel};

#[global_allocator]
static ALLOC: divan::AllocProfiler = divan::AllocProfiler::system();

fn main() {
    divan::main();
}

const SIZES: &[usize] = &[1_000, 10_000, 100_000];

const REQUESTS: &[&str] = &[
    "Find the area of a triangle with a base of 10 units and height of 5 units.",
    "Book a flight from Seattle to Boston with American Airlines and book a hotel in Boston for 4 nights.",
    "What's the weather going to be like in London for the next 3 days?",
    "How many Canadian dollars can I get for 500 US dollars?",
    "Send a message to the team channel saying the deployment is finished.",
    "remember that my sister lives in Lyon",
];

fn corpus() -> &'static [ToolDefinition] {
    static CORPUS: OnceLock<Vec<ToolDefinition>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let manifest = env!("CARGO_MANIFEST_DIR");
        let candidates = [
            std::env::var("TOOLSMITH_SEARCH_CORPUS").ok(),
            Some(format!("{manifest}/../../../shared/search-eval/corpus.jsonl")),
            Some(format!("{manifest}/../toolsmith/tests/fixtures/search/mcp_corpus.jsonl")),
        ];
        for path in candidates.into_iter().flatten() {
            if let Ok(tools) = eval::load_corpus(&path) {
                eprintln!("semantic bench corpus: {path} ({} tools)", tools.len());
                return tools;
            }
        }
        panic!("no search corpus found")
    })
}

fn model_path() -> String {
    std::env::var(MODEL_ENV).unwrap_or_else(|_| panic!("set {MODEL_ENV} (scripts/embedding-model.sh prints it)"))
}

/// The real model, loaded once.
fn model() -> SemanticModel {
    static MODEL: OnceLock<SemanticModel> = OnceLock::new();
    MODEL.get_or_init(|| SemanticModel::load(model_path()).expect("the model loads")).clone()
}

/// A stand-in embedding: 384 pseudo-random values seeded by the text.
fn stand_in() -> SemanticModel {
    SemanticModel::from_fn(384, |texts| {
        texts
            .iter()
            .map(|t| {
                let mut h = DefaultHasher::new();
                t.hash(&mut h);
                let mut x = h.finish() | 1;
                (0..384)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        (x >> 40) as f32 / (1u64 << 24) as f32 - 0.5
                    })
                    .collect()
            })
            .collect()
    })
}

/// One request embedded by the real model.
#[divan::bench]
fn embed_request(bencher: Bencher) {
    let model = model();
    let mut i = 0;
    bencher.bench_local(|| {
        i = (i + 1) % REQUESTS.len();
        model.embed(divan::black_box(REQUESTS[i]))
    });
}

/// Embedding 1,000 tools with the real model, nothing cached.
#[divan::bench(sample_count = 3, sample_size = 1)]
fn build_model(bencher: Bencher) {
    let tools = eval::scale(corpus(), 1_000);
    bencher
        .with_inputs(|| (SemanticModel::load(model_path()).expect("the model loads"), SearchIndex::new(&tools)))
        .bench_local_values(|(model, index)| {
            index.prepare(&SearchStrategy::Semantic(model));
            index
        });
}

/// A change of one tool in a catalogue of 1,000, then a search, with the real model.
#[divan::bench(sample_count = 20, sample_size = 1)]
fn update_model(bencher: Bencher) {
    let strategy = SearchStrategy::Hybrid(model());
    let big = eval::scale(corpus(), 1_001);
    let small = big[..1_000].to_vec();
    let first = SearchIndex::new(&small);
    first.prepare(&strategy);
    let mut index = Some(first);
    let mut grow = true;
    bencher.bench_local(|| {
        let next = index.take().map(|i| i.updated(if grow { &big } else { &small }));
        grow = !grow;
        let ranked = next.as_ref().map(|i| i.rank(&strategy, divan::black_box("weather forecast"), 10));
        index = next;
        ranked
    });
}

fn bench_search(bencher: Bencher, n: usize, strategy: SearchStrategy) {
    let index = SearchIndex::new(&eval::scale(corpus(), n));
    index.prepare(&strategy);
    let mut i = 0;
    bencher.bench_local(|| {
        i = (i + 1) % REQUESTS.len();
        index.rank(&strategy, divan::black_box(REQUESTS[i]), 10)
    });
}

/// A hybrid search with the real model, 1,000 tools, index built.
#[divan::bench]
fn search_hybrid_model(bencher: Bencher) {
    bench_search(bencher, 1_000, SearchStrategy::Hybrid(model()));
}

/// A semantic search with the real model, 1,000 tools, index built.
#[divan::bench]
fn search_semantic_model(bencher: Bencher) {
    bench_search(bencher, 1_000, SearchStrategy::Semantic(model()));
}

/// Building the index (stand-in embedding): the cache filled and the rows assembled.
#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn build_scan(bencher: Bencher, n: usize) {
    let tools = eval::scale(corpus(), n);
    bencher.with_inputs(|| (stand_in(), SearchIndex::new(&tools))).bench_local_values(|(model, index)| {
        index.prepare(&SearchStrategy::Semantic(model));
        index
    });
}

/// A semantic search past the request's embedding (stand-in embedding).
#[divan::bench(args = SIZES)]
fn search_semantic_scan(bencher: Bencher, n: usize) {
    bench_search(bencher, n, SearchStrategy::Semantic(stand_in()));
}

/// A hybrid search past the request's embedding (stand-in embedding): BM25, the scan, the fusion.
#[divan::bench(args = SIZES)]
fn search_hybrid_scan(bencher: Bencher, n: usize) {
    bench_search(bencher, n, SearchStrategy::Hybrid(stand_in()));
}
