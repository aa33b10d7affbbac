//! Tool search: tools marked `defer_loading` stay hidden from the model until it finds them
//! with the `search_tools` tool.
//!
//! With deferred tools registered, every step shows the model the ordinary tools, the deferred
//! tools it has discovered so far (rebuilt from the history's search results, so a resumed
//! history behaves the same), and `search_tools`. Calling a deferred tool before discovering it
//! is answered with Pydantic AI's retry ("Tool 'x' is not available yet: search for it
//! first..."), which confirms that a tool of that name exists and shows nothing else of the
//! catalogue: tool search keeps definitions out of the context, it is not an access control
//! (SECURITY.md).
//!
//! ```
//! use toolsmith::prelude::*;
//! use toolsmith::search::{SearchStrategy, ToolSearch};
//!
//! /// Calculate monthly mortgage payment for a home loan.
//! #[tool(defer_loading)]
//! fn mortgage_calculator(principal: f64, rate: f64, years: i64) -> String {
//!     format!("{principal} {rate} {years}")
//! }
//!
//! # fn main() -> Result<(), UserError> {
//! let agent = Agent::builder(TestModel::default())
//!     .tool(mortgage_calculator)
//!     .tool_search(ToolSearch::new().strategy(SearchStrategy::Keywords).max_results(5))
//!     .build()?;
//! # let _ = agent;
//! # Ok(())
//! # }
//! ```

pub mod bm25;
pub mod bridge;
pub mod custom;
pub mod eval;
pub mod keywords;
pub(crate) mod lineage;
pub(crate) mod native;
pub mod regex;
#[cfg(feature = "semantic")]
pub mod semantic;
pub mod tokens;

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};

use crate::messages::{ModelMessage, ModelRequestPart, ToolOutcome};
use crate::tool::{Invocation, ModelRetry, ToolDefinition, ToolError, ToolOutput};
use bm25::Bm25Index;
pub use custom::CustomSearch;
use keywords::{KeywordIndex, tokenize};
use lineage::Bm25View;
use regex::RegexIndex;

/// The name of the search tool.
pub const SEARCH_TOOL_NAME: &str = "search_tools";
/// The `tool_kind` of search calls and returns in the history.
pub const SEARCH_TOOL_KIND: &str = "tool-search";

const DEFAULT_DESCRIPTION: &str = "Search first for a standalone deferred tool when current tools and catalog descriptions do not name the requested operation. A capability id used as an ordinary domain word does not request that capability. This cannot find capability-owned tools; load a listed capability by id instead. If no tools are found, do not retry.";
const DEFAULT_PARAMETER_DESCRIPTION: &str = "List of search queries to match against tool names and descriptions. Use specific words likely to appear in tool names or descriptions to narrow down relevant tools. Each query is independently tokenized; matches across queries are unioned.";
const NO_MATCH: &str = "No matching tools found. The tools you need may not be available.";
const BLANK_QUERY: &str = "Please provide at least one non-empty search query.";

