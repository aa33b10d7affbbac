//! Evaluating search strategies on a tool-retrieval set, outside an agent: the library side of
//! `toolsmith search` and `toolsmith search-eval`.
//!
//! The file formats are those of the project's evaluation set: a corpus of one tool a line,
//! `{"name", "description", "parameters"}` (other keys ignored), and queries of one request a
//! line, `{"id", "query", "relevant": [names]}`.
//!
//! ```
//! use toolsmith::search::SearchStrategy;
//! use toolsmith::search::eval::{self, SearchIndex};
//!
//! let corpus = eval::parse_corpus(concat!(
//!     r#"{"name": "get_weather", "description": "Current weather for a city.", "parameters": {}}"#, "\n",
//!     r#"{"name": "send_email", "description": "Send an email.", "parameters": {}}"#,
//! )).unwrap();
//! let index = SearchIndex::new(&corpus);
//! let ranked = index.rank(&SearchStrategy::Bm25, "What's the weather like in Paris?", 10).unwrap();
//! assert_eq!(ranked, ["get_weather"]);
//! ```

use std::collections::HashSet;
use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Catalogue, SearchStrategy};
use crate::tool::{ModelRetry, ToolDefinition};

/// The names the built-in strategies go by (`FromStr` of [`SearchStrategy`]).
#[cfg(not(feature = "semantic"))]
pub const STRATEGY_NAMES: &[&str] = &["pydantic-ai", "keywords", "bm25", "bm25-plain", "regex"];
/// The names the built-in strategies go by (`FromStr` of [`SearchStrategy`]); `semantic` and
/// `hybrid` use the model of `TOOLSMITH_EMBEDDING_MODEL`.
#[cfg(feature = "semantic")]
pub const STRATEGY_NAMES: &[&str] = &["pydantic-ai", "keywords", "bm25", "bm25-plain", "regex", "semantic", "hybrid"];

impl FromStr for SearchStrategy {
    type Err = String;

    /// Parses `pydantic-ai`, `keywords`, `bm25`, `bm25-plain` or `regex` (any case).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "pydantic-ai" => Ok(SearchStrategy::PydanticAi),
            "keywords" => Ok(SearchStrategy::Keywords),
            "bm25" => Ok(SearchStrategy::Bm25),
            "bm25-plain" => Ok(SearchStrategy::PlainBm25),
            "regex" => Ok(SearchStrategy::Regex),
            #[cfg(feature = "semantic")]
            "semantic" => Ok(SearchStrategy::Semantic(super::semantic::SemanticModel::from_env())),
            #[cfg(feature = "semantic")]
            "hybrid" => Ok(SearchStrategy::Hybrid(super::semantic::SemanticModel::from_env())),
            _ => Err(format!("unknown search strategy '{s}': expected one of {}", STRATEGY_NAMES.join(", "))),
        }
    }
}

/// The name of a strategy: its `FromStr` name, or the custom function's label.
pub fn strategy_name(strategy: &SearchStrategy) -> String {
    match strategy {
        SearchStrategy::PydanticAi => "pydantic-ai".into(),
        SearchStrategy::Keywords => "keywords".into(),
        SearchStrategy::Bm25 => "bm25".into(),
        SearchStrategy::PlainBm25 => "bm25-plain".into(),
        SearchStrategy::Regex => "regex".into(),
        SearchStrategy::Custom(c) => format!("custom:{}", c.label()),
        SearchStrategy::NativeBm25 => "native_bm25".into(),
        SearchStrategy::NativeRegex => "native_regex".into(),
        #[cfg(feature = "semantic")]
        SearchStrategy::Semantic(_) => "semantic".into(),
        #[cfg(feature = "semantic")]
        SearchStrategy::Hybrid(_) => "hybrid".into(),
    }
}

/// A catalogue ready to search with any strategy, each strategy's index built on first use (or
/// by [`prepare`](Self::prepare)), exactly as an agent's deferred catalogue is.
#[derive(Debug)]
pub struct SearchIndex {
    pub(super) catalogue: Catalogue,
}

impl SearchIndex {
    /// A searchable catalogue of these tools, in this order.
    pub fn new(defs: &[ToolDefinition]) -> Self {
        let refs: Vec<&ToolDefinition> = defs.iter().collect();
        SearchIndex { catalogue: Catalogue::build(&refs) }
    }

