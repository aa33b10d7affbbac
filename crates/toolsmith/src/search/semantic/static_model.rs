//! A static embedding model in Model2Vec's layout: one vector per word piece, and a text's
//! embedding is the mean of its word pieces' vectors. No network runs at search time, so a
//! request is embedded in microseconds.
//!
//! The folder holds `config.json` (`"model_type": "model2vec"`), `tokenizer.json` and
//! `model.safetensors` with one tensor `embeddings` of shape (vocabulary, dimensions), as
//! Model2Vec writes them and as [`distill`](super::distill) writes them from a BERT encoder.

use std::path::Path;

use candle_core::{DType, Device};
use tokenizers::Tokenizer;

use super::error::SemanticError;

/// The most word pieces of a text that are averaged (Model2Vec's default).
const MAX_TOKENS: usize = 512;

/// A loaded static model: the tokenizer and the table of word-piece vectors, row-major.
pub(crate) struct StaticTable {
    tokenizer: Box<Tokenizer>,
    table: Vec<f32>,
    dim: usize,
    rows: usize,
    unknown: Option<u32>,
}

impl std::fmt::Debug for StaticTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticTable").field("rows", &self.rows).field("dim", &self.dim).finish()
    }
}

impl StaticTable {
    /// Reads the tokenizer and the `embeddings` tensor of a Model2Vec folder.
    pub(crate) fn load(path: &Path) -> Result<Self, SemanticError> {
        let unreadable =
            |file: &'static str, message: String| SemanticError::Unreadable { path: path.to_path_buf(), file, message };
        let unsupported = |message: String| SemanticError::Unsupported { path: path.to_path_buf(), message };
        let mut tokenizer = Tokenizer::from_file(path.join("tokenizer.json"))
            .map_err(|e| unreadable("tokenizer.json", e.to_string()))?;
        tokenizer
            .with_truncation(Some(tokenizers::TruncationParams { max_length: MAX_TOKENS, ..Default::default() }))
            .map_err(|e| unreadable("tokenizer.json", e.to_string()))?;
        tokenizer.with_padding(None);
        let weights = path.join("model.safetensors");
        let mut tensors = candle_core::safetensors::load(&weights, &Device::Cpu)
            .map_err(|e| unreadable("model.safetensors", e.to_string()))?;
        let embeddings = tensors
            .remove("embeddings")
            .ok_or_else(|| unsupported("model.safetensors has no tensor `embeddings`".into()))?;
        let (rows, dim) = embeddings.dims2().map_err(|e| unsupported(format!("`embeddings`: {e}")))?;
        if dim == 0 {
            return Err(unsupported("`embeddings` has no columns".into()));
        }
        let vocabulary = tokenizer.get_vocab_size(true);
        if rows < vocabulary {
            return Err(unsupported(format!(
                "`embeddings` has {rows} rows for a tokenizer of {vocabulary} word pieces"
            )));
        }
        let table = embeddings
            .to_dtype(DType::F32)
            .and_then(|t| t.flatten_all())
            .and_then(|t| t.to_vec1::<f32>())
            .map_err(|e| unsupported(format!("`embeddings`: {e}")))?;
        let unknown = tokenizer.token_to_id("[UNK]");
        Ok(StaticTable { tokenizer: Box::new(tokenizer), table, dim, rows, unknown })
    }

    /// The size of the vectors.
    pub(crate) fn dimensions(&self) -> usize {
        self.dim
    }

    /// The mean of each text's word-piece vectors (unknown pieces left out), unit length; a
    /// text without a known word piece gets zeros.
    pub(crate) fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, SemanticError> {
        let mut out = Vec::with_capacity(texts.len());
        for text in texts {
            let encoding =
                self.tokenizer.encode(*text, false).map_err(|e| SemanticError::Inference { message: e.to_string() })?;
            let mut sum = vec![0f32; self.dim];
            let mut count = 0usize;
            for &id in encoding.get_ids() {
                if Some(id) == self.unknown || id as usize >= self.rows {
                    continue;
                }
                let row = &self.table[id as usize * self.dim..(id as usize + 1) * self.dim];
                sum.iter_mut().zip(row).for_each(|(s, x)| *s += x);
                count += 1;
            }
            let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
            if count > 0 && norm > 0.0 {
                sum.iter_mut().for_each(|x| *x /= norm);
            }
            out.push(sum);
        }
        Ok(out)
    }
}
