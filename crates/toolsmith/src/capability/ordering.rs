//! [`CapabilityOrdering`]: where a capability goes in the chain, whatever order it was added in.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::DynCapability;
use crate::error::UserError;

/// A fixed tier of the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CapabilityPosition {
    /// Before (outside) every capability that is not outermost.
    Outermost,
    /// After (inside) every capability that is not innermost.
    Innermost,
}

/// Ordering constraints of a capability, returned by
/// [`Capability::ordering`](super::Capability::ordering).
///
/// Capabilities follow middleware semantics: the first one is the outermost layer. The agent
/// builder sorts them topologically so that every constraint holds, and keeps the order they
/// were added in wherever the constraints leave a choice:
///
/// - a position: [`outermost`](CapabilityOrdering::outermost) capabilities come before all the
///   others, [`innermost`](CapabilityOrdering::innermost) ones after all the others (several
///   may share a tier; the order they were added in breaks ties);
/// - [`wraps`](CapabilityOrdering::wraps): this capability is outside the named ones;
/// - [`wrapped_by`](CapabilityOrdering::wrapped_by): this capability is inside the named ones;
/// - [`requires`](CapabilityOrdering::requires): the named capabilities must be present (no
///   order implied).
///
/// Names are [`Capability::name`](super::Capability::name)s; a name matches every capability
/// that has it, and a name in `wraps` or `wrapped_by` that matches none is ignored. Constraints
/// that contradict each other (a cycle) and missing requirements are a
/// [`UserError`] from [`AgentBuilder::build`](crate::AgentBuilder::build) that names the
/// capabilities involved.
///
/// ```
/// use toolsmith::capability::{Capability, CapabilityOrdering};
/// use toolsmith::prelude::*;
///
/// /// Logs every model request; must see what `Redact` changed, so it sits inside it.
/// struct Audit;
/// /// Removes secrets from the messages sent.
/// struct Redact;
///
/// impl<D: Clone + Send + Sync + 'static> Capability<D> for Audit {
///     fn ordering(&self) -> Option<CapabilityOrdering> {
///         Some(CapabilityOrdering::new().wrapped_by(["Redact"]).requires(["Redact"]))
///     }
/// }
/// impl<D: Clone + Send + Sync + 'static> Capability<D> for Redact {}
///
/// # fn main() -> Result<(), UserError> {
/// // Added in the "wrong" order: the builder puts Redact outside Audit.
/// let agent = Agent::builder(TestModel::default()).capability(Audit).capability(Redact).build()?;
/// # let _ = agent;
/// // Without Redact, Audit's requirement fails.
/// let err = Agent::builder(TestModel::default()).capability(Audit).build().unwrap_err();
/// assert!(err.message.contains("'Audit' requires 'Redact'"));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CapabilityOrdering {
    /// The tier, or `None` for the order the capabilities were added in.
    pub position: Option<CapabilityPosition>,
    /// Names of the capabilities this one wraps (is outside of).
    pub wraps: Vec<String>,
    /// Names of the capabilities this one is wrapped by (is inside of).
    pub wrapped_by: Vec<String>,
    /// Names of the capabilities that must be present.
    pub requires: Vec<String>,
}

fn names<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> impl Iterator<Item = String> {
    names.into_iter().map(Into::into)
}

impl CapabilityOrdering {
    /// No constraint yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// In the outermost tier.
    pub fn outermost() -> Self {
        CapabilityOrdering { position: Some(CapabilityPosition::Outermost), ..Self::default() }
    }

    /// In the innermost tier.
    pub fn innermost() -> Self {
        CapabilityOrdering { position: Some(CapabilityPosition::Innermost), ..Self::default() }
    }

    /// Sets the tier.
    pub fn position(mut self, position: CapabilityPosition) -> Self {
        self.position = Some(position);
        self
    }

    /// Outside (before) the capabilities with these names.
    pub fn wraps<I: IntoIterator<Item = S>, S: Into<String>>(mut self, capabilities: I) -> Self {
        self.wraps.extend(names(capabilities));
        self
    }

    /// Inside (after) the capabilities with these names.
    pub fn wrapped_by<I: IntoIterator<Item = S>, S: Into<String>>(mut self, capabilities: I) -> Self {
        self.wrapped_by.extend(names(capabilities));
        self
    }

    /// The capabilities with these names must be present.
    pub fn requires<I: IntoIterator<Item = S>, S: Into<String>>(mut self, capabilities: I) -> Self {
        self.requires.extend(names(capabilities));
        self
    }
}