    /// A searchable catalogue of these tools that replaces this one, as an agent's deferred
    /// catalogue is replaced when its tools change: the default strategy's index, if this
    /// catalogue has built it, is taken over and changed by the difference (a tool removed,
    /// added or changed costs its own terms, one that stayed a name lookup). Searches rank the
    /// new catalogue exactly as [`SearchIndex::new`] would; this one keeps working too (with an
    /// index of its own, built when it next searches).
    ///
    /// ```
    /// use toolsmith::ToolDefinition;
    /// use toolsmith::search::SearchStrategy;
    /// use toolsmith::search::eval::SearchIndex;
    ///
    /// let tool = |name: &str, text: &str| ToolDefinition::new(name, serde_json::json!({})).with_description(text);
    /// let first = SearchIndex::new(&[tool("get_weather", "Current weather."), tool("send_email", "Send an email.")]);
    /// assert_eq!(first.rank(&SearchStrategy::Bm25, "email", 5).unwrap(), ["send_email"]);
    /// let second = first.updated(&[tool("send_email", "Send an email."), tool("read_email", "Read an email.")]);
    /// assert_eq!(second.rank(&SearchStrategy::Bm25, "read my email", 5).unwrap(), ["read_email", "send_email"]);
    /// assert!(second.rank(&SearchStrategy::Bm25, "weather", 5).unwrap().is_empty());
    /// ```
    pub fn updated(&self, defs: &[ToolDefinition]) -> Self {
        let refs: Vec<&ToolDefinition> = defs.iter().collect();
        SearchIndex { catalogue: Catalogue::build_after(&refs, Some(&self.catalogue)) }
    }

    /// How many tools the catalogue has.
    pub fn len(&self) -> usize {
        self.catalogue.defs().len()
    }

    /// Whether the catalogue is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Builds the index a strategy uses now rather than at its first search (to time searches
    /// apart from the build).
    pub fn prepare(&self, strategy: &SearchStrategy) {
        match strategy {
            SearchStrategy::Bm25 => {
                self.catalogue.bm25_view();
            }
            SearchStrategy::PlainBm25 => {
                self.catalogue.plain_bm25_index();
            }
            SearchStrategy::Regex => {
                self.catalogue.regex_index();
            }
            SearchStrategy::Custom(_) => {
                self.catalogue.contains("");
            }
            #[cfg(feature = "semantic")]
            SearchStrategy::Semantic(model) => {
                let _ = self.catalogue.semantic_index(model);
            }
            #[cfg(feature = "semantic")]
            SearchStrategy::Hybrid(model) => {
                let _ = self.catalogue.semantic_index(model);
                self.catalogue.bm25_view();
            }
            _ => {
                let _ = self.catalogue.search(strategy, 1, &["warm up".to_string()], &HashSet::new());
            }
        }
    }

    /// What `search_tools` would return for these queries with nothing discovered yet, except
    /// that it returns up to `k` names: best first. A custom async function runs on a local
    /// executor. The error is the retry the model would get (blank queries, an invalid pattern).
    pub fn search(&self, strategy: &SearchStrategy, queries: &[String], k: usize) -> Result<Vec<String>, ModelRetry> {
        self.catalogue.search(strategy, k.max(1), queries, &HashSet::new())
    }

    /// The best `k` tools for one query, best first.
    pub fn rank(&self, strategy: &SearchStrategy, query: &str, k: usize) -> Result<Vec<String>, ModelRetry> {
        self.search(strategy, &[query.to_string()], k)
    }
}

/// A request of the evaluation set.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct EvalQuery {
    /// Its id, as written (a string or a number).
    pub id: Value,
    /// The user's request.
    pub query: String,
    /// The tools it needs.
    pub relevant: Vec<String>,
}

/// A corpus or queries file that could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A line is not what the format says.
    #[error("line {line}: {message}")]
    Line {
        /// The line number, from 1.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

fn lines(text: &str) -> impl Iterator<Item = (usize, Result<Value, EvalError>)> + '_ {
    text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()).map(|(i, l)| {
        (i + 1, serde_json::from_str(l).map_err(|e| EvalError::Line { line: i + 1, message: e.to_string() }))
    })
}

fn read(path: &Path) -> Result<String, EvalError> {
    std::fs::read_to_string(path).map_err(|source| EvalError::Io { path: path.display().to_string(), source })
}

/// Parses a corpus: one tool a line, `{"name", "description", "parameters"}`.
pub fn parse_corpus(text: &str) -> Result<Vec<ToolDefinition>, EvalError> {
    lines(text)
        .map(|(line, v)| {
            let v = v?;
            let name = v
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| EvalError::Line { line, message: "a tool needs a string \"name\"".into() })?;
            let parameters = v.get("parameters").cloned().unwrap_or_else(|| serde_json::json!({"type": "object"}));
            let mut def = ToolDefinition::new(name, parameters);
            def.description = v.get("description").and_then(Value::as_str).map(String::from);
            def.defer_loading = true;
            Ok(def)
        })
        .collect()
}

