//! `toolsmith search`, `search-eval` and `tokens` on a tiny corpus.

use std::process::{Command, Output};

use serde_json::Value;

fn fixture(name: &str) -> String {
    format!("{}/../toolsmith/tests/fixtures/search/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn toolsmith(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolsmith")).args(args).output().expect("the toolsmith binary runs")
}

fn json_lines(out: &Output) -> Vec<Value> {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn search_prints_one_ranking_per_query_in_input_order() {
    let (corpus, queries) = (fixture("tiny_corpus.jsonl"), fixture("tiny_queries.jsonl"));
    // No --strategy: the library's default strategy (BM25).
    let lines = json_lines(&toolsmith(&["search", "--corpus", &corpus, "--queries", &queries]));
    let ids: Vec<&Value> = lines.iter().map(|l| &l["id"]).collect();
    assert_eq!(ids, [&Value::from("q1"), &Value::from(2), &Value::from("q3"), &Value::from("q4")]);
    let first = |i: usize| lines[i]["ranked"][0].as_str().unwrap().to_string();
    assert_eq!(first(0), "get_weather");
    assert_eq!(first(1), "createCalendarEvent");
    assert_eq!(first(2), "send_email");
    assert_eq!(first(3), "math.factorial");
    assert_eq!(lines[0].as_object().unwrap().keys().collect::<Vec<_>>(), ["id", "ranked"]);
    let bm25 = json_lines(&toolsmith(&["search", "--corpus", &corpus, "--queries", &queries, "--strategy", "bm25"]));
    assert_eq!(bm25, lines);

    // --k cuts the rankings; keyword overlap ranks differently (it knows no "calendar" in
    // "createCalendarEvent").
    let keywords = json_lines(&toolsmith(&[
        "search",
        "--corpus",
        &corpus,
        "--queries",
        &queries,
        "--strategy",
        "keywords",
        "--k",
        "1",
    ]));
    assert!(keywords.iter().all(|l| l["ranked"].as_array().unwrap().len() <= 1));
    assert_ne!(keywords[1]["ranked"][0], "createCalendarEvent");

    // A regex that does not compile is reported on its line.
    let regex = json_lines(&toolsmith(&["search", "--corpus", &corpus, "--queries", &queries, "--strategy", "regex"]));
    assert_eq!(regex.len(), 4);
    assert!(regex.iter().all(|l| l["ranked"].as_array().unwrap().is_empty()));
    assert!(regex[1].get("error").is_none());
}

#[test]
fn usage_mistakes_and_missing_files_are_reported() {
    let (corpus, queries) = (fixture("tiny_corpus.jsonl"), fixture("tiny_queries.jsonl"));
    let out = toolsmith(&["search", "--corpus", &corpus, "--queries", &queries, "--strategy", "semantic"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown search strategy 'semantic'"));
    let out = toolsmith(&["search", "--corpus", "/nonexistent.jsonl", "--queries", &queries]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent.jsonl"));
}

#[test]
fn search_eval_reports_every_strategy() {
    let (corpus, queries) = (fixture("tiny_corpus.jsonl"), fixture("tiny_queries.jsonl"));
    let lines = json_lines(&toolsmith(&[
        "search-eval",
        "--corpus",
        &corpus,
        "--queries",
        &queries,
        "--scale",
        "3,100",
        "--json",
    ]));
    let names: Vec<&str> = lines.iter().map(|l| l["strategy"].as_str().unwrap()).collect();
    assert_eq!(names, ["pydantic-ai", "keywords", "bm25", "bm25-plain", "regex"]);
    let bm25 = &lines[2];
    assert_eq!(bm25["default"], true);
    assert_eq!(lines.iter().filter(|l| l["default"] == true).count(), 1);
    assert_eq!(bm25["queries"], 4);
    assert_eq!(bm25["recall_at_1"], 0.875);
    assert_eq!(bm25["scaled"][0]["tools"], 3);
    assert_eq!(bm25["scaled"][1]["tools"], 100);
    assert!(bm25["recall_at_5"].as_f64().unwrap() > lines[1]["recall_at_5"].as_f64().unwrap());

    let table =
        toolsmith(&["search-eval", "--corpus", &corpus, "--queries", &queries, "--strategy", "bm25", "--scale", "0"]);
    assert!(table.status.success());
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.contains("6 tools, 4 queries") && text.contains("bm25*"), "{text}");
}

#[test]
fn tokens_counts_schema_tokens_with_o200k() {
    let corpus = fixture("tiny_corpus.jsonl");
    let lines = json_lines(&toolsmith(&["tokens", "--corpus", &corpus, "--json"]));
    let report = &lines[0];
    assert_eq!(report["encoding"], "o200k_base");
    assert_eq!(report["tools"], 6);
    let total = report["total_tokens"].as_u64().unwrap();
    let search = report["search_tool_tokens"].as_u64().unwrap();
    assert!(total > 200 && search > 50, "{report}");
    assert_eq!(report["deferred_saving_tokens"].as_u64().unwrap(), total.saturating_sub(search));
    assert!(report["estimated_tokens"].as_u64().unwrap() > 0, "{report}");
    let out = toolsmith(&["tokens", "--corpus", &corpus, "--encoding", "gpt2"]);
    assert_eq!(out.status.code(), Some(2));
}
