//! The semantic and hybrid tool search strategies (feature `semantic`) on the real embedding
//! model: all-MiniLM-L6-v2 as `scripts/embedding-model.sh` installs it, found through
//! `TOOLSMITH_EMBEDDING_MODEL` (CI sets it).

use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};
use toolsmith::messages::{ModelMessage, ModelRequestPart, ModelResponsePart, ToolCallPart, ToolReturnPart};
use toolsmith::prelude::*;
use toolsmith::search::eval::{self, SearchIndex};
use toolsmith::search::semantic::{MODEL_ENV, SemanticError, SemanticModel};
use toolsmith::search::{SearchStrategy, ToolSearch};

/// The model installed by `scripts/embedding-model.sh`, loaded once for every test.
fn model() -> SemanticModel {
    static MODEL: OnceLock<SemanticModel> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let path = std::env::var(MODEL_ENV).unwrap_or_else(|_| {
                panic!("set {MODEL_ENV} to the folder scripts/embedding-model.sh prints to run these tests")
            });
            SemanticModel::load(path).expect("the installed model loads")
        })
        .clone()
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn fixture() -> (Vec<ToolDefinition>, Vec<eval::EvalQuery>) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/search");
    (
        eval::load_corpus(format!("{dir}/mcp_corpus.jsonl")).unwrap(),
        eval::load_queries(format!("{dir}/mcp_queries.jsonl")).unwrap(),
    )
}

#[test]
fn the_model_embeds_meaning_into_unit_vectors() {
    let model = model();
    assert_eq!(model.dimensions().unwrap(), 384);
    let note = model.embed("make a note of this").unwrap();
    let remember = model.embed("remember this fact for later").unwrap();
    let weather = model.embed("what is the weather in Paris").unwrap();
    assert_eq!(note.len(), 384);
    assert!((cosine(&note, &note) - 1.0).abs() < 1e-4, "unit length");
    // Paraphrases are nearer each other than to an unrelated request.
    assert!(cosine(&note, &remember) > cosine(&note, &weather) + 0.1);
}

#[test]
fn the_forward_pass_matches_sentence_transformers() {
    // The first eight values of all-MiniLM-L6-v2's embedding of this sentence as sentence-transformers
    // gives it (the model card's example), recomputed in F64 by a NumPy BertModel with mean pooling
    // over the same weights: the tokenizer, the encoder and the pooling agree with the reference.
    let v = model().embed("This is an example sentence").unwrap();
    let reference = REFERENCE_EXAMPLE;
    for (i, (got, want)) in v.iter().zip(reference).enumerate() {
        assert!((got - want).abs() < 2e-4, "value {i}: {got} against {want}");
    }
}

/// See `the_forward_pass_matches_sentence_transformers`.
const REFERENCE_EXAMPLE: [f32; 8] = [0.067657, 0.063496, 0.048713, 0.079305, 0.037448, 0.002653, 0.039375, -0.007098];

#[test]
fn a_paraphrase_finds_the_tool_that_bm25_misses() {
    let (tools, _) = fixture();
    let index = SearchIndex::new(&tools);
    // No word of the request is in the memory server's tools: BM25 finds nothing.
    let request = "store the fact that my sister lives in Lyon";
    assert!(index.rank(&SearchStrategy::Bm25, request, 5).unwrap().is_empty());
    let semantic = index.rank(&SearchStrategy::Semantic(model()), request, 3).unwrap();
    assert_eq!(semantic[0], "memory_add_observations", "{semantic:?}");
    let hybrid = index.rank(&SearchStrategy::Hybrid(model()), request, 3).unwrap();
    assert_eq!(hybrid[0], "memory_add_observations", "{hybrid:?}");
}

#[test]
fn hybrid_beats_bm25_on_the_test_catalogue() {
    let (tools, queries) = fixture();
    let index = SearchIndex::new(&tools);
    let bm25 = eval::evaluate(&index, &SearchStrategy::Bm25, &queries).metrics;
    let hybrid = eval::evaluate(&index, &SearchStrategy::Hybrid(model()), &queries).metrics;
    assert_eq!(hybrid.queries, queries.len());
    assert!(hybrid.recall_at_5 > bm25.recall_at_5, "hybrid {hybrid:?} against bm25 {bm25:?}");
}

