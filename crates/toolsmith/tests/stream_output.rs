//! `RunBuilder::stream_output`: the output as it streams (validated as partial output, with
//! `ctx.partial_output` set for the output hooks), then the final output.

use std::sync::{Arc, Mutex};

use futures::{StreamExt, stream};
use serde::Deserialize;
use serde_json::Value;
use toolsmith::capability::Hooks;
use toolsmith::messages::{ModelMessage, ModelRequestPart};
use toolsmith::model::{FunctionModel, StreamDelta};
use toolsmith::prelude::*;

#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
struct Place {
    name: String,
    country: String,
}

fn place(name: &str, country: &str) -> Place {
    Place { name: name.into(), country: country.into() }
}

/// Streams the output tool call in `pieces`.
fn output_call_in(pieces: &'static [&'static str]) -> FunctionModel {
    FunctionModel::stream(move |_, info| {
        let tool = info.output_tools[0].name.clone();
        let deltas: Vec<StreamDelta> = pieces
            .iter()
            .enumerate()
            .map(
                |(i, p)| {
                    if i == 0 { StreamDelta::tool_call(0, tool.clone(), *p) } else { StreamDelta::tool_args(0, *p) }
                },
            )
            .collect();
        stream::iter(deltas)
    })
}

fn retry_prompts(messages: &[ModelMessage]) -> usize {
    messages
        .iter()
        .filter_map(|m| match m {
            ModelMessage::Request(r) => {
                Some(r.parts.iter().filter(|p| matches!(p, ModelRequestPart::RetryPrompt(_))).count())
            }
            _ => None,
        })
        .sum()
}

#[tokio::test]
async fn partial_outputs_that_do_not_validate_are_skipped_and_cost_no_retry() {
    let model = output_call_in(&[r#"{"name": "Par"#, r#"is", "coun"#, r#"try": "Fr"#, r#"ance"}"#]);
    let agent = Agent::builder_streaming(model).output_type::<Place>().build().unwrap();
    let mut stream = agent.run("where").stream_output();
    let mut outputs = Vec::new();
    while let Some(o) = stream.next().await {
        outputs.push(o.unwrap());
    }
    // `country` is required: nothing validates before it starts.
    assert_eq!(outputs, [place("Paris", "Fr"), place("Paris", "France"), place("Paris", "France")]);
    let result = stream.result().await.unwrap();
    assert_eq!(result.output(), &place("Paris", "France"));
    assert_eq!(retry_prompts(result.all_messages()), 0);
}

#[tokio::test]
async fn output_hooks_are_told_which_outputs_are_partial() {
    let seen: Arc<Mutex<Vec<(bool, Value)>>> = Arc::default();
    let s = seen.clone();
    let hooks = Hooks::new().after_output_validate(move |ctx: RunContext<()>, _, value: Value| {
        s.lock().unwrap().push((ctx.partial_output, value.clone()));
        async move {
            // A check that refuses partial output is not a retry.
            if ctx.partial_output && value["country"] == "Fr" {
                return Err(ModelRetry::new("not yet").into());
            }
            Ok(value)
        }
    });
    let model = output_call_in(&[r#"{"name": "Paris", "country": "Fr"#, r#"ance"}"#]);
    let agent = Agent::builder_streaming(model).output_type::<Place>().capability(hooks).build().unwrap();
    let outputs: Vec<Place> = agent.run("where").stream_output().map(|o| o.unwrap()).collect().await;
    assert_eq!(outputs, [place("Paris", "France"), place("Paris", "France")]);
    let flags: Vec<bool> = seen.lock().unwrap().iter().map(|(p, _)| *p).collect();
    assert_eq!(flags, [true, true, false]);
}

#[tokio::test]
async fn text_output_streams_as_text_and_json_text_as_structured_output() {
    let model = FunctionModel::stream(|_, _| stream::iter([StreamDelta::text("Hel"), StreamDelta::text("lo")]));
    let agent = Agent::builder_streaming(model).build().unwrap();
    let outputs: Vec<String> = agent.run("hi").stream_output().map(|o| o.unwrap()).collect().await;
    assert_eq!(outputs, ["Hel", "Hello", "Hello"]);

    // A model that answers a structured output with JSON text.
    let model = FunctionModel::stream(|_, _| {
        stream::iter([StreamDelta::text(r#"{"name": "Rome", "#), StreamDelta::text(r#""country": "Italy"}"#)])
    });
    let agent = Agent::builder_streaming(model).output_type::<Place>().build().unwrap();
    let outputs: Vec<Place> = agent.run("where").stream_output().map(|o| o.unwrap()).collect().await;
    assert_eq!(outputs, [place("Rome", "Italy"), place("Rome", "Italy")]);
}

#[tokio::test]
async fn without_a_streaming_model_the_stream_is_the_final_output_and_an_error_ends_it() {
    let agent = Agent::builder(TestModel::default()).build().unwrap();
    let outputs: Vec<_> = agent.run("hi").stream_output().collect().await;
    assert_eq!(outputs.len(), 1);
    assert_eq!(outputs[0].as_ref().unwrap(), "success (no tool calls)");

    // A run that fails: its error is the last item.
    let model = output_call_in(&[r#"{"name": "Nowhere"}"#]);
    let agent = Agent::builder_streaming(model).output_type::<Place>().output_retries(0).build().unwrap();
    let outputs: Vec<_> = agent.run("where").stream_output().collect().await;
    assert_eq!(outputs.len(), 1);
    let err = outputs[0].as_ref().unwrap_err();
    assert!(err.to_string().contains("Exceeded maximum output retries (0)"), "{err}");
}

#[tokio::test]
async fn the_result_is_there_without_polling_and_the_event_handler_still_sees_everything() {
    let events = Arc::new(Mutex::new(0usize));
    let e = events.clone();
    let model = output_call_in(&[r#"{"name": "Oslo", "country": "No"#, r#"rway"}"#]);
    let agent = Agent::builder_streaming(model).output_type::<Place>().build().unwrap();
    let stream = agent.run("where").event_handler(move |_| *e.lock().unwrap() += 1).stream_output();
    let result = stream.result().await.unwrap();
    assert_eq!(result.output(), &place("Oslo", "Norway"));
    assert!(*events.lock().unwrap() > 3);
}

#[tokio::test]
async fn a_long_output_in_many_pieces_is_read_a_bounded_number_of_times() {
    #[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
    struct Essay {
        text: String,
    }
    // 200 KB of text in 20,000 pieces.
    let model = FunctionModel::stream(|_, info| {
        let tool = info.output_tools[0].name.clone();
        let mut deltas = vec![StreamDelta::tool_call(0, tool, r#"{"text": ""#)];
        deltas.extend((0..20_000).map(|_| StreamDelta::tool_args(0, "abcdefghij")));
        deltas.push(StreamDelta::tool_args(0, r#""}"#));
        stream::iter(deltas)
    });
    let agent = Agent::builder_streaming(model).output_type::<Essay>().build().unwrap();
    let outputs: Vec<Essay> = agent.run("write").stream_output().map(|o| o.unwrap()).collect().await;
    // Read again each time the text grew by an eighth: about ln(200,000 / 10) / ln(9 / 8)
    // readings, not 20,000.
    assert!(outputs.len() < 120, "{} partial outputs", outputs.len());
    assert_eq!(outputs.last().unwrap().text.len(), 200_000);
    // Every partial is a prefix of the final text, longer than the one before.
    assert!(outputs.windows(2).all(|w| w[0].text.len() <= w[1].text.len()));
}
