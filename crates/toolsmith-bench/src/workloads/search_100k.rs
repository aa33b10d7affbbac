//! `search_100k`: tool search over `corpus(100000, service)` (10,000 tools in quick mode), for
//! each local strategy of [`SearchStrategy`]: the time to build its index over the catalogue,
//! and the time of one search, with fixed queries.
//!
//! - The corpus generator of BENCH.md §2 scales as it is: past tool 9,999 the `%04d` suffix has
//!   five digits, so the names stay distinct (checked) although the (service, verb, object)
//!   triples repeat every 24,440 tools.
//! - A build is [`SearchIndex::new`] (the catalogue copied, as an agent's deferred catalogue
//!   is) and [`SearchIndex::prepare`]; the index is dropped after the timing.
//! - A search is [`SearchIndex::search`] with one query and `max_results` 10, what
//!   `search_tools` runs with nothing discovered yet. One timed run is a pass over the
//!   strategy's queries; the figure is per query.
//! - `keywords` is [`SearchStrategy::PydanticAi`], Pydantic AI's keyword overlap: the Python
//!   side times the same searches with Pydantic AI's own `search_tools`. `bm25`, `plain_bm25` and
//!   `regex` are toolsmith's other local strategies (Pydantic AI runs its bm25 and regex
//!   strategies on the provider's side only); `regex` takes patterns instead of the queries.
//!   `Keywords` ranks as `PydanticAi` does with nothing discovered and uses the same index, so it
//!   is not timed apart; the native and custom strategies have nothing local to time.

use std::collections::HashSet;

use regex::RegexBuilder;
use toolsmith::ToolDefinition;
use toolsmith::search::SearchStrategy;
use toolsmith::search::eval::SearchIndex;

use super::{EXPECTED_SEARCH_RESULT, Measured, Plan, ensure, log, measure};
use crate::corpus::{Naming, Spec, corpus};

/// The queries of the word-based strategies (a model's short keyword queries).
pub const QUERIES: [&str; 5] = [
    "create issue github",
    "send slack message",
    "export invoice csv",
    "schedule meeting google calendar",
    "delete secret aws",
];

/// The patterns of the regex strategy.
pub const PATTERNS: [&str; 5] =
    ["github_create_issue", "^slack_send_", "invoice|payment", "(export|archive)_report", "csv file"];

/// What Pydantic AI's keyword search returns for `QUERIES[0]` over the 100,000 tools
/// (`extra_workloads.py` checks the same list).
pub const EXPECTED_FIRST_100K: [&str; 10] = [
    "github_create_issue_1880",
    "github_create_issue_26320",
    "github_create_issue_50760",
    "github_create_issue_75200",
    "github_create_issue_99640",
    "github_get_issue_0000",
    "gcal_create_issue_0047",
    "github_create_webhook_0320",
    "dropbox_create_issue_0658",
    "github_create_document_0840",
];

const MAX_RESULTS: usize = 10;

/// One strategy's keys, strategy and queries.
struct Case {
    name: &'static str,
    build_key: &'static str,
    query_key: &'static str,
    strategy: SearchStrategy,
    queries: &'static [&'static str],
}

fn cases() -> [Case; 4] {
    [
        Case {
            name: "keywords",
            build_key: "search_100k_build_keywords",
            query_key: "search_100k_query_keywords",
            strategy: SearchStrategy::PydanticAi,
            queries: &QUERIES,
        },
        Case {
            name: "bm25",
            build_key: "search_100k_build_bm25",
            query_key: "search_100k_query_bm25",
            strategy: SearchStrategy::Bm25,
            queries: &QUERIES,
        },
        Case {
            name: "plain_bm25",
            build_key: "search_100k_build_plain_bm25",
            query_key: "search_100k_query_plain_bm25",
            strategy: SearchStrategy::PlainBm25,
            queries: &QUERIES,
        },
        Case {
            name: "regex",
            build_key: "search_100k_build_regex",
            query_key: "search_100k_query_regex",
            strategy: SearchStrategy::Regex,
            queries: &PATTERNS,
        },
    ]
}

/// The lowercased `[a-z0-9]+` tokens of a text (Pydantic AI's `_tokenize`), in order.
fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit())).filter(|t| !t.is_empty())
}

/// Pydantic AI's keyword score of every tool for a query: how many distinct query tokens its
/// name and description hold.
fn overlap_scores(defs: &[ToolDefinition], query: &str) -> Vec<usize> {
    let query = query.to_lowercase();
    let terms: Vec<&str> = {
        let mut t: Vec<&str> = tokens(&query).collect();
        t.sort_unstable();
        t.dedup();
        t
    };
    defs.iter()
        .map(|d| {
            let text = format!("{} {}", d.name, d.description.as_deref().unwrap_or("")).to_lowercase();
            let mut found = vec![false; terms.len()];
            for t in tokens(&text) {
                if let Ok(i) = terms.binary_search(&t) {
                    found[i] = true;
                }
            }
            found.iter().filter(|f| **f).count()
        })
        .collect()
}

/// Pydantic AI's `keywords_search_fn`, a scan: tools sharing a token with the query, by score,
/// ties in catalogue order; the first `k`.
fn keyword_scan(defs: &[ToolDefinition], scores: &[usize], k: usize) -> Vec<String> {
    let mut scored: Vec<(usize, &str)> =
        scores.iter().zip(defs).filter(|(s, _)| **s > 0).map(|(s, d)| (*s, d.name.as_str())).collect();
    scored.sort_by_key(|s| std::cmp::Reverse(s.0)); // stable: ties stay in catalogue order
    scored.into_iter().take(k).map(|(_, n)| n.to_string()).collect()
}

