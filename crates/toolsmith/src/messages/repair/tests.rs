use super::*;
use crate::messages::{ModelResponsePart, UserPromptPart};

fn calls(ids: &[&str]) -> ModelMessage {
    ModelMessage::Response(ModelResponse::new(
        ids.iter().map(|id| ModelResponsePart::ToolCall(ToolCallPart::new("t", serde_json::json!({}), *id))).collect(),
    ))
}

fn ret(id: &str) -> ModelRequestPart {
    ModelRequestPart::ToolReturn(ToolReturnPart::success("t", serde_json::json!(id), id))
}

fn ids(m: &ModelMessage) -> Vec<String> {
    let ModelMessage::Request(r) = m else { panic!("a request") };
    r.parts
        .iter()
        .map(|p| match p {
            ModelRequestPart::ToolReturn(t) => t.tool_call_id.clone(),
            _ => "prompt".to_string(),
        })
        .collect()
}

/// The definitions the fast checks stand for, written plainly (quadratic).
mod plain {
    use super::*;

    pub(super) fn answers_each_call_once(response: &ModelResponse, request: &ModelRequest) -> bool {
        let answers: Vec<&str> = request.parts.iter().filter_map(result_id).collect();
        let calls: Vec<&str> = response.tool_calls().map(|c| c.tool_call_id.as_str()).collect();
        answers.len() == calls.len()
            && answers.iter().all(|id| calls.iter().filter(|c| *c == id).count() == 1)
            && answers.iter().enumerate().all(|(i, id)| !answers[..i].contains(id))
    }

    pub(super) fn rank(response: &ModelResponse, id: &str) -> Option<usize> {
        response.tool_calls().position(|c| c.tool_call_id == id)
    }

    /// Every call, then each result taking the oldest open call with its id; a call whose id a
    /// later response reuses is shadowed at that point; what is left open follows, in call
    /// order.
    pub(super) fn dangling_calls(
        messages: &[ModelMessage],
        repair_last_response: bool,
    ) -> Vec<(usize, Vec<*const ToolCallPart>)> {
        let mut open: Vec<(usize, usize, &ToolCallPart)> = Vec::new();
        let mut dangling: Vec<(usize, Vec<*const ToolCallPart>)> = Vec::new();
        let push = |dangling: &mut Vec<(usize, Vec<*const ToolCallPart>)>, i: usize, c: &ToolCallPart| match dangling
            .iter_mut()
            .find(|(j, _)| *j == i)
        {
            Some((_, calls)) => calls.push(c),
            None => dangling.push((i, vec![c as *const _])),
        };
        for (index, m) in messages.iter().enumerate() {
            match m {
                ModelMessage::Response(r) => {
                    for (position, call) in r.tool_calls().enumerate() {
                        let same: Vec<usize> =
                            (0..open.len()).filter(|&k| open[k].2.tool_call_id == call.tool_call_id).collect();
                        if same.last().is_some_and(|&k| open[k].0 != index) {
                            for &k in &same {
                                push(&mut dangling, open[k].0, open[k].2);
                            }
                            open.retain(|o| o.2.tool_call_id != call.tool_call_id);
                        }
                        open.push((index, position, call));
                    }
                }
                ModelMessage::Request(r) => {
                    for id in r.parts.iter().filter_map(result_id) {
                        if let Some(k) = open.iter().position(|o| o.2.tool_call_id == id) {
                            open.remove(k);
                        }
                    }
                }
            }
        }
        open.sort_by_key(|o| (o.0, o.1));
        for (i, _, c) in open {
            push(&mut dangling, i, c);
        }
        if !repair_last_response
            && let Some(last) = messages.iter().rposition(|m| matches!(m, ModelMessage::Response(_)))
        {
            dangling.retain(|(i, _)| *i != last);
        }
        dangling.sort_by_key(|(i, _)| *i);
        dangling
    }
}

fn generated() -> impl proptest::strategy::Strategy<Value = Vec<ModelMessage>> {
    use proptest::prelude::*;
    let answers = |ids: &[u8], at: u8| {
        let mut parts: Vec<ModelRequestPart> = ids.iter().map(|i| ret(&format!("c{i}"))).collect();
        let at = (at as usize) % (parts.len() + 1);
        if at.is_multiple_of(3) {
            parts.insert(at, ModelRequestPart::UserPrompt(UserPromptPart::new("p")));
        }
        ModelMessage::Request(ModelRequest::new(parts))
    };
    let response = |ids: &[u8]| {
        let ids: Vec<String> = ids.iter().map(|i| format!("c{i}")).collect();
        calls(&ids.iter().map(String::as_str).collect::<Vec<_>>())
    };
    // Up to 20 calls from a pool of 24 ids: responses past the scan limit, repeated ids,
    // results in and out of order, prompts among them; calls answered one by one in call
    // order, repeated ids included; and calls with every one answered, in order or swapped.
    let ids = || prop::collection::vec(0u8..24, 0..20);
    let one = prop_oneof![
        ids().prop_map(move |ids| vec![response(&ids)]),
        (ids(), any::<u8>()).prop_map(move |(ids, at)| vec![response(&ids), answers(&ids, at)]),
        (ids(), any::<u8>()).prop_map(move |(ids, at)| vec![answers(&ids, at)]),
        (prop::collection::hash_set(0u8..24, 0..20), any::<u8>(), any::<usize>()).prop_map(move |(ids, at, swap)| {
            let ids: Vec<u8> = ids.into_iter().collect();
            let mut answered = ids.clone();
            if swap % 2 == 1 && answered.len() > 1 {
                let n = answered.len();
                answered.swap(swap % n, (swap / 2) % n);
            }
            vec![response(&ids), answers(&answered, at)]
        }),
    ];
    prop::collection::vec(one, 0..5).prop_map(|m| m.into_iter().flatten().collect())
}