/// Sorts capabilities so that every ordering constraint holds, keeping the given order as the
/// tie-break; a list without constraints comes back as it was.
pub(crate) fn sort<D>(caps: Vec<Arc<dyn DynCapability<D>>>) -> Result<Vec<Arc<dyn DynCapability<D>>>, UserError> {
    let orderings: Vec<Option<CapabilityOrdering>> = caps.iter().map(|c| c.ordering()).collect();
    if orderings.iter().all(Option::is_none) {
        return Ok(caps);
    }
    let names: Vec<String> = caps.iter().map(|c| c.name()).collect();
    let order = sorted_indices(&names, &orderings)?;
    let mut slots: Vec<Option<Arc<dyn DynCapability<D>>>> = caps.into_iter().map(Some).collect();
    Ok(order.into_iter().filter_map(|i| slots[i].take()).collect())
}

/// The order of the capabilities `names[i]` with constraints `orderings[i]`: Kahn's algorithm,
/// always taking the earliest-added capability that is free to go next.
pub(crate) fn sorted_indices(
    names: &[String],
    orderings: &[Option<CapabilityOrdering>],
) -> Result<Vec<usize>, UserError> {
    let n = names.len();
    let present: BTreeSet<&str> = names.iter().map(String::as_str).collect();
    for (i, o) in orderings.iter().enumerate() {
        let Some(o) = o else { continue };
        let missing: Vec<&str> = o.requires.iter().map(String::as_str).filter(|r| !present.contains(r)).collect();
        if !missing.is_empty() {
            return Err(UserError::new(format!(
                "capability '{}' requires {}, which {} not among the agent's capabilities: add {} with `.capability(...)` (or remove '{}')",
                names[i],
                quoted(&missing),
                if missing.len() == 1 { "is" } else { "are" },
                if missing.len() == 1 { "it" } else { "them" },
                names[i],
            )));
        }
    }
    // edges[a] holds b when a must come before (outside) b.
    let mut edges: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    let position = |i: usize| orderings[i].as_ref().and_then(|o| o.position);
    let matching = |name: &str| (0..n).filter(|&j| names[j] == name).collect::<Vec<usize>>();
    for (i, o) in orderings.iter().enumerate() {
        let Some(o) = o else { continue };
        for target in &o.wraps {
            for j in matching(target).into_iter().filter(|&j| j != i) {
                edges[i].insert(j);
            }
        }
        for outer in &o.wrapped_by {
            for j in matching(outer).into_iter().filter(|&j| j != i) {
                edges[j].insert(i);
            }
        }
    }
    // Tiers: every outermost capability before every other one, every innermost one after.
    for (i, targets) in edges.iter_mut().enumerate() {
        for j in (0..n).filter(|&j| j != i) {
            let outer_tier = position(i) == Some(CapabilityPosition::Outermost)
                && position(j) != Some(CapabilityPosition::Outermost);
            let inner_tier = position(j) == Some(CapabilityPosition::Innermost)
                && position(i) != Some(CapabilityPosition::Innermost);
            if outer_tier || inner_tier {
                targets.insert(j);
            }
        }
    }
    let mut indegree = vec![0usize; n];
    for targets in &edges {
        for &j in targets {
            indegree[j] += 1;
        }
    }
    let mut ready: BTreeSet<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop_first() {
        order.push(i);
        for &j in &edges[i] {
            indegree[j] -= 1;
            if indegree[j] == 0 {
                ready.insert(j);
            }
        }
    }
    if order.len() < n {
        let left: Vec<usize> = (0..n).filter(|i| indegree[*i] > 0).collect();
        return Err(UserError::new(cycle_message(names, orderings, &edges, &left)));
    }
    Ok(order)
}

fn quoted(names: &[&str]) -> String {
    names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ")
}