/// Reads a corpus file (see [`parse_corpus`]).
pub fn load_corpus(path: impl AsRef<Path>) -> Result<Vec<ToolDefinition>, EvalError> {
    parse_corpus(&read(path.as_ref())?)
}

/// Parses queries: one a line, `{"id", "query", "relevant"}` (`relevant` may be absent).
pub fn parse_queries(text: &str) -> Result<Vec<EvalQuery>, EvalError> {
    lines(text)
        .map(|(line, v)| {
            let v = v?;
            let query = v
                .get("query")
                .and_then(Value::as_str)
                .ok_or_else(|| EvalError::Line { line, message: "a query needs a string \"query\"".into() })?;
            let relevant = match v.get("relevant") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(String::from).collect(),
                Some(_) => {
                    return Err(EvalError::Line { line, message: "\"relevant\" must be a list of names".into() });
                }
            };
            Ok(EvalQuery { id: v.get("id").cloned().unwrap_or(Value::Null), query: query.into(), relevant })
        })
        .collect()
}

/// Reads a queries file (see [`parse_queries`]).
pub fn load_queries(path: impl AsRef<Path>) -> Result<Vec<EvalQuery>, EvalError> {
    parse_queries(&read(path.as_ref())?)
}

/// The catalogue grown (or cut) to `n` tools: the tools, then renamed copies of them
/// (`name_copy1`, `name_copy2`, ...), for timing searches at a larger size.
pub fn scale(defs: &[ToolDefinition], n: usize) -> Vec<ToolDefinition> {
    if defs.is_empty() {
        return Vec::new();
    }
    (0..n)
        .map(|i| {
            let mut d = defs[i % defs.len()].clone();
            let copy = i / defs.len();
            if copy > 0 {
                d.name = format!("{}_copy{copy}", d.name);
            }
            d
        })
        .collect()
}

/// Retrieval quality over a set of queries.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub struct Metrics {
    /// How many queries were scored.
    pub queries: usize,
    /// Mean share of the relevant tools in the top 1.
    pub recall_at_1: f64,
    /// Mean share of the relevant tools in the top 5.
    pub recall_at_5: f64,
    /// Mean share of the relevant tools in the top 10.
    pub recall_at_10: f64,
    /// Mean reciprocal rank of the first relevant tool within the top 10 (0 when none).
    pub mrr_at_10: f64,
}

impl Metrics {
    /// Adds one query's ranking.
    pub fn add(&mut self, ranked: &[String], relevant: &[String]) {
        let relevant: HashSet<&str> = relevant.iter().map(String::as_str).collect();
        if relevant.is_empty() {
            return;
        }
        let recall = |k: usize| {
            let mut top: Vec<&str> = ranked.iter().take(k).map(String::as_str).collect();
            top.sort_unstable();
            top.dedup();
            top.iter().filter(|n| relevant.contains(*n)).count() as f64 / relevant.len() as f64
        };
        self.recall_at_1 += recall(1);
        self.recall_at_5 += recall(5);
        self.recall_at_10 += recall(10);
        if let Some(rank) = ranked.iter().take(10).position(|n| relevant.contains(n.as_str())) {
            self.mrr_at_10 += 1.0 / (rank + 1) as f64;
        }
        self.queries += 1;
    }

    /// The means (the sums divided by the number of queries).
    pub fn mean(&self) -> Metrics {
        let n = self.queries.max(1) as f64;
        Metrics {
            queries: self.queries,
            recall_at_1: self.recall_at_1 / n,
            recall_at_5: self.recall_at_5 / n,
            recall_at_10: self.recall_at_10 / n,
            mrr_at_10: self.mrr_at_10 / n,
        }
    }
}

/// The outcome of [`evaluate`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Evaluation {
    /// Mean retrieval quality over the queries that list relevant tools.
    pub metrics: Metrics,
    /// The median time of one search, index built beforehand.
    pub median_latency: Duration,
    /// How many searches were answered with a retry (an invalid pattern, a blank query).
    pub retries: usize,
}

/// Ranks every query's top 10 with a strategy and scores the rankings; the index is built
/// first, so the latency is that of searches alone.
pub fn evaluate(index: &SearchIndex, strategy: &SearchStrategy, queries: &[EvalQuery]) -> Evaluation {
    index.prepare(strategy);
    let mut metrics = Metrics::default();
    let mut times = Vec::with_capacity(queries.len());
    let mut retries = 0;
    for q in queries {
        let start = Instant::now();
        let ranked = index.rank(strategy, &q.query, 10);
        times.push(start.elapsed());
        let ranked = ranked.unwrap_or_else(|_| {
            retries += 1;
            Vec::new()
        });
        metrics.add(&ranked, &q.relevant);
    }
    Evaluation { metrics: metrics.mean(), median_latency: median(&mut times), retries }
}

