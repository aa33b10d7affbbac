//! Message histories from storage or another process: any bytes as history JSON. Parsing must
//! never panic, and a history that parses must be written and read back unchanged.

#![no_main]

use libfuzzer_sys::fuzz_target;
use toolsmith::messages::parse_history;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(history) = parse_history(text) else { return };
    let written = serde_json::to_string(&history).expect("a parsed history serialises");
    let again =
        parse_history(&written).unwrap_or_else(|e| panic!("toolsmith cannot read what it wrote ({e}): {written}"));
    assert_eq!(history, again, "a history changed in a write/read round trip");
});
