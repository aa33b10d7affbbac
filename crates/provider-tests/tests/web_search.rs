//! `toolsmith::web::DuckDuckGo` against a local server that answers like DuckDuckGo's HTML
//! results page (`html.duckduckgo.com/html/`): results read, ads skipped, redirect links
//! unwrapped, `max_results` honoured, and failures reported as typed `SearchError`s.

use std::sync::Arc;
use std::time::{Duration, Instant};

use toolsmith::web::{DuckDuckGo, SearchBackend, SearchError, SearchResult};
use wiremock::matchers::{body_string_contains, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A results page in the shape DuckDuckGo's HTML endpoint serves: the search form, an ad
/// (`result--ad`, its links through `duckduckgo.com/y.js`), web results whose links go through
/// `//duckduckgo.com/l/?uddg=<encoded URL>&rut=...`, one direct link, one result without a
/// snippet, a duplicate, and the "Next" form.
const RESULTS_PAGE: &str = r#"<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
<head>
  <meta http-equiv="content-type" content="text/html; charset=UTF-8">
  <meta name="viewport" content="width=device-width, initial-scale=1.0, maximum-scale=3.0, user-scalable=1" />
  <meta name="referrer" content="origin" />
  <meta name="robots" content="noindex, nofollow" />
  <title>rust async at DuckDuckGo</title>
  <link rel="stylesheet" media="handheld, all" href="//duckduckgo.com/dist/h.aeda52882d97098ab9ec.css" type="text/css"/>
</head>
<body class="body--html">
  <a name="top" id="top"></a>
  <form action="/html/" method="post">
    <input type="text" name="state_hidden" id="state_hidden" />
  </form>
  <div>
    <div class="site-wrapper-border"></div>
    <div id="header" class="header cw header--html">
      <a title="DuckDuckGo" href="/html/" class="header__logo-wrap" tabindex="-1">
        <span class="header__logo">DuckDuckGo</span>
      </a>
      <form name="x" class="header__form" action="/html/" method="post">
        <div class="search search--header">
          <input name="q" autocomplete="off" class="search__input" id="search_form_input_homepage" type="text" value="rust async" />
          <input name="b" id="search_button_homepage" class="search__button search__button--html" value="" title="Search" alt="Search" type="submit" />
        </div>
        <div class="frm__select">
          <select name="kl">
            <option value="" >All Regions</option>
            <option value="uk-en" >UK (en)</option>
            <option value="us-en" >US (English)</option>
          </select>
        </div>
      </form>
    </div>
    <!-- Web results are present -->
    <div>
      <div class="serp__results">
        <div id="links" class="results">

          <div class="result results_links results_links_deep result--ad  result--ad--small">
            <div class="links_main links_deep result__body">
              <h2 class="result__title">
                <a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=learnrustfast.example&amp;ad_provider=bingv7aa&amp;ad_type=txad&amp;eddgt=abc%3D%3D&amp;rut=0f1e&amp;u3=https%3A%2F%2Fwww.bing.com%2Faclick%3Fld%3De8">Learn Rust Fast - Online Course</a>
              </h2>
              <div class="result__extras">
                <div class="result__extras__url">
                  <a rel="nofollow" class="result__url" href="https://duckduckgo.com/y.js?ad_domain=learnrustfast.example">learnrustfast.example</a>
                  <button class="btn--alt badge--ad js-badge-ad">Ad</button>
                </div>
              </div>
              <a class="result__snippet" href="https://duckduckgo.com/y.js?ad_domain=learnrustfast.example">Sponsored: master async Rust in a weekend.</a>
              <div class="clear"></div>
            </div>
          </div>

          <div class="result results_links results_links_deep web-result ">
            <div class="links_main links_deep result__body"> <!-- This is the visible part -->
              <h2 class="result__title">
                <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Frust%2Dlang.github.io%2Fasync%2Dbook%2F&amp;rut=8f0a1e2b3c4d5e6f">Asynchronous Programming in <b>Rust</b></a>
              </h2>
              <div class="result__extras">
                <div class="result__extras__url">
                  <span class="result__icon">
                    <a rel="nofollow" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Frust%2Dlang.github.io%2Fasync%2Dbook%2F&amp;rut=8f0a1e2b3c4d5e6f">
                      <img class="result__icon__img" width="16" height="16" alt="" src="//external-content.duckduckgo.com/ip3/rust-lang.github.io.ico" name="i15" />
                    </a>
                  </span>
                  <a class="result__url" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Frust%2Dlang.github.io%2Fasync%2Dbook%2F&amp;rut=8f0a1e2b3c4d5e6f">
                    rust-lang.github.io/async-book/
                  </a>
                </div>
              </div>
              <a class="result__snippet" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Frust%2Dlang.github.io%2Fasync%2Dbook%2F&amp;rut=8f0a1e2b3c4d5e6f">Getting Started. Welcome to <b>Asynchronous</b> Programming in <b>Rust</b>! If you&#x27;re looking to start writing <b>asynchronous</b> <b>Rust</b> code, you&#x27;ve come to the right place.</a>
              <div class="clear"></div>
            </div>
          </div>

          <div class="result results_links results_links_deep web-result ">
            <div class="links_main links_deep result__body">
              <h2 class="result__title">
                <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Ftokio.rs%2Ftokio%2Ftutorial%3Flang%3Den%26v%3D1&amp;rut=1a2b">Tutorial | Tokio - An asynchronous <b>Rust</b> runtime</a>
              </h2>
              <a class="result__snippet" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Ftokio.rs%2Ftokio%2Ftutorial%3Flang%3Den%26v%3D1&amp;rut=1a2b">Tokio is an <b>asynchronous</b> runtime for the <b>Rust</b> programming language &amp; more.</a>
              <div class="clear"></div>
            </div>
          </div>

          <div class="result results_links results_links_deep web-result ">
            <div class="links_main links_deep result__body">
              <h2 class="result__title">
                <a rel="nofollow" class="result__a" href="https://docs.rs/futures/latest/futures/">futures - <b>Rust</b></a>
              </h2>
              <div class="clear"></div>
            </div>
          </div>

          <div class="result results_links results_links_deep web-result ">
            <div class="links_main links_deep result__body">
              <h2 class="result__title">
                <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Frust%2Dlang.github.io%2Fasync%2Dbook%2F&amp;rut=ffff">Asynchronous Programming in Rust (mirror)</a>
              </h2>
              <a class="result__snippet" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Frust%2Dlang.github.io%2Fasync%2Dbook%2F&amp;rut=ffff">The same page again.</a>
              <div class="clear"></div>
            </div>
          </div>

          <div class="result results_links results_links_deep web-result ">
            <div class="links_main links_deep result__body">
              <h2 class="result__title">
                <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fblog.rust%2Dlang.org%2F2023%2F12%2F21%2Fasync%2Dfn%2Drpit%2Din%2Dtraits.html&amp;rut=9c8d">Announcing `async fn` and return-position `impl Trait` in traits | <b>Rust</b> Blog</a>
              </h2>
              <a class="result__snippet" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fblog.rust%2Dlang.org%2F2023%2F12%2F21%2Fasync%2Dfn%2Drpit%2Din%2Dtraits.html&amp;rut=9c8d">The <b>Rust</b> Async Working Group is excited to announce major progress towards our goal of enabling the use of <b>async</b> fn in traits.</a>
              <div class="clear"></div>
            </div>
          </div>

          <div class="nav-link">
            <form action="/html/" method="post">
              <input type="submit" class='btn btn--alt' value="Next" />
              <input type="hidden" name="q" value="rust async" />
              <input type="hidden" name="s" value="10" />
              <input type="hidden" name="nextParams" value="" />
              <input type="hidden" name="v" value="l" />
              <input type="hidden" name="o" value="json" />
              <input type="hidden" name="dc" value="11" />
              <input type="hidden" name="api" value="d.js" />
              <input type="hidden" name="vqd" value="4-123456789012345678901234567890" />
            </form>
          </div>
          <div class=" feedback-btn">
            <a rel="nofollow" href="//duckduckgo.com/feedback.html" target="_new">Feedback</a>
          </div>
          <div class="clear"></div>
        </div>
      </div>
    </div>
  </div>
</body>
</html>
"#;

fn expected() -> Vec<SearchResult> {
    vec![
        SearchResult::new(
            "Asynchronous Programming in Rust",
            "https://rust-lang.github.io/async-book/",
            "Getting Started. Welcome to Asynchronous Programming in Rust! If you're looking to start writing \
             asynchronous Rust code, you've come to the right place.",
        ),
        SearchResult::new(
            "Tutorial | Tokio - An asynchronous Rust runtime",
            "https://tokio.rs/tokio/tutorial?lang=en&v=1",
            "Tokio is an asynchronous runtime for the Rust programming language & more.",
        ),
        SearchResult::new("futures - Rust", "https://docs.rs/futures/latest/futures/", ""),
        SearchResult::new(
            "Announcing `async fn` and return-position `impl Trait` in traits | Rust Blog",
            "https://blog.rust-lang.org/2023/12/21/async-fn-rpit-in-traits.html",
            "The Rust Async Working Group is excited to announce major progress towards our goal of enabling the use \
             of async fn in traits.",
        ),
    ]
}

/// A server answering `POST /html/` for `q=rust async` with the results page.
async fn duckduckgo() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/html/"))
        .and(body_string_contains("q=rust+async"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(RESULTS_PAGE, "text/html; charset=UTF-8"))
        .mount(&server)
        .await;
    server
}

fn backend(server: &MockServer) -> DuckDuckGo {
    DuckDuckGo::with_base_url(format!("{}/html/", server.uri())).unwrap()
}

#[tokio::test]
async fn results_are_read_from_the_html_page() {
    let server = duckduckgo().await;
    let results = backend(&server).search("rust async", 10).await.unwrap();
    assert_eq!(results, expected());
    // The request is the form DuckDuckGo's own page posts.
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1);
    let body = String::from_utf8_lossy(&requests[0].body).into_owned();
    assert!(body.starts_with("q=rust+async"), "{body}");
    assert_eq!(
        requests[0].headers.get("content-type").map(|v| v.to_str().unwrap()),
        Some("application/x-www-form-urlencoded")
    );
}

