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
//!   capitals with a plural `s` stay one word (`PRs` is `pr`);
//! - words made only of digits are dropped (in a request they are argument values);
//! - words are lowercased and reduced to their Snowball (Porter 2) English stem, so `files`,
//!   `filing` and `file` meet;
//! - the query side drops common English stop words (`the`, `can`, `please`, …) unless nothing
//!   else is left.
//!
//! The score is Okapi BM25 over the weighted term frequency
//! `2 × name + description + parameter names + ½ × parameter text` (see [`Bm25Params`]), then
//! raised for tools whose name holds the request's words: by `name_bonus × (the share of the
//! query's idf mass found in the name)`. The defaults: `k1 = 1.2`, `b = 0.5`, name bonus 0.25,
//! synonyms weighted 0.4 and abbreviations 0.5 ([`Bm25Params::plain`] turns the last three off).
//!
//! A request seldom uses the tool's own words, so a query word also brings in, at a lower
//! weight:
//! - the words of its group in a small table of general synonyms (`folder` / `directory`,
//!   `remove` / `delete`, `repo` / `repository`, …);
//! - what it abbreviates in this catalogue, learned from the catalogue's own text: an
//!   abbreviation in capitals, or a word the catalogue never uses, whose letters are the initials
//!   of a phrase the catalogue uses often (`PR` → `pull request`), and a word the catalogue never
//!   uses that begins a word it does use (`dir` → `directory`).
//!
//! The index can grow and shrink: [`insert`](Bm25Index::insert) and
//! [`remove`](Bm25Index::remove) cost the tool's own terms, not a rebuild, because the scores
//! are computed at search time from term frequencies, document lengths and document
//! frequencies kept up to date.

mod analysis;
mod synonyms;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;
use serde_json::Value;

pub use analysis::split_words;
use analysis::{Analyzer, QueryWord, Word, for_each_word, is_stop_word, query_words};

use crate::tool::ToolDefinition;

/// The parameters of the ranking.
///
/// The defaults were chosen on the shared retrieval benchmark and the MCP-servers catalogue and
/// checked on catalogues held out of that choice (tests/search-eval/RESULTS.md).
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
    /// How much a tool's score grows when its name holds the query's words: the score is
    /// multiplied by `1 + name_bonus × share`, the share being the part of the query's idf mass
    /// found in the name. 0 turns it off.
    pub name_bonus: f32,
    /// The weight of a synonym brought in by a query word (0 turns synonyms off).
    pub synonym_weight: f32,
    /// The weight of the words an abbreviation stands for (0 turns abbreviations off).
    pub abbreviation_weight: f32,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Bm25Params {
            k1: 1.2,
            b: 0.5,
            name_weight: 2.0,
            description_weight: 1.0,
            parameter_name_weight: 1.0,
            parameter_text_weight: 0.5,
            name_bonus: 0.25,
            synonym_weight: 0.4,
            abbreviation_weight: 0.5,
        }
    }
}

impl Bm25Params {
    /// Plain BM25 with the previous defaults (`b = 0.75`): no name bonus, no synonyms, no
    /// abbreviations.
    pub fn plain() -> Self {
        Bm25Params { b: 0.75, name_bonus: 0.0, synonym_weight: 0.0, abbreviation_weight: 0.0, ..Self::default() }
    }
}

/// How deep parameter schemas are read (nested objects, array items, unions).
const MAX_SCHEMA_DEPTH: usize = 6;
/// How many enum values of one parameter are indexed.
const MAX_ENUM_VALUES: usize = 64;
/// The fewest tools a phrase must appear in to be taken as what an abbreviation stands for.
const MIN_PHRASE_TOOLS: u32 = 3;
/// The fewest tools a word must appear in to be taken as what a prefix abbreviates.
const MIN_PREFIX_TOOLS: u32 = 2;
/// How many words beginning with a query word are looked at for what it abbreviates.
const MAX_PREFIX_CANDIDATES: usize = 256;

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

/// The four fields of a tool document.
const FIELDS: usize = 4;

/// A posting: a tool holding a term, how often (weighted), and whether its name has it.
#[derive(Debug, Clone, Copy)]
struct Posting {
    doc: u32,
    tf: f32,
    in_name: bool,
}

/// A posting as searches read it: the tool with [`IN_NAME`] set when its name has the term, and
/// the term-frequency part of its score.
type Scored = (u32, f32);