/// How `search_tools` ranks the deferred catalogue.
///
/// [`Bm25`](Self::Bm25) is the default: measured on four catalogues (tests/search-eval/RESULTS.md:
/// the shared BFCL benchmark, the tools of 20 MCP servers, GitHub's and Stripe's REST APIs) it
/// finds the needed tools far more often than keyword overlap, and more often than plain BM25
/// ([`PlainBm25`](Self::PlainBm25)) on every one of them, the held-out ones included.
/// [`PydanticAi`](Self::PydanticAi) is Pydantic AI's algorithm, for rankings and histories that
/// match the reference.
///
/// With the `semantic` feature, [`Semantic`](Self::Semantic) ranks by a local sentence-embedding
/// model and [`Hybrid`](Self::Hybrid) fuses that ranking with BM25's; `Hybrid` is then the
/// default (see [`semantic`](mod@semantic)). A semantic ranking of your own fits in
/// [`Custom`](Self::Custom).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(not(feature = "semantic"), derive(Default))]
#[non_exhaustive]
pub enum SearchStrategy {
    /// Pydantic AI's default: the provider's server-side search where the model has one
    /// ([`Model::tool_search_support`](crate::model::Model::tool_search_support): Anthropic,
    /// OpenAI Responses), the deferred tools then sent with `defer_loading`; elsewhere keyword
    /// overlap, with tools not yet discovered ranked first, in the agent's `search_tools`.
    PydanticAi,
    /// Keyword overlap only: the same best match is returned again.
    Keywords,
    /// BM25 over names (weighted), descriptions and parameters, with identifier splitting,
    /// Snowball stemming, query stop words, a bonus for matches in the name, synonyms and the
    /// catalogue's own abbreviations: see [`bm25`]. Several queries are merged round-robin, so
    /// each one's best tools make the cut. The default without the `semantic` feature.
    #[cfg_attr(not(feature = "semantic"), default)]
    Bm25,
    /// The same BM25 without the name bonus, synonyms or abbreviations, with `b = 0.75`
    /// ([`Bm25Params::plain`](bm25::Bm25Params::plain)): the ranking before them, kept for
    /// comparison.
    PlainBm25,
    /// Each query is a regular expression (case-insensitive, size-limited) matched against
    /// names, then descriptions, then parameters: see [`regex`](mod@regex). Several queries are
    /// merged round-robin.
    Regex,
    /// A function of yours: see [`custom`].
    Custom(CustomSearch),
    /// The provider's server-side BM25 search (Anthropic's `tool_search_tool_bm25`), asked for
    /// by name: an agent whose model cannot run it is refused when it is built. ([`Bm25`](Self::Bm25)
    /// is toolsmith's own, run locally.)
    NativeBm25,
    /// The provider's server-side regex search (Anthropic's `tool_search_tool_regex`), asked
    /// for by name (see [`NativeBm25`](Self::NativeBm25); [`Regex`](Self::Regex) is local).
    NativeRegex,
    /// The tools nearest in meaning to each query, by the cosine of a sentence-embedding
    /// model's vectors (feature `semantic`); several queries are merged round-robin.
    #[cfg(feature = "semantic")]
    Semantic(semantic::SemanticModel),
    /// Reciprocal-rank fusion of [`Bm25`](Self::Bm25) and [`Semantic`](Self::Semantic) with the
    /// same model (feature `semantic`, where it is the default, its model from
    /// `TOOLSMITH_EMBEDDING_MODEL`): see [`semantic`](mod@semantic).
    #[cfg(feature = "semantic")]
    Hybrid(semantic::SemanticModel),
}

/// With the `semantic` feature the default is [`SearchStrategy::Hybrid`] with the model named by
/// `TOOLSMITH_EMBEDDING_MODEL` ([`SemanticModel::from_env`](semantic::SemanticModel::from_env)).
#[cfg(feature = "semantic")]
impl Default for SearchStrategy {
    fn default() -> Self {
        SearchStrategy::Hybrid(semantic::SemanticModel::from_env())
    }
}

/// Configuration of tool search.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolSearch {
    /// The ranking strategy.
    pub strategy: SearchStrategy,
    /// The most tools one search returns (default 10).
    pub max_results: usize,
    /// The description of the search tool.
    pub tool_description: Option<String>,
    /// The description of its `queries` parameter.
    pub parameter_description: Option<String>,
}

impl Default for ToolSearch {
    fn default() -> Self {
        ToolSearch {
            strategy: SearchStrategy::default(),
            max_results: 10,
            tool_description: None,
            parameter_description: None,
        }
    }
}

