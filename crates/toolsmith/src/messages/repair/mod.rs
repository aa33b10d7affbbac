//! Making a message history sendable: tool results without their call dropped, calls that will
//! never get a result answered as interrupted, and consecutive requests merged into one.
//!
//! A run cleans the history it starts from (all but the last response's calls, which the run may
//! still answer), and cleans what it sends to the model before each request (the last response
//! included); the stored history keeps the calls the run answers itself.

use std::borrow::Cow;

use rustc_hash::{FxHashMap, FxHashSet};

use super::{ModelMessage, ModelRequest, ModelRequestPart, ModelResponse, ToolCallPart, ToolOutcome, ToolReturnPart};

/// The content of the result given to a call that never got one.
pub const INTERRUPTED_TOOL_RETURN_CONTENT: &str = "The tool call was interrupted before a result was produced.";

/// The metadata key (set to `true`) marking a tool return made up for a call without a result.
pub const SYNTHESIZED_TOOL_RETURN_METADATA_KEY: &str = "pydantic_ai_synthesized_tool_return";

/// Makes a history sendable to a model: drops tool results whose call is not earlier in the
/// history, answers every call that will never get a result with an `interrupted` tool return
/// (marked with [`SYNTHESIZED_TOOL_RETURN_METADATA_KEY`] in its metadata), and merges
/// consecutive requests (tool results first). With `repair_last_response` false, the calls of
/// the last response are left open (a run resumed from the history may still answer them).
///
/// Use it before giving a new prompt on a history whose last response has calls that were never
/// answered (a run refuses such a history otherwise).
///
/// ```
/// use toolsmith::messages::{ModelMessage, ModelRequest, ModelRequestPart, ModelResponse, ModelResponsePart,
///     ToolCallPart, UserPromptPart, repair_messages};
///
/// let history = vec![
///     ModelMessage::Request(ModelRequest::new(vec![ModelRequestPart::UserPrompt(UserPromptPart::new("hi"))])),
///     ModelMessage::Response(ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
///         "roll_dice",
///         serde_json::json!({}),
///         "c1",
///     ))])),
/// ];
/// let repaired = repair_messages(history, true);
/// assert_eq!(repaired.len(), 3);
/// let ModelMessage::Request(last) = &repaired[2] else { unreachable!() };
/// let ModelRequestPart::ToolReturn(answer) = &last.parts[0] else { unreachable!() };
/// assert_eq!(answer.content, "The tool call was interrupted before a result was produced.");
/// ```
pub fn repair_messages(messages: Vec<ModelMessage>, repair_last_response: bool) -> Vec<ModelMessage> {
    match clean(&messages, repair_last_response) {
        Cow::Borrowed(_) => messages,
        Cow::Owned(cleaned) => cleaned,
    }
}

/// [`repair_messages`] on a borrowed history: borrowed back when nothing changes.
pub(crate) fn clean(messages: &[ModelMessage], repair_last_response: bool) -> Cow<'_, [ModelMessage]> {
    if is_sound(messages, repair_last_response).is_some() {
        return Cow::Borrowed(messages);
    }
    repair(messages, repair_last_response)
}

/// [`clean`] for a history that is not sound.
fn repair(messages: &[ModelMessage], repair_last_response: bool) -> Cow<'_, [ModelMessage]> {
    let mut out: Cow<'_, [ModelMessage]> = Cow::Borrowed(messages);
    if let Some(kept) = drop_orphaned_results(&out) {
        out = Cow::Owned(kept);
    }
    if let Some(repaired) = repair_dangling_calls(&out, repair_last_response) {
        out = Cow::Owned(repaired);
    }
    if let Some(merged) = merge_consecutive_requests(&out) {
        out = Cow::Owned(merged);
    }
    out
}

