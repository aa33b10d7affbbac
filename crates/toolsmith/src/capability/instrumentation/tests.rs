use super::*;
use crate::messages::{BinaryContent, ModelRequest, SystemPromptPart, ToolCallPart, ToolReturnPart, UserPromptPart};

#[test]
fn messages_take_the_genai_shape() {
    let messages = vec![
        ModelMessage::Request(ModelRequest::new(vec![
            ModelRequestPart::SystemPrompt(SystemPromptPart::new("be brief")),
            ModelRequestPart::UserPrompt(UserPromptPart::new(vec![
                UserContent::text("what is this?"),
                BinaryContent::new(b"png", "image/png").into(),
            ])),
        ])),
        ModelMessage::Response(ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
            "look",
            json!({"x": 1}),
            "c1",
        ))])),
        ModelMessage::Request(ModelRequest::new(vec![ModelRequestPart::ToolReturn(ToolReturnPart::success(
            "look",
            json!("a cat"),
            "c1",
        ))])),
    ];
    assert_eq!(
        otel_messages(&messages, &InstrumentationSettings::new().version(InstrumentationVersion::V6)),
        json!([
            {"role": "system", "parts": [{"type": "text", "content": "be brief"}]},
            {"role": "user", "parts": [
                {"type": "text", "content": "what is this?"},
                {"type": "blob", "modality": "image", "mime_type": "image/png"}
            ]},
            {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "look", "arguments": {"x": 1}}]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "a cat"}]}
        ])
    );
    let with_binary = otel_messages(&messages, &InstrumentationSettings::new().include_binary_content(true));
    assert_eq!(with_binary[1]["parts"][1]["content"], json!("cG5n"));
    // Before version 6, tool results are `user` messages; before 4, media has the old shape.
    assert_eq!(with_binary[3]["role"], "user");
    let v3 = otel_messages(&messages, &InstrumentationSettings::new().version(InstrumentationVersion::V3));
    assert_eq!(v3[1]["parts"][1], json!({"type": "binary", "media_type": "image/png"}));
}

#[test]
fn thinking_is_recorded_from_version_3_and_versions_read_as_numbers() {
    let response = ModelResponse::new(vec![
        ModelResponsePart::Thinking(crate::messages::ThinkingPart::new("hmm")),
        ModelResponsePart::Text(crate::messages::TextPart::new("hi")),
    ]);
    let v2 = InstrumentationSettings::new().version(InstrumentationVersion::V2);
    assert_eq!(assistant_message(&response, &v2)["parts"], json!([{"type": "text", "content": "hi"}]));
    let v3 = InstrumentationSettings::new().version(InstrumentationVersion::V3);
    assert_eq!(assistant_message(&response, &v3)["parts"][0], json!({"type": "thinking", "content": "hmm"}));

    let parsed: InstrumentationSettings = serde_json::from_value(json!({"version": 2})).unwrap();
    assert_eq!(parsed.version, InstrumentationVersion::V2);
    assert!(parsed.use_aggregated_usage_attribute_names && parsed.include_model_request_parameters);
    let err = serde_json::from_value::<InstrumentationSettings>(json!({"version": 7})).unwrap_err();
    assert!(err.to_string().contains("must be 2, 3, 4, 5 or 6, got 7"), "{err}");
}