impl ToolSearch {
    /// A strategy the provider runs must be one the model can run.
    pub(crate) fn check_model(&self, model: &crate::context::ModelInfo) -> Result<(), crate::UserError> {
        let named = match self.strategy {
            SearchStrategy::NativeBm25 => "NativeBm25",
            SearchStrategy::NativeRegex => "NativeRegex",
            _ => return Ok(()),
        };
        if model.tool_search == crate::model::ToolSearchSupport::Named {
            return Ok(());
        }
        Err(crate::UserError::new(format!(
            "tool search strategy `SearchStrategy::{named}` runs on the provider's side, and model '{}' cannot run a named tool search strategy (Anthropic models with tool search can): use `SearchStrategy::{}` for toolsmith's own, or `SearchStrategy::PydanticAi`",
            model.name,
            if named == "NativeBm25" { "Bm25" } else { "Regex" }
        )))
    }

    /// An embedding model must load (feature `semantic`): a missing or broken model folder is a
    /// configuration mistake, reported when the agent is built.
    pub(crate) fn check_semantic(&self) -> Result<(), crate::UserError> {
        #[cfg(feature = "semantic")]
        if let SearchStrategy::Semantic(model) | SearchStrategy::Hybrid(model) = &self.strategy {
            model.ensure_loaded().map_err(|e| {
                crate::UserError::new(format!(
                    "tool search cannot load its embedding model: {e}; or choose `SearchStrategy::Bm25`, which needs none"
                ))
            })?;
            let weight = model.fusion_weight().unwrap_or(0.0);
            if !weight.is_finite() || weight < 0.0 {
                return Err(crate::UserError::new(format!(
                    "the embedding model's fusion weight is {weight}: it must be a finite number, 0 or more"
                )));
            }
        }
        Ok(())
    }

    /// A custom search function of the run context must take the agent's dependency type.
    pub(crate) fn check_context<D: 'static>(&self) -> Result<(), crate::UserError> {
        if let SearchStrategy::Custom(custom) = &self.strategy
            && let Some((ty, name)) = custom.context_type()
            && ty != std::any::TypeId::of::<D>()
        {
            return Err(crate::UserError::new(format!(
                "the tool search function takes `RunContext<{name}>`, but this agent's dependencies are `{}`: write it for the agent's dependency type",
                std::any::type_name::<D>()
            )));
        }
        Ok(())
    }

    /// The default configuration: [`SearchStrategy::Bm25`] (with the `semantic` feature,
    /// [`SearchStrategy::Hybrid`] with the model of `TOOLSMITH_EMBEDDING_MODEL`), up to 10 results.
    ///
    /// BM25 is the best-measured strategy that needs no model weights (tests/search-eval/RESULTS.md):
    /// it puts a needed tool in the top 5 for 0.86 of the 2,389 requests of the shared BFCL
    /// benchmark, against 0.46 for Pydantic AI's keyword overlap, and keeps its lead on
    /// catalogues it was not tuned on. Its gains come from general text techniques (identifier
    /// splitting, stemming, the name weighted, parameter text indexed, general synonyms,
    /// abbreviations learned from the catalogue). The index is built once per deferred catalogue
    /// and a search takes microseconds at 10,000 tools. An agent ported from Pydantic AI that
    /// must rank as the reference does asks for [`SearchStrategy::PydanticAi`].
    pub fn new() -> Self {
        Self::default()
    }

    /// The same as [`new`](Self::new).
    pub fn recommended() -> Self {
        Self::default()
    }

    /// Sets the strategy.
    pub fn strategy(mut self, strategy: SearchStrategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// Sets how many tools one search returns at most.
    pub fn max_results(mut self, n: usize) -> Self {
        self.max_results = n.max(1);
        self
    }

    /// Sets the search tool's description.
    pub fn tool_description(mut self, text: impl Into<String>) -> Self {
        self.tool_description = Some(text.into());
        self
    }

    /// Sets the description of the `queries` parameter.
    pub fn parameter_description(mut self, text: impl Into<String>) -> Self {
        self.parameter_description = Some(text.into());
        self
    }

    /// The definition of the search tool.
    pub fn definition(&self) -> ToolDefinition {
        let schema = json!({
            "additionalProperties": false,
            "properties": {"queries": {
                "description": self.parameter_description.as_deref().unwrap_or(DEFAULT_PARAMETER_DESCRIPTION),
                "items": {"type": "string"},
                "type": "array"
            }},
            "required": ["queries"],
            "type": "object"
        });
        ToolDefinition::new(SEARCH_TOOL_NAME, schema)
            .with_description(self.tool_description.as_deref().unwrap_or(DEFAULT_DESCRIPTION))
    }
}