/// What a model is sent for a history: [`clean`] with the last response's calls answered, and
/// the results in each request that follows a response put in the order of the calls they answer
/// (so the request does not depend on the order a history stored them in).
pub(crate) fn sendable(messages: &[ModelMessage]) -> Cow<'_, [ModelMessage]> {
    // A sound history whose results are in call order (the usual one) is sent as it is: the
    // soundness check saw the order.
    let cleaned = match is_sound(messages, true) {
        Some(InOrder::Yes) => return Cow::Borrowed(messages),
        Some(InOrder::No) => Cow::Borrowed(messages),
        None => repair(messages, true),
    };
    match order_results_by_call(&cleaned) {
        Some(ordered) => Cow::Owned(ordered),
        None => cleaned,
    }
}

/// Each request right after a response gets the results answering that response's calls in call
/// order, in the places results hold (every other part keeps its place; results answering the
/// same call keep their relative order). `None` when every request is in order already.
fn order_results_by_call(messages: &[ModelMessage]) -> Option<Vec<ModelMessage>> {
    let out_of_order = |ranks: &Ranks<'_>, request: &ModelRequest| {
        let mut last = 0;
        for r in request.parts.iter().filter_map(result_id).filter_map(|id| ranks.first(id)) {
            if r < last {
                return true;
            }
            last = r;
        }
        false
    };
    let unordered: Vec<usize> = (1..messages.len())
        .filter(|&i| match (&messages[i - 1], &messages[i]) {
            (ModelMessage::Response(a), ModelMessage::Request(b)) => out_of_order(&Ranks::new(a), b),
            _ => false,
        })
        .collect();
    if unordered.is_empty() {
        return None;
    }
    let mut out: Vec<ModelMessage> = messages.to_vec();
    for i in unordered {
        let (head, tail) = out.split_at_mut(i);
        let (ModelMessage::Response(response), ModelMessage::Request(request)) = (&head[i - 1], &mut tail[0]) else {
            continue;
        };
        let ranks = Ranks::new(response);
        let slots: Vec<(usize, usize)> = request
            .parts
            .iter()
            .enumerate()
            .filter_map(|(at, p)| result_id(p).and_then(|id| ranks.first(id)).map(|r| (at, r)))
            .collect();
        let mut ranked = slots.clone();
        ranked.sort_by_key(|&(_, r)| r);
        let mut parts: Vec<Option<ModelRequestPart>> =
            std::mem::take(&mut request.parts).into_iter().map(Some).collect();
        let moved: Vec<ModelRequestPart> =
            ranked.iter().map(|&(at, _)| parts[at].take().expect("each slot once")).collect();
        for (&(slot, _), part) in slots.iter().zip(moved) {
            parts[slot] = Some(part);
        }
        request.parts = parts.into_iter().flatten().collect();
    }
    Some(out)
}

/// Where each call id of a response first stands among its calls: looked up in a map for a response with many calls, by a scan for a few.
struct Ranks<'a> {
    ids: Vec<&'a str>,
    map: Option<FxHashMap<&'a str, usize>>,
}

impl<'a> Ranks<'a> {
    /// Up to this many calls, a scan costs less than building the map.
    const SCAN: usize = 8;

    fn new(response: &'a ModelResponse) -> Self {
        let ids: Vec<&str> = response.tool_calls().map(|c| c.tool_call_id.as_str()).collect();
        let map = (ids.len() > Self::SCAN).then(|| {
            let mut map = FxHashMap::with_capacity_and_hasher(ids.len(), Default::default());
            for (i, id) in ids.iter().enumerate() {
                map.entry(*id).or_insert(i);
            }
            map
        });
        Ranks { ids, map }
    }

    fn len(&self) -> usize {
        self.ids.len()
    }

    /// The position of the first call with `id`.
    fn first(&self, id: &str) -> Option<usize> {
        match &self.map {
            Some(map) => map.get(id).copied(),
            None => self.ids.iter().position(|c| *c == id),
        }
    }
}

/// Whether results come in the order of the calls they answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InOrder {
    Yes,
    No,
}

