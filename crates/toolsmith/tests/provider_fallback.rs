//! `FallbackModel`, `AnyModel` and `infer_model`, offline (no provider feature needed).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use toolsmith::messages::{ModelRequest, ModelResponse};
use toolsmith::model::{
    AnyModel, FallbackModel, FunctionModel, Model, ModelError, ModelRequestParameters, ModelStreamEvent,
    StreamingModel, TestModel, collect_stream,
};
use toolsmith::prelude::*;
use toolsmith::providers::infer_model;

fn failing(kind: &'static str, calls: Arc<AtomicUsize>) -> AnyModel {
    AnyModel::from_model(
        FunctionModel::new(move |_, _| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move { Err(ModelError::new(kind, format!("{kind} from the first model"))) }
        })
        .with_name("first"),
    )
}

fn answering(text: &'static str) -> AnyModel {
    AnyModel::from_model(FunctionModel::sync(move |_, _| ModelResponse::text(text)).with_name("second"))
}

#[tokio::test]
async fn falls_back_on_http_errors_in_order() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = FallbackModel::new([failing("ModelHttpError", calls.clone()), answering("from the second")]).unwrap();
    assert_eq!(model.name(), "fallback:function:first,function:second");
    let agent = Agent::builder(model).build().unwrap();
    let result = agent.run("hi").await.unwrap();
    assert_eq!(result.output(), "from the second");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn other_errors_are_returned_at_once() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = FallbackModel::new([failing("UnexpectedModelBehavior", calls.clone()), answering("unused")]).unwrap();
    let messages = vec![ModelRequest::user_prompt("hi").into()];
    let err = model.request(&messages, None, &ModelRequestParameters::default()).await.unwrap_err();
    assert_eq!(err.kind, "UnexpectedModelBehavior");

    // A custom condition.
    let model = FallbackModel::new([failing("UnexpectedModelBehavior", calls.clone()), answering("second")])
        .unwrap()
        .fallback_on(|_| true);
    let response = model.request(&messages, None, &ModelRequestParameters::default()).await.unwrap();
    assert_eq!(response.text_content().as_deref(), Some("second"));
}

#[tokio::test]
async fn when_every_model_fails_the_errors_are_listed() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = FallbackModel::new([failing("ModelHttpError", calls.clone()), failing("ModelApiError", calls.clone())])
        .unwrap();
    let agent = Agent::builder(model).build().unwrap();
    let err = agent.run("hi").await.unwrap_err();
    let text = err.to_string();
    assert!(text.contains("all 2 models of the FallbackModel failed"), "{text}");
    assert!(text.contains("1. function:first: ModelHttpError from the first model (ModelHttpError)"), "{text}");
    assert!(text.contains("2. function:first: ModelApiError from the first model (ModelApiError)"), "{text}");
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(FallbackModel::new(Vec::<AnyModel>::new()).is_err());
}

#[tokio::test]
async fn streams_of_non_streaming_models_are_one_final_event() {
    let model = FallbackModel::new([answering("whole")]).unwrap();
    let messages = vec![ModelRequest::user_prompt("hi").into()];
    let stream = model.request_stream(&messages, None, &ModelRequestParameters::default()).await.unwrap();
    let response = collect_stream(stream).await.unwrap();
    assert_eq!(response.text_content().as_deref(), Some("whole"));

    let any = AnyModel::from_model(TestModel::default());
    let mut params = ModelRequestParameters::default();
    params.allow_text_output = true;
    let mut stream = any.request_stream(&messages, None, &params).await.unwrap();
    use futures::StreamExt;
    assert!(matches!(stream.next().await, Some(Ok(ModelStreamEvent::Final(_)))));
    assert!(stream.next().await.is_none());
}

#[test]
fn infer_model_names() {
    let test = infer_model("test").unwrap();
    assert_eq!(test.system(), "test");
    let err = infer_model("cohere:command-r").unwrap_err();
    assert!(err.message.contains("unknown model provider `cohere`"), "{}", err.message);
    let err = infer_model("llama3").unwrap_err();
    assert!(err.message.contains("provider:model"), "{}", err.message);
    let err = infer_model("openai:").unwrap_err();
    assert!(err.message.contains("model name is missing"), "{}", err.message);
    #[cfg(not(feature = "anthropic"))]
    {
        let err = infer_model("anthropic:claude-sonnet-4-5").unwrap_err();
        assert!(err.message.contains("`anthropic` feature"), "{}", err.message);
    }
}