#[test]
fn a_changed_catalogue_embeds_only_its_new_tools() {
    // A model of its own, so that the cache counts this test's tools only.
    let model = SemanticModel::load(std::env::var(MODEL_ENV).unwrap()).unwrap();
    let (tools, _) = fixture();
    let strategy = SearchStrategy::Semantic(model.clone());
    let first = SearchIndex::new(&tools[..40]);
    first.prepare(&strategy);
    assert_eq!(model.cached(), 40);
    let second = first.updated(&tools[10..50]);
    second.prepare(&strategy);
    // Ten new tools embedded; the thirty kept came from the cache.
    assert_eq!(model.cached(), 50);
    let ranked = second.rank(&strategy, "take a screenshot of the page", 3).unwrap();
    assert!(ranked.iter().all(|n| tools[10..50].iter().any(|t| &t.name == n)));
    assert_eq!(ranked[0], "puppeteer_screenshot");
}

#[test]
fn blank_requests_are_retried_and_a_missing_model_is_a_clear_error() {
    let (tools, _) = fixture();
    let index = SearchIndex::new(&tools);
    let retry = index.rank(&SearchStrategy::Hybrid(model()), "   ", 5).unwrap_err();
    assert_eq!(retry.content, json!("Please provide at least one non-empty search query."));

    let missing = std::env::temp_dir().join("toolsmith-no-such-model");
    match SemanticModel::load(&missing) {
        Err(SemanticError::Unreadable { file, path, .. }) => {
            assert_eq!(file, "config.json");
            assert_eq!(path, missing);
        }
        other => panic!("expected an unreadable config.json, got {other:?}"),
    }
}

#[test]
fn the_default_strategy_is_hybrid_with_the_feature() {
    assert!(matches!(ToolSearch::new().strategy, SearchStrategy::Hybrid(_)));
    assert_eq!(eval::strategy_name(&ToolSearch::new().strategy), "hybrid");
    assert!(matches!("semantic".parse::<SearchStrategy>().unwrap(), SearchStrategy::Semantic(_)));
}

/// Store facts about people and things in the knowledge graph, as entities with observations.
#[tool(defer_loading)]
fn create_entities(name: String, observations: Vec<String>) -> String {
    format!("{name}: {}", observations.join("; "))
}

/// Get the weather forecast for a city.
#[tool(defer_loading)]
fn weather_forecast(city: String) -> String {
    format!("sunny in {city}")
}

/// Convert an amount between two currencies at today's exchange rate.
#[tool(defer_loading)]
fn currency_converter(amount: f64, from_currency: String, to_currency: String) -> String {
    format!("{amount} {from_currency} -> {to_currency}")
}

fn call(name: &str, args: Value, id: &str) -> ModelResponse {
    ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(name, args, id))])
}