/// The names of the deferred tools discovered in a history: every successful `search_tools`
/// return lists them, and so do the server-side searches of Anthropic (`tool_reference`s of a
/// `tool_search_tool_result`) and OpenAI Responses (a `tool_search_output`'s tools) kept in a
/// response's `provider_details`, so that a conversation moved to another provider, or to the
/// local search, keeps what the model found.
pub fn discovered_in(messages: &[ModelMessage]) -> HashSet<String> {
    let mut found = HashSet::new();
    for m in messages {
        if let ModelMessage::Response(r) = m {
            found.extend(native::natively_discovered(r.provider_details.as_deref()));
        }
        if let ModelMessage::Request(r) = m {
            for p in &r.parts {
                if let ModelRequestPart::ToolReturn(t) = p
                    && t.tool_kind.as_deref() == Some(SEARCH_TOOL_KIND)
                    && t.outcome == ToolOutcome::Success
                    && let Some(Value::Array(tools)) = t.content.get("discovered_tools")
                {
                    found.extend(tools.iter().filter_map(|d| d.get("name").and_then(Value::as_str).map(String::from)));
                }
            }
        }
    }
    found
}

/// The deferred catalogue, with one index per strategy, each built the first time that strategy
/// searches this catalogue. The default strategy's index is taken over from the catalogue this
/// one replaces, when there is one, and changed by the difference (see [`lineage`]).
#[derive(Debug)]
pub(crate) struct Catalogue {
    defs: Arc<[ToolDefinition]>,
    keywords: OnceLock<KeywordIndex>,
    bm25: OnceLock<Bm25View>,
    /// The BM25 view of the catalogue this one replaces, until the first BM25 search.
    previous: Mutex<Option<Bm25View>>,
    /// An index of this catalogue alone, when its view is no longer the newest of its lineage.
    own_bm25: OnceLock<Bm25Index>,
    plain_bm25: OnceLock<Bm25Index>,
    regex: OnceLock<RegexIndex>,
    names: OnceLock<HashSet<String>>,
    /// The tool embeddings, built with the last model that searched this catalogue.
    #[cfg(feature = "semantic")]
    semantic: Mutex<Option<Arc<semantic::index::SemanticIndex>>>,
}

impl Catalogue {
    pub(crate) fn build(defs: &[&ToolDefinition]) -> Self {
        Self::build_after(defs, None)
    }

    /// A catalogue that replaces `previous`: its BM25 index, if built, is carried over.
    pub(crate) fn build_after(defs: &[&ToolDefinition], previous: Option<&Catalogue>) -> Self {
        Catalogue {
            defs: defs.iter().map(|&d| d.clone()).collect(),
            keywords: OnceLock::new(),
            bm25: OnceLock::new(),
            previous: Mutex::new(previous.and_then(|p| p.bm25.get().cloned())),
            own_bm25: OnceLock::new(),
            plain_bm25: OnceLock::new(),
            regex: OnceLock::new(),
            names: OnceLock::new(),
            #[cfg(feature = "semantic")]
            semantic: Mutex::new(None),
        }
    }

    pub(crate) fn defs(&self) -> &Arc<[ToolDefinition]> {
        &self.defs
    }

    fn name(&self, doc: u32) -> &str {
        &self.defs[doc as usize].name
    }

    fn keyword_index(&self) -> &KeywordIndex {
        self.keywords
            .get_or_init(|| KeywordIndex::build(self.defs.iter().map(|d| (d.name.as_str(), d.description.as_deref()))))
    }

