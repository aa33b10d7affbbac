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

const REQUIRED_MESSAGE: &str = "`tool_choice` is `ToolChoice::Required`, which prevents the agent from producing a final response because output tools are excluded: use `ToolChoice::ToolOrOutput` to combine specific function tools with the output, vary `tool_choice` per step from a capability's `model_settings` hook, or send a single request with `Model::request`.";

/// Checks a static `tool_choice` before a run starts: `Required`, and a list that names none of
/// the `output_tools`, would make a final answer impossible.
pub fn check_static_tool_choice(choice: Option<&ToolChoice>, output_tools: &[&str]) -> Result<(), UserError> {
    match choice {
        Some(ToolChoice::Required) => Err(UserError::new(REQUIRED_MESSAGE)),
        Some(ToolChoice::Tools(names)) if !names.iter().any(|n| output_tools.contains(&n.as_str())) => {
            let listed = names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ");
            Err(UserError::new(format!(
                "`tool_choice` is `ToolChoice::Tools([{listed}])`, which names no output tool, so the agent cannot produce a final response because it must call one of the listed tools on every step: name an output tool in the list, use `ToolChoice::ToolOrOutput` to combine specific function tools with the output, vary `tool_choice` per step from a capability's `model_settings` hook, or send a single request with `Model::request`."
            )))
        }
        _ => Ok(()),
    }
}

/// Resolves the tool choice for one request, the way a provider adapter sees it.
///
/// A list of names (`ToolChoice::Tools`, or the function tools of `ToolChoice::ToolOrOutput`)
/// naming only unknown tools is an error; naming some unknown tools is allowed (tools can come
/// and go between steps) and logged as a warning, the unknown names staying in the resolved set.
/// Names of tools withheld from the model (deferred loading, not discovered yet) are dropped,
/// and a choice left with no tool the model is shown is an error. A choice that covers every
/// tool resolves to the plain mode.
pub fn resolve_tool_choice(
    settings: Option<&ModelSettings>,
    params: &ModelRequestParameters,
) -> Result<ResolvedToolChoice, UserError> {
    let choice = settings.and_then(|s| s.tool_choice.as_ref());
    let outputs: BTreeSet<String> = params.output_tools.iter().map(|t| t.name.clone()).collect();
    let direct = params.allow_text_output;
    let has_function_tools = !params.function_tools.is_empty() || params.withheld_tools.any();
    let functions: BTreeSet<String> = params.function_tools.iter().map(|t| t.name.clone()).collect();
    // Every tool the request defines (withheld ones included): a choice equal to it is no
    // restriction.
    let covers_all = |chosen: &BTreeSet<String>| {
        !params.withheld_tools.any()
            && chosen.len() == functions.len() + outputs.len()
            && functions.iter().chain(&outputs).all(|n| chosen.contains(n))
    };
    let known = |n: &str| functions.contains(n) || outputs.contains(n) || params.withheld_tools.contains(n);
    let known_function = |n: &str| functions.contains(n) || params.withheld_tools.contains(n);
    Ok(match choice {
        None | Some(ToolChoice::Auto) => {
            if direct {
                ResolvedToolChoice::Auto
            } else {
                ResolvedToolChoice::Required
            }
        }
        Some(ToolChoice::None) => none_choice(&outputs, direct, has_function_tools),
        Some(ToolChoice::Tools(names)) if names.is_empty() => none_choice(&outputs, direct, has_function_tools),
        Some(ToolChoice::Required) => {
            if !has_function_tools {
                return Err(UserError::new(
                    "`tool_choice` is `ToolChoice::Required`, but no function tools are defined: give the agent tools, or use `ToolChoice::Auto` or `ToolChoice::None`",
                ));
            }
            if params.function_tools.is_empty() {
                return Err(UserError::new(
                    "`tool_choice` is `ToolChoice::Required`, but every function tool is withheld until tool search reveals it: reveal tools first, or choose another `tool_choice`",
                ));
            }
            ResolvedToolChoice::Required
        }
        Some(ToolChoice::Tools(names)) => {
            let chosen: BTreeSet<String> = names.iter().cloned().collect();
            check_invalid(&chosen, known, "Known tools", functions.iter().chain(&outputs), params)?;
            let chosen = without_withheld(chosen, params, &known, false)?;
            if covers_all(&chosen) {
                ResolvedToolChoice::Required
            } else {
                ResolvedToolChoice::Restricted { required: true, tools: chosen }
            }
        }
        Some(ToolChoice::ToolOrOutput(names)) => {
            if names.is_empty() {
                return Ok(if outputs.is_empty() {
                    ResolvedToolChoice::None
                } else {
                    ResolvedToolChoice::Restricted { required: !direct, tools: outputs }
                });
            }
            let chosen: BTreeSet<String> = names.iter().cloned().collect();
            check_invalid(&chosen, known_function, "Known function tools", functions.iter(), params)?;
            let mut allowed = without_withheld(chosen, params, &known, !outputs.is_empty())?;
            allowed.extend(outputs.iter().cloned());
            if covers_all(&allowed) {
                if direct { ResolvedToolChoice::Auto } else { ResolvedToolChoice::Required }
            } else {
                ResolvedToolChoice::Restricted { required: !direct, tools: allowed }
            }
        }
    })
}

