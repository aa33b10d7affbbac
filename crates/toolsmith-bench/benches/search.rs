//! Tool search: index builds and searches per strategy at 1,000, 10,000 and 100,000 deferred
//! tools.
//!
//! ```sh
//! cargo bench -p toolsmith-bench --bench search
//! ```
//!
//! The catalogue is the tool-retrieval evaluation corpus (`$TOOLSMITH_SEARCH_CORPUS`, else
//! `../shared/search-eval/corpus.jsonl` beside the work tree, else the hand-made MCP fixture of
//! the tests), cut or grown to the size with renamed copies (`eval::scale`).
//!
//! - `build_*`: building a strategy's index over the catalogue (once per catalogue, or per change
//!   for strategies other than BM25).
//! - `update_bm25`: the catalogue replaced by one with a tool more, or a tool less, then one
//!   search: the BM25 index is carried over and changed by that tool (`SearchIndex::updated`,
//!   what an agent does when its deferred tools change).
//! - `search_*`: one `search_tools` search, index built, cycling through user requests (the
//!   form the evaluation uses, 10 to 40 words) or, for `_model_query`, short keyword queries of
//!   the kind a model writes; `search_regex` uses patterns a model would write.

use std::sync::OnceLock;

use divan::Bencher;
use toolsmith::ToolDefinition;
use toolsmith::search::SearchStrategy;
use toolsmith::search::eval::{self, SearchIndex};

fn main() {
    divan::main();
}

const SIZES: &[usize] = &[1_000, 10_000, 100_000];

const REQUESTS: &[&str] = &[
    "Find the area of a triangle with a base of 10 units and height of 5 units.",
    "Book a flight from Seattle to Boston with American Airlines and book a hotel in Boston for 4 nights.",
    "Can you retrieve a list of all synthetic locations available for monitoring and filter the results for locations named 'alpha', 'beta', and 'gamma', with a limit of 20 results?",
    "What's the weather going to be like in London for the next 3 days?",
    "Mix yellow and blue colors and adjust the lightness level to 60 percent.",
    "How many Canadian dollars can I get for 500 US dollars?",
    "I'm looking to buy a home with at least 3 bedrooms and 2 bathrooms in Sunnyvale, CA.",
    "Send a message to the team channel saying the deployment is finished.",
];

const MODEL_QUERIES: &[&str] =
    &["create issue github", "weather forecast", "currency exchange", "book hotel", "send message", "list files"];

const PATTERNS: &[&str] = &["weather", "^get_.*_info$", "(?i)hotel|flight", "currency_?conver", "delete"];

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
                eprintln!("search bench corpus: {path} ({} tools)", tools.len());
                return tools;
            }
        }
        panic!("no search corpus found")
    })
}

fn catalogue(n: usize) -> Vec<ToolDefinition> {
    eval::scale(corpus(), n)
}

fn index(n: usize, strategy: &SearchStrategy) -> SearchIndex {
    let index = SearchIndex::new(&catalogue(n));
    index.prepare(strategy);
    index
}

fn bench_build(bencher: Bencher, n: usize, strategy: SearchStrategy) {
    let tools = catalogue(n);
    bencher.with_inputs(|| SearchIndex::new(&tools)).bench_local_values(|index| {
        index.prepare(&strategy);
        index
    });
}

fn bench_search(bencher: Bencher, n: usize, strategy: SearchStrategy, queries: &'static [&'static str]) {
    let index = index(n, &strategy);
    let mut i = 0;
    bencher.bench_local(|| {
        i = (i + 1) % queries.len();
        index.rank(&strategy, divan::black_box(queries[i]), 10)
    });
}

/// Building the BM25 index.
#[divan::bench(args = SIZES, sample_count = 10, sample_size = 1)]
fn build_bm25(bencher: Bencher, n: usize) {
    bench_build(bencher, n, SearchStrategy::Bm25);
}

/// A catalogue change of one tool, then a search: compare with `build_bm25`.
#[divan::bench(args = SIZES, sample_count = 20, sample_size = 1)]
fn update_bm25(bencher: Bencher, n: usize) {
    let big = catalogue(n + 1);
    let small = big[..n].to_vec();
    let first = SearchIndex::new(&small);
    first.prepare(&SearchStrategy::Bm25);
    let mut index = Some(first);
    let mut grow = true;
    bencher.bench_local(|| {
        let next = index.take().map(|i| i.updated(if grow { &big } else { &small }));
        grow = !grow;
        let ranked = next.as_ref().map(|i| i.rank(&SearchStrategy::Bm25, divan::black_box("weather forecast"), 10));
        index = next;
        ranked
    });
}

/// Building the plain BM25 index (no name bonus, synonyms or abbreviations).
#[divan::bench(args = SIZES, sample_count = 10, sample_size = 1)]
fn build_bm25_plain(bencher: Bencher, n: usize) {
    bench_build(bencher, n, SearchStrategy::PlainBm25);
}

/// Building the keyword index of Pydantic AI's algorithm.
#[divan::bench(args = SIZES, sample_count = 10, sample_size = 1)]
fn build_keywords(bencher: Bencher, n: usize) {
    bench_build(bencher, n, SearchStrategy::Keywords);
}

/// Building the regex haystacks.
#[divan::bench(args = SIZES, sample_count = 10, sample_size = 1)]
fn build_regex(bencher: Bencher, n: usize) {
    bench_build(bencher, n, SearchStrategy::Regex);
}

/// BM25, a user's request as the query.
#[divan::bench(args = SIZES)]
fn search_bm25(bencher: Bencher, n: usize) {
    bench_search(bencher, n, SearchStrategy::Bm25, REQUESTS);
}

/// Plain BM25, a user's request as the query.
#[divan::bench(args = SIZES)]
fn search_bm25_plain(bencher: Bencher, n: usize) {
    bench_search(bencher, n, SearchStrategy::PlainBm25, REQUESTS);
}

/// Plain BM25, a model's short keyword query.
#[divan::bench(args = SIZES)]
fn search_bm25_plain_model_query(bencher: Bencher, n: usize) {
    bench_search(bencher, n, SearchStrategy::PlainBm25, MODEL_QUERIES);
}

/// BM25, a model's short keyword query.
#[divan::bench(args = SIZES)]
fn search_bm25_model_query(bencher: Bencher, n: usize) {
    bench_search(bencher, n, SearchStrategy::Bm25, MODEL_QUERIES);
}

/// Pydantic AI's default algorithm (keyword overlap, undiscovered first), a user's request.
#[divan::bench(args = SIZES)]
fn search_default(bencher: Bencher, n: usize) {
    bench_search(bencher, n, SearchStrategy::PydanticAi, REQUESTS);
}

/// Pydantic AI's keyword algorithm, a model's short keyword query.
#[divan::bench(args = SIZES)]
fn search_keywords_model_query(bencher: Bencher, n: usize) {
    bench_search(bencher, n, SearchStrategy::Keywords, MODEL_QUERIES);
}

/// Regex, patterns a model would write (compiled per search, as `search_tools` does).
#[divan::bench(args = SIZES)]
fn search_regex(bencher: Bencher, n: usize) {
    bench_search(bencher, n, SearchStrategy::Regex, PATTERNS);
}
