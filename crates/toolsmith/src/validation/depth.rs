//! How deeply JSON values nest, measured without recursion, so that values too deep for a
//! recursive walk (validation, cloning, dropping, serde) are refused before one starts.

use serde_json::Value;

use super::LocItem;

/// Where a value first nests deeper than a limit: the location of the first array or object
/// past it, from the root.
pub(crate) fn too_deep(value: &Value, max: usize) -> Option<Vec<LocItem>> {
    // The common case, a value well within the limit, without the walk's allocations.
    if within(value, max.min(SHALLOW)) {
        return None;
    }
    let mut first = None;
    walk(value, max, &mut |loc| {
        first = Some(loc.to_vec());
        false
    });
    first
}

/// How deep [`within`] looks before the walk takes over (its recursion is bounded by it).
const SHALLOW: usize = 64;

/// Whether `value` nests arrays and objects at most `budget` levels (`budget` bounds the
/// recursion: a deeper value answers `false` at that depth, and the caller walks it).
fn within(value: &Value, budget: usize) -> bool {
    match value {
        Value::Array(items) => budget > 0 && items.iter().all(|v| within(v, budget - 1)),
        Value::Object(map) => budget > 0 && map.values().all(|v| within(v, budget - 1)),
        _ => true,
    }
}

/// The locations of every array or object that nests deeper than `max` (none inside another).
pub(crate) fn cut_points(value: &Value, max: usize) -> Vec<Vec<LocItem>> {
    let mut all = Vec::new();
    walk(value, max, &mut |loc| {
        all.push(loc.to_vec());
        true
    });
    all
}

/// Calls `found` with the location of each array or object past depth `max` (without looking
/// inside it), until it returns `false`. Iterative: the walk's own memory is on the heap; the
/// location is built only for what is found (the walk itself borrows keys).
fn walk(value: &Value, max: usize, found: &mut dyn FnMut(&[LocItem]) -> bool) {
    /// A container being walked: the rest of its children, with their location items.
    enum Frame<'v> {
        Array(std::iter::Enumerate<std::slice::Iter<'v, Value>>),
        Object(serde_json::map::Iter<'v>),
    }
    /// A location item, borrowed from the value.
    #[derive(Clone, Copy)]
    enum Item<'v> {
        Index(usize),
        Key(&'v str),
    }
    fn open(v: &Value) -> Option<Frame<'_>> {
        match v {
            Value::Array(items) if !items.is_empty() => Some(Frame::Array(items.iter().enumerate())),
            Value::Object(map) if !map.is_empty() => Some(Frame::Object(map.iter())),
            _ => None,
        }
    }
    fn owned(path: &[Item<'_>]) -> Vec<LocItem> {
        path.iter()
            .map(|item| match *item {
                Item::Index(i) => LocItem::Index(i),
                Item::Key(k) => LocItem::Key(k.to_string()),
            })
            .collect()
    }
    let is_container = |v: &Value| matches!(v, Value::Array(_) | Value::Object(_));
    if !is_container(value) {
        return;
    }
    if max == 0 {
        found(&[]);
        return;
    }
    // The usual value: one level of scalars, nothing to walk.
    let flat = match value {
        Value::Array(items) => !items.iter().any(is_container),
        Value::Object(map) => !map.values().any(is_container),
        _ => true,
    };
    if flat {
        return;
    }
    // `stack[i]` walks the container at depth `i + 1`; `path[i]` is the item of it being looked at.
    let mut stack: Vec<Frame<'_>> = open(value).into_iter().collect();
    let mut path: Vec<Item<'_>> = Vec::new();
    while let Some(frame) = stack.last_mut() {
        let next = match frame {
            Frame::Array(it) => it.next().map(|(i, v)| (Item::Index(i), v)),
            Frame::Object(it) => it.next().map(|(k, v)| (Item::Key(k.as_str()), v)),
        };
        let Some((item, child)) = next else {
            stack.pop();
            continue;
        };
        path.truncate(stack.len() - 1);
        path.push(item);
        if is_container(child) {
            if stack.len() >= max {
                if !found(&owned(&path)) {
                    return;
                }
            } else if let Some(frame) = open(child) {
                stack.push(frame);
            }
        }
    }
}

/// The value at `loc` in `doc`.
pub(crate) fn locate<'v>(mut slot: &'v mut Value, loc: &[LocItem]) -> Option<&'v mut Value> {
    for item in loc {
        slot = match (item, slot) {
            (LocItem::Index(i), Value::Array(items)) => items.get_mut(*i)?,
            (LocItem::Key(k), Value::Object(map)) => map.get_mut(k)?,
            _ => return None,
        };
    }
    Some(slot)
}

/// Drops a value of any depth without recursing (a plain drop of a value nested some thousands
/// of levels deep overflows the stack).
pub(crate) fn dispose(value: Value) {
    let mut pending = vec![value];
    while let Some(v) = pending.pop() {
        match v {
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => pending.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn nested(depth: usize) -> Value {
        let mut v = json!(1);
        for i in 0..depth {
            v = if i % 2 == 0 { Value::Array(vec![json!(0), v]) } else { json!({"a": 1, "b": v}) };
        }
        v
    }

    #[test]
    fn measures_nesting_of_arrays_and_objects() {
        assert_eq!(too_deep(&json!(1), 0), None);
        assert_eq!(too_deep(&json!([]), 0), Some(vec![]));
        assert_eq!(too_deep(&json!([]), 1), None);
        assert_eq!(too_deep(&json!([[]]), 1), Some(vec![LocItem::Index(0)]));
        assert_eq!(too_deep(&json!({"a": [1, {"b": {}}]}), 4), None);
        assert_eq!(
            too_deep(&json!({"a": [1, {"b": {}}]}), 3),
            Some(vec![LocItem::Key("a".into()), LocItem::Index(1), LocItem::Key("b".into())])
        );
        assert_eq!(too_deep(&json!({"a": [1, {"b": {}}]}), 2), Some(vec![LocItem::Key("a".into()), LocItem::Index(1)]));
        for depth in [1, 2, 5, 127, 128] {
            let v = nested(depth);
            assert_eq!(too_deep(&v, depth), None, "{depth}");
            let loc = too_deep(&v, depth - 1).unwrap();
            assert_eq!(loc.len(), depth - 1, "{depth}");
            assert!(loc.iter().all(|l| matches!(l, LocItem::Index(1)) || *l == LocItem::Key("b".into())));
        }
        // A sibling walked earlier does not count against a later one.
        assert_eq!(too_deep(&json!([[[1]], [2], {"x": [3]}]), 3), None);
        assert_eq!(
            too_deep(&json!([[[1]], [2], {"x": [[3]]}]), 3),
            Some(vec![LocItem::Index(2), LocItem::Key("x".into()), LocItem::Index(0)])
        );
    }

    #[test]
    fn cut_points_are_every_outermost_container_past_the_limit() {
        let v = json!([[[1]], [2], {"x": [[3], 4, [[5]]]}, [[[[6]]]]]);
        let cuts = cut_points(&v, 2);
        let idx = LocItem::Index;
        assert_eq!(cuts, vec![vec![idx(0), idx(0)], vec![idx(2), LocItem::Key("x".into())], vec![idx(3), idx(0)],]);
        assert_eq!(cut_points(&v, 5), Vec::<Vec<LocItem>>::new());
    }
}