/// `ToolChoice::None` (or an empty list): no function tools; the output tools stay callable.
fn none_choice(outputs: &BTreeSet<String>, direct: bool, has_function_tools: bool) -> ResolvedToolChoice {
    if outputs.is_empty() {
        return ResolvedToolChoice::None;
    }
    if direct {
        ResolvedToolChoice::Restricted { required: false, tools: outputs.clone() }
    } else if has_function_tools {
        ResolvedToolChoice::Restricted { required: true, tools: outputs.clone() }
    } else {
        ResolvedToolChoice::Required
    }
}

fn quoted<'a>(names: impl Iterator<Item = &'a String>) -> String {
    let mut names: Vec<&String> = names.collect();
    names.sort();
    names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ")
}

/// Every chosen name unknown: an error; some: a warning (they stay in the choice). The known
/// tools listed are `listed` and the withheld ones.
fn check_invalid<'a>(
    chosen: &BTreeSet<String>,
    known: impl Fn(&str) -> bool,
    label: &str,
    listed: impl Iterator<Item = &'a String>,
    params: &ModelRequestParameters,
) -> Result<(), UserError> {
    let invalid: Vec<&String> = chosen.iter().filter(|n| !known(n)).collect();
    if invalid.is_empty() {
        return Ok(());
    }
    let mut listed: Vec<String> = listed.cloned().collect();
    listed.extend(params.withheld_tools.names());
    let listed = quoted(listed.iter());
    let listed = if listed.is_empty() { "none".to_string() } else { listed };
    if invalid.len() == chosen.len() {
        return Err(UserError::new(format!(
            "Invalid tool names in `tool_choice`: {}. {label}: {listed}",
            quoted(invalid.into_iter())
        )));
    }
    tracing::warn!(
        "Some tools in `tool_choice` are not currently available and will be ignored: {}. {label}: {listed}",
        quoted(invalid.into_iter())
    );
    Ok(())
}