/// Describes one cycle among the capabilities left unsorted.
fn cycle_message(
    names: &[String],
    orderings: &[Option<CapabilityOrdering>],
    edges: &[BTreeSet<usize>],
    left: &[usize],
) -> String {
    let left_set: BTreeSet<usize> = left.iter().copied().collect();
    // Every node left has an unsorted predecessor, so walking predecessors must revisit a node.
    let predecessor = |j: usize| left.iter().copied().find(|&i| edges[i].contains(&j));
    let mut path = Vec::new();
    let mut seen = BTreeSet::new();
    let mut at = left[0];
    while seen.insert(at) {
        path.push(at);
        match predecessor(at) {
            Some(p) if left_set.contains(&p) => at = p,
            _ => break,
        }
    }
    let start = path.iter().position(|&p| p == at).unwrap_or(0);
    let mut cycle: Vec<usize> = path[start..].to_vec();
    cycle.reverse();
    cycle.push(cycle[0]);
    let chain = cycle.iter().map(|&i| format!("'{}'", names[i])).collect::<Vec<_>>().join(" -> ");
    let involved: BTreeSet<&str> = left.iter().map(|&i| names[i].as_str()).collect();
    let describe = |i: usize| -> Option<String> {
        let o = orderings[i].as_ref()?;
        let mut parts = Vec::new();
        if let Some(p) = o.position {
            parts.push(format!("{p:?}").to_lowercase());
        }
        if !o.wraps.is_empty() {
            parts.push(format!("wraps {}", o.wraps.join(", ")));
        }
        if !o.wrapped_by.is_empty() {
            parts.push(format!("wrapped_by {}", o.wrapped_by.join(", ")));
        }
        (!parts.is_empty()).then(|| format!("'{}': {}", names[i], parts.join("; ")))
    };
    let details: Vec<String> = left.iter().filter_map(|&i| describe(i)).collect();
    format!(
        "the ordering constraints of capabilities {} form a cycle ({chain}, where '->' means 'must be outside of'): {}. Remove or change one of these constraints",
        quoted(&involved.into_iter().collect::<Vec<_>>()),
        details.join("; "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(spec: &[(&str, Option<CapabilityOrdering>)]) -> Result<Vec<String>, String> {
        let names: Vec<String> = spec.iter().map(|(n, _)| n.to_string()).collect();
        let orderings: Vec<Option<CapabilityOrdering>> = spec.iter().map(|(_, o)| o.clone()).collect();
        sorted_indices(&names, &orderings)
            .map(|order| order.into_iter().map(|i| names[i].clone()).collect())
            .map_err(|e| e.message)
    }

    #[test]
    fn no_constraints_keep_the_order() {
        assert_eq!(run(&[("A", None), ("B", None), ("C", None)]).unwrap(), ["A", "B", "C"]);
    }

    #[test]
    fn tiers_and_relative_constraints() {
        let order = run(&[
            ("A", None),
            ("Inner", Some(CapabilityOrdering::innermost())),
            ("B", Some(CapabilityOrdering::new().wraps(["A"]))),
            ("Outer", Some(CapabilityOrdering::outermost())),
            ("C", Some(CapabilityOrdering::new().wrapped_by(["B"]))),
        ])
        .unwrap();
        assert_eq!(order, ["Outer", "B", "A", "C", "Inner"]);
    }

    #[test]
    fn inside_an_innermost_capability_is_a_cycle() {
        let err = run(&[
            ("Inner", Some(CapabilityOrdering::innermost())),
            ("C", Some(CapabilityOrdering::new().wrapped_by(["Inner"]))),
        ])
        .unwrap_err();
        assert!(err.contains("capabilities 'C', 'Inner' form a cycle"), "{err}");
    }

    #[test]
    fn same_name_matches_every_instance() {
        let order =
            run(&[("Log", None), ("Log", None), ("Guard", Some(CapabilityOrdering::new().wraps(["Log"])))]).unwrap();
        assert_eq!(order, ["Guard", "Log", "Log"]);
    }

    #[test]
    fn tie_break_is_the_order_added() {
        let order =
            run(&[("A", None), ("B", None), ("C", Some(CapabilityOrdering::new().wraps(["B"]))), ("D", None)]).unwrap();
        assert_eq!(order, ["A", "C", "B", "D"]);
    }

    #[test]
    fn cycles_name_the_capabilities() {
        let err = run(&[
            ("Free", None),
            ("A", Some(CapabilityOrdering::new().wraps(["B"]))),
            ("B", Some(CapabilityOrdering::new().wraps(["A"]))),
        ])
        .unwrap_err();
        assert!(err.contains("capabilities 'A', 'B' form a cycle"), "{err}");
        assert!(err.contains("'A' -> 'B' -> 'A'") || err.contains("'B' -> 'A' -> 'B'"), "{err}");
        assert!(!err.contains("'Free'"), "{err}");
    }

    #[test]
    fn tier_conflicts_are_cycles() {
        let err = run(&[
            ("Out", Some(CapabilityOrdering::outermost())),
            ("X", Some(CapabilityOrdering::new().wraps(["Out"]))),
        ])
        .unwrap_err();
        assert!(err.contains("form a cycle"), "{err}");
        assert!(err.contains("'Out': outermost"), "{err}");
    }

    #[test]
    fn missing_requirements() {
        let err = run(&[("A", Some(CapabilityOrdering::new().requires(["B", "C"]))), ("C", None)]).unwrap_err();
        assert_eq!(
            err,
            "capability 'A' requires 'B', which is not among the agent's capabilities: add it with `.capability(...)` (or remove 'A')"
        );
    }

    #[test]
    fn unknown_relative_names_are_ignored() {
        assert_eq!(run(&[("A", Some(CapabilityOrdering::new().wraps(["Nobody"]))), ("B", None)]).unwrap(), ["A", "B"]);
    }
}
