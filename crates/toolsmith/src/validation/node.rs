//! The compiled validator's nodes: a flat table in which `$ref`s are indexes, so recursive
//! schemas are cycles of indexes.

use std::collections::HashMap;

use regex::Regex;
use serde_json::Value;

use super::Options;
use super::text::Num;

/// Index of a node in [`Compiled::nodes`].
pub(super) type NodeId = usize;

/// A schema compiled for validation.
#[derive(Debug)]
pub(crate) struct Compiled {
    pub(super) nodes: Vec<Node>,
    pub(super) root: NodeId,
    pub(super) options: Options,
}

/// One validation step.
#[derive(Debug)]
pub(super) enum Node {
    /// Anything, unchanged (`{}`, `true`, unknown shapes).
    Any,
    /// `None`.
    Null,
    /// `bool`.
    Bool,
    /// `int`, with constraints if any.
    Int(Option<Box<NumBounds>>),
    /// `float`, with constraints if any.
    Float(Option<Box<NumBounds>>),
    /// `str`, with constraints if any.
    Str(Option<Box<StrBounds>>),
    /// `list[items]`.
    List(Box<ListNode>),
    /// `tuple[...]` from `prefixItems`.
    Tuple(Box<TupleNode>),
    /// `dict[str, values]`.
    Dict(Box<DictNode>),
    /// A model or typed dict.
    Object(Box<ObjectNode>),
    /// `Literal[...]`.
    Literal(Box<LiteralNode>),
    /// A smart-mode union.
    Union(Box<[Member]>),
    /// A union with a discriminator property.
    Tagged(Box<TaggedNode>),
    /// `Optional[inner]`.
    Nullable(NodeId),
    /// Every one of these (`allOf`).
    AllOf(Box<[NodeId]>),
    /// Another node (a `$ref`); removed once compiling is done.
    Ref(NodeId),
}

/// Numeric constraints, checked in pydantic-core's order.
#[derive(Debug, Default)]
pub(super) struct NumBounds {
    pub(super) multiple_of: Option<Num>,
    pub(super) le: Option<Num>,
    pub(super) lt: Option<Num>,
    pub(super) ge: Option<Num>,
    pub(super) gt: Option<Num>,
    /// Whether the schema itself has a constraint (not only the range of a Rust type's
    /// `format`): Pydantic names such a union member `constrained-int`, not `int`.
    pub(super) constrained: bool,
    /// The bounds as an inclusive range of integers, when they are all integers and there is no
    /// `multipleOf`: an integer input is checked by two comparisons.
    pub(super) int_range: Option<(i128, i128)>,
}

impl NumBounds {
    /// [`NumBounds::int_range`], from the bounds.
    pub(super) fn with_int_range(mut self) -> Self {
        self.int_range = self.integer_range();
        self
    }

    fn integer_range(&self) -> Option<(i128, i128)> {
        let int = |b: Option<Num>, none: i128| match b {
            None => Some(none),
            Some(Num::Int(i)) => Some(i),
            Some(Num::Float(_)) => None,
        };
        if self.multiple_of.is_some() {
            return None;
        }
        let lo = int(self.ge, i128::MIN)?.max(int(self.gt, i128::MIN)?.saturating_add(1));
        let hi = int(self.le, i128::MAX)?.min(int(self.lt, i128::MAX)?.saturating_sub(1));
        Some((lo, hi))
    }
}

/// String constraints.
#[derive(Debug)]
pub(super) struct StrBounds {
    pub(super) min: Option<usize>,
    pub(super) max: Option<usize>,
    pub(super) pattern: Option<(Regex, String)>,
}

#[derive(Debug)]
pub(super) struct ListNode {
    pub(super) items: NodeId,
    pub(super) min: Option<usize>,
    pub(super) max: Option<usize>,
}

#[derive(Debug)]
pub(super) struct TupleNode {
    pub(super) prefix: Vec<NodeId>,
    /// Items after the prefix: `None` when there may be none.
    pub(super) rest: Option<NodeId>,
}

#[derive(Debug)]
pub(super) struct DictNode {
    pub(super) values: NodeId,
    pub(super) min: Option<usize>,
    pub(super) max: Option<usize>,
}

/// What happens to input keys that are not properties.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Extra {
    /// `extra_forbidden` error (`additionalProperties: false`).
    Forbid,
    /// Dropped from the output (Pydantic's default `extra='ignore'`).
    Ignore,
    /// Validated against this node and kept (`additionalProperties: true` or a schema).
    Keep(NodeId),
}

#[derive(Debug)]
pub(super) struct Field {
    pub(super) name: String,
    pub(super) node: NodeId,
    pub(super) required: bool,
    pub(super) default: Option<Value>,
}

#[derive(Debug)]
pub(super) struct ObjectNode {
    pub(super) fields: Vec<Field>,
    /// Field index by name, for objects with many fields.
    pub(super) index: Option<HashMap<String, usize>>,
    pub(super) extra: Extra,
    /// The model's name: set for a model, `None` for a typed dict.
    pub(super) title: Option<String>,
    /// Every field's name (in order) with a null value: the output of an input that gives every
    /// field in order is a copy of it with the values set, which costs no key hashing.
    pub(super) template: serde_json::Map<String, Value>,
}

impl ObjectNode {
    pub(super) fn has_field(&self, key: &str) -> bool {
        match &self.index {
            Some(index) => index.contains_key(key),
            None => self.fields.iter().any(|f| f.name == key),
        }
    }
}

#[derive(Debug)]
pub(super) struct LiteralNode {
    pub(super) values: Vec<Value>,
    /// "Input should be 'a' or 'b'".
    pub(super) msg: String,
}

/// A union member and the tag Pydantic puts in the location of its errors.
#[derive(Debug)]
pub(super) struct Member {
    pub(super) node: NodeId,
    pub(super) tag: String,
}

#[derive(Debug)]
pub(super) struct TaggedNode {
    pub(super) property: String,
    pub(super) choices: Vec<(String, NodeId)>,
    /// "'cat', 'dog'".
    pub(super) expected: String,
    /// Whether every choice is a model (non-objects then get `model_attributes_type`).
    pub(super) models: bool,
}

impl Node {
    pub(super) fn children_mut(&mut self, f: &mut impl FnMut(&mut NodeId)) {
        match self {
            Node::Any | Node::Null | Node::Bool | Node::Int(_) | Node::Float(_) => {}
            Node::Str(_) | Node::Literal(_) => {}
            Node::List(l) => f(&mut l.items),
            Node::Tuple(t) => {
                t.prefix.iter_mut().for_each(&mut *f);
                if let Some(rest) = &mut t.rest {
                    f(rest);
                }
            }
            Node::Dict(d) => f(&mut d.values),
            Node::Object(o) => {
                o.fields.iter_mut().for_each(|field| f(&mut field.node));
                if let Extra::Keep(id) = &mut o.extra {
                    f(id);
                }
            }
            Node::Union(members) => members.iter_mut().for_each(|m| f(&mut m.node)),
            Node::Tagged(t) => t.choices.iter_mut().for_each(|(_, id)| f(id)),
            Node::Nullable(id) | Node::Ref(id) => f(id),
            Node::AllOf(ids) => ids.iter_mut().for_each(f),
        }
    }
}
