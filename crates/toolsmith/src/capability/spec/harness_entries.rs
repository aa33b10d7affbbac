//! The names of the capabilities that behave as pydantic-ai-harness's do, with its options.

use std::collections::HashMap;

use serde_json::Value;

use super::CapabilityRegistry;
use serde::Deserialize;

use crate::capability::{
    ApprovalReviewer, BackgroundTools, BoxedCapability, CompactRetryHistory, RepairToolArguments, ToolCallJudge,
    ToolOutputLimits,
};
use crate::model::AnyModel;

/// A spec's model name, as `infer_model` reads it.
fn infer(name: &str) -> Result<AnyModel, String> {
    crate::providers::infer_model(name).map_err(|e| e.to_string())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CompactArgs {
    #[serde(default)]
    keep_last: Option<usize>,
    #[serde(default)]
    tools: Option<Vec<String>>,
}

/// `registry` with the harness capabilities' names.
pub(super) fn register<D: Clone + Send + Sync + 'static>(registry: CapabilityRegistry<D>) -> CapabilityRegistry<D> {
    registry
        .register("BackgroundTools", |args| {
            BackgroundTools::<D>::from_spec(args.value()).map(BoxedCapability::new).map_err(|e| args.error(e))
        })
        .register("CompactRetryHistory", |args| {
            let a: CompactArgs = args.parse_with_main("keep_last")?;
            if a.keep_last == Some(0) {
                return Err(args.error("keep_last must be at least 1"));
            }
            let mut c = CompactRetryHistory::new().keep_last(a.keep_last.unwrap_or(1));
            if let Some(tools) = a.tools {
                c = c.tools(tools);
            }
            Ok(BoxedCapability::new(c))
        })
        .register("ToolCallJudge", |args| {
            ToolCallJudge::<D>::from_spec_with(args.value(), &infer)
                .map(BoxedCapability::new)
                .map_err(|e| args.error(e))
        })
        .register("ApprovalReviewer", |args| {
            ApprovalReviewer::from_spec_with(args.value(), &infer).map(BoxedCapability::new).map_err(|e| args.error(e))
        })
        .register("RepairToolArguments", |args| match args.value() {
            Value::Null => Ok(BoxedCapability::new(RepairToolArguments::new())),
            Value::Object(map) if map.is_empty() => Ok(BoxedCapability::new(RepairToolArguments::new())),
            _ => Err(args.error("RepairToolArguments has no options")),
        })
        .register("ToolOutputLimits", |args| {
            ToolOutputLimits::<D>::from_spec_with(args.value(), &HashMap::new())
                .map(BoxedCapability::new)
                .map_err(|e| args.error(e))
        })
}
