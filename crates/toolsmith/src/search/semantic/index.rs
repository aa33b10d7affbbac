//! The embeddings of a catalogue's tools, one row per tool in catalogue order, and the nearest
//! tools to a request by cosine similarity.

use std::sync::Arc;

use super::error::SemanticError;
use super::model::SemanticModel;
use super::text::tool_text;
use crate::tool::ToolDefinition;

/// A catalogue's tool embeddings (unit length, so the dot product is the cosine), shared with
/// the model's cache rather than copied.
#[derive(Debug)]
pub(crate) struct SemanticIndex {
    model: SemanticModel,
    dim: usize,
    rows: Vec<Arc<[f32]>>,
}

impl SemanticIndex {
    /// Embeds the tools (the model's cache supplies those it has seen).
    pub(crate) fn build(model: &SemanticModel, defs: &[ToolDefinition]) -> Result<Self, SemanticError> {
        let dim = model.dimensions()?;
        let texts: Vec<String> = defs.iter().map(tool_text).collect();
        let rows = model.embed_cached(&texts)?;
        Ok(SemanticIndex { model: model.clone(), dim, rows })
    }

    /// Whether this index was built with `model`.
    pub(crate) fn uses(&self, model: &SemanticModel) -> bool {
        self.model == *model
    }

    /// The `k` tools nearest to the embedding `query`, best first (ties to the first in the
    /// catalogue), with their cosine similarity.
    pub(crate) fn nearest(&self, query: &[f32], k: usize) -> Vec<(u32, f32)> {
        if query.len() != self.dim || k == 0 {
            return Vec::new();
        }
        let mut scored: Vec<(u32, f32)> =
            self.rows.iter().enumerate().map(|(i, row)| (i as u32, dot(row, query))).collect();
        let better = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if scored.len() > k {
            scored.select_nth_unstable_by(k - 1, better);
            scored.truncate(k);
        }
        scored.sort_unstable_by(better);
        scored
    }

    /// The `k` tools nearest to a request's text.
    pub(crate) fn search(&self, request: &str, k: usize) -> Result<Vec<(u32, f32)>, SemanticError> {
        if self.rows.is_empty() {
            return Ok(Vec::new());
        }
        let query = self.model.embed(request)?;
        Ok(self.nearest(&query, k))
    }
}

/// The dot product, in eight lanes so that it vectorises.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            lanes[i] += x[i] * y[i];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering;

    use super::*;

    #[test]
    fn dot_matches_the_plain_sum() {
        let a: Vec<f32> = (0..19).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..19).map(|i| 1.0 - i as f32 * 0.1).collect();
        let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - plain).abs() < 1e-4);
        assert_eq!(Ordering::Equal, dot(&[], &[]).total_cmp(&0.0));
    }
}
