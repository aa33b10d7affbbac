//! What resumed results are checked against: the calls they were bound to, or the agent's
//! records of its own deferred endings and failed runs' unanswered calls.

use std::collections::VecDeque;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::{DeferralId, DeferredKind, DeferredToolRequests, PendingCall, ResumeRefusal};
use crate::messages::ToolCallPart;

/// Checks the history's pending calls (`pending`, in call order) against the calls results
/// were made for (`bound`), and the kind of each result given (`given`: the ids with a
/// decision, `Approval`, or an external result, `External`).
pub(crate) fn check_bound(
    bound: &[PendingCall],
    pending: &[&ToolCallPart],
    given: &[(String, DeferredKind)],
) -> Result<(), ResumeRefusal> {
    let by_id = |id: &str| bound.iter().find(|p| p.id == id);
    for call in pending {
        let Some(p) = by_id(&call.tool_call_id) else {
            return Err(ResumeRefusal::NotPending {
                tool_call_id: call.tool_call_id.clone(),
                tool_name: call.tool_name.clone(),
            });
        };
        if !p.matches(call) {
            return Err(ResumeRefusal::CallChanged {
                tool_call_id: p.id.clone(),
                pending_tool: p.tool.clone(),
                pending_args: p.args.clone(),
                found_tool: call.tool_name.clone(),
                found_args: call.args.clone(),
            });
        }
    }
    for p in bound {
        if !pending.iter().any(|c| c.tool_call_id == p.id) {
            return Err(ResumeRefusal::NoLongerPending { tool_call_id: p.id.clone(), tool_name: p.tool.clone() });
        }
    }
    for (id, kind) in given {
        // Only a decision answers a call that waits for approval (a made-up result would be
        // recorded as the tool's return), and only a result one that waits for an external
        // result.
        match (by_id(id).and_then(|p| p.kind), kind) {
            (Some(DeferredKind::External), DeferredKind::Approval) => {
                return Err(ResumeRefusal::ApprovalForExternal { tool_call_id: id.clone() });
            }
            (Some(DeferredKind::Approval), DeferredKind::External) => {
                return Err(ResumeRefusal::ResultForApproval { tool_call_id: id.clone() });
            }
            _ => {}
        }
    }
    Ok(())
}

/// How many endings with deferred calls an agent remembers.
const RECORDS_KEPT: usize = 1024;

/// A recorded ending: the hash of its calls, the calls, and the deferral they were.
type Record = (u64, Arc<[PendingCall]>, DeferralId);

/// The pending calls of an agent's last runs that ended with deferred calls (shared by its
/// clones), against which results bound to nothing are checked.
#[derive(Default)]
pub(crate) struct PendingRecords {
    sets: Mutex<VecDeque<Record>>,
}

impl PendingRecords {
    /// Remembers the calls a run ended with (the requests have their identity).
    pub(crate) fn record(&self, requests: &DeferredToolRequests) {
        if let Some(id) = requests.id() {
            self.record_set(requests.pending_calls(), id.clone());
        }
    }

    /// Remembers the calls a failed run left unanswered (the last response's calls that no
    /// later request answers), so that results given for them later are checked against them;
    /// only when that response is one of the run's own (at `new_start` or later).
    pub(crate) fn record_unanswered(&self, messages: &[crate::messages::ModelMessage], new_start: usize) {
        use crate::messages::{ModelMessage, result_id};
        let Some(pos) = messages.iter().rposition(|m| matches!(m, ModelMessage::Response(_))) else {
            return;
        };
        if pos < new_start {
            return;
        }
        let ModelMessage::Response(response) = &messages[pos] else { return };
        let answered = |id: &str| {
            messages[pos + 1..].iter().any(|m| match m {
                ModelMessage::Request(r) => r.parts.iter().filter_map(result_id).any(|answer| answer == id),
                ModelMessage::Response(_) => false,
            })
        };
        let mut calls: Vec<PendingCall> =
            response.tool_calls().filter(|c| !answered(&c.tool_call_id)).map(|c| PendingCall::new(c, None)).collect();
        if calls.is_empty() {
            return;
        }
        calls.sort_by(|a, b| a.id.cmp(&b.id));
        let id = DeferralId::derive(response, calls.iter().map(|c| (c.id.as_str(), c.kind)));
        self.record_set(calls.into(), id);
    }

    fn record_set(&self, calls: Arc<[PendingCall]>, id: DeferralId) {
        let key = set_key(calls.iter().map(|c| (c.id.as_str(), c.tool.as_str(), &c.args)));
        let mut sets = self.sets.lock().unwrap_or_else(|p| p.into_inner());
        if sets.iter().any(|(k, c, i)| *k == key && *c == calls && *i == id) {
            return;
        }
        if sets.len() >= RECORDS_KEPT {
            sets.pop_front();
        }
        sets.push_back((key, calls, id));
    }

    /// The recorded ending whose pending calls are exactly `pending`, if any, with the deferral
    /// it was: the one that is `seen` (the deferral the history's response makes) if several
    /// endings had the same calls, else the latest.
    pub(crate) fn find(
        &self,
        pending: &[&ToolCallPart],
        seen: &DeferralId,
    ) -> Option<(Arc<[PendingCall]>, DeferralId)> {
        let mut sorted: Vec<&ToolCallPart> = pending.to_vec();
        sorted.sort_by(|a, b| a.tool_call_id.cmp(&b.tool_call_id));
        let key = set_key(sorted.iter().map(|c| (c.tool_call_id.as_str(), c.tool_name.as_str(), &c.args)));
        let sets = self.sets.lock().unwrap_or_else(|p| p.into_inner());
        let mut matching = sets.iter().rev().filter(|(k, calls, _)| {
            *k == key && calls.len() == sorted.len() && calls.iter().zip(&sorted).all(|(p, c)| p.matches(c))
        });
        let latest = matching.next()?;
        let found = std::iter::once(latest).chain(matching).find(|(_, _, id)| id == seen).unwrap_or(latest);
        Some((found.1.clone(), found.2.clone()))
    }
}

/// A hash of a set of calls sorted by id (object keys hashed in order, so that a history
/// read back with its keys reordered finds its record).
fn set_key<'a>(calls: impl Iterator<Item = (&'a str, &'a str, &'a Value)>) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for (id, tool, args) in calls {
        id.hash(&mut h);
        tool.hash(&mut h);
        hash_value(args, &mut h);
    }
    h.finish()
}

fn hash_value(v: &Value, h: &mut impl Hasher) {
    match v {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => (1u8, b).hash(h),
        Value::Number(n) => (2u8, n.to_string()).hash(h),
        Value::String(s) => (3u8, s).hash(h),
        Value::Array(a) => {
            (4u8, a.len()).hash(h);
            for x in a {
                hash_value(x, h);
            }
        }
        Value::Object(o) => {
            (5u8, o.len()).hash(h);
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            for k in keys {
                k.hash(h);
                hash_value(&o[k], h);
            }
        }
    }
}
