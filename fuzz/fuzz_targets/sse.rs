//! Server-sent events from a provider: any bytes, cut into chunks anywhere. Parsing never panics,
//! gives the same events however the bytes are chunked, and no event is larger than the cap.

#![no_main]

use libfuzzer_sys::fuzz_target;
use toolsmith::__private::sse_events;

const MAX: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let Some((&cut, body)) = data.split_first() else { return };
    let whole = sse_events([body], MAX);
    // The same bytes in chunks of a size taken from the first byte, and one byte at a time.
    let size = (cut as usize % 17) + 1;
    let chunked = sse_events(body.chunks(size), MAX);
    let bytes = sse_events(body.chunks(1), MAX);
    match (&whole, &chunked, &bytes) {
        (Ok(a), Ok(b), Ok(c)) => {
            assert_eq!(a, b, "chunks of {size} change the events");
            assert_eq!(a, c, "single bytes change the events");
            for (event, data) in a {
                assert!(event.len() + data.len() <= MAX + 1, "an event past the cap: {} bytes", data.len());
            }
        }
        (Err(_), Err(_), Err(_)) => {}
        _ => panic!("chunking decides whether the cap is passed: {whole:?} / {chunked:?} / {bytes:?}"),
    }
});