    pub(crate) fn bm25_view(&self) -> &Bm25View {
        self.bm25.get_or_init(|| {
            let previous = self.previous.lock().unwrap_or_else(|p| p.into_inner()).take();
            previous.and_then(|v| v.derive(&self.defs)).unwrap_or_else(|| Bm25View::build(&self.defs))
        })
    }

    /// Runs `f` with a BM25 index of exactly this catalogue's tools and the catalogue position
    /// of each of its ids.
    fn with_bm25<R>(&self, f: impl Fn(&Bm25Index, &dyn Fn(u32) -> u32) -> R) -> R {
        if let Some(r) = self.bm25_view().with_index(|index, position| f(index, position)) {
            return r;
        }
        f(self.own_bm25.get_or_init(|| Bm25Index::build(self.defs.iter())), &|id| id)
    }

    pub(crate) fn plain_bm25_index(&self) -> &Bm25Index {
        self.plain_bm25.get_or_init(|| Bm25Index::with_params(self.defs.iter(), bm25::Bm25Params::plain()))
    }

    pub(crate) fn regex_index(&self) -> &RegexIndex {
        self.regex.get_or_init(|| RegexIndex::build(&self.defs))
    }

    /// The tool embeddings of this catalogue with `model`, built on first use.
    #[cfg(feature = "semantic")]
    pub(crate) fn semantic_index(
        &self,
        model: &semantic::SemanticModel,
    ) -> Result<Arc<semantic::index::SemanticIndex>, semantic::SemanticError> {
        let mut slot = self.semantic.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(index) = slot.as_ref().filter(|i| i.uses(model)) {
            return Ok(index.clone());
        }
        let index = Arc::new(semantic::index::SemanticIndex::build(model, &self.defs)?);
        *slot = Some(index.clone());
        Ok(index)
    }

    /// The semantic and hybrid strategies' answer, as catalogue positions: each query ranked on
    /// its own, the rankings merged round-robin.
    #[cfg(feature = "semantic")]
    fn semantic_search(
        &self,
        model: &semantic::SemanticModel,
        hybrid: bool,
        queries: &[String],
        max_results: usize,
    ) -> Result<Vec<u32>, ModelRetry> {
        use semantic::fusion;
        let failed = |e: semantic::SemanticError| ModelRetry::new(format!("The search failed: {e}"));
        let worded: Vec<&String> = queries.iter().filter(|q| !q.trim().is_empty()).collect();
        if worded.is_empty() {
            return Err(ModelRetry::new(BLANK_QUERY));
        }
        let index = self.semantic_index(model).map_err(failed)?;
        let weight = model.fusion_weight().map_err(failed)?;
        let mut rankings = Vec::with_capacity(worded.len());
        for q in worded {
            let depth = if hybrid { fusion::DEPTH.max(max_results) } else { max_results };
            let dense: Vec<u32> = index.search(q, depth).map_err(failed)?.into_iter().map(|h| h.0).collect();
            if !hybrid {
                rankings.push(dense);
                continue;
            }
            let lexical: Vec<u32> = self.with_bm25(|bm25, position| {
                let query = bm25.query(q);
                if !query.has_words() {
                    return Vec::new();
                }
                bm25.search_query_by(&query, depth, position)
                    .into_iter()
                    .map(|h| position(h.0))
                    .filter(|&p| (p as usize) < self.defs.len())
                    .collect()
            });
            rankings.push(fusion::fuse(&lexical, &dense, weight, max_results));
        }
        Ok(round_robin(rankings.into_iter(), max_results))
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        self.names.get_or_init(|| self.defs.iter().map(|d| d.name.clone()).collect()).contains(name)
    }