/// The median time of one search over these queries (top 10), index built beforehand.
pub fn median_latency<'a>(
    index: &SearchIndex,
    strategy: &SearchStrategy,
    queries: impl IntoIterator<Item = &'a str>,
) -> Duration {
    index.prepare(strategy);
    let mut times: Vec<Duration> = queries
        .into_iter()
        .map(|q| {
            let start = Instant::now();
            let _ = std::hint::black_box(index.rank(strategy, q, 10));
            start.elapsed()
        })
        .collect();
    median(&mut times)
}

fn median(times: &mut [Duration]) -> Duration {
    if times.is_empty() {
        return Duration::ZERO;
    }
    times.sort_unstable();
    times[times.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    const CORPUS: &str = r#"
{"name": "get_weather", "description": "Current weather for a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}, "source": "x"}
{"name": "send_email", "description": "Send an email message.", "parameters": {"type": "object"}}
{"name": "delete_file", "description": "Delete a file from disk."}
"#;

    #[test]
    fn parses_corpus_and_queries() {
        let corpus = parse_corpus(CORPUS).unwrap();
        assert_eq!(corpus.len(), 3);
        assert_eq!(corpus[2].description.as_deref(), Some("Delete a file from disk."));
        let queries =
            parse_queries("{\"id\": 7, \"query\": \"q\", \"relevant\": [\"a\"]}\n{\"id\": \"x\", \"query\": \"r\"}")
                .unwrap();
        assert_eq!(queries[0].id, 7);
        assert_eq!(queries[1].relevant, Vec::<String>::new());
        let err = parse_queries("{\"id\": 1}\n").unwrap_err().to_string();
        assert!(err.contains("line 1") && err.contains("\"query\""), "{err}");
        assert!(parse_corpus("not json").unwrap_err().to_string().starts_with("line 1:"));
    }

    #[test]
    fn strategies_parse_by_name() {
        for name in STRATEGY_NAMES {
            assert_eq!(strategy_name(&name.parse().unwrap()), *name);
        }
        assert_eq!("BM25".parse::<SearchStrategy>().unwrap(), SearchStrategy::Bm25);
        assert!("dense".parse::<SearchStrategy>().unwrap_err().contains("bm25"));
        #[cfg(not(feature = "semantic"))]
        assert!("semantic".parse::<SearchStrategy>().unwrap_err().contains("bm25"));
    }

    #[test]
    fn every_strategy_ranks_the_corpus() {
        let corpus = parse_corpus(CORPUS).unwrap();
        let index = SearchIndex::new(&corpus);
        for s in [SearchStrategy::PydanticAi, SearchStrategy::Keywords, SearchStrategy::Bm25] {
            assert_eq!(index.rank(&s, "delete a file", 10).unwrap()[0], "delete_file", "{s:?}");
        }
        assert_eq!(index.rank(&SearchStrategy::Regex, "^send_", 10).unwrap(), ["send_email"]);
        assert!(index.rank(&SearchStrategy::Regex, "(", 10).is_err());
        assert!(index.rank(&SearchStrategy::Bm25, "  ", 10).is_err());
    }

    #[test]
    fn metrics_follow_the_definitions() {
        let mut m = Metrics::default();
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        m.add(&names(&["a", "b", "c"]), &names(&["b", "z"]));
        m.add(&names(&["a"]), &names(&["a"]));
        m.add(&names(&["x"]), &names(&[]));
        let m = m.mean();
        assert_eq!(m.queries, 2);
        assert_eq!(m.recall_at_1, 0.5);
        assert_eq!(m.recall_at_5, 0.75);
        assert_eq!(m.mrr_at_10, 0.75);
    }

    #[test]
    fn scale_repeats_with_renamed_copies() {
        let corpus = parse_corpus(CORPUS).unwrap();
        let big = scale(&corpus, 7);
        let names: Vec<&str> = big.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "get_weather",
                "send_email",
                "delete_file",
                "get_weather_copy1",
                "send_email_copy1",
                "delete_file_copy1",
                "get_weather_copy2"
            ]
        );
        assert_eq!(scale(&corpus, 2).len(), 2);
        let index = SearchIndex::new(&big);
        let e = evaluate(
            &index,
            &SearchStrategy::Bm25,
            &[EvalQuery { id: Value::Null, query: "weather".into(), relevant: vec!["get_weather".into()] }],
        );
        assert_eq!(e.metrics.recall_at_1, 1.0);
    }
}
