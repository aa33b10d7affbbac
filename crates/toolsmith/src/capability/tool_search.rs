//! Tool search and bridge mode as capabilities: [`ToolSearch`] and [`BridgeConfig`] added with
//! [`AgentBuilder::capability`](crate::AgentBuilder::capability) (or in a spec) configure the
//! agent's tool search as [`AgentBuilder::tool_search`](crate::AgentBuilder::tool_search) and
//! [`AgentBuilder::tool_search_bridge`](crate::AgentBuilder::tool_search_bridge) do. They hook
//! nothing: the agent reads them when it is built (one of each at most).

use super::{Capability, HookStage};
use crate::search::ToolSearch;
use crate::search::bridge::BridgeConfig;

impl<D: Clone + Send + Sync + 'static> Capability<D> for ToolSearch {
    fn name(&self) -> String {
        "ToolSearch".into()
    }
    fn hooks_stage(&self, _: HookStage) -> bool {
        false
    }
    fn has_prepare_tools(&self) -> bool {
        false
    }
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for BridgeConfig {
    fn name(&self) -> String {
        "ToolSearchBridge".into()
    }
    fn hooks_stage(&self, _: HookStage) -> bool {
        false
    }
    fn has_prepare_tools(&self) -> bool {
        false
    }
}
