//! The library's HTTP clients speak TLS without installing a rustls crypto provider
//! process-wide: the application stays free to install its own.

use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;
use toolsmith::messages::{ModelMessage, ModelRequest};
use toolsmith::model::{Model, ModelErrorKind, ModelRequestParameters};
use toolsmith::providers::{OpenAIChatModel, RetryConfig};

/// A server that reads what the client sends first and hangs up.
async fn first_bytes_server() -> (String, tokio::task::JoinHandle<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 5];
        socket.read_exact(&mut buf).await.unwrap();
        buf
    });
    (format!("https://{addr}/v1"), handle)
}

#[tokio::test]
async fn https_requests_leave_the_process_wide_crypto_provider_alone() {
    assert!(rustls::crypto::CryptoProvider::get_default().is_none());
    let (url, server) = first_bytes_server().await;
    let model = OpenAIChatModel::builder("gpt-4o-mini")
        .base_url(url)
        .api_key("sk-test")
        .retry(RetryConfig::none())
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let err = model
        .request(&[ModelMessage::Request(ModelRequest::user_prompt("hi"))], None, &ModelRequestParameters::default())
        .await
        .unwrap_err();
    // The client opened with a TLS handshake record (content type 22, version 3.x)...
    let first = server.await.unwrap();
    assert_eq!((first[0], first[1]), (0x16, 0x03), "{first:?}");
    // ... the server hung up, which is a connection failure ...
    assert_eq!(err.kind, ModelErrorKind::Connection, "{err}");
    // ... and nothing was installed for the rest of the process.
    assert!(rustls::crypto::CryptoProvider::get_default().is_none());
    let fetcher = toolsmith::web::WebFetcher::builder().build().unwrap();
    drop(fetcher);
    assert!(rustls::crypto::CryptoProvider::get_default().is_none());
}
