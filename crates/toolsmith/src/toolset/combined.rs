//! [`CombinedToolset`]: several toolsets offered as one.

use std::collections::HashMap;
use std::sync::Arc;

use crate::context::RunContext;
use crate::error::UserError;
use crate::toolset::{DynToolset, Toolset, ToolsetTool};

/// The error for two tools with the same name, as the agent reports it.
pub(crate) fn name_conflict(later_label: &str, earlier_label: &str, name: &str) -> UserError {
    UserError::new(format!(
        "{later_label} defines a tool whose name conflicts with existing tool from {earlier_label}: '{name}'. Rename the tool or wrap the toolset in a `PrefixedToolset` to avoid name conflicts."
    ))
}

/// Several toolsets offered as one, in order: the tools of the first, then those of the second,
/// and so on. The toolsets are asked for their tools concurrently.
///
/// Two tools with the same name are a [`UserError`] (raised before the model request that would
/// show them): `"{later toolset} defines a tool whose name conflicts with existing tool from
/// {earlier toolset}: '{name}'. …"`, where each toolset is the one that offers the tool (for a
/// prefixed or renamed tool, the [`PrefixedToolset`](super::PrefixedToolset) or
/// [`RenamedToolset`](super::RenamedToolset)). The label is `CombinedToolset(label, label, …)`.
///
/// ```
/// use toolsmith::prelude::*;
/// use toolsmith::toolset::{CombinedToolset, ToolsetExt};
///
/// /// Add two integers.
/// #[tool]
/// fn add(x: i64, y: i64) -> i64 { x + y }
///
/// /// Multiply two integers.
/// #[tool]
/// fn mul(x: i64, y: i64) -> i64 { x * y }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let maths = CombinedToolset::new()
///     .with(FunctionToolset::new().with_tool(add))
///     .with(FunctionToolset::new().with_tool(mul).prefixed("int"));
/// assert_eq!(maths.label(), "CombinedToolset(FunctionToolset, PrefixedToolset(FunctionToolset))");
///
/// let agent = Agent::builder(TestModel::default().seed(1)).toolset(maths).build()?;
/// let result = agent.run("go").run_sync()?;
/// assert_eq!(result.output(), r#"{"add":2,"int_mul":1}"#);
/// # Ok(())
/// # }
/// ```
pub struct CombinedToolset<D> {
    toolsets: Vec<Arc<dyn DynToolset<D>>>,
    derived: super::derived::Derived,
}

impl<D> Default for CombinedToolset<D> {
    fn default() -> Self {
        CombinedToolset { toolsets: Vec::new(), derived: Default::default() }
    }
}

impl<D> Clone for CombinedToolset<D> {
    fn clone(&self) -> Self {
        CombinedToolset { toolsets: self.toolsets.clone(), derived: Default::default() }
    }
}

impl<D> std::fmt::Debug for CombinedToolset<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let labels: Vec<String> = self.toolsets.iter().map(|t| t.label()).collect();
        f.debug_struct("CombinedToolset").field("toolsets", &labels).finish()
    }
}

impl<D> CombinedToolset<D> {
    /// The toolsets, already type-erased.
    pub(crate) fn from_dyn(toolsets: Vec<Arc<dyn DynToolset<D>>>) -> Self {
        CombinedToolset { toolsets, derived: Default::default() }
    }
}

impl<D: Clone + Send + Sync + 'static> CombinedToolset<D> {
    /// No toolsets yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a toolset after the others.
    pub fn add(&mut self, toolset: impl Toolset<D>) {
        self.toolsets.push(Arc::new(toolset));
    }

    /// Adds a toolset after the others, builder style.
    pub fn with(mut self, toolset: impl Toolset<D>) -> Self {
        self.add(toolset);
        self
    }

    /// How many toolsets are combined.
    pub fn len(&self) -> usize {
        self.toolsets.len()
    }

    /// Whether no toolset is combined.
    pub fn is_empty(&self) -> bool {
        self.toolsets.is_empty()
    }
}

impl<D: Clone + Send + Sync + 'static> Toolset<D> for CombinedToolset<D> {
    fn label(&self) -> String {
        let labels: Vec<String> = self.toolsets.iter().map(|t| t.label()).collect();
        format!("CombinedToolset({})", labels.join(", "))
    }

    fn check(&self) -> Result<(), UserError> {
        self.toolsets.iter().try_for_each(|t| t.check())
    }

    async fn enter(&self) -> Result<(), UserError> {
        for t in &self.toolsets {
            t.enter_boxed().await?;
        }
        Ok(())
    }

    async fn exit(&self) {
        for t in self.toolsets.iter().rev() {
            t.exit_boxed().await;
        }
    }

    async fn get_tools(&self, ctx: &RunContext<D>) -> Result<Vec<ToolsetTool<D>>, UserError> {
        let mut lists = match self.toolsets.as_slice() {
            [] => return Ok(Vec::new()),
            [only] => vec![only.get_tools_boxed(ctx).await?],
            many => {
                let results = futures::future::join_all(many.iter().map(|t| t.get_tools_boxed(ctx))).await;
                results.into_iter().collect::<Result<Vec<_>, _>>()?
            }
        };
        check_names(lists.iter().map(Vec::as_slice))?;
        if lists.len() == 1 {
            return Ok(lists.pop().unwrap_or_default());
        }
        Ok(lists.into_iter().flatten().collect())
    }

    /// The combined list (and its name check) is made once per set of the toolsets' shared
    /// lists.
    async fn get_tools_shared(&self, ctx: &RunContext<D>) -> Result<Arc<[ToolsetTool<D>]>, UserError> {
        let lists = match self.toolsets.as_slice() {
            [] => return Ok(Arc::from(Vec::new())),
            [only] => vec![only.get_tools_shared_boxed(ctx).await?],
            many => {
                let results = futures::future::join_all(many.iter().map(|t| t.get_tools_shared_boxed(ctx))).await;
                results.into_iter().collect::<Result<Vec<_>, _>>()?
            }
        };
        self.derived.get(&lists, || {
            check_names(lists.iter().map(|l| &**l))?;
            Ok(lists.iter().flat_map(|l| l.iter().cloned()).collect())
        })
    }
}

/// Two tools with the same name across (or within) the lists are an error.
fn check_names<'a, D: 'a>(lists: impl Iterator<Item = &'a [ToolsetTool<D>]> + Clone) -> Result<(), UserError> {
    let total: usize = lists.clone().map(<[_]>::len).sum();
    let mut seen: HashMap<&str, &ToolsetTool<D>> = HashMap::with_capacity(total);
    for tool in lists.flatten() {
        if let Some(existing) = seen.insert(&tool.def.name, tool) {
            return Err(name_conflict(&tool.toolset_label, &existing.toolset_label, &tool.def.name));
        }
    }
    Ok(())
}
