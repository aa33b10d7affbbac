//! Distilling a static model from a BERT sentence encoder, as Model2Vec does: every word piece
//! of the vocabulary is run through the encoder alone (`[CLS] piece [SEP]`, mean-pooled), the
//! vectors are centred on their mean, and each is weighted down by how common its piece is.

use std::path::Path;

use candle_core::{Device, Tensor};
use tokenizers::Tokenizer;

use super::bert::{Bert, BertConfig};
use super::error::SemanticError;
use super::fit;
pub use super::fit::FitReport;
use super::model::{Encoder, load_bert};

/// Word pieces run through the encoder together.
const BATCH: usize = 512;
/// Texts of a corpus given to the encoder at a time (it batches them by length).
const TEACHER_CHUNK: usize = 256;
/// Model2Vec's SIF coefficient: a piece of probability `p` is weighted `a / (a + p)`.
const SIF: f64 = 1e-4;

/// Distils a static embedding model from the BERT sentence encoder in the folder `from` (the
/// layout [`SemanticModel::load`](super::SemanticModel::load) reads) into the folder `to`, in
/// Model2Vec's layout, which `SemanticModel::load` reads too.
///
/// A static model embeds a text as the mean of its word pieces' vectors: a request costs
/// microseconds instead of the encoder's milliseconds, for less understanding of word order and
/// context. Distilling all-MiniLM-L6-v2 runs its 30,522 word pieces through it once (about a
/// minute on two cores); the project's `scripts/embedding-model.sh` does it after installing the
/// encoder.
///
/// Each piece's vector is the encoder's mean-pooled, unit-length output for `[CLS] piece [SEP]`;
/// the vectors are centred on their mean over the vocabulary (the direction all of them share says
/// nothing about meaning), and weighted by Model2Vec's SIF rule, which takes a piece's rank in the
/// vocabulary for its frequency (BERT's vocabularies list their words in frequency order, after
/// the special pieces and single characters, which are weighted as the most common).
///
/// ```no_run
/// use toolsmith::search::semantic::{distill, SemanticModel};
///
/// # fn main() -> Result<(), toolsmith::search::semantic::SemanticError> {
/// distill(".cache/embedding-model/all-MiniLM-L6-v2", ".cache/embedding-model/static")?;
/// let model = SemanticModel::load(".cache/embedding-model/static")?;
/// assert_eq!(model.dimensions()?, 384);
/// # Ok(())
/// # }
/// ```
pub fn distill(from: impl AsRef<Path>, to: impl AsRef<Path>) -> Result<(), SemanticError> {
    let (from, to) = (from.as_ref(), to.as_ref());
    let (tokenizer, bert, config) = load_bert(from)?;
    let table = distilled_table(from, &tokenizer, &bert, &config)?;
    write(from, to, table, config.vocab_size, config.hidden_size, None)
}

/// Distils a static model as [`distill`] does, then fits its vectors to the encoder's
/// embeddings of a corpus of texts (Model2Vec's "tokenlearn" step), and writes it to `to`.
///
/// The corpus should read like what will be searched: tool and API descriptions, function
/// docstrings, requests. Each text is embedded by the encoder, and the vectors of the word
/// pieces the corpus uses are fitted so that the mean of a text's pieces comes as near as it can
/// to the encoder's embedding of the text (least squares, held near the distilled vectors by a
/// ridge penalty; pieces the corpus does not use keep their distilled vectors). Distilled alone,
/// all-MiniLM-L6-v2 gives a model whose fusion with BM25 finds fewer of the needed tools than
/// BM25 on three of the project's catalogues; fitted on about 29,000 API operations and Python
/// docstrings it finds more on all five it was chosen on (tests/search-eval/RESULTS.md). The
/// encoder embeds about 30 texts a second on one core, so such a corpus takes minutes.
///
/// ```no_run
/// use toolsmith::search::semantic::{distill_with_corpus, SemanticModel};
///
/// # fn main() -> Result<(), toolsmith::search::semantic::SemanticError> {
/// let corpus = ["create issue: Create a new issue in a repository.", "get weather: The forecast for a city."];
/// let report = distill_with_corpus(".cache/embedding-model/all-MiniLM-L6-v2", &corpus, ".cache/embedding-model/static")?;
/// println!("fitted {} word pieces on {} texts", report.pieces_fitted, report.texts);
/// let model = SemanticModel::load(".cache/embedding-model/static")?;
/// # let _ = model;
/// # Ok(())
/// # }
/// ```
pub fn distill_with_corpus(
    from: impl AsRef<Path>,
    corpus: &[impl AsRef<str>],
    to: impl AsRef<Path>,
) -> Result<FitReport, SemanticError> {
    let (from, to) = (from.as_ref(), to.as_ref());
    let (tokenizer, bert, config) = load_bert(from)?;
    let prior = distilled_table(from, &tokenizer, &bert, &config)?;
    let (rows, dim) = (config.vocab_size, config.hidden_size);
    let texts: Vec<&str> = corpus.iter().map(|t| t.as_ref()).collect();
    let bags = fit::bags(&tokenizer, &texts, rows)?;
    let encoder = Encoder::bert(tokenizer, bert, dim);
    let mut targets = Vec::with_capacity(texts.len() * dim);
    for chunk in texts.chunks(TEACHER_CHUNK) {
        for row in encoder.embed(chunk)? {
            targets.extend_from_slice(&row);
        }
    }
    let (table, report) = fit::fit(prior, dim, &bags, &targets);
    write(from, to, table, rows, dim, Some(&report))?;
    Ok(report)
}