    /// Runs a search with a built-in strategy, or a custom one on the calling thread;
    /// `discovered` are the tools found earlier in the run.
    pub(crate) fn search(
        &self,
        strategy: &SearchStrategy,
        max_results: usize,
        queries: &[String],
        discovered: &HashSet<String>,
    ) -> Result<Vec<String>, ModelRetry> {
        let docs = match strategy {
            SearchStrategy::PydanticAi | SearchStrategy::Keywords => {
                self.keyword_search(strategy, max_results, queries, discovered)?
            }
            SearchStrategy::Bm25 => self.with_bm25(|index, position| {
                let ids = bm25_search(index, queries, max_results, position)?;
                // Every id of a current view is in the catalogue; a stray one is skipped, not
                // looked up.
                Ok(ids.into_iter().map(position).filter(|&p| (p as usize) < self.defs.len()).collect())
            })?,
            SearchStrategy::PlainBm25 => bm25_search(self.plain_bm25_index(), queries, max_results, &|id| id)?,
            SearchStrategy::Regex => {
                let patterns: Vec<&String> = queries.iter().filter(|q| !q.trim().is_empty()).collect();
                if patterns.is_empty() {
                    return Err(ModelRetry::new(BLANK_QUERY));
                }
                let compiled = patterns.into_iter().map(|p| regex::compile(p)).collect::<Result<Vec<_>, _>>()?;
                let index = self.regex_index();
                round_robin(compiled.iter().map(|re| index.search(re, max_results)), max_results)
            }
            SearchStrategy::NativeBm25 | SearchStrategy::NativeRegex => {
                return Err(ModelRetry::new("this search runs on the model provider's side"));
            }
            #[cfg(feature = "semantic")]
            SearchStrategy::Semantic(model) => self.semantic_search(model, false, queries, max_results)?,
            #[cfg(feature = "semantic")]
            SearchStrategy::Hybrid(model) => self.semantic_search(model, true, queries, max_results)?,
            SearchStrategy::Custom(custom) => {
                if queries.iter().all(|q| q.trim().is_empty()) {
                    return Err(ModelRetry::new(BLANK_QUERY));
                }
                let Some(names) = custom.call_blocking(queries, &self.defs) else {
                    return Err(ModelRetry::new(
                        "this search function takes the run context: it can only search inside a run",
                    ));
                };
                return Ok(custom::clean(names, |n| self.contains(n), max_results));
            }
        };
        Ok(docs.into_iter().map(|d| self.name(d).to_string()).collect())
    }

    /// Pydantic AI's keyword search (the `PydanticAi` and `Keywords` strategies): the tokens of all
    /// queries together, each tool scored by how many of them its name and description hold.
    fn keyword_search(
        &self,
        strategy: &SearchStrategy,
        max_results: usize,
        queries: &[String],
        discovered: &HashSet<String>,
    ) -> Result<Vec<u32>, ModelRetry> {
        if queries.iter().all(|q| q.trim().is_empty()) {
            return Err(ModelRetry::new(BLANK_QUERY));
        }
        let terms: Vec<String> = queries.iter().flat_map(|q| tokenize(q)).collect();
        if terms.is_empty() {
            // The default strategy asks again; `Keywords` finds nothing.
            return match strategy {
                SearchStrategy::PydanticAi => Err(ModelRetry::new(BLANK_QUERY)),
                _ => Ok(Vec::new()),
            };
        }
        let index = self.keyword_index();
        // By score, then in catalogue order; the default strategy puts the tools not discovered
        // yet first.
        let ranked = match strategy {
            SearchStrategy::PydanticAi if !discovered.is_empty() => {
                index.top(&terms, max_results, |doc| discovered.contains(self.name(doc)))
            }
            _ => index.top(&terms, max_results, |_| false),
        };
        Ok(ranked.into_iter().map(|(doc, _)| doc).collect())
    }
}

