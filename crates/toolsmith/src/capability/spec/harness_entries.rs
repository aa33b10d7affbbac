//! The names of the capabilities that behave as pydantic-ai-harness's do, with its options.

use std::collections::HashMap;

use super::CapabilityRegistry;
use crate::capability::{BoxedCapability, ToolOutputLimits};

/// `registry` with the harness capabilities' names.
pub(super) fn register<D: Clone + Send + Sync + 'static>(registry: CapabilityRegistry<D>) -> CapabilityRegistry<D> {
    registry.register("ToolOutputLimits", |args| {
        ToolOutputLimits::<D>::from_spec_with(args.value(), &HashMap::new())
            .map(BoxedCapability::new)
            .map_err(|e| args.error(e))
    })
}