/// Whether a request answers each call of the response before it exactly once, and nothing else
/// (`Some`, saying whether in call order). As many answers as calls, each for a different first
/// position, means the calls' ids are distinct too.
fn answers_each_call_once(response: &ModelResponse, request: &ModelRequest) -> Option<InOrder> {
    if in_lockstep(response, request) {
        return Some(InOrder::Yes);
    }
    let ranks = Ranks::new(response);
    let mut answered = vec![false; ranks.len()];
    let mut count = 0;
    let mut order = InOrder::Yes;
    for id in request.parts.iter().filter_map(result_id) {
        match ranks.first(id) {
            Some(at) if !answered[at] => {
                answered[at] = true;
                if at != count {
                    order = InOrder::No;
                }
            }
            _ => return None,
        }
        count += 1;
    }
    (count == ranks.len()).then_some(order)
}

/// The usual request: one result for each call, in call order, the calls' ids all different
/// (compared in step, without looking up each result's call). `false` leaves the question to
/// [`answers_each_call_once`]'s general check.
fn in_lockstep(response: &ModelResponse, request: &ModelRequest) -> bool {
    let mut results = request.parts.iter().filter_map(result_id);
    let mut seen = FxHashSet::with_capacity_and_hasher(response.parts.len(), Default::default());
    for call in response.tool_calls() {
        let id = call.tool_call_id.as_str();
        if results.next() != Some(id) || !seen.insert(id) {
            return false;
        }
    }
    results.next().is_none()
}

/// Whether the history needs no repair, checked in one pass (the usual case, so that it costs
/// little per request): every request that answers calls follows the response that made them
/// and answers each of them once, results first; every response's calls are answered by the
/// next message (but the last response's, unless `repair_last_response`); no two requests in a
/// row. Anything else goes to the full repair, which decides.
/// `Some` when sound, saying whether every request's results are in call order.
fn is_sound(messages: &[ModelMessage], repair_last_response: bool) -> Option<InOrder> {
    let walk = check_from(messages, 0, repair_last_response);
    walk.first_unsound.is_none().then_some(walk.order)
}

/// What [`check_from`] found.
struct Walk {
    /// The first message whose check failed.
    first_unsound: Option<usize>,
    /// Whether the results of the requests checked (up to the first unsound) are in call order.
    order: InOrder,
}

/// The checks of [`is_sound`] of the messages from `from` on. The check of a message looks at
/// the message before it (a request) or after it (a response) and at nothing else, so the checks
/// of a history's messages hold for it whatever is appended (with `repair_last_response`).
fn check_from(messages: &[ModelMessage], from: usize, repair_last_response: bool) -> Walk {
    let last_response =
        if repair_last_response { None } else { messages.iter().rposition(|m| matches!(m, ModelMessage::Response(_))) };
    let mut order = InOrder::Yes;
    for (index, message) in messages.iter().enumerate().skip(from) {
        let sound = match message {
            ModelMessage::Request(request) => {
                let answers = match index.checked_sub(1).map(|i| &messages[i]) {
                    Some(ModelMessage::Request(_)) => None,
                    Some(ModelMessage::Response(response)) => answers_each_call_once(response, request),
                    None => (!request.parts.iter().any(|p| result_id(p).is_some())).then_some(InOrder::Yes),
                };
                match answers {
                    Some(o) if parts_between_results(&request.parts).is_none() => {
                        if o == InOrder::No {
                            order = InOrder::No;
                        }
                        true
                    }
                    _ => false,
                }
            }
            ModelMessage::Response(response) => {
                let open_frontier = Some(index) == last_response;
                open_frontier
                    || response.tool_calls().next().is_none()
                    || matches!(messages.get(index + 1), Some(ModelMessage::Request(_)))
            }
        };
        if !sound {
            return Walk { first_unsound: Some(index), order };
        }
    }
    Walk { first_unsound: None, order }
}

/// What a run knows of its own history between requests: a prefix whose messages' checks (see
/// [`check_from`]) hold, and whether their results are all in call order. The history only grows
/// within a run, so each request checks what was appended since the last; the run calls
/// [`last_may_change`](SoundPrefix::last_may_change) before it changes or removes its last
/// message.
#[derive(Debug, Default)]
pub(crate) struct SoundPrefix(std::sync::atomic::AtomicUsize);

