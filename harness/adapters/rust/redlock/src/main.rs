// locklab adapter (docs/adapters.md): redlock-rs 2.0.0 (the crate `redlock`, a
// port of redlock-rb), blocking, a Redlock over every server given, as its
// README builds it: RedLock::new(uris), lock(), unlock().
// What the source says (~/.cargo/registry/src/*/redlock-2.0.0/src/redlock.rs):
//   - lock (:136-174): retry_count tries (default 3, :10); each opens a new
//     connection to every server in turn, without a timeout, and SETs K value
//     NX PX ttl (:108-128); the first error of any server ends lock() with Err
//     (the `?` at :145), the SETs already made left in place. It holds at a
//     quorum N/2+1 (:75) while ttl - (ttl*0.01 + 2) - elapsed > 0 (:150-157,
//     usize arithmetic: past the ttl it wraps, in a release build, to a huge
//     validity); else it unlocks every server (:164-167) and sleeps a random
//     0..retry_delay (default 200 ms, :11), after the last try too (:170-171).
//   - The wait: the README loops lock() until it holds. The harness owns the
//     wait: set_retry(wait_ms/retry_ms + 1, retry_ms) and one lock(); wait_ms 0 is one try.
//   - unlock (:229-233, :212-227) is best effort and returns nothing: released is all its caller learns.
//   - No extend.
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use locklab_kit::{fail, say, serve, Adapter, Fut, Reply, Request};
use redlock::{Lock, RedLock};

static SERVERS: OnceLock<(Vec<String>, String)> = OnceLock::new();
// A Lock borrows its RedLock: one manager a retry count, kept for the process.
static MANAGERS: Mutex<Option<HashMap<(u32, u32), &'static RedLock>>> = Mutex::new(None);

fn initialize(m: &Request) -> Result<String, String> {
    let uris: Vec<String> = m.servers.iter().map(|s| s.uri()).collect();
    SERVERS.set((uris, m.key.clone())).map_err(|_| "init came twice".to_string())?;
    Ok(m.key.clone())
}

fn manager(tries: u32, retry_ms: u32) -> &'static RedLock {
    let mut managers = MANAGERS.lock().unwrap_or_else(|e| e.into_inner());
    *managers.get_or_insert_with(HashMap::new).entry((tries, retry_ms)).or_insert_with(|| {
        let mut manager = RedLock::new(SERVERS.get().expect("init first").0.clone());
        manager.set_retry(tries, retry_ms);
        Box::leak(Box::new(manager))
    })
}

fn acquire(m: Request) -> Fut<(Option<Arc<Lock<'static>>>, Reply)> {
    Box::pin(async move {
        let retry = m.retry().as_millis().max(1) as u32;
        let manager = manager(m.wait_ms as u32 / retry + 1, retry);
        let key = SERVERS.get().expect("init first").1.clone();
        let ttl = m.ttl_ms as usize;
        let got = tokio::task::spawn_blocking(move || manager.lock(key.as_bytes(), ttl)).await;
        match got {
            Ok(Ok(Some(lock))) => (Some(Arc::new(lock)), say("acquired")),
            Ok(Ok(None)) => (None, say("timed_out")),
            Ok(Err(e)) => (None, fail("unknown", e)), // a server failed: the SETs before it stay
            Err(e) => (None, fail("unknown", e)),
        }
    })
}

fn release(lock: Arc<Lock<'static>>) -> Fut<Reply> {
    Box::pin(async move {
        match tokio::task::spawn_blocking(move || lock.lock_manager.unlock(&lock)).await {
            Ok(()) => say("released"),
            Err(e) => fail("error", e),
        }
    })
}

fn main() {
    serve(Adapter {
        library: "redlock-rs",
        version: env!("LIBRARY_VERSION"),
        capabilities: vec![("expires", true), ("owner_checked_release", true), ("reentrant", false),
            ("fencing", false), ("multi_node", true), ("notifies_waiters", false), ("auto_extends", false)],
        init: Box::new(initialize),
        acquire: Arc::new(acquire),
        release: Arc::new(release),
        extend: None,
        close: None,
    })
}