/// A term's scored postings and the version of the index they were computed for.
type Parts = (u64, Arc<[Scored]>);

/// The bit of a [`Scored`] tool id that says the term is in the tool's name (tool ids stay
/// below it: two billion tools would not fit in memory).
const IN_NAME: u32 = 1 << 31;

/// A phrase of two or three words (term ids; the third `u32::MAX` for two).
type Phrase = [u32; 3];

/// A word of the catalogue.
#[derive(Debug, Clone, Copy)]
struct WordInfo {
    /// Its stem's term id.
    term: u32,
    /// How many live tools use it.
    tools: u32,
    /// Its first letter when it can be part of a phrase, else 0.
    initial: u8,
}

/// What the index keeps of one tool, to remove it again.
#[derive(Debug, Default)]
struct Doc {
    terms: Box<[u32]>,
    words: Box<[u32]>,
    phrases: Box<[Phrase]>,
}

/// A term of a prepared query and its weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct QueryTerm {
    term: u32,
    weight: f32,
}

/// A query analysed against an index: the terms it has there, with their weights.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Query {
    terms: Vec<QueryTerm>,
    /// Whether the query had words at all (whether or not the index has them).
    worded: bool,
}

impl Query {
    /// Whether the query had words: a query of punctuation and numbers has none.
    pub(crate) fn has_words(&self) -> bool {
        self.worded
    }
}

/// Scratch space of searches, kept per thread so that a search allocates only its result.
#[derive(Default)]
struct Scratch {
    /// Per tool: its score so far, and the idf mass of the query terms in its name.
    acc: Vec<[f32; 2]>,
    touched: Vec<u32>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// A BM25 index over a tool catalogue (see the [module docs](self)).
///
/// ```
/// use serde_json::json;
/// use toolsmith::ToolDefinition;
/// use toolsmith::search::bm25::Bm25Index;
///
/// let tool = |name: &str, text: &str| ToolDefinition::new(name, json!({})).with_description(text);
/// let tools = [
///     tool("list_pull_requests", "List the pull requests of a repository."),
///     tool("merge_pull_request", "Merge a pull request."),
///     tool("get_pull_request_files", "The files a pull request changes."),
///     tool("delete_directory", "Delete a directory."),
/// ];
/// let mut index = Bm25Index::build(&tools);
/// // `PRs`: the initials of a phrase the catalogue uses; `folder`: a synonym of `directory`.
/// assert_eq!(index.search("merge PRs", 1)[0].0, 1);
/// assert_eq!(index.search("remove a folder", 1)[0].0, 3);
///
/// // Tools come and go at the cost of their own terms; ids are not reused.
/// assert!(index.remove(1));
/// let id = index.insert(&tool("close_pull_request", "Close a pull request without merging it."));
/// assert_eq!(id, 4);
/// assert_eq!(index.search("close the PR", 1)[0].0, 4);
/// assert_eq!(index.len(), 4);
/// ```
pub struct Bm25Index {
    analyzer: Analyzer,
    params: Bm25Params,
    /// Stem → term id, and back.
    terms: FxHashMap<String, u32>,
    stems: Vec<Box<str>>,
    /// Word (lowercase, unstemmed) → word id.
    vocab: FxHashMap<String, u32>,
    /// The same, ordered for prefix lookups.
    sorted_words: BTreeMap<String, u32>,
    word_info: Vec<WordInfo>,
    /// Term id → live tools holding it.
    df: Vec<u32>,
    postings: Vec<Vec<Posting>>,
    /// Per term, the term-frequency parts of its postings' scores and the version of the index
    /// they were computed for.
    parts: Vec<Mutex<Option<Parts>>>,
    /// Changes with every tool added or removed.
    version: u64,
    /// Phrase → live tools using it; initials (up to three ASCII bytes in a `u32`) → the
    /// phrases with those initials.
    phrases: FxHashMap<Phrase, u32>,
    initials: FxHashMap<u32, Vec<Phrase>>,
    /// Term id → its synonym group.
    synonym_of: FxHashMap<u32, usize>,
    /// Synonym group → its terms.
    synonym_groups: Vec<Vec<u32>>,
    docs: Vec<Doc>,
    /// Each tool's weighted length; negative once removed.
    lens: Vec<f32>,
    live: usize,
    total_len: f64,
    /// Postings of removed tools not yet swept out.
    dead_postings: usize,
    live_postings: usize,
}

impl std::fmt::Debug for Bm25Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bm25Index").field("tools", &self.live).field("terms", &self.terms.len()).finish()
    }
}