fn returns(messages: &[ModelMessage]) -> Vec<ToolReturnPart> {
    messages
        .iter()
        .filter_map(ModelMessage::as_request)
        .flat_map(|r| r.parts.iter())
        .filter_map(|p| match p {
            ModelRequestPart::ToolReturn(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_agent_with_the_default_hybrid_search_discovers_a_paraphrased_tool() {
    let responses = Arc::new(Mutex::new(
        vec![
            call("search_tools", json!({"queries": ["remember that Alice prefers tea"]}), "s1"),
            call("create_entities", json!({"name": "Alice", "observations": ["prefers tea"]}), "c1"),
            ModelResponse::text("Noted."),
        ]
        .into_iter(),
    ));
    let model = FunctionModel::sync(move |_, _| responses.lock().unwrap().next().unwrap());
    // The default strategy: hybrid, with the model of TOOLSMITH_EMBEDDING_MODEL.
    let agent = Agent::builder(model)
        .tool(create_entities)
        .tool(weather_forecast)
        .tool(currency_converter)
        .tool_search(ToolSearch::new().max_results(1))
        .build()
        .unwrap();
    let result = agent.run("Please remember that Alice prefers tea.").await.unwrap();
    assert_eq!(result.output(), "Noted.");
    let returns = returns(result.all_messages());
    assert_eq!(returns[0].content, json!({"discovered_tools": [{"name": "create_entities"}]}));
    assert_eq!(returns[1].content, json!("Alice: prefers tea"));
}

#[test]
fn an_embedding_function_of_ones_own_takes_the_models_place() {
    // Two dimensions: "money" and "weather" words counted.
    let model = SemanticModel::from_fn(2, |texts| {
        texts
            .iter()
            .map(|t| {
                let t = t.to_lowercase();
                let count = |words: &[&str]| words.iter().filter(|w| t.contains(*w)).count() as f32 + 0.1;
                vec![count(&["currency", "dollar", "money"]), count(&["weather", "rain", "forecast"])]
            })
            .collect()
    });
    let tools = [
        ToolDefinition::new("currency_converter", json!({})).with_description("Convert an amount of money."),
        ToolDefinition::new("weather_forecast", json!({})).with_description("The forecast for a city."),
    ];
    let index = SearchIndex::new(&tools);
    let ranked = index.rank(&SearchStrategy::Semantic(model.clone()), "will it rain tomorrow", 2).unwrap();
    assert_eq!(ranked, ["weather_forecast", "currency_converter"]);
    assert_eq!(model.dimensions().unwrap(), 2);

    // A function that returns vectors of the wrong size fails the search with a retry.
    let broken = SemanticModel::from_fn(3, |texts| texts.iter().map(|_| vec![1.0]).collect());
    let retry = index.rank(&SearchStrategy::Semantic(broken), "rain", 2).unwrap_err();
    assert!(retry.content.as_str().unwrap().contains("not of 3 values"), "{retry:?}");
}

#[test]
fn a_static_model_distilled_and_fitted_to_a_corpus_loads_and_ranks_by_meaning() {
    let path = std::env::var(MODEL_ENV).expect("the model folder");
    let out = std::env::temp_dir().join(format!("toolsmith-static-{}", std::process::id()));
    let (tools, queries) = fixture();
    // The corpus: the catalogue's own tool texts and a few requests, as an application would fit
    // a static model to what it searches.
    let mut corpus: Vec<String> = tools
        .iter()
        .map(|t| format!("{}: {}", t.name.replace('_', " "), t.description.clone().unwrap_or_default()))
        .collect();
    corpus.extend(["", "???"].map(String::from));
    let report = toolsmith::search::semantic::distill_with_corpus(&path, &corpus, &out).unwrap();
    // Texts without a known word piece are left out.
    assert_eq!(report.texts, tools.len() + 1, "{report:?}");
    assert!(report.pieces_fitted > 200, "{report:?}");
    assert!(report.error_fitted < report.error_distilled / 2.0, "{report:?}");

    let fast = SemanticModel::load(&out).unwrap();
    assert_eq!(fast.dimensions().unwrap(), 384);
    assert_eq!(fast.fusion_weight().unwrap(), 0.2, "a static model's own weight");
    let forecast = fast.embed("weather forecast for tomorrow").unwrap();
    assert!((cosine(&forecast, &forecast) - 1.0).abs() < 1e-4, "unit length");
    let rain = fast.embed("will it rain in Paris tomorrow").unwrap();
    let mail = fast.embed("send an email to the team").unwrap();
    assert!(cosine(&forecast, &rain) > cosine(&forecast, &mail) + 0.1);
    // A text without a known word piece gives zeros, not an error.
    assert!(fast.embed("").unwrap().iter().all(|&x| x == 0.0));
    // It ranks far above chance (5 of 62 tools), alone and fused with BM25 (a corpus this small
    // fits the texts' words closely; the project's model is fitted on 28,918 texts).
    let index = SearchIndex::new(&tools);
    let found = eval::evaluate(&index, &SearchStrategy::Semantic(fast.clone()), &queries).metrics;
    assert!(found.recall_at_5 > 0.5, "{found:?}");
    let hybrid = eval::evaluate(&index, &SearchStrategy::Hybrid(fast), &queries).metrics;
    assert!(hybrid.recall_at_5 > 0.7, "{hybrid:?}");
    // A broken weights file names the file.
    std::fs::write(out.join("model.safetensors"), b"not safetensors").unwrap();
    let error = SemanticModel::load(&out).unwrap_err();
    assert!(matches!(error, SemanticError::Unreadable { file: "model.safetensors", .. }), "{error}");
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn a_fusion_weight_that_is_not_a_finite_non_negative_number_is_refused_at_build() {
    let toy = || SemanticModel::from_fn(2, |texts| texts.iter().map(|_| vec![1.0, 0.0]).collect());
    for weight in [f32::NAN, -0.5, f32::INFINITY] {
        let search = ToolSearch::new().strategy(SearchStrategy::Hybrid(toy().with_fusion_weight(weight)));
        let error =
            Agent::builder(TestModel::default()).tool(weather_forecast).tool_search(search).build().unwrap_err();
        assert!(error.to_string().contains("fusion weight"), "{error}");
    }
    let search = ToolSearch::new().strategy(SearchStrategy::Hybrid(toy().with_fusion_weight(0.0)));
    assert!(Agent::builder(TestModel::default()).tool(weather_forecast).tool_search(search).build().is_ok());
}
