//! Keyword search: the tokenizer and the inverted index shared by the keyword strategies.

use std::cell::RefCell;

use rustc_hash::FxHashMap;

/// Splits text into lowercase `[a-z0-9]+` tokens (so `delete_file` is `delete`, `file`).
pub fn tokenize(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_ascii_alphanumeric()).filter(|t| !t.is_empty()).map(|t| t.to_ascii_lowercase())
}

/// An inverted index over tool names and descriptions: token → the tools that contain it.
#[derive(Debug, Default, Clone)]
pub struct KeywordIndex {
    /// Token → the documents holding it, in catalogue order, each once.
    postings: FxHashMap<String, Vec<u32>>,
    len: usize,
}

/// Scratch space of searches, kept per thread so that a search over a large catalogue does not
/// allocate and clear a table of every tool it touches.
#[derive(Default)]
struct Scratch {
    /// Per document: how many distinct query tokens it holds; zero between searches.
    counts: Vec<u32>,
    /// The documents with a non-zero count.
    touched: Vec<u32>,
    /// Ranking keys of the touched documents (see [`rank_key`]).
    keys: Vec<u64>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// A key whose ascending order is score descending, then catalogue order.
fn rank_key(doc: u32, score: u32) -> u64 {
    (u64::from(u32::MAX - score) << 32) | u64::from(doc)
}

fn key_doc(key: u64) -> u32 {
    key as u32
}

fn key_score(key: u64) -> u32 {
    u32::MAX - (key >> 32) as u32
}

impl KeywordIndex {
    /// Indexes documents given as `(name, description)`, in catalogue order.
    pub fn build<'a>(docs: impl IntoIterator<Item = (&'a str, Option<&'a str>)>) -> Self {
        let mut postings: FxHashMap<String, Vec<u32>> = FxHashMap::default();
        let mut len = 0;
        for (i, (name, description)) in docs.into_iter().enumerate() {
            len = i + 1;
            let i = i as u32;
            for token in tokenize(name).chain(description.into_iter().flat_map(tokenize)) {
                let list = postings.entry(token).or_default();
                if list.last() != Some(&i) {
                    list.push(i);
                }
            }
        }
        KeywordIndex { postings, len }
    }

    /// How many documents are indexed.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the index is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Counts, for every document holding at least one query token, the distinct query tokens
    /// it holds, and returns the ranking keys of those documents in no particular order, in the
    /// scratch space's key buffer (taken out of it: give it back with [`Self::give_back`]).
    fn score_keys(&self, tokens: &[String]) -> Vec<u64> {
        let mut distinct: Vec<&String> = tokens.iter().collect();
        distinct.sort();
        distinct.dedup();
        SCRATCH.with_borrow_mut(|s| {
            if s.counts.len() < self.len {
                s.counts.resize(self.len, 0);
            }
            for token in distinct {
                if let Some(list) = self.postings.get(token.as_str()) {
                    for &doc in list {
                        let count = &mut s.counts[doc as usize];
                        if *count == 0 {
                            s.touched.push(doc);
                        }
                        *count += 1;
                    }
                }
            }
            let mut keys = std::mem::take(&mut s.keys);
            keys.clear();
            keys.reserve(s.touched.len());
            for &doc in &s.touched {
                keys.push(rank_key(doc, std::mem::take(&mut s.counts[doc as usize])));
            }
            s.touched.clear();
            keys
        })
    }

    /// Returns a key buffer to the scratch space, to be reused by the next search on this thread.
    fn give_back(keys: Vec<u64>) {
        SCRATCH.with_borrow_mut(|s| {
            if keys.capacity() > s.keys.capacity() {
                s.keys = keys;
            }
        });
    }

    /// Scores every document that contains at least one query token: the number of distinct
    /// query tokens it contains. Returns `(document, score)` in catalogue order.
    pub fn scores(&self, tokens: &[String]) -> Vec<(u32, u32)> {
        let keys = self.score_keys(tokens);
        let mut out: Vec<(u32, u32)> = keys.iter().map(|&key| (key_doc(key), key_score(key))).collect();
        Self::give_back(keys);
        out.sort_unstable_by_key(|&(doc, _)| doc);
        out
    }

