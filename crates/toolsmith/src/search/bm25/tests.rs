use super::*;
use serde_json::json;

/// Words of tool texts and queries for the property tests (of this index and of the catalogues
/// that carry it over): synonyms, abbreviations and a stop word among them.
pub(crate) const WORDS: &[&str] = &[
    "create",
    "delete",
    "remove",
    "folder",
    "directory",
    "pull",
    "request",
    "repository",
    "repo",
    "file",
    "list",
    "weather",
    "forecast",
    "issue",
    "comment",
    "user",
    "dir",
    "merge",
    "branch",
    "send",
    "message",
    "the",
];

fn def(name: &str, description: &str, parameters: Value) -> ToolDefinition {
    ToolDefinition::new(name, parameters).with_description(description)
}

fn names<'a>(defs: &'a [ToolDefinition], hits: &[(u32, f32)]) -> Vec<&'a str> {
    hits.iter().map(|&(d, _)| defs[d as usize].name.as_str()).collect()
}

#[test]
fn ranks_by_relevance_with_the_name_weighted() {
    let defs = [
        def("send_message", "Send a message to a Slack channel.", json!({"type": "object"})),
        def("read_file", "Read the contents of a file from disk.", json!({"type": "object"})),
        def("search_files", "Search for files whose names match a pattern.", json!({"type": "object"})),
        def("create_issue", "Create a new issue in a GitHub repository.", json!({"type": "object"})),
    ];
    for params in [Bm25Params::plain(), Bm25Params::default()] {
        let index = Bm25Index::with_params(&defs, params);
        assert_eq!(names(&defs, &index.search("read a file", 10))[0], "read_file");
        assert_eq!(names(&defs, &index.search("find files matching *.rs", 10))[0], "search_files");
        assert_eq!(names(&defs, &index.search("open a GitHub issue", 10)), ["create_issue"]);
        assert_eq!(names(&defs, &index.search("post to slack", 10)), ["send_message"]);
        assert!(index.search("quantum chromodynamics", 10).is_empty());
        assert!(index.search("", 10).is_empty());
        // A stemmed match: "messages" and "sending" meet "message" and "send".
        assert_eq!(names(&defs, &index.search("sending messages", 1)), ["send_message"]);
    }
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
    // "lookup" is a synonym of "find": both tools match, the one with the ISBN first.
    assert_eq!(names(&defs, &index.search("isbn lookup", 10)), ["find_books", "find_movies"]);
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

fn plain_def(name: &str, description: &str) -> ToolDefinition {
    def(name, description, json!({"type": "object"}))
}

#[test]
fn synonyms_bring_in_the_words_a_request_avoids() {
    let defs = [
        plain_def("delete_directory", "Delete a directory and everything in it."),
        plain_def("read_file", "Read a file."),
        plain_def("list_users", "List the users of the workspace."),
    ];
    let index = Bm25Index::build(&defs);
    assert_eq!(names(&defs, &index.search("remove the old folder", 10)), ["delete_directory"]);
    // Without synonyms there is nothing to find.
    let plain = Bm25Index::with_params(&defs, Bm25Params::plain());
    assert!(plain.search("remove the old folder", 10).is_empty());
}

#[test]
fn abbreviations_are_learned_from_the_catalogue() {
    let defs = [
        plain_def("list_pull_requests", "List the pull requests of a repository."),
        plain_def("merge_pull_request", "Merge a pull request."),
        plain_def("get_pull_request_files", "The files a pull request changes."),
        plain_def("list_issues", "List the issues of a repository."),
        plain_def("list_directory", "List the entries of a directory."),
        plain_def("make_directory", "Create a directory."),
    ];
    let index = Bm25Index::build(&defs);
    // `PRs` in capitals: the initials of a phrase three tools use.
    let hits = names(&defs, &index.search("which PRs are waiting?", 10));
    assert_eq!(hits.len(), 3, "{hits:?}");
    assert!(hits.iter().all(|n| n.contains("pull_request")), "{hits:?}");
    // `pr` in lower case, a word the catalogue never uses.
    assert_eq!(names(&defs, &index.search("merge the pr", 1)), ["merge_pull_request"]);
    // `dir`, the beginning of a word two tools use.
    assert_eq!(names(&defs, &index.search("list a dir", 10))[0], "list_directory");
    // Plain BM25 finds none of them.
    let plain = Bm25Index::with_params(&defs, Bm25Params::plain());
    assert!(plain.search("which PRs", 10).is_empty());
    assert!(plain.search("dir", 10).is_empty());
}

#[test]
fn a_word_the_catalogue_uses_is_not_taken_for_an_abbreviation() {
    // `pr` is a word of its own here (a public-relations tool), used as often as the phrase.
    let defs = [
        plain_def("pr_release", "Draft a pr release for the press."),
        plain_def("pr_contacts", "List pr contacts."),
        plain_def("pr_calendar", "The pr calendar."),
        plain_def("post_report", "Post a report."),
        plain_def("print_receipt", "Print a receipt."),
        plain_def("publish_release", "Publish a release."),
    ];
    let index = Bm25Index::build(&defs);
    let mut hits = names(&defs, &index.search("pr", 10));
    hits.sort_unstable();
    assert_eq!(hits, ["pr_calendar", "pr_contacts", "pr_release"]);
}

#[test]
fn a_match_in_the_name_ranks_above_the_same_match_in_the_description() {
    let defs = [
        plain_def("get_logs", "Fetch the weather station logs, the forecast included, for a day."),
        plain_def("weather_forecast", "For a city, by day."),
    ];
    let index = Bm25Index::build(&defs);
    assert_eq!(names(&defs, &index.search("weather forecast", 10)), ["weather_forecast", "get_logs"]);
}

/// The results of a query as (name, score), sorted by name.
fn scored(index: &Bm25Index, names_of: &[&str], query: &str) -> Vec<(String, f32)> {
    let mut hits: Vec<(String, f32)> =
        index.search(query, usize::MAX).into_iter().map(|(d, s)| (names_of[d as usize].to_string(), s)).collect();
    hits.sort_by(|a, b| a.0.cmp(&b.0));
    hits
}

mod updates {
    use super::*;
    use proptest::prelude::*;

    fn tool(i: usize, words: &[usize]) -> ToolDefinition {
        let text: Vec<&str> = words.iter().map(|&w| WORDS[w % WORDS.len()]).collect();
        let name = format!("{}_{}_{i}", text.first().unwrap_or(&"tool"), text.last().unwrap_or(&"x"));
        def(&name, &text.join(" "), json!({"type": "object", "properties": {text[0]: {"type": "string"}}}))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// An index grown and shrunk tool by tool ranks as one built from the tools that remain.
        #[test]
        fn updates_rank_as_a_fresh_build(
            tools in proptest::collection::vec(proptest::collection::vec(0usize..40, 1..8), 1..30),
            removals in proptest::collection::vec(any::<prop::sample::Index>(), 0..20),
            queries in proptest::collection::vec(proptest::collection::vec(0usize..40, 1..4), 1..6),
        ) {
            let defs: Vec<ToolDefinition> = tools.iter().enumerate().map(|(i, w)| tool(i, w)).collect();
            let mut index = Bm25Index::build(&defs[..defs.len() / 2]);
            for d in &defs[defs.len() / 2..] {
                index.insert(d);
            }
            let mut alive: Vec<bool> = vec![true; defs.len()];
            for r in &removals {
                let doc = r.index(defs.len());
                prop_assert_eq!(index.remove(doc as u32), alive[doc]);
                alive[doc] = false;
            }
            prop_assert_eq!(index.len(), alive.iter().filter(|a| **a).count());
            let remaining: Vec<ToolDefinition> =
                defs.iter().zip(&alive).filter(|(_, a)| **a).map(|(d, _)| d.clone()).collect();
            let fresh = Bm25Index::build(&remaining);
            let all_names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
            let remaining_names: Vec<&str> = remaining.iter().map(|d| d.name.as_str()).collect();
            for q in &queries {
                let query: Vec<&str> = q.iter().map(|&w| WORDS.get(w).copied().unwrap_or("zzz")).collect();
                let query = query.join(" ");
                let updated = scored(&index, &all_names, &query);
                let built = scored(&fresh, &remaining_names, &query);
                prop_assert_eq!(updated.len(), built.len(), "{}", query);
                for ((a, x), (b, y)) in updated.iter().zip(&built) {
                    prop_assert_eq!(a, b);
                    prop_assert!((x - y).abs() <= 1e-4 * x.abs().max(1.0), "{} {} {} {}", query, a, x, y);
                }
            }
        }
    }

    #[test]
    fn removing_an_unknown_or_removed_tool_is_refused() {
        let defs = [plain_def("a", "alpha"), plain_def("b", "beta")];
        let mut index = Bm25Index::build(&defs);
        assert!(!index.remove(7));
        assert!(index.remove(0));
        assert!(!index.remove(0));
        assert_eq!(index.len(), 1);
        assert!(index.search("alpha", 10).is_empty());
        let c = plain_def("c", "alpha gamma");
        assert_eq!(index.insert(&c), 2);
        assert_eq!(index.search("alpha", 10).iter().map(|h| h.0).collect::<Vec<_>>(), [2]);
    }

    #[test]
    fn removed_postings_are_swept_and_searches_stay_right() {
        let defs: Vec<ToolDefinition> =
            (0..3000).map(|i| plain_def(&format!("tool_{i}"), &format!("shared words number {}", i % 7))).collect();
        let mut index = Bm25Index::build(&defs);
        for doc in 0..2900 {
            assert!(index.remove(doc));
        }
        assert_eq!(index.len(), 100);
        let hits = index.search("shared words", usize::MAX);
        assert_eq!(hits.len(), 100);
        assert!(hits.iter().all(|h| h.0 >= 2900));
    }
}

/// A query is the model's text: a long one, of every word of a large catalogue and many words
/// it lacks, is answered (in time linear in its length) with the tools that share most of it.
#[test]
fn a_very_long_query_is_answered() {
    // 40,000 distinct words: letters only, so that none is dropped as a number.
    let word = |i: usize| {
        let mut w = String::from("q");
        let mut n = i;
        for _ in 0..4 {
            w.push(char::from(b'a' + (n % 26) as u8));
            n /= 26;
        }
        w
    };
    let defs: Vec<ToolDefinition> = (0..4_000)
        .map(|t| {
            plain_def(&format!("tool_{}", word(t)), &(0..10).map(|k| word(t * 10 + k)).collect::<Vec<_>>().join(" "))
        })
        .collect();
    let index = Bm25Index::build(&defs);
    let mut query: Vec<String> = (0..40_000).map(word).collect();
    query.extend((0..40_000).map(|i| format!("unknown{}", word(i))));
    query.extend(["dir", "pr", "PRs", "the"].map(String::from));
    let hits = index.search(&query.join(" "), 10);
    assert_eq!(hits.len(), 10);
    assert!(index.search(&"é ü 中文 🚀 ".repeat(10_000), 10).is_empty());
}
