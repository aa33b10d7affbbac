use super::*;

fn retry_after(name: &'static str, value: &str) -> Option<Duration> {
    let mut h = HeaderMap::new();
    h.insert(name, HeaderValue::from_bytes(value.as_bytes()).unwrap());
    parse_retry_after(&h)
}

#[test]
fn retry_after_seconds_and_ms() {
    let mut h = HeaderMap::new();
    h.insert("retry-after", HeaderValue::from_static("2"));
    assert_eq!(parse_retry_after(&h), Some(Duration::from_secs(2)));
    h.insert("retry-after-ms", HeaderValue::from_static("150"));
    assert_eq!(parse_retry_after(&h), Some(Duration::from_millis(150)));
}

#[test]
fn retry_after_values_of_each_kind() {
    for name in ["retry-after", "retry-after-ms"] {
        // Numbers too large for a wait are a wait too long, not junk.
        for huge in ["99999999999999999999", &"9".repeat(400)] {
            let mut h = HeaderMap::new();
            h.insert(name, HeaderValue::from_str(huge).unwrap());
            assert!(parse_retry_after(&h).unwrap() > Duration::from_secs(1 << 40), "{name}: {huge}");
        }
        // Not a number of (milli)seconds: no wait asked for, the backoff applies.
        for junk in ["inf", "+inf", "Infinity", "1e300", "1e20", "-1", "-inf", "NaN", "", "soon", "1e", "0x10"] {
            assert_eq!(retry_after(name, junk), None, "{name}: {junk}");
        }
        for junk in ["-0.5", "+2", "1.", ".5", "1.2.3", "2 s", "٣"] {
            assert_eq!(retry_after(name, junk), None, "{name}: {junk}");
        }
        assert_eq!(retry_after(name, "0"), Some(Duration::ZERO));
    }
    assert_eq!(retry_after("retry-after", "  2  "), Some(Duration::from_secs(2)));
    assert_eq!(retry_after("retry-after", "\t3"), Some(Duration::from_secs(3)));
    assert_eq!(retry_after("retry-after", "1.5"), Some(Duration::from_millis(1500)));
    assert_eq!(retry_after("retry-after-ms", " 250 "), Some(Duration::from_millis(250)));
    assert_eq!(retry_after("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"), Some(Duration::ZERO));
    assert!(retry_after("retry-after", "Fri, 31 Dec 9999 23:59:59 GMT").unwrap() > Duration::from_secs(1 << 30));
    // An unusable `retry-after-ms` leaves `Retry-After` to decide.
    let mut h = HeaderMap::new();
    h.insert("retry-after-ms", HeaderValue::from_static("inf"));
    h.insert("retry-after", HeaderValue::from_static("4"));
    assert_eq!(parse_retry_after(&h), Some(Duration::from_secs(4)));
}

#[test]
fn http_dates_in_each_format() {
    let now = chrono::DateTime::parse_from_rfc3339("1994-11-06T08:49:00Z").unwrap().to_utc();
    for date in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
        assert_eq!(retry_after_value(date, now), Some(Duration::from_secs(37)), "{date}");
        assert_eq!(retry_after_value(&format!(" {date}\t"), now), Some(Duration::from_secs(37)), "{date}");
    }
    assert_eq!(retry_after_value("Sun, 06 Nov 1994 08:48:00 GMT", now), Some(Duration::ZERO));
}

/// A header value and the wait it stands for (`None`: junk, the backoff applies).
fn retry_after_case() -> impl proptest::strategy::Strategy<Value = (String, Option<Duration>)> {
    use proptest::prelude::*;
    let pad = || "[ \t]{0,3}";
    let padded = |pad_l: String, v: String, pad_r: String| format!("{pad_l}{v}{pad_r}");
    prop_oneof![
        // Padded whole seconds, from none to more than any `max_retry_after`.
        (pad(), 0u64..100_000, pad())
            .prop_map(move |(l, n, r)| (padded(l, n.to_string(), r), Some(Duration::from_secs(n)))),
        // Seconds with a fraction.
        (pad(), 0u64..1000, 0u32..1000, pad()).prop_map(move |(l, s, ms, r)| {
            (padded(l, format!("{s}.{ms:03}"), r), Some(Duration::from_millis(s * 1000 + u64::from(ms))))
        }),
        // Huge numbers: a wait longer than any bound.
        (pad(), "[1-9][0-9]{20,60}", pad()).prop_map(move |(l, n, r)| (padded(l, n, r), Some(Duration::MAX))),
        // An HTTP date, in each format, up to a day ahead of the clock the value is read at.
        (pad(), 0i64..86_400, 0usize..3, pad()).prop_map(move |(l, ahead, format, r)| {
            let at = now() + chrono::TimeDelta::seconds(ahead);
            let text =
                at.format(["%a, %d %b %Y %H:%M:%S GMT", "%A, %d-%b-%y %H:%M:%S GMT", "%a %b %e %H:%M:%S %Y"][format]);
            (padded(l, text.to_string(), r), Some(Duration::from_secs(ahead as u64)))
        }),
        // Floats in other spellings, signs, words: junk.
        prop_oneof![
            Just("inf".to_string()),
            Just("-inf".to_string()),
            Just("NaN".to_string()),
            Just("Infinity".to_string()),
            "-[0-9]{1,5}",
            "[0-9]{1,3}e[0-9]{1,3}",
            "[0-9]{1,3}\\.[0-9]{0,3}e-?[0-9]{1,2}",
            "\\+[0-9]{1,4}",
            "[0-9]{1,4}(s| s|ms|\\.)",
            "[a-zA-Z][a-zA-Z ,:-]{0,20}",
        ]
        .prop_map(|junk| (junk, None)),
    ]
}

