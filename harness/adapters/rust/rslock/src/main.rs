// locklab adapter (docs/adapters.md): rslock 0.10.0 (async, tokio-comp), a
// Redlock over every server given, as its README builds it: LockManager::new(uris).
// What the source says (~/.cargo/registry/src/*/rslock-0.10.0/src/lock.rs):
//   - exec_or_retry (:451-528): each attempt SETs K value NX PX ttl on every
//     server at once (:236-260, :467-476), holds at a quorum N/2+1 (:96-98) while
//     ttl - (ttl*0.01 + 2) - elapsed is left (:478-491; none left: TtlExceeded at
//     :482-484, its SETs left in place); a failed attempt runs the unlock script
//     on every server (:500-507), then sleeps a random 0..retry_delay (:509-521).
//     Defaults: 3 tries, 200 ms (:20-21).
//   - The wait: the README's acquire() loops lock() until it holds (:593-621), with
//     no bound. The harness owns the wait: set_retry(wait_ms/retry_ms + 1, retry_ms)
//     and lock(), as the Go row bounds go-redsync by tries; wait_ms 0 is one try.
//     Not a cancelled acquire(): a dropped attempt leaves its SETs for a whole ttl.
//   - A server's error is a lost vote (:236-239, :254-258), never an error: a
//     lock() that fails is Unavailable; acquire answers timed_out, as a quorum refused.
//   - unlock (:550-561) is best effort and returns nothing: released is all its caller learns.
//   - extend (:624-632) runs the extend script (GET == value, then SET PX ttl,
//     :30-41) through the same retries; a failed try unlocks the key on every server (:500-507).
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use locklab_kit::{fail, say, serve, Adapter, Fut, Reply, Request};
use rslock::{Lock, LockError, LockManager};

static MANAGER: OnceLock<(LockManager, String)> = OnceLock::new();

fn initialize(m: &Request) -> Result<String, String> {
    let uris: Vec<String> = m.servers.iter().map(|s| s.uri()).collect();
    MANAGER.set((LockManager::new(uris), m.key.clone())).map_err(|_| "init came twice".to_string())?;
    Ok(m.key.clone())
}

fn acquire(m: Request) -> Fut<(Option<Arc<Lock>>, Reply)> {
    Box::pin(async move {
        let (manager, key) = MANAGER.get().expect("init first");
        let mut manager = manager.clone(); // shares the connections; the retries are this acquire's
        let retry = m.retry().as_millis().max(1) as u64;
        manager.set_retry((m.wait_ms / retry + 1) as u32, Duration::from_millis(retry));
        match manager.lock(key.as_bytes(), m.ttl()).await {
            Ok(lock) => (Some(Arc::new(lock)), say("acquired")),
            Err(LockError::Unavailable) => (None, say("timed_out")),
            Err(e) => (None, fail("unknown", e)), // TtlExceeded: the SETs may have landed
        }
    })
}

fn release(lock: Arc<Lock>) -> Fut<Reply> {
    Box::pin(async move {
        lock.lock_manager.unlock(&lock).await;
        say("released")
    })
}

fn extend(lock: Arc<Lock>, ttl: Duration) -> Fut<Reply> {
    Box::pin(async move {
        match lock.lock_manager.extend(&lock, ttl).await {
            Ok(_) => say("extended"),
            Err(e) => fail("not_owner", e), // no quorum extended: the script's 0 and a lost server alike
        }
    })
}

fn main() {
    serve(Adapter {
        library: "rslock",
        version: env!("LIBRARY_VERSION"),
        capabilities: vec![("expires", true), ("owner_checked_release", true), ("reentrant", false),
            ("fencing", false), ("multi_node", true), ("notifies_waiters", false), ("auto_extends", false)],
        init: Box::new(initialize),
        acquire: Arc::new(acquire),
        release: Arc::new(release),
        extend: Some(Arc::new(extend)),
        close: None,
    })
}
