//! `toolsmith::web::WebFetcher` against local HTTP servers: HTML to Markdown, redirects (followed,
//! and refused when they lead to a non-public address, another scheme or a domain that is not
//! allowed), size and time limits, content types, and servers that misbehave.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use toolsmith::web::{FetchError, FetchedContent, WebFetcher};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A fetcher that may reach `server` (and nothing else that is not public).
fn local(server: &MockServer) -> WebFetcher {
    WebFetcher::builder().allow_address(*server.address()).build().unwrap()
}

fn base(server: &MockServer) -> String {
    server.uri()
}

/// Answers `GET path` with `status` and a `Location`.
async fn redirect(server: &MockServer, from: &str, status: u16, location: &str) {
    Mock::given(method("GET"))
        .and(path(from))
        .respond_with(ResponseTemplate::new(status).insert_header("Location", location))
        .mount(server)
        .await;
}

/// Answers `GET path` with a body of a content type.
async fn page(server: &MockServer, at: &str, content_type: &str, body: impl Into<Vec<u8>>) {
    Mock::given(method("GET"))
        .and(path(at))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body.into(), content_type))
        .mount(server)
        .await;
}

/// A raw TCP server: each connection's request head is read, then `handler` answers it.
async fn raw_server<F, Fut>(handler: F) -> SocketAddr
where
    F: Fn(TcpStream) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handler = Arc::new(handler);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let handler = Arc::clone(&handler);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                handler(stream).await;
            });
        }
    });
    addr
}

/// A raw server that answers every request with the same bytes.
async fn fixed_answer(answer: Vec<u8>) -> SocketAddr {
    let answer = Arc::new(answer);
    raw_server(move |mut stream| {
        let answer = Arc::clone(&answer);
        async move {
            let _ = stream.write_all(&answer).await;
            let _ = stream.shutdown().await;
        }
    })
    .await
}

fn raw_fetcher(addr: SocketAddr) -> WebFetcher {
    WebFetcher::builder().allow_address(addr).timeout(Duration::from_secs(5)).build().unwrap()
}

