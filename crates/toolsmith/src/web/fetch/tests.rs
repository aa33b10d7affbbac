use super::*;
use proptest::prelude::*;

fn reason(s: &str) -> Option<String> {
    forbidden_reason(s.parse().unwrap())
}

fn fetcher(b: WebFetcherBuilder) -> WebFetcher {
    b.build().unwrap()
}

#[test]
fn classifies_well_known_addresses() {
    for public in [
        "8.8.8.8",
        "1.1.1.1",
        "93.184.215.14",
        "100.63.255.255",
        "100.128.0.0",
        "172.15.255.255",
        "172.32.0.0",
        "192.0.1.1",
        "198.20.0.1",
        "223.255.255.255",
        "2606:4700:4700::1111",
        "2a00:1450:4001:81c::200e",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "2002:808:808::1",
    ] {
        assert_eq!(reason(public), None, "{public}");
    }
    for (private, expected) in [
        ("127.0.0.1", "loopback"),
        ("127.255.255.254", "loopback"),
        ("10.1.2.3", "RFC 1918"),
        ("172.16.0.1", "RFC 1918"),
        ("172.31.255.255", "RFC 1918"),
        ("192.168.1.1", "RFC 1918"),
        ("169.254.169.254", "link-local"),
        ("100.64.0.1", "shared address space"),
        ("100.127.255.255", "shared address space"),
        ("0.0.0.0", "unspecified"),
        ("0.1.2.3", "this network"),
        ("255.255.255.255", "broadcast"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("240.0.0.1", "reserved"),
        ("192.0.2.1", "documentation"),
        ("198.51.100.7", "documentation"),
        ("203.0.113.9", "documentation"),
        ("198.18.0.1", "benchmarking"),
        ("192.0.0.8", "IETF"),
        ("::", "unspecified"),
        ("::1", "loopback"),
        ("fc00::1", "unique-local"),
        ("fd12:3456::1", "unique-local"),
        ("fe80::1", "link-local"),
        ("febf::1", "link-local"),
        ("fec0::1", "site-local"),
        ("ff02::1", "multicast"),
        ("2001:db8::1", "documentation"),
        ("3fff::1", "documentation"),
        ("2001::1", "Teredo"),
        ("2001:10::1", "IETF"),
        ("100::1", "discard"),
        ("64:ff9b:1::1", "local-use NAT64"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:169.254.169.254", "link-local"),
        ("::ffff:10.0.0.1", "RFC 1918"),
        ("::127.0.0.1", "IPv4-compatible"),
        ("::8.8.8.8", "IPv4-compatible"),
        ("64:ff9b::127.0.0.1", "NAT64"),
        ("64:ff9b::a9fe:a9fe", "link-local"),
        ("2002:7f00:1::", "6to4"),
        ("2002:c0a8:101::1", "RFC 1918"),
        ("4000::1", "reserved"),
        ("::2:0:0:1", "reserved"),
    ] {
        let r = reason(private).unwrap_or_else(|| panic!("{private} passed"));
        assert!(r.contains(expected), "{private}: {r}");
    }
}

fn embeds(v4: Ipv4Addr) -> [Ipv6Addr; 3] {
    let n = u32::from(v4);
    [
        v4.to_ipv6_mapped(),
        Ipv6Addr::from((0x0064_ff9b_u128 << 96) | u128::from(n)),
        Ipv6Addr::from((0x2002_u128 << 112) | (u128::from(n) << 80) | 1),
    ]
}

/// An independent oracle for IPv4: the standard library's predicates plus the ranges they
/// do not cover.
fn v4_public_oracle(ip: Ipv4Addr) -> bool {
    let o = ip.octets();
    !(ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_unspecified()
        || ip.is_multicast()
        || o[0] == 0
        || o[0] >= 240
        || (o[0] == 100 && (64..128).contains(&o[1]))
        || (o[0] == 192 && o[1] == 0 && o[2] == 0)
        || (o[0] == 192 && o[1] == 88 && o[2] == 99)
        || (o[0] == 198 && (o[1] == 18 || o[1] == 19)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn ipv4_matches_the_oracle(n in any::<u32>()) {
        let ip = Ipv4Addr::from(n);
        prop_assert_eq!(is_public_address(IpAddr::V4(ip)), v4_public_oracle(ip), "{}", ip);
    }

    #[test]
    fn embedded_ipv4_forms_follow_the_ipv4_address(n in any::<u32>()) {
        let v4 = Ipv4Addr::from(n);
        let public = is_public_address(IpAddr::V4(v4));
        for v6 in embeds(v4) {
            prop_assert_eq!(is_public_address(IpAddr::V6(v6)), public, "{} embedding {}", v6, v4);
        }
        // IPv4-compatible forms are refused whatever they embed.
        prop_assert!(!is_public_address(IpAddr::V6(v4.to_ipv6_compatible())));
    }

    #[test]
    fn special_ipv6_ranges_are_refused(n in any::<u128>()) {
        let ip = Ipv6Addr::from(n);
        let public = is_public_address(IpAddr::V6(ip));
        let seg0 = ip.segments()[0];
        // IPv4-mapped and NAT64 forms are decided by the IPv4 address they embed.
        let embeds_ipv4 = ip.to_ipv4_mapped().is_some() || ip.segments()[..6] == [0x64, 0xff9b, 0, 0, 0, 0];
        let outside_global_unicast = seg0 & 0xe000 != 0x2000 && !embeds_ipv4;
        if ip.is_unique_local() || ip.is_unicast_link_local() || ip.is_multicast() || ip.is_loopback()
            || ip.is_unspecified() || outside_global_unicast
        {
            prop_assert!(!public, "{}", ip);
        }
        // Random global unicast addresses outside the special blocks are public.
        if seg0 & 0xe000 == 0x2000 && seg0 != 0x2001 && seg0 != 0x2002 && seg0 & 0xfff0 != 0x3ff0 {
            prop_assert!(public, "{}", ip);
        }
    }

    #[test]
    fn never_panics_on_any_url(s in ".{0,200}") {
        static FETCHER: LazyLock<WebFetcher> =
            LazyLock::new(|| WebFetcher::builder().blocked_domains(["blocked.example"]).build().unwrap());
        let f = &*FETCHER;
        let _ = f.check_url(&s);
        let _ = f.check_url(&format!("http://{s}"));
    }
}

#[test]
fn domains_match_themselves_and_subdomains() {
    let f = fetcher(
        WebFetcher::builder()
            .allowed_domains(["Example.COM.", "*.docs.rs", "127.0.0.1", "[::1]"])
            .allow_private_addresses(true),
    );
    for ok in [
        "https://example.com/",
        "https://EXAMPLE.com./x",
        "https://a.b.example.com/",
        "https://docs.rs/",
        "https://x.docs.rs/",
        "http://127.0.0.1:8080/",
        "http://[::1]/",
    ] {
        assert!(f.check_url(ok).is_ok(), "{ok}: {:?}", f.check_url(ok));
    }
    for refused in ["https://badexample.com/", "https://example.com.evil.net/", "https://rs/", "http://127.0.0.2/"] {
        assert!(
            matches!(f.check_url(refused), Err(FetchError::DomainNotAllowed { blocked_by: None, .. })),
            "{refused}"
        );
    }
    let f = fetcher(WebFetcher::builder().blocked_domains(["evil.net"]).allowed_domains(["evil.net", "good.org"]));
    match f.check_url("https://a.EVIL.net/").unwrap_err() {
        FetchError::DomainNotAllowed { domain, blocked_by, .. } => {
            assert_eq!(domain, "a.evil.net");
            assert_eq!(blocked_by.as_deref(), Some("evil.net"));
        }
        other => panic!("{other}"),
    }
    assert!(f.check_url("https://good.org/").is_ok());
    // Internationalised domains are compared in their ASCII form.
    let f = fetcher(WebFetcher::builder().allowed_domains(["bücher.de"]));
    assert!(f.check_url("https://www.xn--bcher-kva.de/").is_ok());
    assert!(f.check_url("https://www.bücher.de/").is_ok());
}

#[test]
fn bad_settings_are_user_errors() {
    for b in [
        WebFetcher::builder().timeout(Duration::ZERO),
        WebFetcher::builder().max_bytes(0),
        WebFetcher::builder().allowed_domains(["https://example.com/"]),
        WebFetcher::builder().blocked_domains([""]),
        WebFetcher::builder().user_agent("bad\nagent"),
    ] {
        let e = b.build().unwrap_err();
        assert!(e.message.contains("WebFetcher::builder()"), "{}", e.message);
    }
}

#[test]
fn ip_literals_are_checked_before_connecting() {
    let f = fetcher(WebFetcher::builder());
    for (url, address) in [
        ("http://127.0.0.1/", "127.0.0.1"),
        ("http://2130706433/", "127.0.0.1"),
        ("http://0x7f000001/", "127.0.0.1"),
        ("http://0177.0.0.1/", "127.0.0.1"),
        ("http://127.1/", "127.0.0.1"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
        ("http://[::1]/", "::1"),
        ("http://[::ffff:7f00:1]/", "::ffff:127.0.0.1"),
        ("http://[64:ff9b::a9fe:a9fe]/", "64:ff9b::a9fe:a9fe"),
        ("http://0.0.0.0:8080/", "0.0.0.0"),
        ("https://10.0.0.1/", "10.0.0.1"),
    ] {
        match f.check_url(url) {
            Err(FetchError::Forbidden { address: a, .. }) => assert_eq!(a.to_string(), address, "{url}"),
            other => panic!("{url}: {other:?}"),
        }
    }
    let e = f.check_url("http://169.254.169.254/").unwrap_err().to_string();
    assert!(e.contains("allow_private_addresses(true)") && e.contains("link-local"), "{e}");
    for (url, scheme) in [("file:///etc/passwd", "file"), ("ftp://example.com/", "ftp"), ("data:text/plain,hi", "data")]
    {
        assert!(
            matches!(f.check_url(url), Err(FetchError::UnsupportedScheme { scheme: s, .. }) if s == scheme),
            "{url}"
        );
    }
    for url in ["", "example.com", "http://", "http://exa mple.com/", "https://[::1/"] {
        assert!(matches!(f.check_url(url), Err(FetchError::InvalidUrl { .. })), "{url}: {:?}", f.check_url(url));
    }
    assert!(matches!(
        f.check_url(&format!("https://a.com/{}", "x".repeat(40_000))),
        Err(FetchError::InvalidUrl { .. })
    ));
}

#[test]
fn allowed_addresses_are_exact() {
    let f = fetcher(WebFetcher::builder().allow_address("127.0.0.1:8080".parse().unwrap()));
    assert!(f.check_url("http://127.0.0.1:8080/").is_ok());
    assert!(f.check_url("http://[::ffff:127.0.0.1]:8080/").is_ok());
    assert!(matches!(f.check_url("http://127.0.0.1:8081/"), Err(FetchError::Forbidden { .. })));
    assert!(matches!(f.check_url("http://127.0.0.1/"), Err(FetchError::Forbidden { .. })));
    assert!(matches!(f.check_url("http://127.0.0.2:8080/"), Err(FetchError::Forbidden { .. })));
    let open = fetcher(WebFetcher::builder().allow_private_addresses(true));
    assert!(open.check_url("http://169.254.169.254/").is_ok());
}

#[test]
fn content_types_and_charsets() {
    assert_eq!(
        parse_content_type("Text/HTML; Charset=\"ISO-8859-1\""),
        ("text/html".into(), Some("ISO-8859-1".into()))
    );
    assert_eq!(parse_content_type(""), (String::new(), None));
    assert_eq!(kind_of("application/ld+json"), Kind::Text);
    assert_eq!(kind_of("image/svg+xml"), Kind::Text);
    assert_eq!(kind_of("application/pdf"), Kind::Binary);
    assert_eq!(kind_of("application/xhtml+xml"), Kind::Html);
    assert_eq!(sniff(b"  <!DOCTYPE html><p>x"), "text/html");
    assert_eq!(sniff(b"%PDF-1.7\n"), "application/pdf");
    assert_eq!(sniff(b"plain words"), "text/plain");
    assert_eq!(sniff(b"\x00\x01\x02"), "application/octet-stream");
    assert_eq!(sniff("caf\u{e9}".as_bytes()), "text/plain");
    assert_eq!(decode(b"caf\xe9", Some("iso-8859-1"), false), "café");
    assert_eq!(decode(b"caf\xe9", None, false), "caf\u{fffd}");
    assert_eq!(decode(b"\xef\xbb\xbfhi", Some("iso-8859-1"), false), "hi");
    assert_eq!(
        decode(b"<meta charset=\"windows-1252\"><p>\x93q\x94", None, true),
        "<meta charset=\"windows-1252\"><p>\u{201c}q\u{201d}"
    );
    assert_eq!(decode(b"<meta charset=utf-16><p>x", None, true), "<meta charset=utf-16><p>x");
    assert_eq!(decode(b"bogus \xff", Some("no-such-charset"), false), "bogus \u{fffd}");
}

#[test]
fn urls_in_errors_hide_passwords_and_are_cut() {
    let url = Url::parse("https://user:secret@example.com/x").unwrap();
    assert_eq!(shown(&url), "https://user@example.com/x");
    let long = "é".repeat(5_000);
    assert_eq!(shown_str(&long).chars().count(), SHOWN_URL_CHARS + 3);
}
