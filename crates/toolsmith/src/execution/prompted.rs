//! Prompted output's share of a request: its instructions after the others; and the hint
//! towards it when a server refuses a request that forced the output tool.

use crate::model::{ModelError, ModelErrorKind, ModelRequestParameters};

/// The request's instructions: the agent's and the capabilities' joined by a blank line, then
/// the prompted output's; with these, the whole is trimmed, as Pydantic AI joins its
/// instruction parts.
pub(crate) fn join_instructions(mut parts: Vec<String>, prompted: Option<&str>) -> Option<String> {
    let Some(prompted) = prompted else {
        return if parts.is_empty() { None } else { Some(parts.join("\n\n")) };
    };
    parts.push(prompted.to_string());
    Some(parts.join("\n\n").trim().to_string())
}

/// A provider's refusal (HTTP 400, 422, 500 or 501) of a request that forced a call to the
/// output tool (no text allowed, so `tool_choice` was `required` or the tool by name), with what
/// the server answered and the output modes that need no forced call. Other errors unchanged.
pub(crate) fn explain_forced_output(mut e: ModelError, params: &ModelRequestParameters) -> ModelError {
    let forced = !params.output_tools.is_empty() && !params.allow_text_output;
    let refused = e.kind == ModelErrorKind::Http && matches!(e.status(), Some(400 | 422 | 500 | 501));
    if !(forced && refused) {
        return e;
    }
    let status = e.status().unwrap_or_default();
    let tool = params.output_tools.first().map(|t| t.name.as_str()).unwrap_or(crate::output_mode::OUTPUT_TOOL_NAME);
    e.message = format!(
        "{}\nThat request forced a call to the output tool `{tool}` (structured output in `OutputMode::Tool` sends `tool_choice: required`), and the server refused it with HTTP {status}. If the server cannot force a tool call (llama.cpp's server answers 500), build the agent with `.output_mode(OutputMode::Prompted)` (the schema in the instructions), or `.output_mode(OutputMode::Native)` if it takes a JSON-schema response format.",
        e.message
    );
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompted_instructions_come_last_trimmed() {
        assert_eq!(join_instructions(vec![], None), None);
        assert_eq!(join_instructions(vec!["a".into(), "b".into()], None).as_deref(), Some("a\n\nb"));
        assert_eq!(
            join_instructions(vec!["Be brief.".into()], Some("\nJSON\n")).as_deref(),
            Some("Be brief.\n\n\nJSON")
        );
        assert_eq!(join_instructions(vec![], Some("\nJSON\n")).as_deref(), Some("JSON"));
    }
}