/// The distilled vectors, a row per word piece.
fn distilled_table(
    from: &Path,
    tokenizer: &Tokenizer,
    bert: &Bert,
    config: &BertConfig,
) -> Result<Vec<f32>, SemanticError> {
    let unsupported = |message: String| SemanticError::Unsupported { path: from.to_path_buf(), message };
    let failed = |e: candle_core::Error| SemanticError::Inference { message: e.to_string() };
    let (Some(cls), Some(sep)) = (tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")) else {
        return Err(unsupported("the tokenizer has no [CLS] or [SEP] piece".into()));
    };
    let rows = config.vocab_size;
    let dim = config.hidden_size;
    let mut table = Vec::with_capacity(rows * dim);
    let ids: Vec<u32> = (0..rows as u32).collect();
    for chunk in ids.chunks(BATCH) {
        let seqs: Vec<[u32; 3]> = chunk.iter().map(|&id| [cls, id, sep]).collect();
        let batch: Vec<&[u32]> = seqs.iter().map(|s| s.as_slice()).collect();
        for row in bert.embed(&batch).map_err(failed)? {
            table.extend_from_slice(&row);
        }
    }
    let mut mean = vec![0f64; dim];
    for row in table.chunks_exact(dim) {
        mean.iter_mut().zip(row).for_each(|(m, &x)| *m += f64::from(x));
    }
    mean.iter_mut().for_each(|m| *m /= rows as f64);
    // Model2Vec's Zipf estimate: the piece of rank r has probability (1 / (r + 2)) / Σ. Ranks count
    // from the vocabulary's first word (BERT's lists special pieces and single characters before
    // its words, which take rank 0: they say least).
    let first_word = (0..rows as u32)
        .find(|&id| {
            tokenizer.id_to_token(id).is_some_and(|t| {
                let special = t.starts_with('[') && t.ends_with(']');
                !special && t.trim_start_matches("##").chars().count() > 1
            })
        })
        .unwrap_or(0) as usize;
    let total: f64 = (0..rows).map(|r| 1.0 / (r.saturating_sub(first_word) as f64 + 2.0)).sum();
    for (r, row) in table.chunks_exact_mut(dim).enumerate() {
        let p = 1.0 / (r.saturating_sub(first_word) as f64 + 2.0) / total;
        let weight = SIF / (SIF + p);
        row.iter_mut().zip(&mean).for_each(|(x, m)| *x = ((f64::from(*x) - m) * weight) as f32);
    }
    Ok(table)
}

/// Writes the folder: the table, the encoder's tokenizer, and a Model2Vec configuration.
fn write(
    from: &Path,
    to: &Path,
    table: Vec<f32>,
    rows: usize,
    dim: usize,
    fitted: Option<&FitReport>,
) -> Result<(), SemanticError> {
    let unwritable =
        |file: &'static str, message: String| SemanticError::Unwritable { path: to.to_path_buf(), file, message };
    std::fs::create_dir_all(to).map_err(|e| unwritable("the folder", e.to_string()))?;
    std::fs::copy(from.join("tokenizer.json"), to.join("tokenizer.json"))
        .map_err(|e| unwritable("tokenizer.json", e.to_string()))?;
    let config = serde_json::json!({
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "hidden_dim": dim,
        "normalize": true,
        "distilled_from": from.file_name().map(|n| n.to_string_lossy().into_owned()),
        "fitted_on_texts": fitted.map(|r| r.texts),
    });
    let config = serde_json::to_vec_pretty(&config).map_err(|e| unwritable("config.json", e.to_string()))?;
    std::fs::write(to.join("config.json"), config).map_err(|e| unwritable("config.json", e.to_string()))?;
    let tensor = Tensor::from_vec(table, (rows, dim), &Device::Cpu)
        .map_err(|e| unwritable("model.safetensors", e.to_string()))?;
    let tensors = std::collections::HashMap::from([("embeddings".to_string(), tensor)]);
    candle_core::safetensors::save(&tensors, to.join("model.safetensors"))
        .map_err(|e| unwritable("model.safetensors", e.to_string()))
}
