//! Single-use answers: the calls a run ended with are answered once. Each deferral has an
//! identity ([`DeferralId`], derived from the response the calls belong to and their ids); a
//! resume consumes it through the agent's [`DeferralStore`] before anything runs, and a second
//! resume of the same deferral is refused
//! ([`ResumeRefusal::AlreadyResumed`](super::ResumeRefusal::AlreadyResumed)).

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use sha1::{Digest, Sha1};

use crate::messages::ModelResponse;

/// The identity of one deferral: the calls a run ended with (waiting for approval or for
/// external results), in the response they belong to. [`DeferredToolRequests::id`] gives it;
/// a resume of the same history computes the same one, whether its results were built from the
/// requests or by hand, so that the calls are answered once
/// (see [`DeferralStore`]).
///
/// It is a digest of the response's run id, conversation id and provider response id and of
/// the pending calls' ids: stable across processes and versions of the library that derive it
/// the same way (its text starts with `v1:`).
///
/// [`DeferredToolRequests::id`]: super::DeferredToolRequests::id
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DeferralId(String);

impl DeferralId {
    /// The identity of the deferral of `calls` (pending calls of `response`, each with what it
    /// waits for when known: a call approved and then deferred by its tool is a deferral of its
    /// own, answered by a resume of its own).
    pub(crate) fn derive<'a>(
        response: &ModelResponse,
        calls: impl IntoIterator<Item = (&'a str, Option<super::DeferredKind>)>,
    ) -> Self {
        let mut calls: Vec<(&str, Option<super::DeferredKind>)> = calls.into_iter().collect();
        calls.sort_unstable_by(|a, b| a.0.cmp(b.0));
        calls.dedup_by(|a, b| a.0 == b.0);
        let mut h = Sha1::new();
        h.update(b"toolsmith deferral v1\0");
        for field in [&response.run_id, &response.conversation_id, &response.provider_response_id] {
            // Length-prefixed: no two different sequences of fields hash the same way.
            match field {
                Some(v) => {
                    h.update([1]);
                    h.update((v.len() as u64).to_le_bytes());
                    h.update(v.as_bytes());
                }
                None => h.update([0]),
            }
        }
        h.update((calls.len() as u64).to_le_bytes());
        for (id, kind) in calls {
            h.update((id.len() as u64).to_le_bytes());
            h.update(id.as_bytes());
            h.update(match kind {
                Some(super::DeferredKind::Approval) => [1],
                Some(super::DeferredKind::External) => [2],
                None => [0],
            });
        }
        let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        DeferralId(format!("v1:{hex}"))
    }

    /// The identity as text (what a store keeps).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for DeferralId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What [`DeferralStore::consume`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Consumption {
    /// The deferral was not consumed before (or only by this same run, replayed by a durable
    /// engine): the resume goes on.
    Fresh,
    /// Another run consumed it: the resume is refused.
    AlreadyConsumed {
        /// The run that consumed it, when the store knows.
        by_run: Option<String>,
    },
}

/// A store that could not say whether a deferral was consumed: the resume is refused (nothing
/// runs), as it cannot be shown to be the first.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
#[non_exhaustive]
pub struct DeferralStoreError {
    /// What went wrong.
    pub message: String,
}

impl DeferralStoreError {
    /// An error with a message.
    pub fn new(message: impl Into<String>) -> Self {
        DeferralStoreError { message: message.into() }
    }
}

/// Where an agent remembers the deferrals that were resumed, so that the calls a run ended
/// with are answered once: an approval approves one execution, however often the history it
/// came with is resumed.
///
/// A resume consumes the deferral it answers ([`DeferralId`]) after every other check and
/// before anything runs. The default is a [`MemoryDeferralStore`] per agent (shared by its
/// clones); set another with
/// [`AgentBuilder::deferral_store`](crate::agent::AgentBuilder::deferral_store) when histories
/// are resumed by other processes, after a restart, or by several agents: a database table with
/// a unique key, a durable engine's state.
///
/// `consume` must be atomic (an insert that fails when the key exists): two resumes of the same
/// deferral at once must not both see it fresh. The same `run_id` consuming the same deferral
/// again is the same run replayed (a durable engine re-executing it from its journal), not a
/// second answer.
///
/// ```
/// use toolsmith::deferred::{Consumption, DeferralId, DeferralStore, DeferralStoreError, MemoryDeferralStore};
/// use toolsmith::prelude::*;
///
/// /// Logs every resume, then asks the in-memory store.
/// struct Audited(MemoryDeferralStore);
///
/// impl DeferralStore for Audited {
///     async fn consume(&self, deferral: &DeferralId, run_id: &str) -> Result<Consumption, DeferralStoreError> {
///         println!("run {run_id} answers {deferral}");
///         self.0.consume(deferral, run_id).await
///     }
/// }
///
/// let agent = Agent::builder(TestModel::default())
///     .deferral_store(Audited(MemoryDeferralStore::new()))
///     .allow_deferred()
///     .build()
///     .unwrap();
/// ```
pub trait DeferralStore: Send + Sync + 'static {
    /// Marks `deferral` consumed by the run `run_id`, atomically: [`Consumption::Fresh`] if
    /// no other run consumed it before, else [`Consumption::AlreadyConsumed`].
    fn consume(
        &self,
        deferral: &DeferralId,
        run_id: &str,
    ) -> impl Future<Output = Result<Consumption, DeferralStoreError>> + Send;
}