const ARTICLE: &str = r##"<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Async Rust, a short guide | Example Docs</title>
  <link rel="stylesheet" href="/static/site.css">
  <style>.hero { color: #c33; font-family: "StyleSheetFont"; }</style>
  <script>window.trackingSecret = "do-not-leak"; console.log("analytics");</script>
</head>
<body>
  <nav class="top"><a href="/">Home</a> · <a href="/book/">Book</a></nav>
  <main>
    <article>
      <h1>Async Rust</h1>
      <p class="lead">Futures are <strong>lazy</strong>: nothing happens until they are <em>polled</em>.</p>
      <h2>Runtimes</h2>
      <p>Most programs use <a href="https://tokio.rs/">Tokio</a>; read the <a href="ch2.html">next chapter</a> or
         jump <a href="#top">to the top</a>.</p>
      <ul>
        <li>Executors run tasks.</li>
        <li>Reactors wait for I/O.</li>
      </ul>
      <pre><code>async fn hello() -&gt; u32 { 42 }</code></pre>
      <img src="/img/diagram.png" alt="A diagram of the executor">
    </article>
    <noscript>Please enable JavaScript to see the comments.</noscript>
    <form action="/search"><input name="q" placeholder="Search the docs"><button>SearchButtonLabel</button></form>
  </main>
  <script src="/static/app.js"></script>
  <script>document.write("injectedByScript")</script>
</body>
</html>"##;

#[tokio::test]
async fn html_pages_become_markdown() {
    let server = MockServer::start().await;
    page(&server, "/book/async.html", "text/html; charset=utf-8", ARTICLE).await;
    let fetched = local(&server).fetch(&format!("{}/book/async.html", base(&server))).await.unwrap();
    assert_eq!(fetched.status, 200);
    assert_eq!(fetched.content_type, "text/html");
    assert_eq!(fetched.url, format!("{}/book/async.html", base(&server)));
    let FetchedContent::Markdown(md) = &fetched.content else { panic!("{:?}", fetched.content) };
    for kept in [
        "# Async Rust",
        "## Runtimes",
        "**lazy**",
        "*polled*",
        "- Executors run tasks.\n- Reactors wait for I/O.",
        "[Tokio](https://tokio.rs/)",
        &format!("[next chapter]({}/book/ch2.html)", base(&server)),
        "[to the top](#top)",
        "Executors run tasks.",
        "async fn hello() -> u32 { 42 }",
        &format!("![A diagram of the executor]({}/img/diagram.png)", base(&server)),
        &format!("[Book]({}/book/)", base(&server)),
    ] {
        assert!(md.contains(kept), "missing {kept:?} in:\n{md}");
    }
    for gone in [
        "trackingSecret",
        "do-not-leak",
        "analytics",
        "injectedByScript",
        "StyleSheetFont",
        "enable JavaScript",
        "SearchButtonLabel",
        "Example Docs",
    ] {
        assert!(!md.contains(gone), "{gone:?} leaked into:\n{md}");
    }
    assert_eq!(fetched.content.as_text(), Some(md.as_str()));
}

#[tokio::test]
async fn relative_and_absolute_redirects_are_followed() {
    let server = MockServer::start().await;
    redirect(&server, "/start", 301, "/a/middle").await;
    redirect(&server, "/a/middle", 302, "next?step=3").await;
    redirect(&server, "/a/next", 303, &format!("{}/b/end", base(&server))).await;
    redirect(&server, "/b/end", 307, "../final").await;
    redirect(
        &server,
        "/final",
        308,
        "//127.0.0.1:PORT/done".replace("PORT", &server.address().port().to_string()).as_str(),
    )
    .await;
    page(&server, "/done", "text/plain", "arrived").await;
    let fetched = local(&server).fetch(&format!("{}/start", base(&server))).await.unwrap();
    assert_eq!(fetched.url, format!("{}/done", base(&server)));
    assert_eq!(fetched.content, FetchedContent::Text("arrived".into()));

    // Not followed at all with `max_redirects(0)`.
    let fetcher = WebFetcher::builder().allow_address(*server.address()).max_redirects(0).build().unwrap();
    match fetcher.fetch(&format!("{}/start", base(&server))).await.unwrap_err() {
        FetchError::TooManyRedirects { max: 0, url } => assert_eq!(url, format!("{}/start", base(&server))),
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn redirects_to_non_public_addresses_are_refused() {
    let server = MockServer::start().await;
    // Another local server that must never be reached.
    let other = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_string("internal secret"))
        .expect(0)
        .mount(&other)
        .await;
    let other_port = other.address().port();
    let cases = [
        (format!("http://127.0.0.1:{other_port}/admin"), "127.0.0.1", "loopback"),
        ("http://169.254.169.254/latest/meta-data/".to_string(), "169.254.169.254", "link-local"),
        ("http://[::1]/".to_string(), "::1", "loopback"),
        ("http://0x7f000001/".to_string(), "127.0.0.1", "loopback"),
        ("http://2130706433/".to_string(), "127.0.0.1", "loopback"),
        (format!("http://0x7f.1:{other_port}/"), "127.0.0.1", "loopback"),
        (format!("http://[::ffff:127.0.0.1]:{other_port}/"), "::ffff:127.0.0.1", "IPv4-mapped"),
        ("http://10.0.0.8:8080/".to_string(), "10.0.0.8", "RFC 1918"),
        ("http://100.100.100.200/".to_string(), "100.100.100.200", "shared address space"),
        ("http://[fd00:ec2::254]/".to_string(), "fd00:ec2::254", "unique-local"),
        ("http://0.0.0.0/".to_string(), "0.0.0.0", "unspecified"),
    ];
    let fetcher = local(&server);
    for (i, (location, address, kind)) in cases.iter().enumerate() {
        let from = format!("/hop{i}");
        redirect(&server, &from, 302, location).await;
        match fetcher.fetch(&format!("{}{from}", base(&server))).await {
            Err(FetchError::Forbidden { address: a, reason, url }) => {
                assert_eq!(a.to_string(), *address, "{location}");
                assert!(reason.contains(kind), "{location}: {reason}");
                assert!(!url.contains("/hop"), "the refused URL is the redirect target: {url}");
            }
            other => panic!("{location}: {other:?}"),
        }
    }
    let message = fetcher.fetch(&format!("{}/hop1", base(&server))).await.unwrap_err().to_string();
    assert!(message.contains("allow_private_addresses(true)") && message.contains("allow_address"), "{message}");
    other.verify().await;
}

#[tokio::test]
async fn redirects_to_other_schemes_are_refused() {
    let server = MockServer::start().await;
    for (i, (location, scheme)) in
        [("file:///etc/passwd", "file"), ("ftp://example.com/x", "ftp"), ("gopher://127.0.0.1:6379/_INFO", "gopher")]
            .iter()
            .enumerate()
    {
        let from = format!("/s{i}");
        redirect(&server, &from, 301, location).await;
        match local(&server).fetch(&format!("{}{from}", base(&server))).await {
            Err(FetchError::UnsupportedScheme { scheme: s, url }) => {
                assert_eq!(s, *scheme);
                assert_eq!(url, *location);
            }
            other => panic!("{location}: {other:?}"),
        }
    }
    assert!(matches!(WebFetcher::new().fetch("file:///etc/passwd").await, Err(FetchError::UnsupportedScheme { .. })));
}

#[tokio::test]
async fn host_names_resolving_to_loopback_are_refused() {
    let server = MockServer::start().await;
    page(&server, "/", "text/plain", "local").await;
    let port = server.address().port();
    // By default: refused after resolution.
    match WebFetcher::new().fetch(&format!("http://localhost:{port}/")).await {
        Err(FetchError::Forbidden { address, reason, .. }) => {
            assert!(address.is_loopback(), "{address}");
            assert!(reason.contains("loopback"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    // An allowed address lets the name through on that port only.
    let fetcher = local(&server);
    let fetched = fetcher.fetch(&format!("http://localhost:{port}/")).await.unwrap();
    assert_eq!(fetched.content, FetchedContent::Text("local".into()));
    let other = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let other_port = other.local_addr().unwrap().port();
    assert!(matches!(
        fetcher.fetch(&format!("http://localhost:{other_port}/")).await,
        Err(FetchError::Forbidden { .. })
    ));
    // And a redirect to the name on another port is refused too.
    redirect(&server, "/to-other", 302, &format!("http://localhost:{other_port}/")).await;
    assert!(matches!(fetcher.fetch(&format!("{}/to-other", base(&server))).await, Err(FetchError::Forbidden { .. })));
    // `allow_private_addresses(true)` allows everything.
    let open = WebFetcher::builder().allow_private_addresses(true).build().unwrap();
    assert!(open.fetch(&format!("http://localhost:{port}/")).await.is_ok());
}

#[tokio::test]
async fn redirect_loops_end_with_too_many_redirects() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/loop"))
        .respond_with(ResponseTemplate::new(302).insert_header("Location", "/loop"))
        .expect(4)
        .mount(&server)
        .await;
    let fetcher = WebFetcher::builder().allow_address(*server.address()).max_redirects(3).build().unwrap();
    match fetcher.fetch(&format!("{}/loop", base(&server))).await.unwrap_err() {
        e @ FetchError::TooManyRedirects { max: 3, .. } => {
            assert!(e.to_string().contains("WebFetcher::builder().max_redirects(...)"), "{e}")
        }
        other => panic!("{other}"),
    }
    server.verify().await;
    // Two pages sending each other back and forth, with the default limit.
    redirect(&server, "/ping", 302, "/pong").await;
    redirect(&server, "/pong", 302, "/ping").await;
    assert!(matches!(
        local(&server).fetch(&format!("{}/ping", base(&server))).await,
        Err(FetchError::TooManyRedirects { max: 10, .. })
    ));
}

#[tokio::test]
async fn bodies_larger_than_max_bytes_are_refused() {
    // Announced by Content-Length: refused before the body is read.
    let server = MockServer::start().await;
    page(&server, "/big", "text/plain", vec![b'x'; 2_000]).await;
    page(&server, "/fits", "text/plain", vec![b'y'; 1_000]).await;
    let fetcher = WebFetcher::builder().allow_address(*server.address()).max_bytes(1_000).build().unwrap();
    match fetcher.fetch(&format!("{}/big", base(&server))).await.unwrap_err() {
        e @ FetchError::TooLarge { max_bytes: 1_000, content_length: Some(2_000), .. } => {
            assert!(e.to_string().contains("WebFetcher::builder().max_bytes(...)"), "{e}")
        }
        other => panic!("{other}"),
    }
    assert_eq!(
        fetcher.fetch(&format!("{}/fits", base(&server))).await.unwrap().content.as_text().unwrap().len(),
        1_000
    );

    // Not announced, and endless: reading stops at the limit.
    let written = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&written);
    let addr = raw_server(move |mut stream| {
        let counter = Arc::clone(&counter);
        async move {
            let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n";
            if stream.write_all(head).await.is_err() {
                return;
            }
            let chunk = format!("{:x}\r\n{}\r\n", 16 * 1024, "z".repeat(16 * 1024));
            while stream.write_all(chunk.as_bytes()).await.is_ok() {
                counter.fetch_add(16 * 1024, Ordering::Relaxed);
            }
        }
    })
    .await;
    let fetcher = WebFetcher::builder().allow_address(addr).max_bytes(64 * 1024).build().unwrap();
    let started = Instant::now();
    let result = tokio::time::timeout(Duration::from_secs(10), fetcher.fetch(&format!("http://{addr}/endless")))
        .await
        .expect("the fetch stopped reading");
    assert!(matches!(result, Err(FetchError::TooLarge { max_bytes: 65_536, content_length: None, .. })), "{result:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    // Give the server a moment to notice the closed connection.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let total = written.load(Ordering::Relaxed);
    assert!(total < 64 * 1024 * 1024, "the server wrote {total} bytes");
}

#[tokio::test]
async fn slow_drip_servers_time_out() {
    let addr = raw_server(|mut stream| async move {
        let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000000\r\n\r\n";
        if stream.write_all(head).await.is_err() {
            return;
        }
        while stream.write_all(b"x").await.is_ok() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    let fetcher = WebFetcher::builder().allow_address(addr).timeout(Duration::from_millis(800)).build().unwrap();
    let started = Instant::now();
    match fetcher.fetch(&format!("http://{addr}/drip")).await.unwrap_err() {
        e @ FetchError::Timeout { .. } => {
            assert!(matches!(e, FetchError::Timeout { after, .. } if after == Duration::from_millis(800)));
            assert!(e.to_string().contains("WebFetcher::builder().timeout(...)"), "{e}");
        }
        other => panic!("{other}"),
    }
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(700) && took < Duration::from_secs(3), "{took:?}");

    // A server that never answers at all.
    let silent = raw_server(|stream| async move {
        tokio::time::sleep(Duration::from_secs(30)).await;
        drop(stream);
    })
    .await;
    let fetcher = WebFetcher::builder().allow_address(silent).timeout(Duration::from_millis(300)).build().unwrap();
    assert!(matches!(fetcher.fetch(&format!("http://{silent}/")).await, Err(FetchError::Timeout { .. })));
}

#[tokio::test]
async fn text_json_xml_and_pdf_are_handled() {
    let server = MockServer::start().await;
    let json = r#"{"name": "toolsmith", "tags": ["rust", "agents"], "nested": {"n": 1.5}}"#;
    let pdf = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n\xe2\xe3\xcf\xd3\n%%EOF\n".to_vec();
    page(&server, "/notes.txt", "text/plain; charset=utf-8", "line one\nline two").await;
    page(&server, "/data.json", "application/json", json).await;
    page(&server, "/feed.xml", "application/rss+xml", "<rss><channel><title>T</title></channel></rss>").await;
    page(&server, "/paper.pdf", "application/pdf", pdf.clone()).await;
    page(&server, "/download", "application/octet-stream", pdf.clone()).await;
    page(&server, "/logo.png", "image/png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec()).await;
    page(&server, "/latin1.txt", "text/plain; charset=ISO-8859-1", b"caf\xe9 cr\xe8me".to_vec()).await;
    page(&server, "/broken.txt", "text/plain", b"ok \xff\xfe done".to_vec()).await;
    Mock::given(method("GET"))
        .and(path("/untyped"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(b"<!doctype html><h1>Sniffed</h1>".to_vec()))
        .mount(&server)
        .await;
    let fetcher = local(&server);
    let get = |p: &str| {
        let url = format!("{}{p}", base(&server));
        let fetcher = fetcher.clone();
        async move { fetcher.fetch(&url).await.unwrap() }
    };

    let text = get("/notes.txt").await;
    assert_eq!(
        (text.content_type.as_str(), &text.content),
        ("text/plain", &FetchedContent::Text("line one\nline two".into()))
    );
    let data = get("/data.json").await;
    assert_eq!((data.content_type.as_str(), &data.content), ("application/json", &FetchedContent::Text(json.into())));
    assert_eq!(get("/feed.xml").await.content.as_text(), Some("<rss><channel><title>T</title></channel></rss>"));
    for p in ["/paper.pdf", "/download"] {
        let fetched = get(p).await;
        assert_eq!(fetched.content_type, "application/pdf", "{p}");
        assert_eq!(fetched.content, FetchedContent::Binary { data: pdf.clone(), media_type: "application/pdf".into() });
        assert_eq!(fetched.content.as_text(), None);
    }
    assert!(
        matches!(get("/logo.png").await.content, FetchedContent::Binary { media_type, .. } if media_type == "image/png")
    );
    assert_eq!(get("/latin1.txt").await.content, FetchedContent::Text("café crème".into()));
    assert_eq!(get("/broken.txt").await.content, FetchedContent::Text("ok \u{fffd}\u{fffd} done".into()));
    let sniffed = get("/untyped").await;
    assert_eq!(sniffed.content_type, "text/html");
    assert_eq!(sniffed.content, FetchedContent::Markdown("# Sniffed".into()));
}

#[tokio::test]
async fn domain_lists_apply_to_the_first_url_and_to_redirects() {
    let server = MockServer::start().await;
    let port = server.address().port();
    page(&server, "/ok", "text/plain", "ok").await;
    redirect(&server, "/to-localhost", 302, &format!("http://localhost:{port}/ok")).await;
    redirect(&server, "/to-blocked", 302, "https://api.blocked.example/v1").await;
    redirect(&server, "/to-self", 302, "/ok").await;

    // Allowed domains, on the first URL...
    let only_example =
        WebFetcher::builder().allow_private_addresses(true).allowed_domains(["example.com"]).build().unwrap();
    match only_example.fetch(&format!("{}/ok", base(&server))).await.unwrap_err() {
        e @ FetchError::DomainNotAllowed { blocked_by: None, .. } => {
            assert!(matches!(&e, FetchError::DomainNotAllowed { domain, .. } if domain == "127.0.0.1"));
            assert!(e.to_string().contains("allowed_domains(...)"), "{e}");
        }
        other => panic!("{other}"),
    }
    // ... and on a redirect.
    let only_ip = WebFetcher::builder().allow_private_addresses(true).allowed_domains(["127.0.0.1"]).build().unwrap();
    assert_eq!(only_ip.fetch(&format!("{}/to-self", base(&server))).await.unwrap().content.as_text(), Some("ok"));
    match only_ip.fetch(&format!("{}/to-localhost", base(&server))).await.unwrap_err() {
        FetchError::DomainNotAllowed { domain, blocked_by: None, url } => {
            assert_eq!(domain, "localhost");
            assert_eq!(url, format!("http://localhost:{port}/ok"));
        }
        other => panic!("{other}"),
    }

    // Blocked domains, on the first URL...
    let blocking = WebFetcher::builder()
        .allow_private_addresses(true)
        .blocked_domains(["localhost", "blocked.example"])
        .build()
        .unwrap();
    match blocking.fetch(&format!("http://localhost:{port}/ok")).await.unwrap_err() {
        e @ FetchError::DomainNotAllowed { .. } => {
            assert!(matches!(&e, FetchError::DomainNotAllowed { blocked_by: Some(b), .. } if b == "localhost"));
            assert!(e.to_string().contains("blocked_domains(...)"), "{e}");
        }
        other => panic!("{other}"),
    }
    // ... and on redirects (a subdomain of a blocked domain is blocked).
    assert!(matches!(
        blocking.fetch(&format!("{}/to-localhost", base(&server))).await,
        Err(FetchError::DomainNotAllowed { blocked_by: Some(_), .. })
    ));
    match blocking.fetch(&format!("{}/to-blocked", base(&server))).await.unwrap_err() {
        FetchError::DomainNotAllowed { domain, blocked_by, .. } => {
            assert_eq!(domain, "api.blocked.example");
            assert_eq!(blocked_by.as_deref(), Some("blocked.example"));
        }
        other => panic!("{other}"),
    }
    assert!(blocking.fetch(&format!("{}/ok", base(&server))).await.is_ok());
}

#[tokio::test]
async fn error_statuses_are_typed() {
    let server = MockServer::start().await;
    Mock::given(method("GET")).and(path("/missing")).respond_with(ResponseTemplate::new(404)).mount(&server).await;
    Mock::given(method("GET")).and(path("/broken")).respond_with(ResponseTemplate::new(503)).mount(&server).await;
    Mock::given(method("GET")).and(path("/nowhere")).respond_with(ResponseTemplate::new(302)).mount(&server).await;
    let fetcher = local(&server);
    for (p, status) in [("/missing", 404), ("/broken", 503), ("/nowhere", 302)] {
        match fetcher.fetch(&format!("{}{p}", base(&server))).await.unwrap_err() {
            e @ FetchError::Status { .. } => {
                assert!(matches!(&e, FetchError::Status { status: s, .. } if *s == status), "{e}");
                assert!(e.to_string().contains(&format!("HTTP {status}")), "{e}");
            }
            other => panic!("{p}: {other}"),
        }
    }
    // Nothing listening.
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = closed.local_addr().unwrap();
    drop(closed);
    assert!(matches!(raw_fetcher(addr).fetch(&format!("http://{addr}/")).await, Err(FetchError::Http { .. })));
}

#[tokio::test]
async fn hostile_servers_and_urls_get_typed_errors() {
    // A Location that is not a URL.
    let bad_location =
        fixed_answer(b"HTTP/1.1 302 Found\r\nLocation: http://[::1\r\nContent-Length: 0\r\n\r\n".to_vec()).await;
    assert!(matches!(
        raw_fetcher(bad_location).fetch(&format!("http://{bad_location}/")).await,
        Err(FetchError::InvalidUrl { .. })
    ));
    // A Location with bytes that are not UTF-8, to a public host blocked by the domain list.
    let latin1 = fixed_answer(
        b"HTTP/1.1 301 Moved\r\nLocation: http://blocked.example/caf\xe9\r\nContent-Length: 0\r\n\r\n".to_vec(),
    )
    .await;
    let fetcher = WebFetcher::builder().allow_address(latin1).blocked_domains(["blocked.example"]).build().unwrap();
    assert!(matches!(fetcher.fetch(&format!("http://{latin1}/")).await, Err(FetchError::DomainNotAllowed { .. })));
    // A huge header, and too many headers.
    let mut huge = b"HTTP/1.1 200 OK\r\nX-Big: ".to_vec();
    huge.extend(std::iter::repeat_n(b'a', 2 * 1024 * 1024));
    huge.extend_from_slice(b"\r\nContent-Length: 2\r\n\r\nok");
    let huge = fixed_answer(huge).await;
    assert!(matches!(raw_fetcher(huge).fetch(&format!("http://{huge}/")).await, Err(FetchError::Http { .. })));
    let mut many = b"HTTP/1.1 200 OK\r\n".to_vec();
    for i in 0..5_000 {
        many.extend_from_slice(format!("X-H{i}: v\r\n").as_bytes());
    }
    many.extend_from_slice(b"Content-Length: 2\r\n\r\nok");
    let many = fixed_answer(many).await;
    assert!(matches!(raw_fetcher(many).fetch(&format!("http://{many}/")).await, Err(FetchError::Http { .. })));
    // Not HTTP at all, and a body cut short.
    let garbage = fixed_answer(b"\x00\x01\x02 hello there\r\n\r\n".to_vec()).await;
    assert!(matches!(raw_fetcher(garbage).fetch(&format!("http://{garbage}/")).await, Err(FetchError::Http { .. })));
    let cut =
        fixed_answer(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nshort".to_vec()).await;
    assert!(matches!(raw_fetcher(cut).fetch(&format!("http://{cut}/")).await, Err(FetchError::Http { .. })));

    // URLs that are not fetchable.
    let fetcher = WebFetcher::new();
    for url in [
        "",
        "   ",
        "not a url",
        "example.com/page",
        "http://",
        "https://exa mple.com/",
        "javascript:alert(1)",
        "http://[::1",
    ] {
        assert!(
            matches!(
                fetcher.fetch(url).await,
                Err(FetchError::InvalidUrl { .. } | FetchError::UnsupportedScheme { .. })
            ),
            "{url:?}"
        );
    }
    let long = format!("https://example.com/{}", "a".repeat(100_000));
    match fetcher.fetch(&long).await.unwrap_err() {
        FetchError::InvalidUrl { url, .. } => assert!(url.len() < 2_100),
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn deeply_nested_pages_do_not_crash() {
    let server = MockServer::start().await;
    let deep =
        format!("<html><body>{}<p>deep text</p>{}</body></html>", "<div>".repeat(200_000), "</div>".repeat(200_000));
    page(&server, "/deep", "text/html", deep).await;
    let fetcher =
        WebFetcher::builder().allow_address(*server.address()).timeout(Duration::from_secs(4)).build().unwrap();
    let started = Instant::now();
    let fetched = fetcher.fetch(&format!("{}/deep", base(&server))).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(4));
    assert_eq!(fetched.content.as_text(), Some("deep text"));
}

#[tokio::test]
async fn fetchers_are_cheap_to_share() {
    let server = MockServer::start().await;
    page(&server, "/", "text/plain", "shared").await;
    let fetcher = local(&server);
    let url = format!("{}/", base(&server));
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let fetcher = fetcher.clone();
            let url = url.clone();
            tokio::spawn(async move { fetcher.fetch(&url).await })
        })
        .collect();
    for task in tasks {
        assert_eq!(task.await.unwrap().unwrap().content.as_text(), Some("shared"));
    }
    assert_eq!(fetcher.timeout(), Duration::from_secs(30));
    assert_eq!(fetcher.max_bytes(), 5 * 1024 * 1024);
    assert_eq!(fetcher.max_redirects(), 10);
}
