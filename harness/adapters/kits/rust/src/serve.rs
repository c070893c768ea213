//! The JSON-lines loop: stdin is read on a thread of its own, each request
//! answered in order on the runtime, each reply one line on stdout.

use std::io::{BufRead, Write};

use serde_json::{json, Map, Value};

use crate::requests::{acquire, extend, release, State};
use crate::{one_line, within, Adapter, Reply, Request, CLOSE_WITHIN};

/// Writes one line (a reply or an event) and flushes it.
pub fn send(message: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{message}");
    let _ = out.flush();
}

/// Answers requests from stdin until it ends, then exits 0.
pub fn serve<H: Clone + Send + 'static>(mut a: Adapter<H>) -> ! {
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("adapter {}: cannot start tokio: {e}", a.library);
            std::process::exit(1);
        }
    };
    let (lines, mut next) = tokio::sync::mpsc::unbounded_channel::<String>();
    std::thread::spawn(move || {
        // the end of stdin (or a read error) closes the channel
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    runtime.block_on(async {
        let mut state = State { hold: None, give_backs: Vec::new() };
        while let Some(line) = next.recv().await {
            handle(&mut a, &mut state, line.trim()).await;
        }
        // the late wins still being given back, else their keys stay held until their ttl
        let close = a.close.take();
        within(CLOSE_WITHIN, async {
            for give_back in state.give_backs.drain(..) {
                let _ = give_back.await;
            }
            if let Some(close) = close {
                let _ = tokio::task::spawn_blocking(close).await;
            }
        })
        .await;
    });
    std::process::exit(0)
}

async fn handle<H: Clone + Send + 'static>(a: &mut Adapter<H>, s: &mut State<H>, text: &str) {
    if text.is_empty() {
        return;
    }
    let short = one_line(&text.chars().take(80).collect::<String>());
    let object = match serde_json::from_str::<Value>(text) {
        Err(_) => return send(&json!({"id": null, "type": "error", "error": format!("not JSON: {short}")})),
        Ok(Value::Object(object)) => object,
        Ok(_) => return send(&json!({"id": null, "type": "error", "error": format!("not a request: {short}")})),
    };
    let Ok(m) = serde_json::from_value::<Request>(Value::Object(object)) else {
        return send(&json!({"id": null, "type": "error", "error": format!("not a request: {short}")}));
    };
    let mut reply = answer(a, s, &m).await;
    reply.insert("id".into(), m.id.clone().unwrap_or(Value::Null));
    send(&Value::Object(reply));
}

async fn answer<H: Clone + Send + 'static>(a: &mut Adapter<H>, s: &mut State<H>, m: &Request) -> Map<String, Value> {
    let (kind, r): (&str, Reply) = match m.kind.as_str() {
        "noop" => return object(json!({"type": "noop_ok"})),
        "init" => return init(a, m),
        "acquire" => ("acquire_ok", acquire(a, s, m.clone()).await),
        "release" => ("release_ok", release(a, s).await),
        "extend" => ("extend_ok", extend(a, s, m.ttl()).await),
        other => return object(json!({"type": "error", "error": format!("unknown request type {other}")})),
    };
    let mut reply = object(json!({"type": kind, "outcome": r.outcome}));
    if r.blocked_ms > 0 {
        reply.insert("blocked_ms".into(), json!(r.blocked_ms));
    }
    if !r.error.is_empty() {
        reply.insert("error".into(), json!(r.error));
    }
    reply
}

fn init<H>(a: &mut Adapter<H>, m: &Request) -> Map<String, Value> {
    match (a.init)(m) {
        Err(e) => object(json!({"type": "error", "error": one_line(&e)})),
        Ok(key) => {
            let capabilities: Map<String, Value> =
                a.capabilities.iter().map(|(word, on)| (word.to_string(), json!(on))).collect();
            object(json!({"type": "init_ok", "library": a.library, "version": a.version, "language": "rust",
                          "capabilities": capabilities, "key": key}))
        }
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}
