//! Tool search: tools marked `defer_loading` stay hidden from the model until it finds them
//! with the `search_tools` tool.
//!
//! With deferred tools registered, every step shows the model the ordinary tools, the deferred
//! tools it has discovered so far (rebuilt from the history's search results, so a resumed
//! history behaves the same), and `search_tools`. Calling a deferred tool before discovering it
//! is answered with a retry that never reveals the hidden catalogue.
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

pub mod keywords;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::messages::{ModelMessage, ModelRequestPart, ToolOutcome};
use crate::tool::{Invocation, ModelRetry, ToolDefinition, ToolError, ToolOutput};
use keywords::{KeywordIndex, tokenize};

/// The name of the search tool.
pub const SEARCH_TOOL_NAME: &str = "search_tools";
/// The `tool_kind` of search calls and returns in the history.
pub const SEARCH_TOOL_KIND: &str = "tool-search";

const DEFAULT_DESCRIPTION: &str = "Search first for a standalone deferred tool when current tools and catalog descriptions do not name the requested operation. A capability id used as an ordinary domain word does not request that capability. This cannot find capability-owned tools; load a listed capability by id instead. If no tools are found, do not retry.";
const DEFAULT_PARAMETER_DESCRIPTION: &str = "List of search queries to match against tool names and descriptions. Use specific words likely to appear in tool names or descriptions to narrow down relevant tools. Each query is independently tokenized; matches across queries are unioned.";
const NO_MATCH: &str = "No matching tools found. The tools you need may not be available.";
const BLANK_QUERY: &str = "Please provide at least one non-empty search query.";

/// How `search_tools` ranks the deferred catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SearchStrategy {
    /// Keyword overlap, with tools not yet discovered ranked first (Pydantic AI's default).
    #[default]
    Default,
    /// Keyword overlap only: the same best match is returned again.
    Keywords,
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
            strategy: SearchStrategy::Default,
            max_results: 10,
            tool_description: None,
            parameter_description: None,
        }
    }
}

impl ToolSearch {
    /// The default configuration.
    pub fn new() -> Self {
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
/// return lists them.
pub fn discovered_in(messages: &[ModelMessage]) -> HashSet<String> {
    let mut found = HashSet::new();
    for m in messages {
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

/// The deferred catalogue with its index, built once per catalogue.
#[derive(Debug)]
pub(crate) struct Catalogue {
    names: Vec<String>,
    descriptions: Vec<Option<String>>,
    index: KeywordIndex,
}

impl Catalogue {
    fn build(defs: &[&ToolDefinition]) -> Self {
        let index = KeywordIndex::build(defs.iter().map(|d| (d.name.as_str(), d.description.as_deref())));
        Catalogue {
            names: defs.iter().map(|d| d.name.clone()).collect(),
            descriptions: defs.iter().map(|d| d.description.clone()).collect(),
            index,
        }
    }

    fn matches(&self, defs: &[&ToolDefinition]) -> bool {
        self.names.len() == defs.len()
            && self.names.iter().zip(defs).all(|(n, d)| n == &d.name)
            && self.descriptions.iter().zip(defs).all(|(x, d)| x == &d.description)
    }

    /// Runs a search; `discovered` are the tools found earlier in the run.
    fn search(
        &self,
        strategy: SearchStrategy,
        max_results: usize,
        queries: &[String],
        discovered: &HashSet<String>,
    ) -> Result<Vec<String>, ModelRetry> {
        let mut any_terms = false;
        let mut out: Vec<u32> = Vec::new();
        for q in queries {
            let terms: Vec<String> = tokenize(q).collect();
            if terms.is_empty() {
                continue;
            }
            any_terms = true;
            let mut ranked = self.index.scores(&terms);
            match strategy {
                SearchStrategy::Default => ranked.sort_by_key(|&(doc, score)| {
                    (discovered.contains(&self.names[doc as usize]), std::cmp::Reverse(score), doc)
                }),
                SearchStrategy::Keywords => ranked.sort_by_key(|&(doc, score)| (std::cmp::Reverse(score), doc)),
            }
            for (doc, _) in ranked {
                if !out.contains(&doc) {
                    out.push(doc);
                }
            }
        }
        if !any_terms {
            return Err(ModelRetry::new(BLANK_QUERY));
        }
        out.truncate(max_results);
        Ok(out.into_iter().map(|d| self.names[d as usize].clone()).collect())
    }
}

/// The catalogue cache of an agent: rebuilt only when the deferred tools change.
#[derive(Debug, Default)]
pub(crate) struct CatalogueCache {
    slot: Mutex<Option<Arc<Catalogue>>>,
}

impl CatalogueCache {
    pub(crate) fn get(&self, defs: &[&ToolDefinition]) -> Arc<Catalogue> {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = slot.as_ref()
            && c.matches(defs)
        {
            return c.clone();
        }
        let c = Arc::new(Catalogue::build(defs));
        *slot = Some(c.clone());
        c
    }
}

/// The handler of the search tool for one step.
pub(crate) fn search_invocation(
    config: &ToolSearch,
    catalogue: &Catalogue,
    discovered: &HashSet<String>,
    args: &Value,
) -> Invocation {
    let queries: Vec<String> = args
        .get("queries")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|q| q.as_str().map(String::from)).collect())
        .unwrap_or_default();
    let result = catalogue.search(config.strategy, config.max_results, &queries, discovered);
    Invocation::Ready(match result {
        Err(retry) => Err(ToolError::Retry(retry)),
        Ok(names) if names.is_empty() => Ok(ToolOutput::Value(json!({"discovered_tools": [], "message": NO_MATCH}))),
        Ok(names) => Ok(ToolOutput::Value(json!({
            "discovered_tools": names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>()
        }))),
    })
}