/// The chosen names without the withheld ones; at least one known tool must be left (unless the
/// output tools remain).
fn without_withheld(
    chosen: BTreeSet<String>,
    params: &ModelRequestParameters,
    known: &impl Fn(&str) -> bool,
    output_fallback: bool,
) -> Result<BTreeSet<String>, UserError> {
    let listed = quoted(chosen.iter());
    let kept: BTreeSet<String> = chosen.into_iter().filter(|n| !params.withheld_tools.contains(n)).collect();
    if !output_fallback && !kept.iter().any(|n| known(n)) {
        return Err(UserError::new(format!(
            "No tool in `tool_choice` is currently available: {listed}. Tools withheld by deferred loading must be revealed by tool search before they can be forced"
        )));
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::WithheldTools;
    use crate::tool::ToolDefinition;
    use std::sync::Arc;

    fn params(functions: &[&str], output: bool, text: bool, withheld: &[&'static str]) -> ModelRequestParameters {
        let def = |n: &str| ToolDefinition::new(n, serde_json::json!({"type": "object"}));
        let withheld: Vec<&'static str> = withheld.to_vec();
        ModelRequestParameters {
            function_tools: functions.iter().map(|n| Arc::new(def(n))).collect(),
            output_tools: if output { vec![def("final_result")] } else { Vec::new() },
            allow_text_output: text,
            withheld_tools: if withheld.is_empty() {
                WithheldTools::default()
            } else {
                let listed = withheld.clone();
                WithheldTools::new(true, move |n| withheld.contains(&n))
                    .with_names(move || listed.iter().map(|n| n.to_string()).collect())
            },
            ..Default::default()
        }
    }

    fn resolve(choice: ToolChoice, p: &ModelRequestParameters) -> Result<Value, String> {
        let settings = ModelSettings { tool_choice: Some(choice), ..Default::default() };
        resolve_tool_choice(Some(&settings), p).map(|r| r.to_json()).map_err(|e| e.message)
    }

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn lists_with_some_unknown_names_keep_them_and_all_unknown_is_an_error() {
        let p = params(&["add", "echo"], true, false, &[]);
        assert_eq!(
            resolve(ToolChoice::Tools(names(&["add", "final_result", "nope"])), &p).unwrap(),
            serde_json::json!({"mode": "required", "tools": ["add", "final_result", "nope"]})
        );
        let err = resolve(ToolChoice::Tools(names(&["nope", "zap"])), &p).unwrap_err();
        assert_eq!(
            err,
            "Invalid tool names in `tool_choice`: 'nope', 'zap'. Known tools: 'add', 'echo', 'final_result'"
        );
        let err = resolve(ToolChoice::ToolOrOutput(names(&["nope"])), &params(&[], true, false, &[])).unwrap_err();
        assert_eq!(err, "Invalid tool names in `tool_choice`: 'nope'. Known function tools: none");
    }

    #[test]
    fn a_choice_covering_every_tool_is_the_plain_mode() {
        let p = params(&["add", "echo"], true, false, &[]);
        assert_eq!(resolve(ToolChoice::Tools(names(&["add", "echo", "final_result"])), &p).unwrap(), "required");
        assert_eq!(resolve(ToolChoice::ToolOrOutput(names(&["add", "echo"])), &p).unwrap(), "required");
        let text = params(&["add"], false, true, &[]);
        assert_eq!(resolve(ToolChoice::ToolOrOutput(names(&["add"])), &text).unwrap(), "auto");
        // A withheld tool is defined too: the choice does not cover it.
        let hidden = params(&["add"], false, true, &["secret"]);
        assert_eq!(
            resolve(ToolChoice::ToolOrOutput(names(&["add"])), &hidden).unwrap(),
            serde_json::json!({"mode": "auto", "tools": ["add"]})
        );
    }

    #[test]
    fn withheld_names_are_dropped_and_none_left_is_an_error() {
        let p = params(&["add"], false, true, &["secret"]);
        assert_eq!(
            resolve(ToolChoice::Tools(names(&["add", "secret"])), &p).unwrap(),
            serde_json::json!({"mode": "required", "tools": ["add"]})
        );
        let err = resolve(ToolChoice::Tools(names(&["secret"])), &p).unwrap_err();
        assert!(err.starts_with("No tool in `tool_choice` is currently available: 'secret'"), "{err}");
        let only_hidden = params(&[], false, true, &["secret"]);
        assert!(resolve(ToolChoice::Required, &only_hidden).unwrap_err().contains("withheld"));
        assert!(
            resolve(ToolChoice::Required, &params(&[], false, true, &[])).unwrap_err().contains("no function tools")
        );
    }

    #[test]
    fn the_known_tools_listed_include_the_withheld_ones() {
        let p = params(&["search_tools", "add"], false, true, &["secret", "refund"]);
        let err = resolve(ToolChoice::ToolOrOutput(names(&["nope"])), &p).unwrap_err();
        assert_eq!(
            err,
            "Invalid tool names in `tool_choice`: 'nope'. Known function tools: 'add', 'refund', 'search_tools', 'secret'"
        );
        let err = resolve(ToolChoice::Tools(names(&["nope"])), &p).unwrap_err();
        assert!(err.ends_with("Known tools: 'add', 'refund', 'search_tools', 'secret'"), "{err}");
    }

    #[test]
    fn none_keeps_the_output_tools() {
        assert_eq!(resolve(ToolChoice::None, &params(&["add"], false, true, &[])).unwrap(), "none");
        assert_eq!(
            resolve(ToolChoice::None, &params(&["add"], true, false, &[])).unwrap(),
            serde_json::json!({"mode": "required", "tools": ["final_result"]})
        );
        assert_eq!(resolve(ToolChoice::Tools(Vec::new()), &params(&[], true, false, &[])).unwrap(), "required");
    }
}
