//! A BM25 index carried from one deferred catalogue to the next.
//!
//! When an agent's deferred tools change between steps (a dynamic toolset, an MCP server whose
//! list changed), the step builds a new [`Catalogue`](super::Catalogue). Rather than index the
//! whole new catalogue again, its BM25 search takes over the index of the catalogue before it
//! and applies the difference: the tools that left are removed, the new or changed ones added,
//! each at the cost of its own terms ([`Bm25Index::insert`], [`Bm25Index::remove`]); the tools
//! that stayed cost a name lookup.
//!
//! The index is shared, under a lock, by the catalogues of one line of descent, and it follows
//! the newest: each catalogue's view records the version it was made for, and a view whose
//! version is no longer the index's (an older catalogue still searched by a step in flight, or a
//! second catalogue made from the same parent) builds an index of its own instead, so a search
//! always ranks exactly its own catalogue.

use std::sync::{Arc, RwLock};

use rustc_hash::{FxHashMap, FxHashSet};

use super::bm25::Bm25Index;
use crate::tool::ToolDefinition;

/// The index and what it holds.
struct State {
    index: Bm25Index,
    /// Changes with every catalogue made from it.
    version: u64,
    /// Tool name → its id in the index.
    ids: FxHashMap<String, u32>,
}

/// An index shared by successive catalogues.
pub(crate) struct Lineage {
    state: RwLock<State>,
}

/// A catalogue's view of a lineage: the version it was made for, and where each of the index's
/// tools is in the catalogue.
#[derive(Clone)]
pub(crate) struct Bm25View {
    lineage: Arc<Lineage>,
    version: u64,
    /// Index id → position in the catalogue (`u32::MAX`: not in it).
    positions: Arc<[u32]>,
    defs: Arc<[ToolDefinition]>,
}

impl std::fmt::Debug for Bm25View {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bm25View").field("version", &self.version).field("tools", &self.defs.len()).finish()
    }
}

/// Whether two definitions of a tool are the same for search.
fn same_definition(a: &ToolDefinition, b: &ToolDefinition) -> bool {
    a.name == b.name
        && a.description == b.description
        && (Arc::ptr_eq(&a.parameters_json_schema, &b.parameters_json_schema)
            || a.parameters_json_schema == b.parameters_json_schema)
}

impl Bm25View {
    /// A new lineage: an index of these tools.
    pub(crate) fn build(defs: &Arc<[ToolDefinition]>) -> Self {
        let index = Bm25Index::build(defs.iter());
        let ids = defs.iter().enumerate().map(|(i, d)| (d.name.clone(), i as u32)).collect();
        let positions: Arc<[u32]> = (0..defs.len() as u32).collect();
        let lineage = Arc::new(Lineage { state: RwLock::new(State { index, version: 0, ids }) });
        Bm25View { lineage, version: 0, positions, defs: defs.clone() }
    }

    /// The view of a catalogue of these tools made from this one's index, changed by the
    /// difference; `None` when this view is no longer the newest of its lineage.
    pub(crate) fn derive(&self, defs: &Arc<[ToolDefinition]>) -> Option<Self> {
        let mut state = self.lineage.state.write().unwrap_or_else(|p| p.into_inner());
        if state.version != self.version {
            return None;
        }
        let State { index, version, ids } = &mut *state;
        let names: FxHashSet<&str> = defs.iter().map(|d| d.name.as_str()).collect();
        // Tools are told apart by name: a catalogue with two tools of one name is indexed anew.
        // So is one whose index has given out many more ids than it holds (ids are not reused),
        // which keeps its memory in proportion to the catalogue, at one rebuild per as many
        // changes as there are tools.
        if names.len() != defs.len() || ids.len() != index.len() || index.capacity() > 2 * index.len() + 1024 {
            return None;
        }
        for old in self.defs.iter().filter(|d| !names.contains(d.name.as_str())) {
            if let Some(id) = ids.remove(&old.name) {
                index.remove(id);
            }
        }
        let mut placed: Vec<(u32, u32)> = Vec::with_capacity(defs.len());
        for (position, def) in defs.iter().enumerate() {
            let kept = ids.get(&def.name).copied().filter(|&id| {
                let old = self.positions.get(id as usize).copied().unwrap_or(u32::MAX);
                self.defs.get(old as usize).is_some_and(|o| same_definition(o, def))
            });
            let id = match kept {
                Some(id) => id,
                None => {
                    if let Some(id) = ids.remove(&def.name) {
                        index.remove(id);
                    }
                    let id = index.insert(def);
                    ids.insert(def.name.clone(), id);
                    id
                }
            };
            placed.push((id, position as u32));
        }
        *version += 1;
        let mut positions = vec![u32::MAX; index.capacity()];
        for (id, position) in placed {
            positions[id as usize] = position;
        }
        Some(Bm25View {
            lineage: self.lineage.clone(),
            version: *version,
            positions: positions.into(),
            defs: defs.clone(),
        })
    }

