//! Gemini's native tools: the request's tools (and image output) for the agent's native tools,
//! and the code execution, grounding and image parts of an answer read as native tool parts and
//! written back.

use serde_json::{Map, Value, json};

use super::SYSTEM;
use crate::messages::{
    BinaryContent, FilePart, MediaContent, ModelResponsePart, NativeToolReturnPart, ToolCallPart, generate_tool_call_id,
};
use crate::native::NativeTool;
use crate::providers::wire::put;

/// A native tool as a Gemini tool (`None` for a kind with no tool of its own: image generation
/// is an output modality, see [`image_config`]).
pub(super) fn tool(tool: &NativeTool) -> Option<Value> {
    Some(match tool {
        NativeTool::WebSearch(_) => json!({"google_search": {}}),
        NativeTool::WebFetch(_) => json!({"url_context": {}}),
        NativeTool::CodeExecution(_) => json!({"code_execution": {}}),
        _ => return None,
    })
}

/// Whether the model generates images (Gemini's `*-image*` models).
pub(super) fn makes_images(model: &str) -> bool {
    model.contains("-image")
}

/// With the image generation tool: the generation config's response modalities and image
/// config.
pub(super) fn image_config(tools: &[NativeTool], generation: &mut Map<String, Value>) {
    let Some(g) = tools.iter().find_map(|t| match t {
        NativeTool::ImageGeneration(g) => Some(g),
        _ => None,
    }) else {
        return;
    };
    generation.insert("responseModalities".into(), json!(["TEXT", "IMAGE"]));
    let mut image = Map::new();
    put(&mut image, "aspectRatio", g.aspect_ratio.clone());
    put(&mut image, "imageSize", g.size.clone());
    let mut output = Map::new();
    if let Some(format) = g.output_format.as_deref().or(g.output_compression.map(|_| "jpeg")) {
        output.insert("mimeType".into(), format!("image/{format}").into());
    }
    put(&mut output, "compressionQuality", g.output_compression);
    if !output.is_empty() {
        image.insert("imageOutputOptions".into(), Value::Object(output));
    }
    if !image.is_empty() {
        generation.insert("imageConfig".into(), Value::Object(image));
    }
}

/// An answer's part that is a native tool's (code it ran, the result) or a file it made.
pub(super) fn part_of(p: &Value) -> Option<ModelResponsePart> {
    if let Some(code) = p.get("executableCode") {
        let args = json!({
            "language": code.get("language").cloned().unwrap_or(Value::Null),
            "code": code.get("code").cloned().unwrap_or_default(),
        });
        let id = code.get("id").and_then(Value::as_str).map(str::to_string).unwrap_or_else(generate_tool_call_id);
        return Some(ModelResponsePart::NativeToolCall(ToolCallPart::native("code_execution", args, id, SYSTEM)));
    }
    if let Some(result) = p.get("codeExecutionResult") {
        let content = json!({
            "outcome": result.get("outcome").cloned().unwrap_or(Value::Null),
            "output": result.get("output").cloned().unwrap_or_default(),
        });
        let id = result.get("id").and_then(Value::as_str).unwrap_or_default();
        let part = NativeToolReturnPart::new("code_execution", content, id, SYSTEM);
        return Some(ModelResponsePart::NativeToolReturn(part));
    }
    let inline = p.get("inlineData")?;
    let media_type = inline.get("mimeType").and_then(Value::as_str)?;
    let data = BinaryContent::from_base64(inline.get("data").and_then(Value::as_str)?, media_type)?;
    let mut file = FilePart::new(data);
    file.provider_name = Some(SYSTEM.into());
    Some(ModelResponsePart::File(file))
}