impl SoundPrefix {
    fn get(&self) -> (usize, InOrder) {
        let v = self.0.load(std::sync::atomic::Ordering::Relaxed);
        (v >> 1, if v & 1 == 1 { InOrder::No } else { InOrder::Yes })
    }

    fn set(&self, len: usize, order: InOrder) {
        let v = (len << 1) | usize::from(order == InOrder::No);
        self.0.store(v, std::sync::atomic::Ordering::Relaxed);
    }

    /// The last message of a history now `len` long may change (or has just been removed): it
    /// leaves the known prefix.
    pub(crate) fn last_may_change(&self, len: usize) {
        let (known, order) = self.get();
        if known >= len {
            self.set(len.saturating_sub(1), order);
        }
    }
}

/// [`sendable`] for a run's own history, of which `known` keeps what earlier requests found:
/// only the messages appended since are checked.
pub(crate) fn sendable_known<'m>(messages: &'m [ModelMessage], known: &SoundPrefix) -> Cow<'m, [ModelMessage]> {
    let (prefix, prefix_order) = known.get();
    // `prefix` messages are known: the checks of all but the last of them hold (the last one's,
    // for a response, looks past it).
    let (from, prefix_order) =
        if prefix <= messages.len() { (prefix.saturating_sub(1), prefix_order) } else { (0, InOrder::Yes) };
    let walk = check_from(messages, from, true);
    let order = if prefix_order == InOrder::No { InOrder::No } else { walk.order };
    // The last two messages stay out of what is known: the run may still change its last
    // request (or drop it and change the one before).
    let checked = walk.first_unsound.map_or(messages.len(), |i| i + 1);
    known.set(checked.min(messages.len().saturating_sub(2)).max(from), order);
    let cleaned = match (walk.first_unsound, order) {
        (None, InOrder::Yes) => return Cow::Borrowed(messages),
        (None, InOrder::No) => Cow::Borrowed(messages),
        (Some(_), _) => repair(messages, true),
    };
    match order_results_by_call(&cleaned) {
        Some(ordered) => Cow::Owned(ordered),
        None => cleaned,
    }
}

/// The id of a part answering a tool call.
pub(crate) fn result_id(part: &ModelRequestPart) -> Option<&str> {
    match part {
        ModelRequestPart::ToolReturn(t) => Some(&t.tool_call_id),
        ModelRequestPart::RetryPrompt(r) if r.tool_name.is_some() => r.tool_call_id.as_deref(),
        _ => None,
    }
}

/// Tool results whose call is not earlier in the history are dropped; a request they empty is
/// dropped too, except the last message (the history still ends with a request).
fn drop_orphaned_results(messages: &[ModelMessage]) -> Option<Vec<ModelMessage>> {
    let mut seen: rustc_hash::FxHashSet<&str> = Default::default();
    let orphan =
        |seen: &rustc_hash::FxHashSet<&str>, p: &ModelRequestPart| result_id(p).is_some_and(|id| !seen.contains(id));
    // Checked first: a history without orphans (the usual case) is not copied.
    let mut any = false;
    for m in messages {
        match m {
            ModelMessage::Response(r) => seen.extend(r.tool_calls().map(|c| c.tool_call_id.as_str())),
            ModelMessage::Request(r) => {
                if r.parts.iter().any(|p| orphan(&seen, p)) {
                    any = true;
                    break;
                }
            }
        }
    }
    if !any {
        return None;
    }
    seen.clear();
    let last = messages.len().saturating_sub(1);
    let mut kept = Vec::with_capacity(messages.len());
    for (index, m) in messages.iter().enumerate() {
        match m {
            ModelMessage::Response(r) => {
                seen.extend(r.tool_calls().map(|c| c.tool_call_id.as_str()));
                kept.push(m.clone());
            }
            ModelMessage::Request(r) => {
                if !r.parts.iter().any(|p| orphan(&seen, p)) {
                    kept.push(m.clone());
                    continue;
                }
                let parts: Vec<ModelRequestPart> = r.parts.iter().filter(|p| !orphan(&seen, p)).cloned().collect();
                if !parts.is_empty() || index == last {
                    let mut request = r.clone();
                    request.parts = parts;
                    kept.push(ModelMessage::Request(request));
                }
            }
        }
    }
    Some(kept)
}