    /// Runs `f` with the index (which then holds exactly this catalogue's tools) and the
    /// catalogue position of each index id; `None` when this view is no longer the newest of
    /// its lineage.
    pub(crate) fn with_index<R>(&self, f: impl FnOnce(&Bm25Index, &dyn Fn(u32) -> u32) -> R) -> Option<R> {
        let state = self.lineage.state.read().unwrap_or_else(|p| p.into_inner());
        if state.version != self.version {
            return None;
        }
        Some(f(&state.index, &|id| self.positions[id as usize]))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use crate::search::SearchStrategy;
    use crate::search::eval::SearchIndex;
    use crate::tool::ToolDefinition;

    use crate::search::bm25::tests::WORDS;

    /// Tool `i` of the pool, in one of two versions (a changed description).
    fn tool(i: usize, version: usize) -> ToolDefinition {
        let word = |k: usize| WORDS[(i * 7 + k * 3 + version * 5) % WORDS.len()];
        let description = format!("{} {} {} {}", word(0), word(1), word(2), word(3));
        ToolDefinition::new(format!("{}_{i}", word(4)), json!({"type": "object", "properties": {word(5): {}}}))
            .with_description(description)
    }

    fn ranks(index: &SearchIndex, queries: &[String]) -> Vec<Vec<String>> {
        queries
            .iter()
            .map(|q| index.search(&SearchStrategy::Bm25, std::slice::from_ref(q), 50).unwrap_or_default())
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// A catalogue made from the one before it ranks exactly as one built anew, whatever
        /// tools come, go or change; and the one before it still ranks its own tools.
        #[test]
        fn a_carried_index_ranks_as_a_new_one(
            steps in proptest::collection::vec(
                proptest::collection::vec((0usize..40, 0usize..2), 0..25), 1..6),
            queries in proptest::collection::vec(proptest::collection::vec(0usize..22, 1..4), 1..5),
        ) {
            let queries: Vec<String> =
                queries.iter().map(|q| q.iter().map(|&w| WORDS[w]).collect::<Vec<_>>().join(" ")).collect();
            let catalogue = |step: &[(usize, usize)]| -> Vec<ToolDefinition> {
                let mut seen = std::collections::HashSet::new();
                step.iter().filter(|(i, _)| seen.insert(*i)).map(|&(i, v)| tool(i, v)).collect()
            };
            let mut defs = catalogue(&steps[0]);
            let mut index = SearchIndex::new(&defs);
            prop_assert_eq!(ranks(&index, &queries), ranks(&SearchIndex::new(&defs), &queries));
            for step in &steps[1..] {
                let next_defs = catalogue(step);
                let next = index.updated(&next_defs);
                prop_assert_eq!(ranks(&next, &queries), ranks(&SearchIndex::new(&next_defs), &queries));
                // The replaced catalogue still ranks its own tools.
                prop_assert_eq!(ranks(&index, &queries), ranks(&SearchIndex::new(&defs), &queries));
                index = next;
                defs = next_defs;
            }
        }
    }

    #[test]
    fn two_catalogues_made_from_one_parent_both_rank_their_own_tools() {
        let a: Vec<ToolDefinition> = (0..10).map(|i| tool(i, 0)).collect();
        let b: Vec<ToolDefinition> = (5..15).map(|i| tool(i, 0)).collect();
        let c: Vec<ToolDefinition> = (0..3).map(|i| tool(i, 1)).collect();
        let parent = SearchIndex::new(&a);
        parent.prepare(&SearchStrategy::Bm25);
        let first = parent.updated(&b);
        let second = parent.updated(&c);
        let queries: Vec<String> = WORDS.iter().map(|w| w.to_string()).collect();
        // The second derives after the first moved the index on: it builds its own.
        assert_eq!(ranks(&second, &queries), ranks(&SearchIndex::new(&c), &queries));
        assert_eq!(ranks(&first, &queries), ranks(&SearchIndex::new(&b), &queries));
        assert_eq!(ranks(&parent, &queries), ranks(&SearchIndex::new(&a), &queries));
    }

    #[test]
    fn a_long_line_of_changes_keeps_the_index_in_proportion() {
        let small: Vec<ToolDefinition> = (0..5).map(|i| tool(i, 0)).collect();
        let big: Vec<ToolDefinition> = (0..6).map(|i| tool(i, 0)).collect();
        let mut index = SearchIndex::new(&small);
        let queries: Vec<String> = vec!["weather forecast".into(), "delete the folder".into()];
        for step in 0..3000 {
            let defs = if step % 2 == 0 { &big } else { &small };
            index = index.updated(defs);
            if step % 500 == 0 {
                assert_eq!(ranks(&index, &queries), ranks(&SearchIndex::new(defs), &queries));
            } else {
                index.prepare(&SearchStrategy::Bm25);
            }
        }
        let view = index.catalogue.bm25_view();
        let state = view.lineage.state.read().unwrap();
        assert!(state.index.capacity() <= 2 * state.index.len() + 1025, "{}", state.index.capacity());
    }
}
