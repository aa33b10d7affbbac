//! `Option<Duration>` as a number of seconds in JSON, as Pydantic AI writes timeouts.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serializer};

/// Writes `Some(d)` as its seconds (`0.05`), `None` as null.
pub(crate) fn serialize<S: Serializer>(value: &Option<Duration>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(d) => serializer.serialize_f64(d.as_secs_f64()),
        None => serializer.serialize_none(),
    }
}

/// Reads seconds (a non-negative finite number that fits a `Duration`) or null.
pub(crate) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Duration>, D::Error> {
    match Option::<f64>::deserialize(deserializer)? {
        None => Ok(None),
        Some(secs) => Duration::try_from_secs_f64(secs)
            .map(Some)
            .map_err(|_| serde::de::Error::custom(format!("{secs} is not a number of seconds a timeout can have"))),
    }
}
