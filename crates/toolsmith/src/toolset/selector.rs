//! [`ToolSelector`]: which tools of a toolset a wrapper applies to.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::context::RunContext;
use crate::tool::ToolDefinition;

/// A predicate over a tool's definition, for [`ToolSelector::Predicate`].
pub type ToolPredicate<D> = Arc<dyn Fn(&RunContext<D>, &ToolDefinition) -> bool + Send + Sync>;

/// Which tools a wrapper ([`ApprovalRequiredToolset`](super::ApprovalRequiredToolset),
/// [`DeferredLoadingToolset`](super::DeferredLoadingToolset),
/// [`SetMetadataToolset`](super::SetMetadataToolset)) or a capability
/// ([`SetToolMetadata`](crate::capability::SetToolMetadata),
/// [`IncludeToolReturnSchemas`](crate::capability::IncludeToolReturnSchemas)) applies to: every
/// tool, the tools with the listed names, the tools whose metadata includes given pairs, or the
/// tools a predicate accepts.
///
/// Names are matched against the definitions the wrapper receives, that is before any wrapper
/// applied on top of it (a name listed for `.approval_required_for([...])` under a `.prefixed(...)`
/// is unprefixed).
///
/// ```
/// use toolsmith::prelude::*;
/// use toolsmith::toolset::ToolSelector;
///
/// let ctx = RunContext::detached();
/// let def = ToolDefinition::new("delete_file", serde_json::json!({"type": "object"}));
/// assert!(ToolSelector::<()>::All.matches(&ctx, &def));
/// assert!(ToolSelector::<()>::names(["delete_file"]).matches(&ctx, &def));
/// assert!(!ToolSelector::<()>::names(["read_file"]).matches(&ctx, &def));
/// assert!(ToolSelector::<()>::predicate(|_, d| d.name.starts_with("delete")).matches(&ctx, &def));
///
/// let tagged = def.with_metadata(serde_json::json!({"team": "core", "limits": {"rate": 5, "burst": 9}}));
/// assert!(ToolSelector::<()>::metadata([("limits", serde_json::json!({"rate": 5}))]).matches(&ctx, &tagged));
/// assert!(!ToolSelector::<()>::metadata([("team", "web")]).matches(&ctx, &tagged));
/// ```
#[derive(Default)]
#[non_exhaustive]
pub enum ToolSelector<D> {
    /// Every tool.
    #[default]
    All,
    /// The tools with these names.
    Names(HashSet<String>),
    /// The tools whose metadata includes every pair: an equal value, or for an object, an
    /// object that includes its pairs in turn.
    Metadata(Map<String, Value>),
    /// The tools for which the predicate holds (evaluated before every model request).
    Predicate(ToolPredicate<D>),
}

impl<D> ToolSelector<D> {
    /// The tools with these names.
    pub fn names<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ToolSelector::Names(names.into_iter().map(Into::into).collect())
    }

    /// The tools whose metadata includes these pairs (see [`ToolSelector::Metadata`]).
    pub fn metadata<I, K, V>(pairs: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<Value>,
    {
        ToolSelector::Metadata(pairs.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
    }

    /// The tools for which `f` holds.
    pub fn predicate<F>(f: F) -> Self
    where
        F: Fn(&RunContext<D>, &ToolDefinition) -> bool + Send + Sync + 'static,
    {
        ToolSelector::Predicate(Arc::new(f))
    }

    /// Whether the selection depends only on the tools (not on the run context): names or all.
    pub(crate) fn is_static(&self) -> bool {
        !matches!(self, ToolSelector::Predicate(_))
    }

    /// Whether the selector selects this tool.
    pub fn matches(&self, ctx: &RunContext<D>, def: &ToolDefinition) -> bool {
        match self {
            ToolSelector::All => true,
            ToolSelector::Names(names) => names.contains(&def.name),
            ToolSelector::Metadata(pairs) => {
                let empty = Map::new();
                includes(def.metadata.as_ref().and_then(Value::as_object).unwrap_or(&empty), pairs)
            }
            ToolSelector::Predicate(f) => f(ctx, def),
        }
    }
}

/// Whether `metadata` includes every pair of `wanted` (objects compared key by key, deeply).
fn includes(metadata: &Map<String, Value>, wanted: &Map<String, Value>) -> bool {
    wanted.iter().all(|(key, expected)| match (metadata.get(key), expected) {
        (Some(Value::Object(actual)), Value::Object(expected)) => includes(actual, expected),
        (Some(actual), expected) => actual == expected,
        (None, _) => false,
    })
}

impl<D> Clone for ToolSelector<D> {
    fn clone(&self) -> Self {
        match self {
            ToolSelector::All => ToolSelector::All,
            ToolSelector::Names(n) => ToolSelector::Names(n.clone()),
            ToolSelector::Metadata(m) => ToolSelector::Metadata(m.clone()),
            ToolSelector::Predicate(f) => ToolSelector::Predicate(f.clone()),
        }
    }
}

impl<D> std::fmt::Debug for ToolSelector<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolSelector::All => f.write_str("All"),
            ToolSelector::Names(n) => {
                let mut names: Vec<&String> = n.iter().collect();
                names.sort();
                f.debug_tuple("Names").field(&names).finish()
            }
            ToolSelector::Metadata(m) => f.debug_tuple("Metadata").field(m).finish(),
            ToolSelector::Predicate(_) => f.write_str("Predicate(..)"),
        }
    }
}

impl<D, S: Into<String>, const N: usize> From<[S; N]> for ToolSelector<D> {
    fn from(names: [S; N]) -> Self {
        ToolSelector::names(names)
    }
}

impl<D, S: Into<String>> From<Vec<S>> for ToolSelector<D> {
    fn from(names: Vec<S>) -> Self {
        ToolSelector::names(names)
    }
}