#[tokio::test]
async fn max_results_is_honoured() {
    let server = duckduckgo().await;
    let ddg = backend(&server);
    assert_eq!(ddg.search("rust async", 2).await.unwrap(), expected()[..2].to_vec());
    assert_eq!(ddg.search("rust async", 1).await.unwrap(), expected()[..1].to_vec());
    // Nothing asked, nothing sent.
    assert_eq!(ddg.search("rust async", 0).await.unwrap(), vec![]);
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn the_region_is_sent_and_the_query_trimmed() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/html/"))
        .and(body_string_contains("q=caf%C3%A9+%26+cr%C3%A8me"))
        .and(body_string_contains("kl=fr-fr"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(RESULTS_PAGE, "text/html"))
        .expect(1)
        .mount(&server)
        .await;
    let ddg = DuckDuckGo::builder().base_url(format!("{}/html/", server.uri())).region("fr-fr").build().unwrap();
    assert_eq!(ddg.search("  café & crème \n", 3).await.unwrap().len(), 3);
    server.verify().await;
}

#[tokio::test]
async fn http_errors_are_search_errors() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(body_string_contains("q=server+error"))
        .respond_with(ResponseTemplate::new(500).set_body_string("oops"))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(body_string_contains("q=rate+limited"))
        .respond_with(ResponseTemplate::new(202).set_body_string("<html><body>anomaly</body></html>"))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(body_string_contains("q=challenge"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            r#"<html><body><div class="anomaly-modal__modal"><form id="challenge-form" action="/anomaly.js"></form></div></body></html>"#,
            "text/html",
        ))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(body_string_contains("q=%21bang"))
        .respond_with(ResponseTemplate::new(302).insert_header("Location", "https://en.wikipedia.org/wiki/Rust"))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(body_string_contains("q=slow"))
        .respond_with(ResponseTemplate::new(200).set_body_string("late").set_delay(Duration::from_secs(5)))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(body_string_contains("q=huge"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(vec![b'x'; 4096], "text/html"))
        .mount(&server)
        .await;
    let ddg = DuckDuckGo::builder()
        .base_url(format!("{}/html/", server.uri()))
        .timeout(Duration::from_millis(500))
        .max_bytes(1024)
        .build()
        .unwrap();

    match ddg.search("server error", 5).await.unwrap_err() {
        e @ SearchError::Status { status: 500, .. } => assert!(e.to_string().contains("HTTP 500"), "{e}"),
        other => panic!("{other}"),
    }
    assert!(matches!(ddg.search("rate limited", 5).await, Err(SearchError::Blocked { .. })));
    match ddg.search("challenge", 5).await.unwrap_err() {
        e @ SearchError::Blocked { .. } => assert!(e.to_string().contains("bot check"), "{e}"),
        other => panic!("{other}"),
    }
    assert!(matches!(ddg.search("!bang rust", 5).await, Err(SearchError::Status { status: 302, .. })));
    let started = Instant::now();
    match ddg.search("slow", 5).await.unwrap_err() {
        e @ SearchError::Timeout { .. } => {
            assert!(matches!(&e, SearchError::Timeout { after, .. } if *after == Duration::from_millis(500)));
            assert!(e.to_string().contains("DuckDuckGo::builder().timeout(...)"), "{e}");
        }
        other => panic!("{other}"),
    }
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(matches!(ddg.search("huge", 5).await, Err(SearchError::TooLarge { max_bytes: 1024, .. })));

    // Nothing listening.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = closed.local_addr().unwrap();
    drop(closed);
    let gone = DuckDuckGo::with_base_url(format!("http://{addr}/html/")).unwrap();
    match gone.search("rust", 5).await.unwrap_err() {
        SearchError::Http { backend, .. } => assert_eq!(backend, "duckduckgo"),
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn bad_queries_and_settings_are_refused() {
    let server = duckduckgo().await;
    let ddg = backend(&server);
    for query in ["", "   \n\t"] {
        assert!(matches!(ddg.search(query, 5).await, Err(SearchError::InvalidQuery { .. })), "{query:?}");
    }
    assert!(matches!(ddg.search(&"long ".repeat(200), 5).await, Err(SearchError::InvalidQuery { .. })));
    assert!(server.received_requests().await.unwrap().is_empty());
    for url in ["not a url", "ftp://example.com/", "file:///etc/passwd"] {
        let e = DuckDuckGo::with_base_url(url).unwrap_err();
        assert!(e.message.contains("DuckDuckGo::builder().base_url(...)"), "{}", e.message);
    }
    assert!(DuckDuckGo::builder().timeout(Duration::ZERO).build().is_err());
    assert!(DuckDuckGo::builder().max_bytes(0).build().is_err());
    assert!(DuckDuckGo::builder().user_agent("a\r\nb").build().is_err());
}

#[tokio::test]
async fn the_backend_is_object_safe_and_shareable() {
    let server = duckduckgo().await;
    let shared: Arc<dyn SearchBackend> = Arc::new(backend(&server));
    assert_eq!(shared.name(), "duckduckgo");
    let tasks: Vec<_> = (0..4)
        .map(|_| {
            let backend = Arc::clone(&shared);
            tokio::spawn(async move { backend.search("rust async", 3).await })
        })
        .collect();
    for task in tasks {
        assert_eq!(task.await.unwrap().unwrap(), expected()[..3].to_vec());
    }
    let boxed: Box<dyn SearchBackend> = Box::new(DuckDuckGo::new());
    assert_eq!(boxed.name(), "duckduckgo");
}
