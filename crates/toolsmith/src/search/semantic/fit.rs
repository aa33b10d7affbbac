//! Fitting a static model's word-piece vectors to an encoder's embeddings of a corpus (the step
//! Model2Vec calls "tokenlearn"): ridge regression of the texts' mean piece vectors on the
//! encoder's text embeddings, solved by conjugate gradients.
//!
//! With `C` the texts' bags of pieces (a row per text, `1/n` for each of its `n` pieces), `Y`
//! the encoder's embeddings and `E₀` the distilled vectors scaled to fit `Y` best, the vectors
//! `E` minimise `‖C E − Y‖² + λ ‖E − E₀‖²`: `(CᵀC + λ) E = CᵀY + λ E₀`, one system per
//! dimension, all sharing `CᵀC`. Only the pieces the corpus uses take part; the others keep
//! `E₀`.

use tokenizers::Tokenizer;

use super::error::SemanticError;

/// The ridge penalty λ per text of the corpus (λ grows with the corpus, as `CᵀC` does): 0.06 at
/// the 28,918 texts it was chosen with (tests/search-eval/RESULTS.md).
const RIDGE_PER_TEXT: f64 = 0.06 / 28_918.0;
/// Conjugate-gradient iterations.
const ITERATIONS: usize = 150;
/// The most word pieces of a text (the static model's own limit).
const MAX_PIECES: usize = 512;

/// What fitting a static model to a corpus did (see
/// [`distill_with_corpus`](super::distill_with_corpus)).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct FitReport {
    /// Texts of the corpus that have a known word piece (the others are left out).
    pub texts: usize,
    /// Word pieces the corpus uses, whose vectors were fitted.
    pub pieces_fitted: usize,
    /// The mean squared distance between a text's embedding by the static model and by the
    /// encoder, with the distilled vectors (scaled to fit best) ...
    pub error_distilled: f64,
    /// ... and with the fitted ones.
    pub error_fitted: f64,
}

/// The corpus's texts as bags of word pieces, in compressed rows: text `t`'s pieces (local
/// indices into `used`) are `pieces[starts[t]..starts[t + 1]]`, each weighing `1 / n`.
pub(crate) struct Bags {
    starts: Vec<usize>,
    pieces: Vec<u32>,
    /// The word-piece id of each local index.
    used: Vec<u32>,
}

impl Bags {
    fn texts(&self) -> usize {
        self.starts.len() - 1
    }

    fn bag(&self, t: usize) -> &[u32] {
        &self.pieces[self.starts[t]..self.starts[t + 1]]
    }
}

/// Tokenizes the corpus as the static model reads a text: no special pieces, unknown pieces left
/// out, at most [`MAX_PIECES`].
pub(crate) fn bags(tokenizer: &Tokenizer, texts: &[&str], rows: usize) -> Result<Bags, SemanticError> {
    let failed = |message: String| SemanticError::Inference { message };
    let mut tokenizer = tokenizer.clone();
    tokenizer
        .with_truncation(Some(tokenizers::TruncationParams { max_length: MAX_PIECES, ..Default::default() }))
        .map_err(|e| failed(e.to_string()))?;
    let unknown = tokenizer.token_to_id("[UNK]");
    let mut local = vec![u32::MAX; rows];
    let mut bags = Bags { starts: vec![0], pieces: Vec::new(), used: Vec::new() };
    for text in texts {
        let encoding = tokenizer.encode(*text, false).map_err(|e| failed(e.to_string()))?;
        for &id in encoding.get_ids() {
            if Some(id) == unknown || id as usize >= rows {
                continue;
            }
            let slot = &mut local[id as usize];
            if *slot == u32::MAX {
                *slot = bags.used.len() as u32;
                bags.used.push(id);
            }
            bags.pieces.push(*slot);
        }
        bags.starts.push(bags.pieces.len());
    }
    Ok(bags)
}

/// `out = C m`: each text's mean of its pieces' rows of `m` (`out` has a row per text).
fn mean_rows(bags: &Bags, m: &[f32], dim: usize, out: &mut [f32]) {
    for (t, row) in out.chunks_exact_mut(dim).enumerate() {
        row.fill(0.0);
        let bag = bags.bag(t);
        if bag.is_empty() {
            continue;
        }
        for &k in bag {
            let piece = &m[k as usize * dim..(k as usize + 1) * dim];
            row.iter_mut().zip(piece).for_each(|(o, x)| *o += x);
        }
        let w = 1.0 / bag.len() as f32;
        row.iter_mut().for_each(|o| *o *= w);
    }
}

/// `out = Cᵀ q`: each piece's sum over the texts that use it of `1/n` times their row of `q`.
fn spread_rows(bags: &Bags, q: &[f32], dim: usize, out: &mut [f32]) {
    out.fill(0.0);
    for (t, row) in q.chunks_exact(dim).enumerate() {
        let bag = bags.bag(t);
        if bag.is_empty() {
            continue;
        }
        let w = 1.0 / bag.len() as f32;
        for &k in bag {
            let piece = &mut out[k as usize * dim..(k as usize + 1) * dim];
            piece.iter_mut().zip(row).for_each(|(o, x)| *o += w * x);
        }
    }
}

/// Per column, the sum over rows of `a × b`.
fn column_dots(a: &[f32], b: &[f32], dim: usize) -> Vec<f64> {
    let mut sums = vec![0f64; dim];
    for (ra, rb) in a.chunks_exact(dim).zip(b.chunks_exact(dim)) {
        for ((s, x), y) in sums.iter_mut().zip(ra).zip(rb) {
            *s += f64::from(*x) * f64::from(*y);
        }
    }
    sums
}

