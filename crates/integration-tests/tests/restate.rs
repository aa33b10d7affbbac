//! Durable agents against a real Restate server (`scripts/restate.sh`), served by the
//! `restate_service` binary: crash recovery, approvals across restarts, sessions, bad input.
//!
//! Each test starts its own server and service on free ports, with its own folders, and
//! counts executions in files the service's tools and model write.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// A port free now, below Linux's ephemeral range (32768 and up), so that the outgoing
/// connections of the tests running beside this one do not take it before it is bound.
fn free_port() -> u16 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let seed = std::process::id().wrapping_mul(7919)
        ^ SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    loop {
        let offset = seed.wrapping_add(NEXT.fetch_add(7, Ordering::Relaxed)) % 12_000;
        let port = 20_000 + offset as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repo root")
}

/// A Restate server started by the project's script, stopped (and its data deleted) on drop.
struct Server {
    home: PathBuf,
    ingress: u16,
    admin: u16,
    node: u16,
}

impl Server {
    fn script(&self, args: &[&str]) -> std::process::Output {
        let out = self.run(args);
        assert!(out.status.success(), "scripts/restate.sh {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        out
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        Command::new(repo_root().join("scripts/restate.sh"))
            .args(args)
            .env("RESTATE_HOME", &self.home)
            // The npm packages are shared by every test; only the run folder is the test's.
            .env("RESTATE_NPM_DIR", repo_root().join(".restate/npm"))
            .env("RESTATE_INGRESS_PORT", self.ingress.to_string())
            .env("RESTATE_ADMIN_PORT", self.admin.to_string())
            .env("RESTATE_NODE_PORT", self.node.to_string())
            .output()
            .expect("scripts/restate.sh runs")
    }

    /// Starts a server; when a port was taken meanwhile, again on other ports.
    fn start(home: &Path) -> Server {
        let mut attempt = 1;
        loop {
            let server =
                Server { home: home.to_path_buf(), ingress: free_port(), admin: free_port(), node: free_port() };
            let out = server.run(&["start"]);
            if out.status.success() {
                return server;
            }
            let log = String::from_utf8_lossy(&out.stderr).to_string();
            assert!(attempt < 5 && log.contains("Address in use"), "scripts/restate.sh start failed: {log}");
            attempt += 1;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new(repo_root().join("scripts/restate.sh"))
            .arg("stop")
            .env("RESTATE_HOME", &self.home)
            .env("RESTATE_NPM_DIR", repo_root().join(".restate/npm"))
            .status();
    }
}

/// The service process: killed on drop.
struct Service {
    port: u16,
    logs: PathBuf,
    child: Option<Child>,
}

impl Service {
    fn spawn(port: u16, logs: &Path, hang_before: Option<u32>) -> Service {
        let env: Vec<(&str, String)> =
            hang_before.map(|n| ("HANG_BEFORE_MODEL_REQUEST", n.to_string())).into_iter().collect();
        Service::spawn_with(port, logs, &env)
    }

    fn spawn_with(port: u16, logs: &Path, env: &[(&str, String)]) -> Service {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_restate_service"));
        cmd.env("PORT", port.to_string()).env("LOG_DIR", logs).stdout(Stdio::null()).stderr(Stdio::null());
        for (key, value) in env {
            cmd.env(key, value);
        }
        let mut child = cmd.spawn().expect("the service starts");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the service did not listen on {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        // Listening is not enough: the port must be this process's (it exits if it cannot bind).
        std::thread::sleep(Duration::from_millis(100));
        assert!(matches!(child.try_wait(), Ok(None)), "the service exited: port {port} was taken");
        Service { port, logs: logs.to_path_buf(), child: Some(child) }
    }

    /// Kills the process by its pid (SIGKILL: no clean shutdown).
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let status = Command::new("kill").arg("-9").arg(child.id().to_string()).status().expect("kill");
            assert!(status.success());
            let _ = child.wait();
        }
    }

    fn restart(&mut self, hang_before: Option<u32>) {
        self.kill();
        *self = Service::spawn(self.port, &self.logs.clone(), hang_before);
    }

    /// Waits until the process has exited by itself (it aborted at its crash point).
    fn wait_exit(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let child = self.child.as_mut().expect("a running service");
        while matches!(child.try_wait(), Ok(None)) {
            assert!(Instant::now() < deadline, "the service did not reach its crash point");
            std::thread::sleep(Duration::from_millis(10));
        }
        self.child = None;
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A test's world: a server, a registered service, and the service's log folder.
struct World {
    server: Server,
    service: Service,
    dir: TempDir,
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl World {
    fn new(name: &str, hang_before: Option<u32>) -> World {
        let dir = std::env::temp_dir().join(format!("toolsmith-restate-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let logs = dir.join("logs");
        std::fs::create_dir_all(&logs).expect("log dir");
        let server = Server::start(&dir.join("restate"));
        let service = Service::spawn(free_port(), &logs, hang_before);
        server.script(&["register", &format!("http://127.0.0.1:{}", service.port)]);
        World { server, service, dir: TempDir(dir) }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{path}", self.server.ingress)
    }

    /// An HTTP request to the ingress: (status, body as JSON or as a string).
    fn http(&self, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
        let mut cmd = Command::new("curl");
        cmd.args(["-sS", "-X", method, "-w", "\n%{http_code}", "--max-time", "60"]);
        if let Some(body) = body {
            cmd.args(["-H", "content-type: application/json", "--data-binary", body]);
        }
        let out = cmd.arg(self.url(path)).output().expect("curl runs");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let (body, status) = text.rsplit_once('\n').unwrap_or(("", "0"));
        let value = serde_json::from_str(body).unwrap_or_else(|_| Value::String(body.to_string()));
        (status.trim().parse().unwrap_or(0), value)
    }

    fn turn_send(&self, key: &str, prompt: &str) -> String {
        let (status, body) =
            self.http("POST", &format!("AgentSession/{key}/turn/send"), Some(&json!({"prompt": prompt}).to_string()));
        assert!((200..300).contains(&status), "send: {status} {body}");
        body["invocationId"].as_str().expect("an invocation id").to_string()
    }

    fn attach(&self, invocation: &str) -> (u16, Value) {
        self.http("GET", &format!("restate/invocation/{invocation}/attach"), None)
    }

    fn turn(&self, key: &str, prompt: &str) -> (u16, Value) {
        self.http("POST", &format!("AgentSession/{key}/turn"), Some(&json!({"prompt": prompt}).to_string()))
    }

    fn shared(&self, key: &str, handler: &str, body: Option<&str>) -> (u16, Value) {
        self.http("POST", &format!("AgentSession/{key}/{handler}"), body)
    }

    fn lines(&self, file: &str) -> Vec<String> {
        std::fs::read_to_string(self.service.logs.join(file)).unwrap_or_default().lines().map(str::to_string).collect()
    }

    fn wait_for(&self, what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !done() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The tool calls whose results the invocation's journal holds now, read through the admin
    /// API's SQL (the `steps` entries' values).
    fn journaled_calls(&self, invocation: &str) -> Vec<String> {
        let query =
            json!({"query": format!("SELECT entry_type, entry_json FROM sys_journal WHERE id = '{invocation}'")});
        let out = Command::new("curl")
            .args(["-sS", "-X", "POST", "-H", "content-type: application/json", "-H", "accept: application/json"])
            .args(["--data-binary", &query.to_string()])
            .arg(format!("http://127.0.0.1:{}/query", self.server.admin))
            .output()
            .expect("curl runs");
        let rows: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        let mut calls = Vec::new();
        for row in rows["rows"].as_array().into_iter().flatten() {
            if row["entry_type"] != "Notification: Run" {
                continue;
            }
            let entry: Value =
                serde_json::from_str(row["entry_json"].as_str().unwrap_or("null")).unwrap_or(Value::Null);
            let bytes: Vec<u8> = entry["Notification"]["Completion"]["Run"]["result"]["Success"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|b| b.as_u64().map(|b| b as u8))
                .collect();
            let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            for step in value["steps"].as_array().into_iter().flatten() {
                let key = step["step"].as_str().unwrap_or_default();
                if key.starts_with("tool ") {
                    // `tool <step> "<name>" "<call id>"`
                    if let Some(id) = key.rsplit('"').nth(1) {
                        calls.push(id.to_string());
                    }
                }
            }
        }
        calls
    }

    fn wait_pending(&self, key: &str) -> Value {
        let mut pending = Value::Null;
        self.wait_for("a pending call", || {
            let (status, body) = self.shared(key, "pending", None);
            pending = body;
            status == 200 && pending.as_array().is_some_and(|a| !a.is_empty())
        });
        pending
    }
}

/// The history with what differs between two separate runs (times, run and conversation ids)
/// blanked.
fn normalised(history: &Value) -> Value {
    match history {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| match k.as_str() {
                    "timestamp" | "run_id" | "conversation_id" => (k.clone(), Value::Null),
                    _ => (k.clone(), normalised(v)),
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(normalised).collect()),
        other => other.clone(),
    }
}

#[test]
fn a_run_killed_between_steps_resumes_from_its_journal() {
    let mut world = World::new("crash", Some(2));
    // Two calls in one response, run in parallel, each its own journaled step.
    let invocation = world.turn_send("crash", "charge 5 6");
    // The tool ran and its step is journaled; the process is stopped before model request 2.
    world.wait_for("the hang before model request 2", || world.service.logs.join("hanging").exists());
    world.service.kill();
    let mut ran = world.lines("charge.log");
    ran.sort();
    assert_eq!(ran, ["5", "6"], "each call ran once before the crash");
    let trace = world.lines("charge-trace.log");
    assert!(trace[..2].iter().all(|l| l.starts_with("start")), "the two calls ran in parallel: {trace:?}");
    world.service.restart(None);

    let (status, reply) = world.attach(&invocation);
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["output"], "done: charged 5; charged 6");
    assert_eq!(world.lines("charge.log").len(), 2, "no call ran again");
    assert_eq!(world.lines("model.log"), ["charge 5 6 | 0", "charge 5 6 | 2"], "the model was asked once per step");

    // The replay rebuilt the history the first process had made, timestamps and ids included.
    let seen: Value =
        serde_json::from_str(&std::fs::read_to_string(world.service.logs.join("charge-saw.json")).unwrap()).unwrap();
    let history = &reply["new_messages"];
    let (seen, history_items) = (seen.as_array().unwrap(), history.as_array().unwrap());
    // The last message seen is the request being made (the tool's return not in it yet).
    let (open, done) = seen.split_last().unwrap();
    assert_eq!(&history_items[..done.len()], done, "replayed history differs");
    let replayed = &history_items[done.len()];
    for key in ["kind", "timestamp", "run_id", "conversation_id"] {
        assert_eq!(replayed[key], open[key], "the replayed request's `{key}` differs");
    }

    // The same turn uninterrupted, in another conversation, makes the same history.
    let (status, straight) = world.turn("straight", "charge 5 6");
    assert_eq!(status, 200, "{straight}");
    assert_eq!(normalised(&straight["new_messages"]), normalised(history));
    assert_eq!(world.lines("charge.log").len(), 4);
    let (_, stored) = world.shared("crash", "history", None);
    assert_eq!(&stored, history, "the conversation's history is stored");
}

#[test]
fn an_approval_arrives_after_the_service_restarted() {
    let mut world = World::new("approve", None);
    let invocation = world.turn_send("a", "transfer 10 to bob");
    let pending = world.wait_pending("a");
    assert_eq!(pending[0]["tool_call_id"], "transfer-1");
    assert_eq!(pending[0]["tool_name"], "transfer");
    assert_eq!(pending[0]["kind"], "approval");
    assert_eq!(pending[0]["args"], json!({"amount": 10, "to": "bob"}));
    assert!(world.lines("transfer.log").is_empty(), "nothing runs before the approval");

    world.service.restart(None);
    let (status, body) = world.shared("a", "decide", Some(r#"{"tool_call_id": "transfer-1", "approved": true}"#));
    assert_eq!(status, 200, "{body}");
    let (status, reply) = world.attach(&invocation);
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["output"], "done: transferred 10 to bob");
    assert_eq!(world.lines("transfer.log"), ["10 to bob"], "the approved call ran once");
    assert_eq!(world.shared("a", "pending", None).1, json!([]));

    // A denial: the call never runs, the model hears why.
    let invocation = world.turn_send("d", "transfer 99 to eve");
    world.wait_pending("d");
    world.service.restart(None);
    // Named by its tool and arguments, without listing the pending calls first.
    let (status, body) = world.shared(
        "d",
        "decide",
        Some(r#"{"tool_name": "transfer", "args": {"amount": 99, "to": "eve"}, "approved": false, "message": "not to eve"}"#),
    );
    assert_eq!(status, 200, "{body}");
    let (status, reply) = world.attach(&invocation);
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["output"], "done: not to eve");
    assert_eq!(world.lines("transfer.log"), ["10 to bob"], "the denied call did not run");

    // A call run outside the agent: its result arrives as a decision.
    let invocation = world.turn_send("fx", "rate EUR");
    let pending = world.wait_pending("fx");
    assert_eq!(pending[0]["kind"], "external");
    assert_eq!(pending[0]["metadata"], json!({"queue": "fx"}));
    let (status, body) = world.shared("fx", "decide", Some(r#"{"tool_call_id": "fx-1", "approved": true}"#));
    assert_eq!(status, 400, "an approval does not answer an outside call: {body}");
    let (status, body) = world.shared("fx", "decide", Some(r#"{"tool_call_id": "fx-1", "result": "1.08"}"#));
    assert_eq!(status, 200, "{body}");
    let (status, reply) = world.attach(&invocation);
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["output"], "done: 1.08");
    assert_eq!(world.lines("fx.log"), ["EUR"], "the deferring tool ran once");
}

#[test]
fn conversations_stay_apart_and_one_conversation_runs_one_turn_at_a_time() {
    let world = World::new("sessions", None);
    let (_, a1) = world.turn("alice", "remember apple");
    let (_, b1) = world.turn("bob", "remember banana");
    let (_, a2) = world.turn("alice", "remember cherry");
    assert_eq!(a1["output"], "so far: remember apple");
    assert_eq!(b1["output"], "so far: remember banana");
    assert_eq!(a2["output"], "so far: remember apple, remember cherry");

    // Turns of different conversations run at the same time.
    std::fs::remove_file(world.service.logs.join("session.log")).unwrap();
    let p1 = world.turn_send("p1", "remember x");
    let p2 = world.turn_send("p2", "remember y");
    assert_eq!((world.attach(&p1).0, world.attach(&p2).0), (200, 200));
    let log = world.lines("session.log");
    assert!(log[..2].iter().all(|l| l.starts_with("start")), "two conversations ran in parallel: {log:?}");

    // Two turns of one conversation sent at once run one after the other.
    std::fs::remove_file(world.service.logs.join("session.log")).unwrap();
    let first = world.turn_send("carol", "remember one");
    let second = world.turn_send("carol", "remember two");
    let (s1, r1) = world.attach(&first);
    let (s2, r2) = world.attach(&second);
    assert_eq!((s1, s2), (200, 200), "{r1} {r2}");
    assert_eq!(world.lines("session.log"), ["start one", "end one", "start two", "end two"]);
    assert_eq!(r2["output"], "so far: remember one, remember two");
    let (_, history) = world.shared("carol", "history", None);
    assert_eq!(history.as_array().map(Vec::len), Some(4), "{history}");
}

#[test]
fn bad_input_gets_a_clear_error_and_runs_nothing() {
    let world = World::new("bad", None);
    let invocation = world.turn_send("x", "transfer 7 to zed");
    world.wait_pending("x");

    // A call nobody waits for.
    let (status, body) = world.shared("x", "decide", Some(r#"{"tool_call_id": "nope", "approved": true}"#));
    assert_eq!(status, 404, "{body}");
    let text = body.to_string();
    assert!(text.contains("no call `nope` waits") && text.contains("transfer-1"), "{text}");
    // A malformed payload, a misspelt field, a decision of the wrong kind.
    let (status, body) = world.shared("x", "decide", Some("{not json"));
    assert!((400..500).contains(&status), "{status} {body}");
    let (status, body) = world.shared("x", "decide", Some(r#"{"tool_call_id": "transfer-1", "aproved": true}"#));
    assert!((400..500).contains(&status), "{status} {body}");
    assert!(body.to_string().contains("aproved"), "{body}");
    let (status, body) = world.shared("x", "decide", Some(r#"{"tool_call_id": "transfer-1", "result": 1}"#));
    assert_eq!(status, 400, "{body}");
    assert!(body.to_string().contains("waits for an approval"), "{body}");
    // A turn with a malformed body.
    let (status, body) = world.http("POST", "AgentSession/y/turn", Some(r#"{"promt": "hi"}"#));
    assert!((400..500).contains(&status), "{status} {body}");
    // Arrays where objects belong: serde would read them field by field into the struct.
    for (path, array) in [
        ("AgentSession/y/turn", r#"["transfer 5 to mallory"]"#),
        ("AgentSession/x/decide", r#"["transfer-1", true]"#),
        ("AgentSession/x/decide", r#"["transfer-1", null, null, true]"#),
    ] {
        let (status, body) = world.http("POST", path, Some(array));
        assert!((400..500).contains(&status), "{path} took {array}: {status} {body}");
        assert!(body.to_string().contains("is a JSON object, not an array"), "{body}");
    }
    // Deps from a turn, for an agent that takes none from turns.
    let (status, body) = world.http("POST", "AgentSession/y/turn", Some(r#"{"prompt": "hi", "deps": {"user": 1}}"#));
    assert_eq!(status, 400, "{body}");
    assert!(body.to_string().contains("takes no `deps` from a turn"), "{body}");
    assert!(world.lines("transfer.log").is_empty(), "nothing ran");
    assert!(world.lines("model.log").iter().all(|l| !l.starts_with("hi")), "no refused turn reached the model");

    // The turn still waits. Two decisions for the call sent at once: exactly one settles it,
    // the other gets 409 naming the one that won; the call runs once, as the winner said.
    let approve = r#"{"tool_call_id": "transfer-1", "approved": true}"#;
    let deny = r#"{"tool_name": "transfer", "approved": false, "message": "no"}"#;
    let (first, second) = std::thread::scope(|s| {
        let a = s.spawn(|| world.shared("x", "decide", Some(approve)));
        let b = s.spawn(|| world.shared("x", "decide", Some(deny)));
        (a.join().unwrap(), b.join().unwrap())
    });
    let mut statuses = [first.0, second.0];
    statuses.sort();
    assert_eq!(statuses, [200, 409], "{first:?} {second:?}");
    let (winner, loser) = if first.0 == 200 { (approve, &second.1) } else { (deny, &first.1) };
    let said = loser["message"].as_str().map(str::to_string).unwrap_or_else(|| loser.to_string());
    assert!(said.contains("call `transfer-1` was already decided"), "{said}");
    let won = if winner == approve { r#""approved":true"# } else { r#""approved":false"# };
    assert!(said.contains(won), "the refusal names the decision that won: {said}");
    let (status, again) = world.shared("x", "decide", Some(approve));
    assert!(status == 409 || status == 404, "a third decision: {status} {again}");
    let (status, reply) = world.attach(&invocation);
    assert_eq!(status, 200, "{reply}");
    if winner == approve {
        assert_eq!(world.lines("transfer.log"), ["7 to zed"]);
    } else {
        assert!(world.lines("transfer.log").is_empty());
        assert_eq!(reply["output"], "done: no");
    }

    // A tool that panics inside its journaled step: the turn fails once with the panic's
    // message, the tool ran once, the conversation keeps its history and takes the next turn.
    let (status, body) = world.turn("x", "explode");
    assert!(status >= 400, "{status} {body}");
    assert!(body.to_string().contains("the detonator went off"), "{body}");
    assert_eq!(world.lines("explode.log"), ["boom"]);
    let (_, history) = world.shared("x", "history", None);
    assert_eq!(history.as_array().map(Vec::len), Some(4), "only the completed turn is stored: {history}");
    let (status, reply) = world.turn("x", "hello");
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["output"], "you said: hello");
    assert_eq!(world.lines("explode.log"), ["boom"], "the failed step was not run again");
}

/// Where the crash matrix kills the service.
#[derive(Debug, Clone, Copy, PartialEq)]
enum CrashPoint {
    /// Inside the tool, right after its payment was written and synced, before it returns.
    AfterEffect,
    /// After the tool returned, before its result reached the journal.
    BeforeJournal,
    /// By PID (SIGKILL), as soon as the admin API shows the call's result in the journal.
    AfterJournal,
    /// By PID (SIGKILL), 300 ms after the call's payment, whatever the journal says: by then a
    /// finished call is journaled (one round trip to the server), even while the other calls
    /// of its response still run.
    SoonAfterEffect,
}

/// How many times each order was paid, from the synced payment log.
fn payments(logs: &Path) -> std::collections::BTreeMap<u32, usize> {
    let mut paid = std::collections::BTreeMap::new();
    for line in std::fs::read_to_string(logs.join("pay.log")).unwrap_or_default().lines() {
        *paid.entry(line.trim().parse::<u32>().expect("an order")).or_insert(0) += 1;
    }
    paid
}

/// One response with parallel `pay` calls of the given durations (order N is call `pay-N`, in
/// call order), the service killed at `point` of order `victim`'s call, then restarted: a call
/// whose result the journal held when the process died was paid exactly once; the call killed
/// before its result was journaled was paid twice (at-least-once for a call interrupted while
/// running); every call was paid; the turn's answer and usage are those of an uninterrupted
/// turn.
fn crash_scenario(world: &mut World, name: &str, durations: &[u64], point: CrashPoint, victim: u32) {
    let logs = world.dir.0.join(name);
    std::fs::create_dir_all(&logs).expect("log dir");
    let env: Vec<(&str, String)> = match point {
        CrashPoint::AfterEffect => vec![("CRASH_POINT", format!("after-effect:{victim}"))],
        CrashPoint::BeforeJournal => vec![("CRASH_POINT", format!("before-journal:{victim}"))],
        CrashPoint::AfterJournal | CrashPoint::SoonAfterEffect => vec![],
    };
    world.service.kill();
    world.service = Service::spawn_with(world.service.port, &logs, &env);
    let orders: Vec<String> = durations.iter().enumerate().map(|(i, ms)| format!("{}:{ms}", i + 1)).collect();
    let invocation = world.turn_send(name, &format!("pay {}", orders.join(" ")));
    let victim_id = format!("pay-{victim}");
    match point {
        CrashPoint::AfterEffect | CrashPoint::BeforeJournal => world.service.wait_exit(),
        CrashPoint::AfterJournal => {
            world.wait_for("the call's journal entry", || world.journaled_calls(&invocation).contains(&victim_id));
            world.service.kill();
        }
        CrashPoint::SoonAfterEffect => {
            world.wait_for("the call's payment", || payments(&logs).contains_key(&victim));
            std::thread::sleep(Duration::from_millis(300));
            world.service.kill();
        }
    }
    let journaled = world.journaled_calls(&invocation);
    let paid_at_crash = payments(&logs);
    assert_eq!(paid_at_crash.get(&victim), Some(&1), "{name}: the victim was paid before the crash");
    world.service = Service::spawn_with(world.service.port, &logs, &[]);
    let (status, reply) = world.attach(&invocation);
    assert_eq!(status, 200, "{name}: {reply}");
    let paid = payments(&logs);
    let n = durations.len() as u32;
    for order in 1..=n {
        let id = format!("pay-{order}");
        let times = paid.get(&order).copied().unwrap_or(0);
        if journaled.contains(&id) {
            assert_eq!(times, 1, "{name}: order {order} was journaled before the crash and paid again ({paid:?})");
        } else if paid_at_crash.contains_key(&order) {
            // Paid, and killed before its result was journaled: interrupted, so run again.
            assert_eq!(times, 2, "{name}: order {order} ({paid:?}, journaled {journaled:?})");
        } else {
            assert_eq!(times, 1, "{name}: order {order} had not finished at the crash ({paid:?})");
        }
    }
    match point {
        CrashPoint::AfterJournal | CrashPoint::SoonAfterEffect => {
            assert!(journaled.contains(&victim_id), "{name}: a finished call was not journaled: {journaled:?}")
        }
        CrashPoint::AfterEffect | CrashPoint::BeforeJournal => {
            assert!(!journaled.contains(&victim_id), "{name}: {journaled:?}")
        }
    }
    let said: Vec<String> = (1..=n).map(|o| format!("paid {o}")).collect();
    assert_eq!(reply["output"], format!("done: {}", said.join("; ")), "{name}");
    assert_eq!(reply["usage"]["tool_calls"], n, "{name}: the turn's usage counts every call once: {}", reply["usage"]);
    assert_eq!(reply["usage"]["requests"], 2, "{name}");
    let returns: Vec<&Value> = reply["new_messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["parts"].as_array().into_iter().flatten())
        .filter(|p| p["part_kind"] == "tool-return")
        .collect();
    assert_eq!(returns.len(), n as usize, "{name}: one return per call in the history");
}

#[test]
fn a_finished_call_never_runs_again_whatever_order_the_calls_finish_in() {
    let mut world = World::new("matrix", None);
    let points =
        [CrashPoint::AfterEffect, CrashPoint::BeforeJournal, CrashPoint::AfterJournal, CrashPoint::SoonAfterEffect];
    // Two calls, finishing in both orders; the crash at each point of each call.
    for durations in [[1500, 150], [150, 1500]] {
        for victim in 1..=2 {
            for point in points {
                let name = format!("two-{}-{}-{victim}-{point:?}", durations[0], durations[1]);
                crash_scenario(&mut world, &name, &durations, point, victim);
            }
        }
    }
    // Three calls of different durations, listed neither fastest nor slowest first.
    for victim in 1..=3 {
        for point in points {
            crash_scenario(&mut world, &format!("three-{victim}-{point:?}"), &[800, 100, 1500], point, victim);
        }
    }
}

#[test]
fn parallel_calls_stay_parallel_under_the_journal() {
    let world = World::new("parallel", None);
    let (status, reply) = world.turn("p", "pay 1:600 2:300 3:900");
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["output"], "done: paid 1; paid 2; paid 3");
    // All three started before any was paid, and they were paid in the order they finished.
    let trace = world.lines("pay-trace.log");
    assert_eq!(trace, ["start 1", "start 2", "start 3", "paid 2", "paid 1", "paid 3"], "{trace:?}");
}

/// `report 7` with the process stopped after the report's step was journaled, the service
/// restarted (a fresh process), then a later turn in another fresh process: the model's reads
/// of the spilled report, as its final answer shows them.
fn spill_scenario(name: &str, store: Option<&str>) -> (String, (u16, Value)) {
    let mut world = World::new(name, Some(2));
    let env: Vec<(&str, String)> = store.map(|s| ("SPILL_STORE", s.to_string())).into_iter().collect();
    let hang = [env.clone(), vec![("HANG_BEFORE_MODEL_REQUEST", "2".to_string())]].concat();
    world.service.kill();
    world.service = Service::spawn_with(world.service.port, &world.service.logs.clone(), &hang);
    let invocation = world.turn_send("s", "report 7");
    world.wait_for("the hang before model request 2", || world.service.logs.join("hanging").exists());
    world.service.kill();
    assert_eq!(world.lines("report.log"), ["7"]);
    world.service = Service::spawn_with(world.service.port, &world.service.logs.clone(), &env);
    let (status, reply) = world.attach(&invocation);
    assert_eq!(status, 200, "{reply}");
    assert_eq!(world.lines("report.log"), ["7"], "the report ran once");
    let first = reply["output"].as_str().unwrap_or_default().to_string();
    world.service.kill();
    world.service = Service::spawn_with(world.service.port, &world.service.logs.clone(), &env);
    (first, world.turn("s", "reread"))
}

#[test]
fn a_spilled_tool_output_is_read_after_a_crash_and_in_a_later_turn() {
    let (first, (status, later)) = spill_scenario("spill", None);
    // The model saw a preview and read two lines back from the store (the answer's last part).
    let read = first.rsplit_once("; [handle").map_or("", |(_, read)| read);
    assert!(read.ends_with("1,000 matching line(s); showing 2]\nline 0 of report 7\nline 1 of report 7"), "{read}");
    assert_eq!(status, 200, "{later}");
    let later = later["output"].as_str().unwrap_or_default();
    assert!(later.contains("line 3 of report 7") && !later.contains("line 4 of"), "{later}");

    // The same with the spills kept in the process's memory only: lost with the process.
    let (first, (_, later)) = spill_scenario("spill-memory", Some("memory"));
    let read = first.rsplit_once("; [").map_or("", |(_, read)| read);
    assert!(read.starts_with("No stored tool result for handle"), "{first}");
    let later = later["output"].as_str().unwrap_or_default();
    assert!(later.contains("No stored tool result for handle") && !later.contains("line 3 of"), "{later}");
}
