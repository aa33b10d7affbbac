//! BM25 search over tool names, descriptions and parameters.
//!
//! Every deferred tool is a document of four weighted fields: its name, its description, the
//! names of its parameters, and the text of its parameters (their descriptions and the string
//! values of their `enum`s, nested objects and array items included). Text is analysed the same
//! way on both sides:
//!
//! - words are runs of letters and digits; identifiers are split at `snake_case`, `kebab-case`,
//!   `dotted.names`, `camelCase` / `PascalCase` (`HTTPServer` is `http`, `server`) and letter–digit
//!   boundaries, and a word that was split is also kept whole (`GitHub` gives `git`, `hub` and
//!   `github`, `s3` gives `s` and `s3`), so brand names and versioned names match either way;
//! - words made only of digits are dropped (in a request they are argument values);
//! - words are lowercased and reduced to their Snowball (Porter 2) English stem, so `files`,
//!   `filing` and `file` meet;
//! - the query side drops common English stop words (`the`, `can`, `please`, …) unless nothing
//!   else is left.
//!
//! The score is Okapi BM25 over the weighted term frequency
//! `2 × name + description + parameter names + ½ × parameter text`, with `k1 = 1.2` and
//! `b = 0.75` (see [`Bm25Params`]). The whole score of each (term, tool) pair is computed once,
//! when the index is built; a search adds up a few posting lists and keeps the best `k` tools.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use rust_stemmers::{Algorithm, Stemmer};
use serde_json::Value;

use crate::tool::ToolDefinition;

/// The parameters of the BM25 ranking.
///
/// The defaults are the ones measured best on the tool-retrieval evaluation (BENCHMARKS.md,
/// "Tool search"); the results barely move within `k1 ∈ [1.0, 1.5]`, `b ∈ [0.6, 0.85]` and a
/// name weight between 1.5 and 3, so they are not fitted to one catalogue.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Bm25Params {
    /// Term-frequency saturation.
    pub k1: f32,
    /// Length normalisation (0 = none, 1 = full).
    pub b: f32,
    /// The weight of a term in the tool's name.
    pub name_weight: f32,
    /// The weight of a term in the tool's description.
    pub description_weight: f32,
    /// The weight of a term in a parameter's name.
    pub parameter_name_weight: f32,
    /// The weight of a term in a parameter's description or enum values.
    pub parameter_text_weight: f32,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Bm25Params {
            k1: 1.2,
            b: 0.75,
            name_weight: 2.0,
            description_weight: 1.0,
            parameter_name_weight: 1.0,
            parameter_text_weight: 0.5,
        }
    }
}

/// English stop words dropped from queries: function words and the politeness of requests
/// ("could you please help me …"). Words that name operations (`get`, `find`, `list`, `search`)
/// are kept.
const STOP_WORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "d", "did", "do",
    "does", "down", "during", "e", "each", "eg", "etc", "few", "for", "from", "further", "g", "give", "had", "has",
    "have", "he", "help", "her", "here", "him", "his", "how", "i", "ie", "if", "in", "into", "is", "it", "its", "just",
    "know", "let", "like", "ll", "m", "may", "me", "might", "more", "most", "must", "my", "need", "no", "nor", "not",
    "of", "off", "on", "once", "only", "or", "other", "our", "out", "over", "own", "per", "please", "re", "s", "same",
    "shall", "she", "should", "show", "so", "some", "such", "t", "tell", "than", "that", "the", "their", "them",
    "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "us", "use",
    "using", "ve", "very", "via", "want", "was", "we", "were", "what", "when", "where", "whether", "which", "while",
    "who", "whom", "why", "will", "with", "would", "you", "your",
];

/// How deep parameter schemas are read (nested objects, array items, unions).
const MAX_SCHEMA_DEPTH: usize = 6;
/// How many enum values of one parameter are indexed.
const MAX_ENUM_VALUES: usize = 64;

/// Splits text into lowercase words, identifiers split (see the [module docs](self)); digit-only
/// words are dropped. No stemming.
///
/// ```
/// use toolsmith::search::bm25::split_words;
/// assert_eq!(split_words("getHTTPResponse_v2"), ["get", "http", "response", "gethttpresponse", "v", "v2"]);
/// assert_eq!(split_words("list-files 42"), ["list", "files"]);
/// ```
pub fn split_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_word(text, |w| out.push(w.to_string()));
    out
}