/// The mean squared distance, over the texts with pieces, between `C m` and the targets.
fn error(bags: &Bags, m: &[f32], targets: &[f32], dim: usize, scratch: &mut [f32]) -> f64 {
    mean_rows(bags, m, dim, scratch);
    let mut sum = 0f64;
    let mut texts = 0usize;
    for (t, (row, target)) in scratch.chunks_exact(dim).zip(targets.chunks_exact(dim)).enumerate() {
        if bags.bag(t).is_empty() {
            continue;
        }
        texts += 1;
        sum += row.iter().zip(target).map(|(x, y)| f64::from(x - y).powi(2)).sum::<f64>();
    }
    sum / texts.max(1) as f64
}

/// Fits the rows of `table` (a row of `dim` values per word piece) that the corpus uses to
/// `targets` (a row per text); returns the whole table, scaled to fit, and the report.
pub(crate) fn fit(mut table: Vec<f32>, dim: usize, bags: &Bags, targets: &[f32]) -> (Vec<f32>, FitReport) {
    let texts = bags.texts();
    let used = bags.used.len();
    let with_pieces = (0..texts).filter(|&t| !bags.bag(t).is_empty()).count();
    // The distilled rows the corpus uses, in local order.
    let mut prior = vec![0f32; used * dim];
    for (k, &id) in bags.used.iter().enumerate() {
        prior[k * dim..(k + 1) * dim].copy_from_slice(&table[id as usize * dim..(id as usize + 1) * dim]);
    }
    // The scale that makes the distilled vectors fit the targets best (their size is arbitrary).
    let mut q = vec![0f32; texts * dim];
    mean_rows(bags, &prior, dim, &mut q);
    let (qy, qq) = (column_dots(&q, targets, dim), column_dots(&q, &q, dim));
    let (qy, qq): (f64, f64) = (qy.iter().sum(), qq.iter().sum());
    let scale = if qq > 0.0 { (qy / qq) as f32 } else { 1.0 };
    table.iter_mut().for_each(|x| *x *= scale);
    prior.iter_mut().for_each(|x| *x *= scale);
    let error_distilled = error(bags, &prior, targets, dim, &mut q);
    let lambda = (RIDGE_PER_TEXT * with_pieces as f64) as f32;

    // Conjugate gradients from x = prior: r = Cᵀ(Y − C x).
    let mut x = prior;
    mean_rows(bags, &x, dim, &mut q);
    q.iter_mut().zip(targets).for_each(|(c, y)| *c = y - *c);
    let mut r = vec![0f32; used * dim];
    spread_rows(bags, &q, dim, &mut r);
    let mut p = r.clone();
    let mut ap = vec![0f32; used * dim];
    let mut rs = column_dots(&r, &r, dim);
    for _ in 0..ITERATIONS {
        mean_rows(bags, &p, dim, &mut q);
        spread_rows(bags, &q, dim, &mut ap);
        ap.iter_mut().zip(&p).for_each(|(a, p)| *a += lambda * p);
        let pap = column_dots(&p, &ap, dim);
        let step: Vec<f32> = rs.iter().zip(&pap).map(|(r, d)| if *d > 0.0 { (r / d) as f32 } else { 0.0 }).collect();
        for ((xr, pr), (rr, ar)) in
            x.chunks_exact_mut(dim).zip(p.chunks_exact(dim)).zip(r.chunks_exact_mut(dim).zip(ap.chunks_exact(dim)))
        {
            for j in 0..dim {
                xr[j] += step[j] * pr[j];
                rr[j] -= step[j] * ar[j];
            }
        }
        let next = column_dots(&r, &r, dim);
        let beta: Vec<f32> = next.iter().zip(&rs).map(|(n, o)| if *o > 0.0 { (n / o) as f32 } else { 0.0 }).collect();
        for (pr, rr) in p.chunks_exact_mut(dim).zip(r.chunks_exact(dim)) {
            for j in 0..dim {
                pr[j] = rr[j] + beta[j] * pr[j];
            }
        }
        rs = next;
    }
    let error_fitted = error(bags, &x, targets, dim, &mut q);
    for (k, &id) in bags.used.iter().enumerate() {
        table[id as usize * dim..(id as usize + 1) * dim].copy_from_slice(&x[k * dim..(k + 1) * dim]);
    }
    (table, FitReport { texts: with_pieces, pieces_fitted: used, error_distilled, error_fitted })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three texts over three pieces (local indices): the fit reproduces targets that a table
    /// can reach exactly, up to the ridge's pull.
    #[test]
    fn the_fit_reaches_targets_a_table_can_make() {
        let bags = Bags { starts: vec![0, 1, 3, 5], pieces: vec![0, 0, 1, 1, 2], used: vec![0, 1, 2] };
        // Pieces' true vectors (dim 2): [1, 0], [0, 1], [1, 1]; texts: piece 0; 0 and 1; 1 and 2.
        let targets = [1.0, 0.0, 0.5, 0.5, 0.5, 1.0];
        let distilled = vec![0.5, 0.5, 0.5, 0.5, 0.5, 0.5];
        let (table, report) = fit(distilled, 2, &bags, &targets);
        assert_eq!((report.texts, report.pieces_fitted), (3, 3));
        assert!(report.error_fitted < report.error_distilled / 100.0, "{report:?}");
        let want = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0];
        for (got, want) in table.iter().zip(want) {
            assert!((got - want).abs() < 0.01, "{table:?}");
        }
    }
}