impl Bm25Index {
    /// Indexes tool definitions, in catalogue order, with the default parameters.
    pub fn build<'a>(defs: impl IntoIterator<Item = &'a ToolDefinition>) -> Self {
        Self::with_params(defs, Bm25Params::default())
    }

    /// Indexes tool definitions with the given parameters.
    pub fn with_params<'a>(defs: impl IntoIterator<Item = &'a ToolDefinition>, params: Bm25Params) -> Self {
        let mut index = Bm25Index {
            analyzer: Analyzer::new(),
            params,
            terms: FxHashMap::default(),
            stems: Vec::new(),
            vocab: FxHashMap::default(),
            sorted_words: BTreeMap::new(),
            word_info: Vec::new(),
            df: Vec::new(),
            postings: Vec::new(),
            parts: Vec::new(),
            version: 0,
            phrases: FxHashMap::default(),
            initials: FxHashMap::default(),
            synonym_of: FxHashMap::default(),
            synonym_groups: Vec::new(),
            docs: Vec::new(),
            lens: Vec::new(),
            live: 0,
            total_len: 0.0,
            dead_postings: 0,
            live_postings: 0,
        };
        for (g, group) in synonyms::GROUPS.iter().enumerate() {
            let ids: Vec<u32> = group.iter().map(|w| index.term_id(&index.analyzer.stem(w))).collect();
            for &id in &ids {
                index.synonym_of.insert(id, g);
            }
            index.synonym_groups.push(ids);
        }
        let mut scratch = BuildScratch::default();
        for def in defs {
            index.insert_with(def, &mut scratch);
        }
        // The score parts of every term now, rather than at the first search of each.
        let (c0, c1) = index.length_norm();
        for term in 0..index.postings.len() as u32 {
            index.parts(term, c0, c1);
        }
        index
    }

    /// The length normalisation of the score's denominator, `k1 × (1 − b + b × len / avg_len)`,
    /// as `c0 + c1 × len`.
    fn length_norm(&self) -> (f32, f32) {
        let Bm25Params { k1, b, .. } = self.params;
        let avg_len = ((self.total_len / self.live.max(1) as f64) as f32).max(1e-6);
        (k1 * (1.0 - b), k1 * b / avg_len)
    }

    /// The parameters the index ranks with.
    pub fn params(&self) -> Bm25Params {
        self.params
    }

    /// How many tools are indexed.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether the index is empty.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// How many ids were given out: the tools added, removed ones included.
    pub(crate) fn capacity(&self) -> usize {
        self.lens.len()
    }

    fn term_id(&mut self, stem: &str) -> u32 {
        if let Some(&id) = self.terms.get(stem) {
            return id;
        }
        let id = self.df.len() as u32;
        self.terms.insert(stem.to_string(), id);
        self.stems.push(stem.into());
        self.df.push(0);
        self.postings.push(Vec::new());
        self.parts.push(Mutex::new(None));
        id
    }

    /// The id of a word, added (stemmed, its initial noted) the first time it is seen.
    fn word_id(&mut self, word: &str) -> u32 {
        if let Some(&id) = self.vocab.get(word) {
            return id;
        }
        let stem = self.analyzer.stem(word);
        let term = self.term_id(&stem);
        let id = self.word_info.len() as u32;
        let first = word.as_bytes().first().copied().unwrap_or(0);
        // Phrases are made of words that are not stop words and begin with an ASCII letter,
        // their initials then being bytes.
        let initial = if first.is_ascii_lowercase() && !is_stop_word(word) { first } else { 0 };
        self.word_info.push(WordInfo { term, tools: 0, initial });
        self.vocab.insert(word.to_string(), id);
        self.sorted_words.insert(word.to_string(), id);
        id
    }

    /// Adds a tool; its id is the number of tools added before it (removed ones included). Ids
    /// are not reused: an index that has seen many more tools come and go than it holds keeps a
    /// few bytes for each, and is better built anew.
    pub fn insert(&mut self, def: &ToolDefinition) -> u32 {
        self.insert_with(def, &mut BuildScratch::default())
    }

    fn insert_with(&mut self, def: &ToolDefinition, s: &mut BuildScratch) -> u32 {
        let doc = self.lens.len() as u32;
        let weights = [
            self.params.name_weight,
            self.params.description_weight,
            self.params.parameter_name_weight,
            self.params.parameter_text_weight,
        ];
        let (mut names, mut text) = (std::mem::take(&mut s.names), std::mem::take(&mut s.text));
        names.clear();
        text.clear();
        schema_text(&def.parameters_json_schema, &mut names, &mut text, 0);
        let fields: [&str; FIELDS] = [&def.name, def.description.as_deref().unwrap_or(""), &names, &text];
        let mut length = 0.0;
        for (f, (field, weight)) in fields.into_iter().zip(weights).enumerate() {
            // Phrases run over the words of one line of one field, broken by stop words.
            for line in field.lines() {
                s.run.clear();
                for_each_word(line, |w: Word<'_>| {
                    let word = self.word_id(w.text);
                    let info = self.word_info[word as usize];
                    let term = info.term;
                    s.words.push(word);
                    if f == 0 {
                        s.name_terms.push(term);
                    }
                    if s.freq.len() <= term as usize {
                        s.freq.resize(term as usize + 1, 0.0);
                    }
                    if s.freq[term as usize] == 0.0 {
                        s.present.push(term);
                    }
                    s.freq[term as usize] += weight;
                    length += weight;
                    if w.whole {
                        return;
                    }
                    if info.initial == 0 {
                        s.run.clear();
                        return;
                    }
                    s.run.push((term, info.initial));
                    let n = s.run.len();
                    for len in [2, 3] {
                        if n >= len {
                            let mut phrase: Phrase = [u32::MAX; 3];
                            let mut initials = 0u32;
                            for (i, &(t, c)) in s.run[n - len..].iter().enumerate() {
                                phrase[i] = t;
                                initials = initials << 8 | u32::from(c);
                            }
                            s.phrases.push((phrase, initials));
                        }
                    }
                });
            }
        }
        s.names = names;
        s.text = text;
        s.name_terms.sort_unstable();
        s.name_terms.dedup();
        let mut terms: Vec<u32> = Vec::with_capacity(s.present.len());
        for &term in &s.present {
            let tf = std::mem::take(&mut s.freq[term as usize]);
            let in_name = s.name_terms.binary_search(&term).is_ok();
            self.postings[term as usize].push(Posting { doc, tf, in_name });
            self.df[term as usize] += 1;
            terms.push(term);
        }
        s.present.clear();
        s.name_terms.clear();
        self.live_postings += terms.len();
        s.words.sort_unstable();
        s.words.dedup();
        for &w in &s.words {
            self.word_info[w as usize].tools += 1;
        }
        s.phrases.sort_unstable();
        s.phrases.dedup();
        for &(p, initials) in &s.phrases {
            match self.phrases.entry(p) {
                std::collections::hash_map::Entry::Occupied(mut e) => *e.get_mut() += 1,
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(1);
                    self.initials.entry(initials).or_default().push(p);
                }
            }
        }
        self.docs.push(Doc {
            terms: terms.into(),
            words: s.words.as_slice().into(),
            phrases: s.phrases.iter().map(|&(p, _)| p).collect(),
        });
        s.words.clear();
        s.phrases.clear();
        self.lens.push(length);
        self.version += 1;
        self.live += 1;
        self.total_len += f64::from(length);
        doc
    }

    /// Removes a tool; false when there is no such tool (never added, or removed already).
    pub fn remove(&mut self, doc: u32) -> bool {
        match self.lens.get(doc as usize) {
            Some(&len) if len >= 0.0 => {}
            _ => return false,
        }
        let d = std::mem::take(&mut self.docs[doc as usize]);
        let len = std::mem::replace(&mut self.lens[doc as usize], -1.0);
        for &t in d.terms.iter() {
            self.df[t as usize] -= 1;
        }
        for &w in d.words.iter() {
            self.word_info[w as usize].tools -= 1;
        }
        for p in d.phrases.iter() {
            if let Some(n) = self.phrases.get_mut(p) {
                *n -= 1;
            }
        }
        self.live -= 1;
        self.version += 1;
        self.total_len -= f64::from(len);
        self.live_postings -= d.terms.len();
        self.dead_postings += d.terms.len();
        // Sweep the removed tools' postings once they outnumber the live ones, so that a
        // removal costs its own postings on average.
        if self.dead_postings > self.live_postings.max(1024) {
            let lens = &self.lens;
            for list in &mut self.postings {
                list.retain(|p| lens[p.doc as usize] >= 0.0);
            }
            self.dead_postings = 0;
        }
        true
    }

    /// Analyses a query against the index: its words' stems, their synonyms and what their
    /// abbreviations stand for (see the [module docs](self)), each term once with its highest
    /// weight, those not in the index left out.
    pub(crate) fn query(&self, query: &str) -> Query {
        let words = query_words(&self.analyzer, query);
        let mut terms: Vec<QueryTerm> = Vec::new();
        // Term → its place in `terms`: a query can be long (the model writes it).
        let mut placed: FxHashMap<u32, usize> = FxHashMap::default();
        let mut add = |term: u32, weight: f32| {
            if weight <= 0.0 || self.df.get(term as usize).is_none_or(|&df| df == 0) {
                return;
            }
            match placed.entry(term) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    let t = &mut terms[*e.get()];
                    t.weight = t.weight.max(weight);
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(terms.len());
                    terms.push(QueryTerm { term, weight });
                }
            }
        };
        for w in &words {
            let term = self.terms.get(&w.stem).copied();
            if let Some(term) = term {
                add(term, 1.0);
                if let Some(&g) = self.synonym_of.get(&term) {
                    for &other in &self.synonym_groups[g] {
                        add(other, self.params.synonym_weight);
                    }
                }
            }
            if self.params.abbreviation_weight > 0.0 {
                for other in self.expansions(w, term) {
                    add(other, self.params.abbreviation_weight);
                }
            }
        }
        Query { terms, worded: !words.is_empty() }
    }

    /// What a query word abbreviates in this catalogue: the terms of a phrase it is the initials
    /// of, or the word it is the beginning of.
    fn expansions(&self, w: &QueryWord, term: Option<u32>) -> Vec<u32> {
        let used = self.vocab.get(&w.word).map_or(0, |&id| self.word_info[id as usize].tools);
        let term_df = term.map_or(0, |t| self.df[t as usize]);
        let letters = w.word.chars().count();
        let mut out = Vec::new();
        // Initials: `PR` for `pull request`, in capitals, or a short word the catalogue lacks.
        if (2..=3).contains(&letters)
            && w.word.bytes().all(|c| c.is_ascii_lowercase())
            && (w.capitals || used == 0)
            && let Some(phrases) = self.initials.get(&w.word.bytes().fold(0u32, |k, c| k << 8 | u32::from(c)))
            && let Some((phrase, n)) = phrases
                .iter()
                .map(|p| (p, self.phrases.get(p).copied().unwrap_or(0)))
                // The most used phrase; between equals, the first by text, so that the choice does
                // not depend on the order the tools came in.
                .max_by(|a, b| a.1.cmp(&b.1).then_with(|| self.phrase_text(b.0).cmp(&self.phrase_text(a.0))))
            && n >= MIN_PHRASE_TOOLS
            && n > term_df
        {
            out.extend(phrase.iter().copied().filter(|&t| t != u32::MAX));
        }
        // A beginning: `dir` for `directory`, when the catalogue never uses the word itself.
        if letters >= 3 && used == 0 && w.word.chars().all(char::is_alphabetic) {
            let best = self
                .sorted_words
                .range::<str, _>((std::ops::Bound::Excluded(w.word.as_str()), std::ops::Bound::Unbounded))
                .take_while(|(word, _)| word.starts_with(&w.word))
                // A short beginning can start thousands of words: the first ones in order are
                // enough to find the abbreviated word, which is rarely much longer.
                .take(MAX_PREFIX_CANDIDATES)
                .filter(|(word, _)| word.chars().count() >= letters + 2)
                .map(|(_, &id)| self.word_info[id as usize])
                .filter(|info| info.tools >= MIN_PREFIX_TOOLS)
                // The most used word; between equals, the first in alphabetical order.
                .reduce(|best, info| if info.tools > best.tools { info } else { best });
            if let Some(info) = best {
                out.push(info.term);
            }
        }
        out
    }

    /// The stems of a phrase.
    fn phrase_text(&self, phrase: &Phrase) -> [&str; 3] {
        phrase.map(|t| self.stems.get(t as usize).map_or("", |s| &**s))
    }

    /// The analysed terms of a query (stems, stop words removed unless nothing else is left);
    /// empty when the query has no words.
    pub fn query_terms(&self, query: &str) -> Vec<String> {
        query_words(&self.analyzer, query).into_iter().map(|w| w.stem).collect()
    }

    /// The best `k` tools for a query, best first, as `(tool, score)` with the tool's id (its
    /// position in the catalogue); ties go to the earlier tool. Tools that share no term with
    /// the query (or its synonyms and abbreviations) are never returned.
    pub fn search(&self, query: &str, k: usize) -> Vec<(u32, f32)> {
        self.search_query(&self.query(query), k)
    }

    /// The term-frequency part of the BM25 score, `tf × (k1 + 1) / (tf + c0 + c1 × len)`, of each
    /// posting of a term: computed once for the index as it is, and again after it changes
    /// (the average length moves with every tool added or removed).
    fn parts(&self, term: u32, c0: f32, c1: f32) -> Arc<[Scored]> {
        let mut slot = self.parts[term as usize].lock().unwrap_or_else(|p| p.into_inner());
        if let Some((version, parts)) = &*slot
            && *version == self.version
        {
            return parts.clone();
        }
        let k1 = self.params.k1;
        let parts: Arc<[Scored]> = self.postings[term as usize]
            .iter()
            .map(|p| {
                let part = p.tf * (k1 + 1.0) / (p.tf + c0 + c1 * self.lens[p.doc as usize].max(0.0));
                (if p.in_name { p.doc | IN_NAME } else { p.doc }, part)
            })
            .collect();
        *slot = Some((self.version, parts.clone()));
        parts
    }

    pub(crate) fn search_query(&self, query: &Query, k: usize) -> Vec<(u32, f32)> {
        self.search_query_by(query, k, &|id| id)
    }

    /// [`search_query`](Self::search_query) with ties going to the tool that comes first by
    /// `order` rather than by id.
    pub(crate) fn search_query_by(&self, query: &Query, k: usize, order: &dyn Fn(u32) -> u32) -> Vec<(u32, f32)> {
        if k == 0 || query.terms.is_empty() || self.live == 0 {
            return Vec::new();
        }
        let name_bonus = self.params.name_bonus;
        let n = self.live as f32;
        let (c0, c1) = self.length_norm();
        let mut mass = 0.0;
        SCRATCH.with_borrow_mut(|s| {
            if s.acc.len() < self.lens.len() {
                s.acc.resize(self.lens.len(), [0.0; 2]);
            }
            let removed = self.dead_postings > 0;
            for qt in &query.terms {
                let df = self.df[qt.term as usize] as f32;
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln() * qt.weight;
                mass += idf;
                for &(tagged, part) in self.parts(qt.term, c0, c1).iter() {
                    let doc = (tagged & !IN_NAME) as usize;
                    if removed && self.lens[doc] < 0.0 {
                        continue;
                    }
                    let slot = &mut s.acc[doc];
                    if slot[0] == 0.0 {
                        s.touched.push(doc as u32);
                    }
                    slot[0] += idf * part;
                    // Without a branch: whether the name has the term is not predictable.
                    slot[1] += idf * (tagged >> 31) as f32;
                }
            }
            let bonus = name_bonus / mass.max(f32::MIN_POSITIVE);
            let mut hits: Vec<(u32, f32)> = Vec::with_capacity(s.touched.len());
            for &doc in &s.touched {
                let [score, names] = std::mem::take(&mut s.acc[doc as usize]);
                hits.push((doc, score * (1.0 + bonus * names)));
            }
            s.touched.clear();
            let better = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then_with(|| order(a.0).cmp(&order(b.0)));
            if hits.len() > k {
                hits.select_nth_unstable_by(k - 1, better);
                hits.truncate(k);
            }
            hits.sort_unstable_by(better);
            hits
        })
    }
}

/// Buffers reused while indexing one tool after another.
#[derive(Default)]
struct BuildScratch {
    names: String,
    text: String,
    freq: Vec<f32>,
    present: Vec<u32>,
    name_terms: Vec<u32>,
    words: Vec<u32>,
    phrases: Vec<(Phrase, u32)>,
    run: Vec<(u32, u8)>,
}

#[cfg(test)]
pub(crate) mod tests;
