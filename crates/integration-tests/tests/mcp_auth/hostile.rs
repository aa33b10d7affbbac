//! A small HTTP server for the authorization tests: an MCP endpoint that wants a bearer token,
//! and whatever protected resource and authorization server documents a test gives it, each
//! request recorded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    /// Path and query.
    pub target: String,
    pub headers: HashMap<String, String>,
    pub body: String,
}

impl Seen {
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }

    /// A form body's field (as sent: the tests' values need no decoding).
    pub fn form(&self, name: &str) -> Option<String> {
        self.body.split('&').find_map(|kv| kv.split_once('=').filter(|(k, _)| *k == name).map(|(_, v)| v.to_string()))
    }
}

/// An answer: status, content type and body.
pub type Answer = (u16, Vec<(String, String)>, String);

pub fn json_answer(status: u16, body: Value) -> Answer {
    (status, vec![("content-type".into(), "application/json".into())], body.to_string())
}

pub fn not_found() -> Answer {
    (404, Vec::new(), "not found".into())
}

pub type Route = Box<dyn Fn(&Seen, &str) -> Option<Answer> + Send + Sync>;

/// The server: `routes` answer the paths they know (given the request and the base URL);
/// `/mcp` is an MCP server accepting the bearer tokens in `tokens`.
pub struct Hostile {
    pub base: String,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    pub tokens: Arc<Mutex<Vec<String>>>,
}

impl Hostile {
    pub async fn start(
        routes: Vec<(&'static str, Route)>,
        challenge: impl Fn(&str) -> String + Send + Sync + 'static,
    ) -> Hostile {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let tokens: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));
        let routes = Arc::new(routes);
        let challenge = Arc::new(challenge);
        let (seen2, tokens2, base2) = (seen.clone(), tokens.clone(), base.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else { return };
                let (seen, tokens, routes, base, challenge) =
                    (seen2.clone(), tokens2.clone(), routes.clone(), base2.clone(), challenge.clone());
                tokio::spawn(async move {
                    let Some(request) = read_request(&mut stream).await else { return };
                    seen.lock().unwrap().push(request.clone());
                    let answer = if request.path() == "/mcp" {
                        mcp(&request, &tokens.lock().unwrap(), &challenge(&base))
                    } else {
                        routes
                            .iter()
                            .find(|(path, _)| *path == request.path())
                            .and_then(|(_, route)| route(&request, &base))
                            .unwrap_or_else(not_found)
                    };
                    write_answer(&mut stream, answer).await;
                });
            }
        });
        Hostile { base, seen, tokens }
    }

    pub fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    pub fn accept(&self, token: &str) {
        self.tokens.lock().unwrap().push(token.to_string());
    }

    pub fn requests_to(&self, path: &str) -> Vec<Seen> {
        self.seen.lock().unwrap().iter().filter(|s| s.path() == path).cloned().collect()
    }

    /// The bearer tokens the MCP endpoint received, in order.
    pub fn bearers(&self) -> Vec<String> {
        self.requests_to("/mcp")
            .iter()
            .filter_map(|s| s.headers.get("authorization").and_then(|a| a.strip_prefix("Bearer ")).map(str::to_string))
            .collect()
    }
}

pub fn route(f: impl Fn(&Seen, &str) -> Option<Answer> + Send + Sync + 'static) -> Route {
    Box::new(f)
}

/// The MCP endpoint: 401 with `challenge` without an accepted token; else `initialize`,
/// notifications, `tools/list` (one tool, `echo`) and `tools/call` (which echoes the token).
fn mcp(request: &Seen, tokens: &[String], challenge: &str) -> Answer {
    if request.method != "POST" {
        return (405, Vec::new(), String::new());
    }
    let bearer = request.headers.get("authorization").and_then(|a| a.strip_prefix("Bearer "));
    if !bearer.is_some_and(|b| tokens.iter().any(|t| t == b)) {
        return (
            401,
            vec![
                ("www-authenticate".into(), challenge.to_string()),
                ("content-type".into(), "application/json".into()),
            ],
            json!({"error": "invalid_token"}).to_string(),
        );
    }
    let message: Value = serde_json::from_str(&request.body).unwrap_or(Value::Null);
    let Some(id) = message.get("id").cloned() else { return (202, Vec::new(), String::new()) };
    let result = match message["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1"}
        }),
        Some("tools/list") => json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
        // A server that lies about what it was given: its answer repeats the request's token.
        Some("tools/call") => json!({
            "content": [{"type": "text", "text": format!("you are {}", bearer.unwrap_or_default())}],
            "structuredContent": {"token": bearer},
        }),
        _ => json!({}),
    };
    let mut answer = json_answer(200, json!({"jsonrpc": "2.0", "id": id, "result": result}));
    answer.1.push(("mcp-session-id".into(), "s1".into()));
    answer
}

async fn read_request(stream: &mut tokio::net::TcpStream) -> Option<Seen> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split_whitespace();
    let (method, target) = (first.next()?.to_string(), first.next()?.to_string());
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers.get("content-length").and_then(|l| l.parse().ok()).unwrap_or(0);
    let mut body = data[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&buf[..n]);
    }
    Some(Seen { method, target, headers, body: String::from_utf8_lossy(&body).into_owned() })
}

async fn write_answer(stream: &mut tokio::net::TcpStream, (status, headers, body): Answer) {
    let mut text = format!("HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n", body.len());
    for (k, v) in headers {
        text.push_str(&format!("{k}: {v}\r\n"));
    }
    text.push_str("\r\n");
    text.push_str(&body);
    let _ = stream.write_all(text.as_bytes()).await;
    let _ = stream.shutdown().await;
}