impl<T: DeferralStore> DeferralStore for Arc<T> {
    fn consume(
        &self,
        deferral: &DeferralId,
        run_id: &str,
    ) -> impl Future<Output = Result<Consumption, DeferralStoreError>> + Send {
        (**self).consume(deferral, run_id)
    }
}

/// The dyn-compatible form of [`DeferralStore`], as the agent keeps it.
pub(crate) trait DynDeferralStore: Send + Sync {
    fn consume_boxed<'a>(
        &'a self,
        deferral: &'a DeferralId,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Consumption, DeferralStoreError>>;
}

impl<T: DeferralStore> DynDeferralStore for T {
    fn consume_boxed<'a>(
        &'a self,
        deferral: &'a DeferralId,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Consumption, DeferralStoreError>> {
        Box::pin(self.consume(deferral, run_id))
    }
}

/// How many consumed deferrals a [`MemoryDeferralStore`] remembers by default.
pub const MEMORY_STORE_CAPACITY: usize = 16_384;

/// The default [`DeferralStore`]: the deferrals consumed in this process, the last
/// [`MEMORY_STORE_CAPACITY`] of them (or the capacity given), the oldest forgotten first. A
/// history resumed again after that many other resumes, in another process or after a restart is
/// not recognised: give the agent a persistent store for histories kept that long.
#[derive(Debug)]
pub struct MemoryDeferralStore {
    capacity: usize,
    consumed: Mutex<Consumed>,
}

#[derive(Debug, Default)]
struct Consumed {
    by_id: HashMap<DeferralId, Arc<str>>,
    order: VecDeque<DeferralId>,
}

impl MemoryDeferralStore {
    /// A store remembering the last [`MEMORY_STORE_CAPACITY`] consumed deferrals.
    pub fn new() -> Self {
        Self::with_capacity(MEMORY_STORE_CAPACITY)
    }

    /// A store remembering the last `capacity` consumed deferrals (at least one).
    pub fn with_capacity(capacity: usize) -> Self {
        MemoryDeferralStore { capacity: capacity.max(1), consumed: Mutex::default() }
    }

    fn consume_now(&self, deferral: &DeferralId, run_id: &str) -> Consumption {
        let mut c = self.consumed.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(by) = c.by_id.get(deferral) {
            return if &**by == run_id {
                Consumption::Fresh
            } else {
                Consumption::AlreadyConsumed { by_run: Some(by.to_string()) }
            };
        }
        if c.order.len() >= self.capacity
            && let Some(oldest) = c.order.pop_front()
        {
            c.by_id.remove(&oldest);
        }
        c.by_id.insert(deferral.clone(), Arc::from(run_id));
        c.order.push_back(deferral.clone());
        Consumption::Fresh
    }
}

impl Default for MemoryDeferralStore {
    fn default() -> Self {
        Self::new()
    }
}

impl DeferralStore for MemoryDeferralStore {
    fn consume(
        &self,
        deferral: &DeferralId,
        run_id: &str,
    ) -> impl Future<Output = Result<Consumption, DeferralStoreError>> + Send {
        std::future::ready(Ok(self.consume_now(deferral, run_id)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::{ModelResponse, ModelResponsePart, ToolCallPart};

    fn response(run: &str) -> ModelResponse {
        let mut r =
            ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new("t", serde_json::json!({}), "c1"))]);
        r.run_id = Some(Arc::from(run));
        r
    }

    #[test]
    fn the_identity_depends_on_the_response_and_the_ids_not_their_order() {
        let a = DeferralId::derive(&response("r1"), ["c1", "c2"].map(|c| (c, None)));
        assert_eq!(a, DeferralId::derive(&response("r1"), ["c2", "c1"].map(|c| (c, None))));
        assert_ne!(a, DeferralId::derive(&response("r2"), ["c1", "c2"].map(|c| (c, None))));
        assert_ne!(a, DeferralId::derive(&response("r1"), ["c1"].map(|c| (c, None))));
        // Field boundaries count: "ab" + "c" is not "a" + "bc".
        assert_ne!(
            DeferralId::derive(&response("r1"), ["ab", "c"].map(|c| (c, None))),
            DeferralId::derive(&response("r1"), ["a", "bc"].map(|c| (c, None)))
        );
        assert!(a.as_str().starts_with("v1:") && a.as_str().len() == 43, "{a}");
    }

    #[test]
    fn a_deferral_is_consumed_once_but_a_replay_of_the_same_run_is_no_second_use() {
        let store = MemoryDeferralStore::with_capacity(2);
        let d = |i: &str| DeferralId::derive(&response(i), ["c1"].map(|c| (c, None)));
        let consume = |id: &DeferralId, run: &str| futures::executor::block_on(store.consume(id, run)).unwrap();
        assert_eq!(consume(&d("a"), "run1"), Consumption::Fresh);
        assert_eq!(consume(&d("a"), "run1"), Consumption::Fresh);
        assert_eq!(consume(&d("a"), "run2"), Consumption::AlreadyConsumed { by_run: Some("run1".into()) });
        // Bounded: the oldest is forgotten first.
        assert_eq!(consume(&d("b"), "run3"), Consumption::Fresh);
        assert_eq!(consume(&d("c"), "run4"), Consumption::Fresh);
        assert_eq!(consume(&d("a"), "run5"), Consumption::Fresh);
        assert!(matches!(consume(&d("c"), "run6"), Consumption::AlreadyConsumed { .. }));
    }
}