/// BM25's answer to `search_tools`, as index ids: each query ranked on its own (ties to the
/// tool first in the catalogue, whose position `position` gives), the rankings merged
/// round-robin; a retry when no query has words.
fn bm25_search(
    index: &Bm25Index,
    queries: &[String],
    max_results: usize,
    position: &dyn Fn(u32) -> u32,
) -> Result<Vec<u32>, ModelRetry> {
    let worded: Vec<bm25::Query> = queries.iter().map(|q| index.query(q)).filter(bm25::Query::has_words).collect();
    if worded.is_empty() {
        return Err(ModelRetry::new(BLANK_QUERY));
    }
    let ranked = worded.iter().map(|q| index.search_query_by(q, max_results, position).into_iter().map(|h| h.0));
    Ok(round_robin(ranked, max_results))
}

/// Merges several rankings by taking each one's first, then each one's second, and so on,
/// without repeats, up to `max` tools.
fn round_robin<I: IntoIterator<Item = u32>>(rankings: impl Iterator<Item = I>, max: usize) -> Vec<u32> {
    let mut iters: Vec<I::IntoIter> = rankings.map(IntoIterator::into_iter).collect();
    let mut out: Vec<u32> = Vec::new();
    while out.len() < max && !iters.is_empty() {
        iters.retain_mut(|it| {
            if out.len() >= max {
                return true;
            }
            for doc in it.by_ref() {
                if !out.contains(&doc) {
                    out.push(doc);
                    return true;
                }
            }
            false
        });
    }
    out
}

/// The handler of the search tool for one step. Built-in strategies answer at once; a custom
/// function runs on the blocking pool (sync) or the runtime (async).
pub(crate) fn search_invocation<D: Send + Sync + 'static>(
    config: &ToolSearch,
    catalogue: &Arc<Catalogue>,
    discovered: &Arc<HashSet<String>>,
    ctx: crate::context::RunContext<D>,
    args: &Value,
) -> Invocation {
    let queries: Vec<String> = args
        .get("queries")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|q| q.as_str().map(String::from)).collect())
        .unwrap_or_default();
    #[cfg(feature = "semantic")]
    if matches!(config.strategy, SearchStrategy::Semantic(_) | SearchStrategy::Hybrid(_)) {
        // Embedding a request, or a catalogue at its first search, takes the CPU for a while.
        let (catalogue, discovered, strategy, max) =
            (catalogue.clone(), discovered.clone(), config.strategy.clone(), config.max_results);
        return Invocation::Blocking(Box::new(move || {
            search_result(catalogue.search(&strategy, max, &queries, &discovered))
        }));
    }
    let SearchStrategy::Custom(custom) = &config.strategy else {
        return Invocation::Ready(search_result(catalogue.search(
            &config.strategy,
            config.max_results,
            &queries,
            discovered,
        )));
    };
    if queries.iter().all(|q| q.trim().is_empty()) {
        return Invocation::Ready(search_result(Err(ModelRetry::new(BLANK_QUERY))));
    }
    let (catalogue, max_results) = (catalogue.clone(), config.max_results);
    match custom.f.clone() {
        custom::SearchFn::Sync(f) => Invocation::Blocking(Box::new(move || {
            let names = f(&queries, catalogue.defs());
            search_result(Ok(custom::clean(names, |n| catalogue.contains(n), max_results)))
        })),
        custom::SearchFn::Async(f) => Invocation::Async(Box::pin(async move {
            let names = f(queries, catalogue.defs().clone()).await;
            search_result(Ok(custom::clean(names, |n| catalogue.contains(n), max_results)))
        })),
        // The agent checked, when it was built, that the function takes its dependency type.
        custom::SearchFn::SyncCtx(f) => Invocation::Blocking(Box::new(move || {
            let names = f(&ctx, &queries, catalogue.defs()).unwrap_or_default();
            search_result(Ok(custom::clean(names, |n| catalogue.contains(n), max_results)))
        })),
        custom::SearchFn::AsyncCtx(f) => {
            let Some(future) = f(Box::new(ctx), queries, catalogue.defs().clone()) else {
                return Invocation::Ready(search_result(Ok(Vec::new())));
            };
            Invocation::Async(Box::pin(async move {
                let names = future.await;
                search_result(Ok(custom::clean(names, |n| catalogue.contains(n), max_results)))
            }))
        }
    }
}