/// Gives each code result without an id the id of the code run before it.
pub(super) fn link_results(parts: &mut [ModelResponsePart]) {
    let mut last_call: Option<String> = None;
    for part in parts {
        match part {
            ModelResponsePart::NativeToolCall(c) if c.tool_name == "code_execution" => {
                last_call = Some(c.tool_call_id.clone())
            }
            ModelResponsePart::NativeToolReturn(r) if r.tool_name == "code_execution" && r.tool_call_id.is_empty() => {
                r.tool_call_id = last_call.clone().unwrap_or_else(generate_tool_call_id);
            }
            _ => {}
        }
    }
}

/// The web search an answer was grounded on (`groundingMetadata`), as a call and its result.
pub(super) fn grounding(candidate: Option<&Value>) -> Vec<ModelResponsePart> {
    let Some(meta) = candidate.and_then(|c| c.get("groundingMetadata")).filter(|m| m.is_object()) else {
        return Vec::new();
    };
    let queries = meta.get("webSearchQueries").cloned().filter(|q| q.as_array().is_some_and(|q| !q.is_empty()));
    let Some(queries) = queries else { return Vec::new() };
    let id = generate_tool_call_id();
    let content = meta.get("groundingChunks").cloned().unwrap_or_else(|| json!([]));
    vec![
        ModelResponsePart::NativeToolCall(ToolCallPart::native("web_search", json!({"queries": queries}), &id, SYSTEM)),
        ModelResponsePart::NativeToolReturn(NativeToolReturnPart::new("web_search", content, id, SYSTEM)),
    ]
}

/// An own native tool part or file as the part Gemini sent (grounding is not sent back).
pub(super) fn replay(part: &ModelResponsePart) -> Option<Value> {
    match part {
        ModelResponsePart::NativeToolCall(c) if c.tool_name == "code_execution" => {
            let mut code = Map::new();
            put(&mut code, "language", c.args.get("language").filter(|l| !l.is_null()).cloned());
            code.insert("code".into(), c.args.get("code").cloned().unwrap_or_default());
            Some(json!({"executableCode": code}))
        }
        ModelResponsePart::NativeToolReturn(r) if r.tool_name == "code_execution" => {
            let mut result = Map::new();
            put(&mut result, "outcome", r.content.get("outcome").filter(|o| !o.is_null()).cloned());
            result.insert("output".into(), r.content.get("output").cloned().unwrap_or_default());
            Some(json!({"codeExecutionResult": result}))
        }
        ModelResponsePart::File(FilePart { content: MediaContent::Binary(b), .. }) => {
            Some(json!({"inlineData": {"mimeType": b.media_type, "data": b.data}}))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_runs_results_and_images_read_as_parts_and_write_back() {
        let wire = [
            json!({"executableCode": {"language": "PYTHON", "code": "print(1)"}}),
            json!({"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}}),
            json!({"inlineData": {"mimeType": "image/png", "data": "iVBORw=="}}),
        ];
        let mut parts: Vec<ModelResponsePart> = wire.iter().map(|p| part_of(p).unwrap()).collect();
        link_results(&mut parts);
        let (ModelResponsePart::NativeToolCall(c), ModelResponsePart::NativeToolReturn(r)) = (&parts[0], &parts[1])
        else {
            panic!("{parts:?}")
        };
        assert_eq!(c.tool_call_id, r.tool_call_id);
        let back: Vec<Value> = parts.iter().filter_map(replay).collect();
        assert_eq!(back, wire);
        assert!(part_of(&json!({"text": "hi"})).is_none());
    }

    #[test]
    fn grounding_is_a_web_search_call_and_its_result() {
        let candidate = json!({"groundingMetadata": {
            "webSearchQueries": ["rust 2024"],
            "groundingChunks": [{"web": {"uri": "https://blog.rust-lang.org", "title": "Rust Blog"}}],
        }});
        let parts = grounding(Some(&candidate));
        assert_eq!(parts.len(), 2);
        assert!(matches!(&parts[0], ModelResponsePart::NativeToolCall(c) if c.args["queries"][0] == "rust 2024"));
        assert!(grounding(Some(&json!({"groundingMetadata": {}}))).is_empty());
    }
}