/// The calls that will never get a result, by the index of their response. A result answers the
/// oldest open call with its id; a call whose id a later response reuses can no longer be
/// answered. Linear in the calls and results.
fn dangling_calls(messages: &[ModelMessage], repair_last_response: bool) -> FxHashMap<usize, Vec<&ToolCallPart>> {
    // The open calls of each id, oldest first: (response index, position among its calls, call).
    type Open<'m> = std::collections::VecDeque<(usize, usize, &'m ToolCallPart)>;
    let mut open: FxHashMap<&str, Open<'_>> = FxHashMap::default();
    let mut dangling: FxHashMap<usize, Vec<&ToolCallPart>> = FxHashMap::default();
    for (index, m) in messages.iter().enumerate() {
        match m {
            ModelMessage::Response(r) => {
                for (position, call) in r.tool_calls().enumerate() {
                    let pending = open.entry(call.tool_call_id.as_str()).or_default();
                    if pending.back().is_some_and(|(i, _, _)| *i != index) {
                        for (i, _, shadowed) in pending.drain(..) {
                            dangling.entry(i).or_default().push(shadowed);
                        }
                    }
                    pending.push_back((index, position, call));
                }
            }
            ModelMessage::Request(r) => {
                for id in r.parts.iter().filter_map(result_id) {
                    if let Some(pending) = open.get_mut(id) {
                        pending.pop_front();
                    }
                }
            }
        }
    }
    // Left open, in the order the calls were made: found by a second pass over the responses.
    let mut left: FxHashMap<usize, rustc_hash::FxHashSet<usize>> = FxHashMap::default();
    for (index, position, _) in open.into_values().flatten() {
        left.entry(index).or_default().insert(position);
    }
    if !left.is_empty() {
        for (index, m) in messages.iter().enumerate() {
            let (ModelMessage::Response(r), Some(positions)) = (m, left.get(&index)) else { continue };
            let calls = dangling.entry(index).or_default();
            calls.extend(r.tool_calls().enumerate().filter(|(p, _)| positions.contains(p)).map(|(_, c)| c));
        }
    }
    if !repair_last_response && let Some(last) = messages.iter().rposition(|m| matches!(m, ModelMessage::Response(_))) {
        dangling.remove(&last);
    }
    dangling
}

fn interrupted(response: &ModelResponse, call: &ToolCallPart) -> ModelRequestPart {
    let mut part = ToolReturnPart::success(
        &call.tool_name,
        serde_json::Value::String(INTERRUPTED_TOOL_RETURN_CONTENT.into()),
        &call.tool_call_id,
    );
    part.tool_kind = call.tool_kind.clone();
    part.metadata = Some(Box::new(serde_json::json!({ SYNTHESIZED_TOOL_RETURN_METADATA_KEY: true })));
    part.timestamp = response.timestamp;
    part.outcome = ToolOutcome::Interrupted;
    ModelRequestPart::ToolReturn(part)
}