fn for_each_word(text: &str, mut f: impl FnMut(&str)) {
    let mut lower = String::new();
    for run in text.split(|c: char| !c.is_alphanumeric()) {
        if run.is_empty() {
            continue;
        }
        let mut start = 0;
        let mut parts = 0;
        let mut emit = |piece: &str, lower: &mut String| {
            if piece.chars().all(|c| c.is_numeric()) {
                return;
            }
            lower.clear();
            if piece.is_ascii() {
                lower.push_str(piece);
                lower.make_ascii_lowercase();
            } else {
                lower.extend(piece.chars().flat_map(char::to_lowercase));
            }
            f(lower);
        };
        let mut prev: Option<char> = None;
        let mut chars = run.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if let Some(p) = prev {
                let next = chars.peek().map(|&(_, n)| n);
                let boundary = (p.is_lowercase() && c.is_uppercase())
                    || (p.is_alphabetic() && c.is_numeric())
                    || (p.is_numeric() && c.is_alphabetic())
                    || (p.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase));
                if boundary {
                    emit(&run[start..i], &mut lower);
                    parts += 1;
                    start = i;
                }
            }
            prev = Some(c);
        }
        emit(&run[start..], &mut lower);
        if parts > 0 {
            emit(run, &mut lower);
        }
    }
}

/// The multiplicative hash of rustc (FxHash): a few times faster than SipHash on the short words
/// of a catalogue, which is text the agent's own tools and servers supplied.
#[derive(Default, Clone, Copy)]
struct FxHasher(u64);

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(last));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// The text analysis shared by indexing and queries: words, stems, stop words.
struct Analyzer {
    stemmer: Stemmer,
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Analyzer(english)")
    }
}

impl Analyzer {
    fn new() -> Self {
        Analyzer { stemmer: Stemmer::create(Algorithm::English) }
    }

    fn stem(&self, word: &str) -> String {
        self.stemmer.stem(word).into_owned()
    }

    /// The query's terms, stop words removed unless nothing else is left; deduplicated.
    fn query_terms(&self, query: &str) -> Vec<String> {
        let mut words = Vec::new();
        let mut stops = Vec::new();
        for_each_word(query, |w| {
            if STOP_WORDS.binary_search(&w).is_ok() { stops.push(w.to_string()) } else { words.push(w.to_string()) }
        });
        if words.is_empty() {
            words = stops;
        }
        let mut terms: Vec<String> = words.iter().map(|w| self.stem(w)).collect();
        terms.sort_unstable();
        terms.dedup();
        terms
    }
}

/// The four fields of a tool document.
const FIELDS: usize = 4;

/// Collects the text of a parameter schema: parameter names, and their descriptions and enum
/// values.
pub(crate) fn schema_text(schema: &Value, names: &mut String, text: &mut String, depth: usize) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    let Some(obj) = schema.as_object() else { return };
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            names.push_str(name);
            names.push('\n');
            if let Some(d) = prop.get("description").and_then(Value::as_str) {
                text.push_str(d);
                text.push('\n');
            }
            if let Some(values) = prop.get("enum").and_then(Value::as_array) {
                for v in values.iter().filter_map(Value::as_str).take(MAX_ENUM_VALUES) {
                    text.push_str(v);
                    text.push('\n');
                }
            }
            schema_text(prop, names, text, depth + 1);
        }
    }
    if let Some(items) = obj.get("items") {
        schema_text(items, names, text, depth + 1);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(variants)) = obj.get(key) {
            for v in variants {
                schema_text(v, names, text, depth + 1);
            }
        }
    }
}

/// A BM25 index over a tool catalogue: one posting list per term, each posting holding the
/// whole BM25 score of the term for that tool.
pub struct Bm25Index {
    analyzer: Analyzer,
    terms: FxMap<String, u32>,
    postings: Vec<Vec<(u32, f32)>>,
    len: usize,
}

impl std::fmt::Debug for Bm25Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bm25Index").field("tools", &self.len).field("terms", &self.terms.len()).finish()
    }
}

