//! [`NativeTool`] as a capability: its tool goes with every request.

use super::{Capability, HookStage};
use crate::native::NativeTool;

impl<D: Clone + Send + Sync + 'static> Capability<D> for NativeTool {
    fn name(&self) -> String {
        "NativeTool".into()
    }
    fn native_tools(&self) -> Vec<NativeTool> {
        vec![self.clone()]
    }
    fn hooks_stage(&self, _: HookStage) -> bool {
        false
    }
    fn has_prepare_tools(&self) -> bool {
        false
    }
}