    /// The `k` best documents for these query tokens, as `(document, score)`, best first: scored
    /// as by [`scores`](Self::scores), ranked by score (highest first), then in catalogue order,
    /// except that the documents for which `demoted` holds come after all the others.
    ///
    /// The result is the first `k` of all scored documents sorted that way, but found without
    /// sorting them all; `demoted` is asked only about documents near the top.
    pub fn top(&self, tokens: &[String], k: usize, mut demoted: impl FnMut(u32) -> bool) -> Vec<(u32, u32)> {
        if k == 0 {
            return Vec::new();
        }
        let mut keys = self.score_keys(tokens);
        let mut best: Vec<(u32, u32)> = Vec::with_capacity(k.min(keys.len()));
        let mut later: Vec<(u32, u32)> = Vec::new();
        // `keys[..done]` are sorted and no greater than any key after them; each round sorts the
        // next batch of the best remaining keys, until `k` documents that are not demoted are
        // found or every key has been seen.
        let mut done = 0;
        let mut batch = k;
        'rounds: while done < keys.len() {
            let end = keys.len().min(done + batch);
            let rest = &mut keys[done..];
            let take = end - done;
            if take < rest.len() {
                rest.select_nth_unstable(take - 1);
            }
            rest[..take].sort_unstable();
            for &key in &keys[done..end] {
                let hit = (key_doc(key), key_score(key));
                if demoted(hit.0) {
                    later.push(hit);
                } else {
                    best.push(hit);
                    if best.len() == k {
                        break 'rounds;
                    }
                }
            }
            done = end;
            batch = batch.saturating_mul(2);
        }
        Self::give_back(keys);
        let missing = k - best.len();
        best.extend(later.into_iter().take(missing));
        best
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn tokenizes_identifiers_and_punctuation() {
        let t: Vec<String> = tokenize("delete_file: Delete a FILE, v2!").collect();
        assert_eq!(t, ["delete", "file", "delete", "a", "file", "v2"]);
        assert_eq!(tokenize("  --- !!!").count(), 0);
    }

    #[test]
    fn scores_count_distinct_query_tokens() {
        let idx = KeywordIndex::build([("delete_file", Some("Delete a file.")), ("roll_dice", None)]);
        assert_eq!(idx.scores(&["file".into(), "file".into(), "delete".into()]), vec![(0, 2)]);
        assert_eq!(idx.scores(&["dice".into()]), vec![(1, 1)]);
        assert!(idx.scores(&["nothing".into()]).is_empty());
    }

    #[test]
    fn top_ranks_by_score_then_position_with_demoted_last() {
        let idx = KeywordIndex::build([
            ("read_file", Some("Read a file.")),
            ("delete_file", Some("Delete a file.")),
            ("delete_dir", None),
            ("roll_dice", None),
        ]);
        let q: Vec<String> = ["delete", "file"].map(String::from).into();
        assert_eq!(idx.top(&q, 10, |_| false), vec![(1, 2), (0, 1), (2, 1)]);
        assert_eq!(idx.top(&q, 2, |_| false), vec![(1, 2), (0, 1)]);
        assert_eq!(idx.top(&q, 0, |_| false), vec![]);
        assert_eq!(idx.top(&q, 10, |d| d == 1), vec![(0, 1), (2, 1), (1, 2)]);
        assert_eq!(idx.top(&q, 2, |d| d != 2), vec![(2, 1), (1, 2)]);
        assert_eq!(idx.top(&q, 3, |_| true), vec![(1, 2), (0, 1), (2, 1)]);
        assert!(idx.top(&["nothing".into()], 3, |_| false).is_empty());
    }

    /// Scores by reading every document's tokens, with no index.
    fn reference_scores(docs: &[(String, Option<String>)], query: &[String]) -> Vec<(u32, u32)> {
        let query: std::collections::BTreeSet<&String> = query.iter().collect();
        let mut out = Vec::new();
        for (i, (name, description)) in docs.iter().enumerate() {
            let held: std::collections::HashSet<String> =
                tokenize(name).chain(description.iter().flat_map(|d| tokenize(d))).collect();
            let score = query.iter().filter(|t| held.contains(t.as_str())).count() as u32;
            if score > 0 {
                out.push((i as u32, score));
            }
        }
        out
    }

    const WORDS: &[&str] = &["the", "a", "file", "delete", "get", "weather", "v2", "x", "hotel", "list"];

    fn text() -> impl Strategy<Value = String> {
        use proptest::prelude::*;
        (
            proptest::collection::vec(proptest::sample::select(WORDS), 0..6),
            prop_oneof![Just("_"), Just(" "), Just(", ")],
        )
            .prop_map(|(words, sep)| words.join(sep))
    }

    proptest! {
        /// The top `k` equal scoring every document, sorting them all and taking `k`.
        #[test]
        fn top_equals_full_sort(
            docs in proptest::collection::vec((text(), proptest::option::of(text())), 0..40),
            query in proptest::collection::vec(
                prop_oneof![proptest::sample::select(WORDS).prop_map(String::from), "[a-z]{1,3}"],
                0..6,
            ),
            demoted in proptest::collection::vec(proptest::bool::ANY, 40),
            k in 0usize..45,
        ) {
            let idx = KeywordIndex::build(docs.iter().map(|(n, d)| (n.as_str(), d.as_deref())));
            let mut expected = reference_scores(&docs, &query);
            prop_assert_eq!(idx.scores(&query), expected.clone());
            expected.sort_by_key(|&(doc, score)| (demoted[doc as usize], std::cmp::Reverse(score), doc));
            expected.truncate(k);
            prop_assert_eq!(idx.top(&query, k, |doc| demoted[doc as usize]), expected);
        }
    }
}
