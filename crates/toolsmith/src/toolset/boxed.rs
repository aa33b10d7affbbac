//! [`BoxedToolset`]: a toolset of any type, behind one type.

use std::sync::Arc;

use super::{DynToolset, Toolset, ToolsetTool};
use crate::context::RunContext;
use crate::error::UserError;

/// A toolset of any type, for code that chooses its wrappers at run time (each wrapper is its
/// own type): `BoxedToolset::new(ts.prefixed("x"))`. Cheap to clone.
///
/// ```
/// use toolsmith::prelude::*;
/// use toolsmith::toolset::BoxedToolset;
///
/// /// Echo the message back.
/// #[tool]
/// fn echo(message: String) -> String { message }
///
/// let prefix = Some("local");
/// let base = FunctionToolset::<()>::new().with_tool(echo);
/// let ts = match prefix {
///     Some(p) => BoxedToolset::new(base.prefixed(p)),
///     None => BoxedToolset::new(base),
/// };
/// # let _ = ts;
/// ```
pub struct BoxedToolset<D>(pub(crate) Arc<dyn DynToolset<D>>);

impl<D> Clone for BoxedToolset<D> {
    fn clone(&self) -> Self {
        BoxedToolset(self.0.clone())
    }
}

impl<D: 'static> BoxedToolset<D> {
    /// Boxes a toolset.
    pub fn new(toolset: impl Toolset<D>) -> Self {
        BoxedToolset(Arc::new(toolset))
    }
}

impl<D: Clone + Send + Sync + 'static> Toolset<D> for BoxedToolset<D> {
    fn label(&self) -> String {
        self.0.label()
    }

    async fn get_tools(&self, ctx: &RunContext<D>) -> Result<Vec<ToolsetTool<D>>, UserError> {
        self.0.get_tools_boxed(ctx).await
    }

    async fn get_tools_shared(&self, ctx: &RunContext<D>) -> Result<Arc<[ToolsetTool<D>]>, UserError> {
        self.0.get_tools_shared_boxed(ctx).await
    }

    fn check(&self) -> Result<(), UserError> {
        self.0.check()
    }

    async fn enter(&self) -> Result<(), UserError> {
        self.0.enter_boxed().await
    }

    async fn exit(&self) {
        self.0.exit_boxed().await
    }
}