/// Messages as JSON without their timestamps.
fn untimed(messages: &[ModelMessage]) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.remove("timestamp");
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v = serde_json::to_value(messages).unwrap_or_default();
    strip(&mut v);
    v
}

proptest::proptest! {
    #[test]
    fn fast_checks_agree_with_their_plain_definitions(history in generated()) {
        for w in history.windows(2) {
            if let (ModelMessage::Response(a), ModelMessage::Request(b)) = (&w[0], &w[1]) {
                proptest::prop_assert_eq!(answers_each_call_once(a, b).is_some(), plain::answers_each_call_once(a, b));
                let ranks = Ranks::new(a);
                for id in b.parts.iter().filter_map(result_id) {
                    proptest::prop_assert_eq!(ranks.first(id), plain::rank(a, id));
                }
            }
        }
        for last in [true, false] {
            let mut fast: Vec<(usize, Vec<*const ToolCallPart>)> = dangling_calls(&history, last)
                .into_iter()
                .map(|(i, calls)| (i, calls.into_iter().map(|c| c as *const _).collect()))
                .collect();
            fast.sort_by_key(|(i, _)| *i);
            proptest::prop_assert_eq!(fast, plain::dangling_calls(&history, last));
        }
        // What the shortcut lets through, the full repair leaves as it is.
        for last in [true, false] {
            if is_sound(&history, last).is_some() {
                proptest::prop_assert!(drop_orphaned_results(&history).is_none());
                proptest::prop_assert!(repair_dangling_calls(&history, last).is_none());
                proptest::prop_assert!(merge_consecutive_requests(&history).is_none());
            }
        }
        // The order the soundness check sees is the one the reordering finds, and sending is
        // cleaning, then reordering.
        match is_sound(&history, true) {
            Some(InOrder::Yes) => proptest::prop_assert!(order_results_by_call(&history).is_none()),
            Some(InOrder::No) => proptest::prop_assert!(order_results_by_call(&history).is_some()),
            None => {}
        }
        let cleaned = clean(&history, true);
        let reference = order_results_by_call(&cleaned).unwrap_or_else(|| cleaned.to_vec());
        // (Repairs stamp what they make with the time: compared without timestamps.)
        proptest::prop_assert_eq!(untimed(&sendable(&history)), untimed(&reference));
        // A run's history checked as it grows (and as its last message goes) is sent as
        // the whole would be.
        // Or taken back to its first `cut` messages, the new last one changed (as a run
        // changes its last request), and grown again.
        for cut in 1..history.len() {
            let known = SoundPrefix::default();
            proptest::prop_assert_eq!(untimed(&sendable_known(&history, &known)), untimed(&sendable(&history)));
            for len in (cut..history.len()).rev() {
                known.last_may_change(len);
            }
            let mut changed = history.clone();
            match &mut changed[cut - 1] {
                ModelMessage::Request(r) => r.parts.push(ret("zz")),
                ModelMessage::Response(r) => r.parts.push(ModelResponsePart::ToolCall(ToolCallPart::new("t", serde_json::json!({}), "zz"))),
            }
            proptest::prop_assert_eq!(untimed(&sendable_known(&changed, &known)), untimed(&sendable(&changed)));
        }
        // Sending orders each request's results as the calls they answer.
        let sent = sendable(&history);
        for w in sent.windows(2) {
            if let (ModelMessage::Response(a), ModelMessage::Request(b)) = (&w[0], &w[1]) {
                let ranks: Vec<usize> = b.parts.iter().filter_map(result_id).filter_map(|id| plain::rank(a, id)).collect();
                proptest::prop_assert!(ranks.windows(2).all(|r| r[0] <= r[1]), "{ranks:?}");
            }
        }
    }
}

#[test]
fn what_is_sent_has_results_in_call_order_in_their_places() {
    let prompt = ModelRequestPart::UserPrompt(UserPromptPart::new("again"));
    let history = vec![
        calls(&["a", "b", "c"]),
        ModelMessage::Request(ModelRequest::new(vec![ret("c"), ret("a"), prompt, ret("b")])),
    ];
    let sent = sendable(&history);
    // The prompt between the results moves after them, and the results follow the calls.
    assert_eq!(ids(&sent[1]), ["a", "b", "c", "prompt"]);
    // A dangling call answered `interrupted` takes its call's place too.
    let history = vec![calls(&["a", "b", "c"]), ModelMessage::Request(ModelRequest::new(vec![ret("a"), ret("c")]))];
    assert_eq!(ids(&sendable(&history)[1]), ["a", "b", "c"]);
    // In order already: nothing copied.
    let history = vec![calls(&["a", "b"]), ModelMessage::Request(ModelRequest::new(vec![ret("a"), ret("b")]))];
    assert!(matches!(sendable(&history), Cow::Borrowed(_)));
}