/// The result of a search as the tool returns it.
fn search_result(result: Result<Vec<String>, ModelRetry>) -> crate::tool::ToolResult {
    match result {
        Err(retry) => Err(ToolError::Retry(retry)),
        Ok(names) if names.is_empty() => Ok(ToolOutput::Value(json!({"discovered_tools": [], "message": NO_MATCH}))),
        Ok(names) => Ok(ToolOutput::Value(json!({
            "discovered_tools": names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>()
        }))),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Pydantic AI's keyword search done the plain way: every tool scored by reading its tokens,
    /// all of them sorted, the first `max_results` kept.
    fn reference_keyword_search(
        defs: &[ToolDefinition],
        strategy: &SearchStrategy,
        max_results: usize,
        queries: &[String],
        discovered: &HashSet<String>,
    ) -> Result<Vec<String>, ModelRetry> {
        if queries.iter().all(|q| q.trim().is_empty()) {
            return Err(ModelRetry::new(BLANK_QUERY));
        }
        let terms: HashSet<String> = queries.iter().flat_map(|q| tokenize(q)).collect();
        if terms.is_empty() {
            return match strategy {
                SearchStrategy::PydanticAi => Err(ModelRetry::new(BLANK_QUERY)),
                _ => Ok(Vec::new()),
            };
        }
        let mut ranked: Vec<(bool, std::cmp::Reverse<usize>, usize)> = Vec::new();
        for (i, d) in defs.iter().enumerate() {
            let held: HashSet<String> =
                tokenize(&d.name).chain(d.description.iter().flat_map(|t| tokenize(t))).collect();
            let score = terms.iter().filter(|t| held.contains(*t)).count();
            if score > 0 {
                let demoted = *strategy == SearchStrategy::PydanticAi && discovered.contains(&d.name);
                ranked.push((demoted, std::cmp::Reverse(score), i));
            }
        }
        ranked.sort();
        Ok(ranked.into_iter().take(max_results).map(|(_, _, i)| defs[i].name.clone()).collect())
    }

    const WORDS: &[&str] = &["the", "a", "file", "delete", "get", "weather", "v2", "hotel", "list", "x"];

    fn words(max: usize) -> impl Strategy<Value = Vec<&'static str>> {
        proptest::collection::vec(proptest::sample::select(WORDS), 0..max)
    }

    proptest! {
        /// The keyword strategies rank exactly as scoring every tool, sorting them all and taking
        /// `max_results` does: repeated tool names, discovered names outside the catalogue,
        /// blank queries and queries without tokens included.
        #[test]
        fn keyword_search_equals_full_sort(
            tools in proptest::collection::vec((words(4), proptest::option::of(words(8))), 0..50),
            queries in proptest::collection::vec(
                prop_oneof![words(5).prop_map(|w| w.join(" ")), "[ a-z!_-]{0,8}"],
                0..4,
            ),
            discovered in proptest::collection::vec(words(4).prop_map(|w| w.join("_")), 0..30),
            max_results in 0usize..60,
            default in proptest::bool::ANY,
        ) {
            let defs: Vec<ToolDefinition> = tools
                .iter()
                .map(|(name, description)| {
                    let def = ToolDefinition::new(name.join("_"), json!({"type": "object"}));
                    match description {
                        Some(d) => def.with_description(d.join(" ")),
                        None => def,
                    }
                })
                .collect();
            let discovered: HashSet<String> = discovered.into_iter().collect();
            let strategy = if default { SearchStrategy::PydanticAi } else { SearchStrategy::Keywords };
            let catalogue = Catalogue::build(&defs.iter().collect::<Vec<_>>());
            prop_assert_eq!(
                catalogue.search(&strategy, max_results, &queries, &discovered),
                reference_keyword_search(&defs, &strategy, max_results, &queries, &discovered)
            );
        }
    }
}
