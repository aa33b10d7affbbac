//! The clock and the id source of a durable run: the same answers on every replay.

use std::sync::Mutex;

use chrono::{DateTime, Utc};
use toolsmith::durable::RunSource;
use uuid::Uuid;

/// Time is the time of the last journaled step (the turn's start, then each model request and
/// tool call as it finished), so every message made between two steps carries the same stamp
/// on every replay; ids come from a generator seeded with the invocation's seed, which Restate
/// keeps across retries, drawn in the run's own (deterministic) order.
pub(crate) struct ReplaySource {
    state: Mutex<State>,
}

struct State {
    now: DateTime<Utc>,
    rng: u64,
}

impl ReplaySource {
    pub(crate) fn new(seed: u64, start: DateTime<Utc>) -> Self {
        ReplaySource { state: Mutex::new(State { now: start, rng: seed }) }
    }

    /// Moves the clock to a journaled step's time (never backwards).
    pub(crate) fn advance(&self, at: DateTime<Utc>) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if at > state.now {
            state.now = at;
        }
    }
}

/// SplitMix64: a full-period 64-bit generator with good statistical quality; ids need to be
/// unique within an invocation and stable across its replays, not secret.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl RunSource for ReplaySource {
    fn now(&self) -> DateTime<Utc> {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).now
    }

    fn new_uuid(&self) -> Uuid {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let high = splitmix64(&mut state.rng);
        let low = splitmix64(&mut state.rng);
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&high.to_be_bytes());
        bytes[8..].copy_from_slice(&low.to_be_bytes());
        uuid::Builder::from_random_bytes(bytes).into_uuid()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_draws_the_same_ids_and_time_only_moves_forward() {
        let start = DateTime::from_timestamp(1_000, 0).unwrap();
        let a = ReplaySource::new(42, start);
        let b = ReplaySource::new(42, start);
        let ids: Vec<Uuid> = (0..3).map(|_| a.new_uuid()).collect();
        assert_eq!(ids, (0..3).map(|_| b.new_uuid()).collect::<Vec<_>>());
        assert_ne!(ids[0], ids[1]);
        assert_eq!(ids[0].get_version_num(), 4);
        assert_ne!(ReplaySource::new(43, start).new_uuid(), ids[0]);
        a.advance(DateTime::from_timestamp(2_000, 0).unwrap());
        a.advance(DateTime::from_timestamp(1_500, 0).unwrap());
        assert_eq!(a.now().timestamp(), 2_000);
    }
}
