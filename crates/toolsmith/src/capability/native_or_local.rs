//! [`NativeOrLocalTool`]: a provider's native tool where the run's model runs it, a local tool
//! where it does not.

use std::sync::Arc;

use super::{BoxedCapability, Capability, HookStage};
use crate::context::RunContext;
use crate::error::UserError;
use crate::native::NativeTool;
use crate::tool::Tool;
use crate::toolset::{BoxedToolset, FunctionToolset};

/// Makes the local tool of one run (a fresh one per run, so a per-run limit starts at zero).
type LocalFactory<D> = Arc<dyn Fn() -> BoxedToolset<D> + Send + Sync>;

/// The local side of a [`NativeOrLocalTool`]: a toolset, a single tool, or a factory called once
/// per run.
pub struct LocalTool<D>(LocalFactory<D>);

impl<D> Clone for LocalTool<D> {
    fn clone(&self) -> Self {
        LocalTool(self.0.clone())
    }
}

impl<D: Clone + Send + Sync + 'static> LocalTool<D> {
    /// A toolset, shared by every run.
    pub fn toolset(toolset: impl crate::toolset::Toolset<D> + 'static) -> Self {
        let toolset = BoxedToolset::new(toolset);
        LocalTool(Arc::new(move || toolset.clone()))
    }

    /// A toolset made anew for each run (for tools that keep per-run state, such as a use count).
    pub fn per_run(make: impl Fn() -> BoxedToolset<D> + Send + Sync + 'static) -> Self {
        LocalTool(Arc::new(make))
    }

    fn make(&self) -> BoxedToolset<D> {
        (self.0)()
    }
}

impl<D: Clone + Send + Sync + 'static> From<Tool<D>> for LocalTool<D> {
    fn from(tool: Tool<D>) -> Self {
        LocalTool::toolset(FunctionToolset::new().with_tool(tool))
    }
}

impl<D: Clone + Send + Sync + 'static> From<FunctionToolset<D>> for LocalTool<D> {
    fn from(toolset: FunctionToolset<D>) -> Self {
        LocalTool::toolset(toolset)
    }
}

impl<D: Clone + Send + Sync + 'static> From<BoxedToolset<D>> for LocalTool<D> {
    fn from(toolset: BoxedToolset<D>) -> Self {
        LocalTool(Arc::new(move || toolset.clone()))
    }
}

/// Which side a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Native,
    Local,
}

/// A provider's native tool paired with a local fallback (Pydantic AI's `NativeOrLocalTool`).
///
/// At the start of each run the capability looks at the run's model: when its provider runs
/// the native tool with every narrowing setting the tool has
/// ([`NativeTool::runs_on`]), requests carry the native tool and the local tool is left out;
/// otherwise the local tool is offered and the native tool is not sent. With a
/// [`FallbackModel`](crate::model::FallbackModel), the native tool is used only when every model
/// of it runs it. Without a local tool, a model that cannot run the native tool is refused when
/// the agent is built; without a native tool, the local tool is always used.
///
/// [`WebSearch`](super::WebSearch), [`WebFetch`](super::WebFetch),
/// [`ImageGeneration`](super::ImageGeneration) and [`Mcp`](super::Mcp) build one with their
/// defaults.
///
/// ```
/// use toolsmith::capability::NativeOrLocalTool;
/// use toolsmith::native::{self, NativeTool};
/// use toolsmith::prelude::*;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Query {
///     query: String,
/// }
///
/// let search = Tool::<()>::new("search", |_ctx, q: Query| async move {
///     Ok::<_, ToolError>(format!("results for {}", q.query))
/// });
/// let native = NativeTool::WebSearch(native::WebSearch::new());
/// let cap = NativeOrLocalTool::new(Some(native), Some(search.into()))?;
/// // TestModel runs no native tool: the local `search` tool is offered instead.
/// let agent = Agent::builder(TestModel::default()).capability(cap).build()?;
/// let result = agent.run("find rust").run_sync()?;
/// assert!(result.output().contains("results for"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct NativeOrLocalTool<D> {
    name: String,
    native: Option<NativeTool>,
    local: Option<LocalTool<D>>,
    /// Set on the instance of one run.
    side: Option<Side>,
}

impl<D> Clone for NativeOrLocalTool<D> {
    fn clone(&self) -> Self {
        NativeOrLocalTool {
            name: self.name.clone(),
            native: self.native.clone(),
            local: self.local.clone(),
            side: self.side,
        }
    }
}

impl<D> std::fmt::Debug for NativeOrLocalTool<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeOrLocalTool")
            .field("name", &self.name)
            .field("native", &self.native)
            .field("local", &self.local.is_some())
            .finish()
    }
}

impl<D: Clone + Send + Sync + 'static> NativeOrLocalTool<D> {
    /// The native tool (`None`: always the local tool) with its local fallback (`None`: the
    /// native tool only). Both `None` is a [`UserError`]: the capability would do nothing.
    pub fn new(native: Option<NativeTool>, local: Option<LocalTool<D>>) -> Result<Self, UserError> {
        Self::named("NativeOrLocalTool", native, local)
    }

    pub(crate) fn named(
        name: &str,
        native: Option<NativeTool>,
        local: Option<LocalTool<D>>,
    ) -> Result<Self, UserError> {
        if native.is_none() && local.is_none() {
            return Err(UserError::new(format!(
                "{name}: with the native tool off (native(false)) it needs a local tool (local(...)), else it adds nothing"
            )));
        }
        Ok(NativeOrLocalTool { name: name.to_string(), native, local, side: None })
    }

    /// The native tool alone.
    pub(crate) fn native_only(name: &str, native: NativeTool) -> Self {
        NativeOrLocalTool { name: name.to_string(), native: Some(native), local: None, side: None }
    }

    /// The native tool, when there is one.
    pub fn native_tool(&self) -> Option<&NativeTool> {
        self.native.as_ref()
    }

    /// Whether there is a local tool.
    pub fn has_local(&self) -> bool {
        self.local.is_some()
    }

    fn side_for(&self, model: &crate::context::ModelInfo) -> Side {
        match (&self.native, &self.local) {
            (Some(n), Some(_)) if n.runs_on(model) => Side::Native,
            (_, Some(_)) => Side::Local,
            // Native only: a model that cannot run it was refused at build.
            (_, None) => Side::Native,
        }
    }
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for NativeOrLocalTool<D> {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn for_run(&self, ctx: &RunContext<D>) -> Option<BoxedCapability<D>> {
        let side = self.side_for(&ctx.model);
        Some(BoxedCapability::new(NativeOrLocalTool { side: Some(side), ..self.clone() }))
    }

    fn toolset(&self) -> Option<BoxedToolset<D>> {
        match self.side {
            Some(Side::Native) => None,
            // Before a run (when the agent is built) the local tool is listed, so that its
            // names are checked against the agent's other tools.
            Some(Side::Local) | None => self.local.as_ref().map(LocalTool::make),
        }
    }

    fn native_tools(&self) -> Vec<NativeTool> {
        let native = self.native.iter().cloned().collect();
        match self.side {
            Some(Side::Native) => native,
            Some(Side::Local) => Vec::new(),
            // When the agent is built: a native tool without a fallback must run on the model.
            None if self.local.is_none() => native,
            None => Vec::new(),
        }
    }

    fn hooks_stage(&self, _: HookStage) -> bool {
        false
    }

    fn has_prepare_tools(&self) -> bool {
        false
    }
}