/// Every dangling call answered `interrupted`: after the tool results of the request that follows
/// its response, or in a new request when another response (or nothing) follows.
fn repair_dangling_calls(messages: &[ModelMessage], repair_last_response: bool) -> Option<Vec<ModelMessage>> {
    let dangling = dangling_calls(messages, repair_last_response);
    if dangling.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(messages.len() + 1);
    let mut synthesized: Vec<ModelRequestPart> = Vec::new();
    for (index, m) in messages.iter().enumerate() {
        match m {
            ModelMessage::Response(r) => {
                if !synthesized.is_empty() {
                    out.push(ModelMessage::Request(ModelRequest::new(std::mem::take(&mut synthesized))));
                }
                if let Some(calls) = dangling.get(&index) {
                    synthesized.extend(calls.iter().map(|c| interrupted(r, c)));
                }
                out.push(m.clone());
            }
            ModelMessage::Request(r) => {
                if synthesized.is_empty() {
                    out.push(m.clone());
                    continue;
                }
                let at = r.parts.iter().rposition(|p| result_id(p).is_some()).map_or(0, |i| i + 1);
                let mut request = r.clone();
                request.parts.splice(at..at, std::mem::take(&mut synthesized));
                out.push(ModelMessage::Request(request));
            }
        }
    }
    if !synthesized.is_empty() {
        out.push(ModelMessage::Request(ModelRequest::new(synthesized)));
    }
    Some(out)
}

/// Whether a part answers a tool call (sorted first in a merged request).
fn answers_a_call(part: &ModelRequestPart) -> bool {
    matches!(part, ModelRequestPart::ToolReturn(_) | ModelRequestPart::RetryPrompt(_))
}

fn mergeable(a: &ModelRequest, b: &ModelRequest) -> bool {
    match (&a.instructions, &b.instructions) {
        (Some(x), Some(y)) => x.is_empty() || y.is_empty() || x == y,
        _ => true,
    }
}

/// Consecutive requests merged into one (their tool results first); in a request left alone, the
/// parts between its tool results move after them.
fn merge_consecutive_requests(messages: &[ModelMessage]) -> Option<Vec<ModelMessage>> {
    let needs_merge = messages.windows(2).any(|w| match (&w[0], &w[1]) {
        (ModelMessage::Request(a), ModelMessage::Request(b)) => mergeable(a, b),
        _ => false,
    });
    let needs_move =
        messages.iter().any(|m| matches!(m, ModelMessage::Request(r) if parts_between_results(&r.parts).is_some()));
    if !needs_merge && !needs_move {
        return None;
    }
    let mut out: Vec<ModelMessage> = Vec::with_capacity(messages.len());
    for m in messages {
        let ModelMessage::Request(request) = m else {
            out.push(m.clone());
            continue;
        };
        match out.last_mut() {
            Some(ModelMessage::Request(last)) if mergeable(last, request) => {
                let mut parts = std::mem::take(&mut last.parts);
                parts.extend(request.parts.iter().cloned());
                // Stable: tool results first, in their order, then the rest.
                parts.sort_by_key(|p| !answers_a_call(p));
                let mut merged = ModelRequest::new(parts);
                merged.instructions =
                    last.instructions.take().filter(|i| !i.is_empty()).or(request.instructions.clone());
                merged.timestamp = request.timestamp.or(last.timestamp);
                merged.run_id = last.run_id.take();
                merged.conversation_id = last.conversation_id.take();
                *last = merged;
            }
            _ => {
                let mut request = request.clone();
                if let Some(parts) = parts_between_results(&request.parts) {
                    request.parts = parts;
                }
                out.push(ModelMessage::Request(request));
            }
        }
    }
    Some(out)
}

/// The parts with those between the first and last tool result moved after the last one, when
/// there are such parts.
fn parts_between_results(parts: &[ModelRequestPart]) -> Option<Vec<ModelRequestPart>> {
    let first = parts.iter().position(|p| result_id(p).is_some())?;
    let last = parts.iter().rposition(|p| result_id(p).is_some())?;
    let between = &parts[first..=last];
    if between.iter().all(|p| result_id(p).is_some()) {
        return None;
    }
    let mut out = Vec::with_capacity(parts.len());
    out.extend_from_slice(&parts[..first]);
    out.extend(between.iter().filter(|p| result_id(p).is_some()).cloned());
    out.extend(between.iter().filter(|p| result_id(p).is_none()).cloned());
    out.extend_from_slice(&parts[last + 1..]);
    Some(out)
}

#[cfg(test)]
mod tests;
