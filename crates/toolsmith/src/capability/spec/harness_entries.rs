//! The names of the capabilities that behave as pydantic-ai-harness's do, with its options.

use std::collections::HashMap;

use serde_json::Value;

use super::CapabilityRegistry;
use crate::capability::{BoxedCapability, RepairToolArguments, ToolOutputLimits};

/// `registry` with the harness capabilities' names.
pub(super) fn register<D: Clone + Send + Sync + 'static>(registry: CapabilityRegistry<D>) -> CapabilityRegistry<D> {
    registry
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
