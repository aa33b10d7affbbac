//! Text analysis shared by indexing and queries: words, stems, stop words.

use rust_stemmers::{Algorithm, Stemmer};

/// English stop words dropped from queries: function words and the politeness of requests
/// ("could you please help me …"). Words that name operations (`get`, `find`, `list`, `search`)
/// are kept.
pub(super) const STOP_WORDS: &[&str] = &[
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

/// Whether a (lowercase) word is a stop word.
pub(super) fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// A word of a text, as [`for_each_word`] gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Word<'a> {
    /// The word, lowercase.
    pub text: &'a str,
    /// Whether it was written in capitals (`PR`, `URLs`): an abbreviation, likely.
    pub capitals: bool,
    /// Whether it is the whole of an identifier that was also split into its parts
    /// (`getWeather` after `get` and `weather`): not part of the running text.
    pub whole: bool,
}

/// Calls `f` with each word of `text`: runs of letters and digits, identifiers split at
/// `snake_case`, `kebab-case`, `dotted.names`, `camelCase` / `PascalCase` and letter–digit
/// boundaries, a split identifier also given whole, words of digits only dropped. A run of
/// capitals ending in a plural `s` (`PRs`, `URLs`, `IDs`) is one word, without the `s`.
pub(super) fn for_each_word(text: &str, mut f: impl FnMut(Word<'_>)) {
    let mut lower = String::new();
    for run in text.split(|c: char| !c.is_alphanumeric()) {
        if run.is_empty() {
            continue;
        }
        let mut emit = |piece: &str, whole: bool, lower: &mut String| {
            if piece.chars().all(char::is_numeric) {
                return;
            }
            // Most words start in lower case: the checks for capitals are made for the others.
            let upper = piece.starts_with(char::is_uppercase);
            let capitals = upper
                && piece.chars().filter(|c| c.is_alphabetic()).count() >= 2
                && piece.chars().filter(|c| c.is_alphabetic()).all(char::is_uppercase);
            // `PRs`: capitals and a plural s.
            let plural = upper
                && piece.len() >= 3
                && piece.ends_with('s')
                && piece[..piece.len() - 1].chars().all(|c| c.is_ascii_uppercase());
            let piece = if plural { &piece[..piece.len() - 1] } else { piece };
            lower.clear();
            if piece.is_ascii() {
                lower.push_str(piece);
                lower.make_ascii_lowercase();
            } else {
                lower.extend(piece.chars().flat_map(char::to_lowercase));
            }
            f(Word { text: lower, capitals: capitals || plural, whole });
        };
        let mut start = 0;
        let mut parts = 0;
        let mut prev: Option<char> = None;
        let mut chars = run.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if let Some(p) = prev {
                let next = chars.peek().map(|&(_, n)| n);
                // `PRs` at the end of a run: the s is a plural, not the start of a word.
                let plural_s = next == Some('s') && i + c.len_utf8() + 1 == run.len();
                let boundary = (p.is_lowercase() && c.is_uppercase())
                    || (p.is_alphabetic() && c.is_numeric())
                    || (p.is_numeric() && c.is_alphabetic())
                    || (p.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase) && !plural_s);
                if boundary {
                    emit(&run[start..i], false, &mut lower);
                    parts += 1;
                    start = i;
                }
            }
            prev = Some(c);
        }
        emit(&run[start..], false, &mut lower);
        if parts > 0 {
            emit(run, true, &mut lower);
        }
    }
}

/// Splits text into lowercase words, identifiers split (see the [module docs](super)); digit-only
/// words are dropped. No stemming.
///
/// ```
/// use toolsmith::search::bm25::split_words;
/// assert_eq!(split_words("getHTTPResponse_v2"), ["get", "http", "response", "gethttpresponse", "v", "v2"]);
/// assert_eq!(split_words("list-files 42"), ["list", "files"]);
/// assert_eq!(split_words("open PRs"), ["open", "pr"]);
/// ```
pub fn split_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_word(text, |w| out.push(w.text.to_string()));
    out
}

/// The Snowball (Porter 2) English stemmer.
pub(super) struct Analyzer {
    stemmer: Stemmer,
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Analyzer(english)")
    }
}

impl Analyzer {
    pub(super) fn new() -> Self {
        Analyzer { stemmer: Stemmer::create(Algorithm::English) }
    }

    pub(super) fn stem(&self, word: &str) -> String {
        self.stemmer.stem(word).into_owned()
    }
}

/// A word of a query, with its stem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct QueryWord {
    /// The word, lowercase.
    pub word: String,
    /// Its stem.
    pub stem: String,
    /// Whether it was written in capitals.
    pub capitals: bool,
}

/// The words of a query, stop words removed unless nothing else is left; one entry per stem.
pub(super) fn query_words(analyzer: &Analyzer, query: &str) -> Vec<QueryWord> {
    let mut words: Vec<QueryWord> = Vec::new();
    let mut stops: Vec<QueryWord> = Vec::new();
    for_each_word(query, |w| {
        let q = QueryWord { word: w.text.to_string(), stem: String::new(), capitals: w.capitals };
        if is_stop_word(w.text) && !w.capitals { stops.push(q) } else { words.push(q) }
    });
    if words.is_empty() {
        words = stops;
    }
    for w in &mut words {
        w.stem = analyzer.stem(&w.word);
    }
    words.sort_by(|a, b| a.stem.cmp(&b.stem).then(b.capitals.cmp(&a.capitals)));
    words.dedup_by(|a, b| a.stem == b.stem);
    words
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn plural_abbreviations_stay_whole() {
        assert_eq!(split_words("PRs URLs IDs APIs"), ["pr", "url", "id", "api"]);
        // Not a plural: a capital run that starts a camel-case word.
        assert_eq!(split_words("HTTPServers"), ["http", "servers", "httpservers"]);
        assert_eq!(split_words("getURLs"), ["get", "url", "geturls"]);
        assert_eq!(split_words("bus"), ["bus"]);
        let mut caps = Vec::new();
        for_each_word("list open PRs on GitHub", |w| caps.push((w.text.to_string(), w.capitals)));
        assert_eq!(caps[2], ("pr".to_string(), true));
        assert!(!caps[0].1);
    }

    #[test]
    fn stems_and_drops_stop_words_from_queries() {
        let a = Analyzer::new();
        let stems = |q: &str| query_words(&a, q).into_iter().map(|w| w.stem).collect::<Vec<_>>();
        assert_eq!(stems("Could you please list the files?"), ["file", "list"]);
        assert_eq!(stems("running runs"), ["run"]);
        // Only stop words: they are kept rather than leaving nothing.
        assert_eq!(stems("what is this"), ["is", "this", "what"]);
        assert!(stems("?? 12 !!").is_empty());
        // A stop word in capitals is an abbreviation (US, IT).
        assert_eq!(stems("weather in the US"), ["us", "weather"]);
    }
}
