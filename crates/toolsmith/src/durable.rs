//! Where a run takes its time and its fresh ids from, so that a durable execution engine can
//! replay a run and get the same history.
//!
//! A run reads the clock for message timestamps and draws random ids for its run id, its
//! conversation id (when the history has none) and the tool-call ids it makes itself. By
//! default these come from the system clock and the operating system's randomness. An engine
//! that replays a run from a journal (such as `toolsmith-restate` on Restate) runs it inside
//! [`scope`] with a [`RunSource`] whose answers are deterministic for the invocation: the same
//! timestamps and ids on every replay.
//!
//! The scope is task-local: it covers the run's own task, which is where every message and id
//! is made (tools that run on other tasks or threads do not make any).
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use toolsmith::durable::{self, RunSource};
//! use toolsmith::prelude::*;
//!
//! /// A fixed clock and counted ids.
//! struct Fixed(AtomicU64);
//!
//! impl RunSource for Fixed {
//!     fn now(&self) -> chrono::DateTime<chrono::Utc> {
//!         chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap()
//!     }
//!     fn new_uuid(&self) -> uuid::Uuid {
//!         uuid::Uuid::from_u128(self.0.fetch_add(1, Ordering::Relaxed) as u128)
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), AgentRunError> {
//! let agent = Agent::builder(TestModel::default()).build()?;
//! let result = durable::scope(Arc::new(Fixed(AtomicU64::new(1))), agent.run("hi")).await?;
//! let history = serde_json::to_value(result.all_messages()).unwrap();
//! assert_eq!(history[0]["parts"][0]["timestamp"], "2023-11-14T22:13:20Z");
//! assert_eq!(history[1]["timestamp"], "2023-11-14T22:13:20Z");
//! assert_eq!(history[1]["run_id"], "018bcfe5-6800-7000-8000-000000000002");
//! # Ok(())
//! # }
//! ```

use std::future::IntoFuture;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use uuid::Uuid;

/// The clock and the source of fresh ids of the runs inside a [`scope`].
pub trait RunSource: Send + Sync + 'static {
    /// The time to stamp on a message made now.
    fn now(&self) -> DateTime<Utc>;
    /// A fresh random id (run ids, conversation ids, tool-call ids the run makes).
    fn new_uuid(&self) -> Uuid;
}

tokio::task_local! {
    static SOURCE: Arc<dyn RunSource>;
}

/// Runs `fut` with `source` as the clock and the id source of every run polled inside it.
pub async fn scope<F: IntoFuture>(source: Arc<dyn RunSource>, fut: F) -> F::Output {
    SOURCE.scope(source, fut.into_future()).await
}

/// The current time: the scope's clock, else the system's.
pub(crate) fn now() -> DateTime<Utc> {
    SOURCE.try_with(|s| s.now()).unwrap_or_else(|_| Utc::now())
}

/// A fresh random (version 4) id: the scope's, else the system's.
pub(crate) fn new_v4() -> Uuid {
    SOURCE.try_with(|s| s.new_uuid()).unwrap_or_else(|_| Uuid::new_v4())
}

/// A fresh time-ordered (version 7) id: inside a scope, made of the scope's clock and id
/// source; else the system's.
pub(crate) fn new_v7() -> Uuid {
    match SOURCE.try_with(|s| (s.now(), s.new_uuid())) {
        Ok((time, random)) => {
            let millis = u64::try_from(time.timestamp_millis()).unwrap_or(0);
            let mut tail = [0u8; 10];
            tail.copy_from_slice(&random.as_bytes()[6..]);
            uuid::Builder::from_unix_timestamp_millis(millis, &tail).into_uuid()
        }
        Err(_) => Uuid::now_v7(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed;
    impl RunSource for Fixed {
        fn now(&self) -> DateTime<Utc> {
            DateTime::from_timestamp(1_000, 0).unwrap()
        }
        fn new_uuid(&self) -> Uuid {
            Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef)
        }
    }

    #[tokio::test]
    async fn inside_a_scope_time_and_ids_come_from_the_source() {
        let (t, v4, v7) = scope(Arc::new(Fixed), async { (now(), new_v4(), new_v7()) }).await;
        assert_eq!(t.timestamp(), 1_000);
        assert_eq!(v4, Fixed.new_uuid());
        assert_eq!(v7.get_version_num(), 7);
        assert_eq!(v7.get_timestamp().map(|ts| ts.to_unix().0), Some(1_000));
        let again = scope(Arc::new(Fixed), async { new_v7() }).await;
        assert_eq!(v7, again, "the same source gives the same id");
    }

    #[tokio::test]
    async fn outside_a_scope_they_come_from_the_system() {
        assert_ne!(new_v4(), new_v4());
        assert!((Utc::now() - now()).num_seconds().abs() < 5);
    }
}
