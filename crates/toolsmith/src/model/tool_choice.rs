//! How a `tool_choice` resolves for one request.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::error::UserError;
use crate::model::ModelRequestParameters;
use crate::settings::{ModelSettings, ToolChoice};

/// The resolved tool choice for one request, as a provider adapter uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResolvedToolChoice {
    /// The model decides.
    Auto,
    /// No tools.
    None,
    /// A tool must be called.
    Required,
    /// Restricted to a set of tools, with a mode.
    Restricted {
        /// `true`: a call is required; `false`: the model may also answer.
        required: bool,
        /// The allowed tools.
        tools: BTreeSet<String>,
    },
}

impl ResolvedToolChoice {
    /// The JSON form used in the conformance results (`"auto"`, or `{"mode", "tools"}`).
    pub fn to_json(&self) -> Value {
        match self {
            ResolvedToolChoice::Auto => Value::from("auto"),
            ResolvedToolChoice::None => Value::from("none"),
            ResolvedToolChoice::Required => Value::from("required"),
            ResolvedToolChoice::Restricted { required, tools } => serde_json::json!({
                "mode": if *required { "required" } else { "auto" },
                "tools": tools.iter().collect::<Vec<_>>(),
            }),
        }
    }
}

const REQUIRED_MESSAGE: &str = "`tool_choice='required'` prevents the agent from producing a final response because output tools are excluded. Use `ToolOrOutput` to combine specific function tools with output capability, return a callable from a capability's `get_model_settings()` to vary `tool_choice` per step, or use `pydantic_ai.direct.model_request` for single-shot model calls.";

/// Checks a static `tool_choice` before a run starts: `Required`, and a list that names none of
/// the `output_tools`, would make a final answer impossible.
pub fn check_static_tool_choice(choice: Option<&ToolChoice>, output_tools: &[&str]) -> Result<(), UserError> {
    match choice {
        Some(ToolChoice::Required) => Err(UserError::new(REQUIRED_MESSAGE)),
        Some(ToolChoice::Tools(names)) if !names.iter().any(|n| output_tools.contains(&n.as_str())) => {
            let listed = names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ");
            Err(UserError::new(format!(
                "`tool_choice=[{listed}]` names no output tool, so the agent cannot produce a final response because it must call one of the listed tools on every step. Name an output tool in the list, use `ToolOrOutput` to combine specific function tools with output capability, return a callable from a capability's `get_model_settings()` to vary `tool_choice` per step, or use `pydantic_ai.direct.model_request` for single-shot model calls."
            )))
        }
        _ => Ok(()),
    }
}

/// Resolves the tool choice for one request, the way a provider adapter sees it.
pub fn resolve_tool_choice(
    settings: Option<&ModelSettings>,
    params: &ModelRequestParameters,
) -> Result<ResolvedToolChoice, UserError> {
    let choice = settings.and_then(|s| s.tool_choice.as_ref());
    let output_names = || params.output_tools.iter().map(|t| t.name.clone());
    Ok(match choice {
        None | Some(ToolChoice::Auto) => {
            if !params.allow_text_output && !params.output_tools.is_empty() {
                ResolvedToolChoice::Required
            } else {
                ResolvedToolChoice::Auto
            }
        }
        Some(ToolChoice::None) => {
            if params.output_tools.is_empty() {
                ResolvedToolChoice::None
            } else if params.allow_text_output {
                ResolvedToolChoice::Restricted { required: false, tools: output_names().collect() }
            } else {
                ResolvedToolChoice::Restricted { required: true, tools: output_names().collect() }
            }
        }
        Some(ToolChoice::Required) => {
            if params.function_tools.is_empty() {
                return Err(UserError::new(REQUIRED_MESSAGE));
            }
            ResolvedToolChoice::Required
        }
        Some(ToolChoice::Tools(names)) => {
            check_names(names, params)?;
            ResolvedToolChoice::Restricted { required: true, tools: names.iter().cloned().collect() }
        }
        Some(ToolChoice::ToolOrOutput(names)) => {
            check_names(names, params)?;
            let mut tools: BTreeSet<String> = names.iter().cloned().collect();
            if params.allow_text_output {
                ResolvedToolChoice::Restricted { required: false, tools }
            } else {
                tools.extend(output_names());
                ResolvedToolChoice::Restricted { required: true, tools }
            }
        }
    })
}

fn check_names(names: &[String], params: &ModelRequestParameters) -> Result<(), UserError> {
    let unknown: Vec<&String> = names.iter().filter(|n| !params.all_tools().any(|t| &&t.name == n)).collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        let available: Vec<&str> = params.function_tools.iter().map(|t| t.name.as_str()).collect();
        Err(UserError::new(format!(
            "Invalid tool names in `tool_choice`: {unknown:?}. Available function tools: {available:?}"
        )))
    }
}
