//! A tool's `structuredContent` checked against its `outputSchema`: the result of a tool that
//! declares an output schema must carry structured content that matches it (MCP 2025-06-18);
//! otherwise the model is told, as a retry, what was wrong.

use serde_json::Value;

use crate::validation::{Options, Validator, errors_for_model};

/// Compiles a tool's output schema; `None` (with a warning) when the validator cannot.
pub(crate) fn compile(server: &str, tool: &str, schema: &Value) -> Option<Validator> {
    let options = Options { fill_defaults: false, nullable_optionals: false };
    match Validator::compile_with(schema, options) {
        Ok(v) => Some(v),
        Err(e) => {
            tracing::warn!(
                server,
                tool,
                error = %e,
                "the output schema of an MCP tool cannot be compiled: its structured results are taken unchecked"
            );
            None
        }
    }
}

/// Checks a result's structured content against the tool's output schema: `Err` with the
/// message for the model when it is missing or does not match.
pub(crate) fn check(tool: &str, validator: &Validator, structured: Option<&Value>) -> Result<(), String> {
    let Some(structured) = structured.filter(|v| !v.is_null()) else {
        return Err(format!(
            "Tool '{tool}' declares an output schema but its result has no structured content; the call may be tried again."
        ));
    };
    match validator.validate(structured) {
        Ok(_) => Ok(()),
        Err(errors) => Err(format!(
            "The structured result of tool '{tool}' does not match the tool's output schema: {}",
            errors_for_model(&errors)
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn missing_or_mismatched_structured_content_is_reported() {
        let schema =
            json!({"type": "object", "properties": {"temperature": {"type": "number"}}, "required": ["temperature"]});
        let v = compile("s", "weather", &schema).unwrap();
        assert!(check("weather", &v, Some(&json!({"temperature": 21.5}))).is_ok());
        let err = check("weather", &v, Some(&json!({"temperature": "warm"}))).unwrap_err();
        assert!(err.contains("does not match the tool's output schema"), "{err}");
        assert!(err.contains("temperature"), "{err}");
        let err = check("weather", &v, None).unwrap_err();
        assert!(err.contains("no structured content"), "{err}");
    }
}