/// Tools whose name, then description, matches the pattern (case-insensitive, multi-line), in
/// catalogue order: the first `k`.
fn regex_scan(defs: &[ToolDefinition], pattern: &str, k: usize) -> Result<Vec<String>, String> {
    let re = RegexBuilder::new(pattern).case_insensitive(true).multi_line(true).build().map_err(|e| e.to_string())?;
    let by_name = defs.iter().filter(|d| re.is_match(&d.name));
    let by_description =
        defs.iter().filter(|d| !re.is_match(&d.name) && re.is_match(d.description.as_deref().unwrap_or("")));
    Ok(by_name.chain(by_description).take(k).map(|d| d.name.clone()).collect())
}

/// The validation of one strategy's answers, against a scan where there is one.
fn check(case: &Case, defs: &[ToolDefinition], query: &str, got: &[String]) -> Result<(), String> {
    let fail = |why: &str| format!("search_100k {} {query:?}: {why}: {got:?}", case.name);
    let distinct: HashSet<&String> = got.iter().collect();
    ensure(distinct.len() == got.len(), || fail("repeated tools"))?;
    match case.strategy {
        SearchStrategy::PydanticAi => {
            let want = keyword_scan(defs, &overlap_scores(defs, query), MAX_RESULTS);
            ensure(got == want, || fail(&format!("the scan gives {want:?}")))?;
            let expected: &[&str] = match defs.len() {
                10_000 => &EXPECTED_SEARCH_RESULT,
                100_000 => &EXPECTED_FIRST_100K,
                _ => &[],
            };
            ensure(query != QUERIES[0] || expected.is_empty() || got == expected, || fail("not Pydantic AI's ranking"))
        }
        SearchStrategy::Regex => {
            let want = regex_scan(defs, query, MAX_RESULTS)?;
            let re = RegexBuilder::new(query).case_insensitive(true).build().map_err(|e| e.to_string())?;
            // Past the names and descriptions, matches in the parameters.
            let rest_ok = got.iter().skip(want.len()).all(|n| {
                defs.iter().find(|d| &d.name == n).is_some_and(|d| re.is_match(&d.parameters_json_schema.to_string()))
            });
            ensure(got.len() >= want.len() && got[..want.len()] == want[..] && rest_ok, || {
                fail(&format!("the scan gives {want:?}"))
            })
        }
        _ => {
            // BM25: ten tools of the catalogue, the first one among the best keyword matches.
            let scores = overlap_scores(defs, query);
            let best = scores.iter().copied().max().unwrap_or(0);
            let first = got.first().and_then(|n| defs.iter().position(|d| &d.name == n));
            ensure(got.len() == MAX_RESULTS && first.is_some_and(|i| scores[i] == best), || {
                fail(&format!("not ten tools led by one of the best keyword score {best}"))
            })
        }
    }
}

/// The tool definitions of the corpus (the schemas shared with the corpus, not copied).
pub fn definitions(specs: &[Spec]) -> Vec<ToolDefinition> {
    specs
        .iter()
        .map(|s| ToolDefinition::new(s.name.clone(), s.schema.clone()).with_description(s.description.clone()))
        .collect()
}

/// `search_100k`: per strategy, `(build key, build)` and `(query key, per query)`.
pub async fn search_100k(n: usize, build: Plan, query: Plan) -> Result<Vec<(&'static str, Measured)>, String> {
    let specs = corpus(n, Naming::Service);
    let names: HashSet<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    ensure(names.len() == n, || format!("the {n}-tool corpus has {} distinct names", names.len()))?;
    let defs = definitions(&specs);
    drop(names);
    log(format!("  ({n} tools{})", if n == 100_000 { "" } else { "; 10,000 instead of 100,000 in quick mode" }));
    let mut out = Vec::new();
    for case in cases() {
        let index = SearchIndex::new(&defs);
        index.prepare(&case.strategy);
        for q in case.queries {
            let got = index.search(&case.strategy, &[q.to_string()], MAX_RESULTS).map_err(|e| format!("{e:?}"))?;
            check(&case, &defs, q, &got)?;
            if case.name == "keywords" || case.name == "bm25" {
                log(format!("  {} {q:?} -> {got:?}", case.name));
            }
        }
        let built = measure(
            case.build_key,
            async || {
                let index = SearchIndex::new(&defs);
                index.prepare(&case.strategy);
                index
            },
            build,
        )
        .await;
        let queries: Vec<Vec<String>> = case.queries.iter().map(|q| vec![q.to_string()]).collect();
        let pass = measure(
            case.query_key,
            async || {
                queries
                    .iter()
                    .map(|q| index.search(&case.strategy, q, MAX_RESULTS).expect("search_100k search"))
                    .collect::<Vec<_>>()
            },
            query,
        )
        .await;
        let per = case.queries.len() as f64;
        out.push((case.build_key, built));
        out.push((case.query_key, Measured { wall_us: pass.wall_us / per, cpu_us: pass.cpu_us / per }));
        log(format!(
            "  {:26} {:12.1} us per query   cpu {:12.1} us",
            case.query_key,
            pass.wall_us / per,
            pass.cpu_us / per
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_pydantic_ais() {
        let t: Vec<&str> = tokens("github_create_issue_1880 in github. ").collect();
        assert_eq!(t, ["github", "create", "issue", "1880", "in", "github"]);
    }

    /// Every strategy's validation at 2,000 tools, with one timed build and pass each.
    #[test]
    fn every_strategy_passes_its_checks() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let one = super::super::plan(0, 1);
        let out = rt.block_on(search_100k(2_000, one, one)).unwrap();
        let keys: Vec<&str> = out.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys.len(), 8);
        assert!(keys.contains(&"search_100k_query_regex"));
    }
}