impl Bm25Index {
    /// Indexes tool definitions, in catalogue order, with the default parameters.
    pub fn build<'a>(defs: impl IntoIterator<Item = &'a ToolDefinition>) -> Self {
        Self::with_params(defs, Bm25Params::default())
    }

    /// Indexes tool definitions with the given parameters.
    pub fn with_params<'a>(defs: impl IntoIterator<Item = &'a ToolDefinition>, params: Bm25Params) -> Self {
        let analyzer = Analyzer::new();
        let weights =
            [params.name_weight, params.description_weight, params.parameter_name_weight, params.parameter_text_weight];
        let mut terms: FxMap<String, u32> = FxMap::default();
        // Stems of the words seen so far: catalogues repeat their vocabulary a lot.
        let mut stems: FxMap<String, u32> = FxMap::default();
        // Per document: (term, weighted frequency), and the weighted length.
        let mut docs: Vec<(Vec<(u32, f32)>, f32)> = Vec::new();
        // The current document's frequencies, by term, and the terms it has.
        let mut freq: Vec<f32> = Vec::new();
        let mut present: Vec<u32> = Vec::new();
        let (mut names, mut text) = (String::new(), String::new());
        for def in defs {
            names.clear();
            text.clear();
            schema_text(&def.parameters_json_schema, &mut names, &mut text, 0);
            let fields: [&str; FIELDS] = [&def.name, def.description.as_deref().unwrap_or(""), &names, &text];
            let mut length = 0.0;
            for (field, weight) in fields.into_iter().zip(weights) {
                for_each_word(field, |w| {
                    let id = match stems.get(w) {
                        Some(&id) => id,
                        None => {
                            let stem = analyzer.stem(w);
                            let next = terms.len() as u32;
                            let id = *terms.entry(stem).or_insert(next);
                            stems.insert(w.to_string(), id);
                            id
                        }
                    };
                    if freq.len() <= id as usize {
                        freq.resize(id as usize + 1, 0.0);
                    }
                    if freq[id as usize] == 0.0 {
                        present.push(id);
                    }
                    freq[id as usize] += weight;
                    length += weight;
                });
            }
            docs.push((present.iter().map(|&t| (t, std::mem::take(&mut freq[t as usize]))).collect(), length));
            present.clear();
        }
        let len = docs.len();
        let avg_len = (docs.iter().map(|d| d.1 as f64).sum::<f64>() / len.max(1) as f64).max(1e-6) as f32;
        let mut df = vec![0u32; terms.len()];
        for (freqs, _) in &docs {
            for &(term, _) in freqs {
                df[term as usize] += 1;
            }
        }
        let mut postings: Vec<Vec<(u32, f32)>> = df.iter().map(|&n| Vec::with_capacity(n as usize)).collect();
        let n = len as f32;
        for (doc, (freqs, length)) in docs.iter().enumerate() {
            let norm = params.k1 * (1.0 - params.b + params.b * length / avg_len);
            for &(term, tf) in freqs {
                let df = df[term as usize] as f32;
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                postings[term as usize].push((doc as u32, idf * tf * (params.k1 + 1.0) / (tf + norm)));
            }
        }
        Bm25Index { analyzer, terms, postings, len }
    }

    /// How many tools are indexed.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the index is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The analysed terms of a query (stems, stop words removed unless nothing else is left);
    /// empty when the query has no words.
    pub fn query_terms(&self, query: &str) -> Vec<String> {
        self.analyzer.query_terms(query)
    }

    /// The best `k` tools for a query, best first, as `(tool, score)` with the tool's position in
    /// the catalogue; ties go to the earlier tool. Tools that share no term with the query are
    /// never returned.
    pub fn search(&self, query: &str, k: usize) -> Vec<(u32, f32)> {
        let terms = self.query_terms(query);
        self.search_terms(&terms, k)
    }

    pub(crate) fn search_terms(&self, terms: &[String], k: usize) -> Vec<(u32, f32)> {
        if k == 0 {
            return Vec::new();
        }
        let lists: Vec<&Vec<(u32, f32)>> =
            terms.iter().filter_map(|t| self.terms.get(t)).map(|&id| &self.postings[id as usize]).collect();
        let mut hits: Vec<(u32, f32)> = match lists.as_slice() {
            [] => return Vec::new(),
            [only] => only.to_vec(),
            _ => {
                let mut scores = vec![0.0f32; self.len];
                let mut touched: Vec<u32> = Vec::new();
                for list in lists {
                    for &(doc, score) in list {
                        let slot = &mut scores[doc as usize];
                        if *slot == 0.0 {
                            touched.push(doc);
                        }
                        *slot += score;
                    }
                }
                touched.into_iter().map(|d| (d, scores[d as usize])).collect()
            }
        };
        let better = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if hits.len() > k {
            hits.select_nth_unstable_by(k - 1, better);
            hits.truncate(k);
        }
        hits.sort_unstable_by(better);
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn def(name: &str, description: &str, parameters: Value) -> ToolDefinition {
        ToolDefinition::new(name, parameters).with_description(description)
    }

    fn names<'a>(defs: &'a [ToolDefinition], hits: &[(u32, f32)]) -> Vec<&'a str> {
        hits.iter().map(|&(d, _)| defs[d as usize].name.as_str()).collect()
    }

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn splits_identifiers() {
        assert_eq!(split_words("delete_file"), ["delete", "file"]);
        assert_eq!(split_words("getWeatherForecast"), ["get", "weather", "forecast", "getweatherforecast"]);
        assert_eq!(split_words("HTTPServer"), ["http", "server", "httpserver"]);
        assert_eq!(split_words("GitHub"), ["git", "hub", "github"]);
        assert_eq!(split_words("sha256sum"), ["sha", "sum", "sha256sum"]);
        assert_eq!(split_words("math.factorial"), ["math", "factorial"]);
        assert_eq!(split_words("Homes_2_FindHomeByArea"), ["homes", "find", "home", "by", "area", "findhomebyarea"]);
        assert_eq!(split_words("list-files --all 2024"), ["list", "files", "all"]);
        assert_eq!(split_words("Überweisung_Konto"), ["überweisung", "konto"]);
        assert!(split_words(" -- 42 !").is_empty());
    }

    #[test]
    fn stems_and_drops_stop_words_from_queries() {
        let a = Analyzer::new();
        assert_eq!(a.query_terms("Could you please list the files?"), ["file", "list"]);
        assert_eq!(a.query_terms("running runs"), ["run"]);
        // Only stop words: they are kept rather than leaving nothing.
        assert_eq!(a.query_terms("what is this"), ["is", "this", "what"]);
        assert!(a.query_terms("?? 12 !!").is_empty());
    }

    #[test]
    fn ranks_by_relevance_with_the_name_weighted() {
        let defs = [
            def("send_message", "Send a message to a Slack channel.", json!({"type": "object"})),
            def("read_file", "Read the contents of a file from disk.", json!({"type": "object"})),
            def("search_files", "Search for files whose names match a pattern.", json!({"type": "object"})),
            def("create_issue", "Create a new issue in a GitHub repository.", json!({"type": "object"})),
        ];
        let index = Bm25Index::build(&defs);
        assert_eq!(names(&defs, &index.search("read a file", 10))[0], "read_file");
        assert_eq!(names(&defs, &index.search("find files matching *.rs", 10))[0], "search_files");
        assert_eq!(names(&defs, &index.search("open a GitHub issue", 10)), ["create_issue"]);
        assert_eq!(names(&defs, &index.search("post to slack", 10)), ["send_message"]);
        assert!(index.search("quantum chromodynamics", 10).is_empty());
        assert!(index.search("", 10).is_empty());
        // A stemmed match: "messages" and "sending" meet "message" and "send".
        assert_eq!(names(&defs, &index.search("sending messages", 1)), ["send_message"]);
    }

    #[test]
    fn parameters_and_enum_values_are_indexed() {
        let defs = [
            def(
                "find_movies",
                "Find movies to watch.",
                json!({"type": "object", "properties": {
                    "genre": {"type": "string", "enum": ["Anime", "Comedy", "Drama"]},
                    "director": {"type": "string", "description": "The director's name."}
                }}),
            ),
            def(
                "find_books",
                "Find books to read.",
                json!({"type": "object", "properties": {
                    "filters": {"type": "array", "items": {"type": "object", "properties": {
                        "isbn": {"type": "string", "description": "International Standard Book Number."}
                    }}}
                }}),
            ),
        ];
        let index = Bm25Index::build(&defs);
        assert_eq!(names(&defs, &index.search("anime", 10)), ["find_movies"]);
        assert_eq!(names(&defs, &index.search("by director", 10)), ["find_movies"]);
        assert_eq!(names(&defs, &index.search("isbn lookup", 10)), ["find_books"]);
    }

    #[test]
    fn name_matches_beat_description_matches_and_ties_keep_catalogue_order() {
        let defs = [
            def("get_time", "Returns a value about the weather station clock.", json!({})),
            def("weather", "Returns the current conditions.", json!({})),
            def("a", "same text", json!({})),
            def("b", "same text", json!({})),
        ];
        let index = Bm25Index::build(&defs);
        assert_eq!(names(&defs, &index.search("weather", 10)), ["weather", "get_time"]);
        assert_eq!(names(&defs, &index.search("same text", 10)), ["a", "b"]);
        assert_eq!(names(&defs, &index.search("same text", 1)), ["a"]);
        assert!(index.search("same", 0).is_empty());
    }
}
