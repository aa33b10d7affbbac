//! Reciprocal-rank fusion of the BM25 and embedding rankings: the hybrid strategy.
//!
//! Each tool scores `1 / (K + its BM25 rank) + DENSE_WEIGHT / (K + its embedding rank)` over
//! each ranking's first [`DEPTH`] tools (ranks from 1), and the tools are taken by that score,
//! ties to the first in the catalogue. The weight and depth were chosen on the project's
//! evaluation catalogues (tests/search-eval/RESULTS.md).

use std::collections::HashMap;

/// RRF's constant: how much the first ranks count more than the next.
pub(crate) const K: f32 = 60.0;
/// The embedding ranking's weight against BM25's (1), for an encoder.
pub(crate) const DENSE_WEIGHT: f32 = 0.25;
/// The same for a static model (its ranking is weaker).
pub(crate) const STATIC_WEIGHT: f32 = 0.2;
/// How many tools of each ranking take part.
pub(crate) const DEPTH: usize = 100;

/// Fuses two rankings of catalogue positions, best first, into the first `max` positions.
pub(crate) fn fuse(lexical: &[u32], dense: &[u32], dense_weight: f32, max: usize) -> Vec<u32> {
    let mut scores: HashMap<u32, f32> = HashMap::with_capacity(lexical.len() + dense.len());
    for (rank, &p) in lexical.iter().enumerate() {
        *scores.entry(p).or_default() += 1.0 / (K + rank as f32 + 1.0);
    }
    for (rank, &p) in dense.iter().enumerate() {
        *scores.entry(p).or_default() += dense_weight / (K + rank as f32 + 1.0);
    }
    let mut ranked: Vec<(u32, f32)> = scores.into_iter().collect();
    ranked.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.into_iter().take(max).map(|(p, _)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_wins_and_either_list_alone_counts() {
        // 7 is second in both lists, so it beats 1 (first in BM25 only) and 9 (first in dense only).
        let fused = fuse(&[1, 7, 3], &[9, 7, 4], 1.0, 10);
        assert_eq!(fused[0], 7);
        assert_eq!(fused[1..3], [1, 9]);
        assert_eq!(fused.len(), 5);
        // A lighter dense weight puts BM25's own order first among tools only one list has.
        assert_eq!(fuse(&[1, 3], &[9, 4], 0.5, 2), [1, 3]);
    }
}