/// The clock the generated dates are read at (whole seconds: HTTP dates have no fraction).
fn now() -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339("2026-03-01T12:00:00Z").unwrap().to_utc()
}

proptest::proptest! {
    /// Whatever `Retry-After` says, the wait before a retry is the value asked for (refused
    /// at once when longer than the bound, as documented) or the normal backoff.
    #[test]
    fn the_wait_is_the_value_asked_for_or_the_backoff(
        (raw, expected) in retry_after_case(),
        backoff_ms in 0u64..10_000,
        max_s in 0u64..120,
    ) {
        let (backoff, max) = (Duration::from_millis(backoff_ms), Duration::from_secs(max_s));
        let parsed = retry_after_value(&raw, now());
        proptest::prop_assert_eq!(parsed, expected, "{:?}", raw);
        let decided = wait_before_retry(parsed, backoff, max);
        match expected {
            None => proptest::prop_assert_eq!(decided, Ok(backoff)),
            Some(asked) if asked > max => proptest::prop_assert_eq!(decided, Err(asked)),
            Some(asked) => proptest::prop_assert_eq!(decided, Ok(asked)),
        }
    }

    /// Any text at all as `Retry-After` or `retry-after-ms`: read without a panic, as a
    /// wait only when it is one.
    #[test]
    fn any_header_text_is_read_without_panicking(raw in "\\PC{0,40}") {
        if let Some(wait) = retry_after_value(&raw, now()) {
            let first = trim_ows(&raw).chars().next();
            proptest::prop_assert!(first.is_some_and(|c| c.is_ascii_alphanumeric()), "{:?} -> {:?}", raw, wait);
        }
        if decimal_seconds(&raw, 1000.0).is_some() {
            proptest::prop_assert!(trim_ows(&raw).bytes().all(|b| b.is_ascii_digit() || b == b'.'));
        }
    }
}

#[test]
fn backoff_grows_and_is_capped() {
    let r = RetryConfig::default();
    assert!(r.backoff(0) <= Duration::from_millis(625));
    assert!(r.backoff(10) <= Duration::from_secs(10));
}

#[test]
fn any_retry_config_is_safe() {
    for d in [Duration::ZERO, Duration::from_nanos(1), Duration::from_secs(u64::MAX), Duration::MAX] {
        let r = RetryConfig::default().initial_backoff(d).max_backoff(Duration::MAX).max_retries(u32::MAX);
        for attempt in [0, 1, 16, 63, 64, u32::MAX] {
            let _ = r.backoff(attempt);
        }
        let r = RetryConfig::default().initial_backoff(Duration::MAX).max_backoff(d);
        assert!(r.backoff(u32::MAX) <= d.max(Duration::from_nanos(1)).saturating_mul(2));
    }
    let deadline = Deadline::new(Duration::MAX, Some(Duration::MAX));
    assert!(deadline.end.is_none());
    assert_eq!(deadline.remaining(), Duration::MAX);
}

#[test]
fn settings_timeouts_zero_is_none() {
    let mut s = crate::model::ModelSettings::new();
    for (t, expected) in [
        (Duration::MAX, Some(Duration::MAX)),
        (Duration::ZERO, None),
        (Duration::from_millis(250), Some(Duration::from_millis(250))),
    ] {
        s.timeout = Some(t);
        assert_eq!(settings_timeout(Some(&s)), expected, "{t:?}");
    }
}

#[test]
fn shown_urls_lose_queries_and_credentials() {
    assert_eq!(shown_url("https://api.x.com/v1/chat?key=abc"), "https://api.x.com/v1/chat");
    assert_eq!(shown_url("https://user:pw@api.x.com/v1"), "https://");
    assert_eq!(shown_url("http://127.0.0.1:8/v1/a@b"), "http://127.0.0.1:8/v1/a@b");
}

#[test]
fn request_ids_are_read_from_the_providers_headers() {
    let mut h = HeaderMap::new();
    assert_eq!(request_id(&h), None);
    h.insert("request-id", HeaderValue::from_static("req_abc"));
    assert_eq!(request_id(&h).as_deref(), Some("req_abc"));
    h.insert("x-request-id", HeaderValue::from_static(" req_x "));
    assert_eq!(request_id(&h).as_deref(), Some("req_x"));
}
