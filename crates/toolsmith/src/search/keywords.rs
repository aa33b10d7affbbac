//! Keyword search: the tokenizer and the inverted index shared by the keyword strategies.

use std::collections::HashMap;

/// Splits text into lowercase `[a-z0-9]+` tokens (so `delete_file` is `delete`, `file`).
pub fn tokenize(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_ascii_alphanumeric()).filter(|t| !t.is_empty()).map(|t| t.to_ascii_lowercase())
}

/// An inverted index over tool names and descriptions: token → the tools that contain it.
#[derive(Debug, Default, Clone)]
pub struct KeywordIndex {
    postings: HashMap<String, Vec<u32>>,
    len: usize,
}

impl KeywordIndex {
    /// Indexes documents given as `(name, description)`, in catalogue order.
    pub fn build<'a>(docs: impl IntoIterator<Item = (&'a str, Option<&'a str>)>) -> Self {
        let mut postings: HashMap<String, Vec<u32>> = HashMap::new();
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

    /// Scores every document that contains at least one query token: the number of distinct
    /// query tokens it contains. Returns `(document, score)` in catalogue order.
    pub fn scores(&self, tokens: &[String]) -> Vec<(u32, u32)> {
        let mut distinct: Vec<&String> = tokens.iter().collect();
        distinct.sort();
        distinct.dedup();
        let mut scores: HashMap<u32, u32> = HashMap::new();
        for token in distinct {
            if let Some(list) = self.postings.get(token) {
                for &doc in list {
                    *scores.entry(doc).or_insert(0) += 1;
                }
            }
        }
        let mut out: Vec<(u32, u32)> = scores.into_iter().collect();
        out.sort_unstable_by_key(|&(doc, _)| doc);
        out
    }
}

#[cfg(test)]
mod tests {
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
}
