//! Spilled tool outputs that outlive the process: [`JournaledStore`], the store of
//! [`ToolOutputLimits`](toolsmith::capability::ToolOutputLimits) for a durable agent.
//!
//! A spill is written inside the tool call's journaled step (the capability's
//! `after_tool_execute` runs inside it), so the store's write is caught there: the payload goes
//! into the step's journal entry with the call's outcome. When the step is replayed after a crash
//! (the tool not called again), its spills come back from the journal; at the end of the turn the
//! conversation's spills are kept in the object's state ([`SPILLS_KEY`]), so that a later turn, in
//! another process, still pages through a handle its history holds.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use toolsmith::capability::tool_output_limits::{MemoryStore, OverflowStore, StoreError};

/// State key of a conversation's spilled tool outputs (handle → payload).
pub const SPILLS_KEY: &str = "spills";

/// One spilled payload: text as a JSON string, other bytes as a list of numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum Payload {
    Text(String),
    Bytes(Vec<u8>),
}

impl From<Vec<u8>> for Payload {
    fn from(data: Vec<u8>) -> Self {
        String::from_utf8(data).map_or_else(|e| Payload::Bytes(e.into_bytes()), Payload::Text)
    }
}

impl Payload {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Payload::Text(s) => s.as_bytes().to_vec(),
            Payload::Bytes(b) => b.clone(),
        }
    }
}

/// A spill as a journal entry records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Spill {
    pub(crate) handle: String,
    pub(crate) data: Payload,
}

/// The conversation's spills during a turn: those of earlier turns (from state) and this turn's,
/// live or replayed.
#[derive(Debug, Default)]
pub(crate) struct TurnSpills {
    known: Mutex<BTreeMap<String, Payload>>,
    added: AtomicBool,
}

impl TurnSpills {
    pub(crate) fn new(stored: BTreeMap<String, Payload>) -> Self {
        TurnSpills { known: Mutex::new(stored), added: AtomicBool::new(false) }
    }

    pub(crate) fn add(&self, spill: Spill) {
        self.known.lock().unwrap_or_else(|p| p.into_inner()).insert(spill.handle, spill.data);
        self.added.store(true, Ordering::Release);
    }

    fn get(&self, handle: &str) -> Option<Vec<u8>> {
        self.known.lock().unwrap_or_else(|p| p.into_inner()).get(handle).map(Payload::bytes)
    }

    /// Whether this turn spilled anything (the state is written only then).
    pub(crate) fn added(&self) -> bool {
        self.added.load(Ordering::Acquire)
    }

    pub(crate) fn snapshot(&self) -> BTreeMap<String, Payload> {
        self.known.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

tokio::task_local! {
    /// The turn being run (set around the run by `DurableAgent::turn`).
    pub(crate) static TURN: Arc<TurnSpills>;
    /// The spills of the tool step being run (set around the step's work by the journal).
    pub(crate) static STEP: Arc<Mutex<Vec<Spill>>>;
}

/// The spills a step made, taken from its collector.
pub(crate) fn take(step: &Mutex<Vec<Spill>>) -> Vec<Spill> {
    std::mem::take(&mut *step.lock().unwrap_or_else(|p| p.into_inner()))
}

/// The [`OverflowStore`] of a durable agent's
/// [`ToolOutputLimits`](toolsmith::capability::ToolOutputLimits): each spill is journaled with
/// the tool call that made it and kept in the conversation's state, so `read_tool_result` finds
/// it after a crash, a restart or a deploy, in this turn or a later one. Outside a durable turn it
/// is its inner store (a [`MemoryStore`] unless given another).
///
/// ```
/// use toolsmith::capability::ToolOutputLimits;
/// use toolsmith::prelude::*;
/// use toolsmith_restate::{DurableAgent, JournaledStore};
///
/// # fn make() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = Agent::builder(TestModel::default())
///     .capability(ToolOutputLimits::new().store(JournaledStore::new()))
///     .allow_deferred()
///     .build()?;
/// let durable = DurableAgent::new(agent);
/// # let _ = durable; Ok(()) }
/// ```
#[derive(Clone)]
pub struct JournaledStore {
    inner: Arc<dyn OverflowStore>,
}

impl std::fmt::Debug for JournaledStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JournaledStore").finish_non_exhaustive()
    }
}

impl Default for JournaledStore {
    fn default() -> Self {
        Self::new()
    }
}

impl JournaledStore {
    /// Spills journaled, and kept in memory for the process as well.
    pub fn new() -> Self {
        Self::over(MemoryStore::new())
    }

    /// Spills journaled, and written to `inner` as well (read from it when the conversation's
    /// state does not hold the handle).
    pub fn over(inner: impl OverflowStore) -> Self {
        JournaledStore { inner: Arc::new(inner) }
    }
}

impl OverflowStore for JournaledStore {
    fn write(&self, key: String, data: Vec<u8>) -> BoxFuture<'_, Result<String, StoreError>> {
        Box::pin(async move {
            let handle = self.inner.write(key, data.clone()).await?;
            let spill = Spill { handle: handle.clone(), data: Payload::from(data) };
            let _ = STEP.try_with(|step| step.lock().unwrap_or_else(|p| p.into_inner()).push(spill.clone()));
            let _ = TURN.try_with(|turn| turn.add(spill));
            Ok(handle)
        })
    }

    fn read(&self, handle: String) -> BoxFuture<'_, Result<Vec<u8>, StoreError>> {
        Box::pin(async move {
            match TURN.try_with(|turn| turn.get(&handle)) {
                Ok(Some(data)) => Ok(data),
                _ => self.inner.read(handle).await,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_spill_is_caught_by_its_step_and_read_back_from_the_turn() {
        let store = JournaledStore::new();
        let turn = Arc::new(TurnSpills::default());
        let step = Arc::new(Mutex::new(Vec::new()));
        let handle = TURN
            .scope(turn.clone(), STEP.scope(step.clone(), store.write("run/c1.0".into(), b"long text".to_vec())))
            .await
            .unwrap();
        assert_eq!(take(&step), [Spill { handle: handle.clone(), data: Payload::Text("long text".into()) }]);
        assert!(turn.added());
        // Another process: an empty inner store, the turn's spills from state.
        let fresh = JournaledStore::new();
        let later = Arc::new(TurnSpills::new(turn.snapshot()));
        let read = TURN.scope(later, fresh.read(handle.clone())).await.unwrap();
        assert_eq!(read, b"long text");
        assert!(fresh.read(handle).await.is_err(), "outside a turn only the inner store is read");
    }

    #[test]
    fn payloads_round_trip_as_text_or_bytes() {
        for data in [b"text".to_vec(), vec![0xff, 0x00, 0x41]] {
            let payload = Payload::from(data.clone());
            let back: Payload = serde_json::from_value(serde_json::to_value(&payload).unwrap()).unwrap();
            assert_eq!(back.bytes(), data);
        }
    }
}
