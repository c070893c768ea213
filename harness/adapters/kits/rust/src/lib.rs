//! locklab's Rust adapter kit (docs/adapters.md, "The Rust kit"): the adapter
//! protocol's JSON-lines loop and the bounds every adapter needs, so that an
//! adapter (harness/adapters/rust/NAME/src/main.rs) is only its library's calls.
//! The libraries are pinned by the adapters' workspace
//! (harness/adapters/rust/Cargo.toml, Cargo.lock) and built once by ./install.
//!
//! `serve(Adapter)` answers one request at a time, in order, as the Go kit
//! does: init, acquire, release, extend, noop. The kit keeps the hold that the
//! last acquire returned: a release or extend without one is answered here
//! (already_expired, not_owner). A handler that panics answers "when in doubt":
//! acquire `unknown`, release and extend `error`. When stdin ends the adapter
//! answers what it has read and exits, holding or not.

mod awake;
mod requests;
mod serve;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

pub use awake::{awake_sleep, within, AWAKE_STEP};
pub use serve::serve;

/// The pause between attempts when the acquire request carries no retry_ms.
pub const RETRY_DEFAULT: Duration = Duration::from_millis(5);
/// A library still silent wait_ms + GRACE later is stuck: the acquire is `unknown`.
pub const GRACE: Duration = Duration::from_millis(1000);
/// Bounds release and extend, under AdapterLock's 2000 ms margin.
pub const ANSWER_WITHIN: Duration = Duration::from_millis(1500);
/// Bounds the give-backs at the end of stdin, under AdapterLock's 1000 ms exit grace.
pub const CLOSE_WITHIN: Duration = Duration::from_millis(500);

/// One address of init's servers (through the fault proxy in a run).
#[derive(Clone, Debug, serde::Deserialize)]
pub struct Server {
    pub host: String,
    pub port: u16,
}

impl Server {
    /// "redis://host:port/", the URI the Rust Redis clients take.
    pub fn uri(&self) -> String {
        format!("redis://{}:{}/", self.host, self.port)
    }
}

/// Any request; each type reads its own fields.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(default)]
pub struct Request {
    pub id: Option<serde_json::Value>,
    #[serde(rename = "type")]
    pub kind: String,
    pub servers: Vec<Server>,
    pub key: String,
    pub client: i64,
    pub ttl_ms: u64,
    pub wait_ms: u64,
    pub retry_ms: u64,
}

impl Request {
    pub fn ttl(&self) -> Duration {
        Duration::from_millis(self.ttl_ms)
    }
    /// The acquire's wait_ms (0: exactly one attempt).
    pub fn wait(&self) -> Duration {
        Duration::from_millis(self.wait_ms)
    }
    /// The run's --retry, else RETRY_DEFAULT (which also stands in for 0).
    pub fn retry(&self) -> Duration {
        if self.retry_ms > 0 { Duration::from_millis(self.retry_ms) } else { RETRY_DEFAULT }
    }
}

/// An outcome word and, for a failure, one line saying why.
#[derive(Clone, Debug, Default)]
pub struct Reply {
    pub outcome: String,
    pub error: String,
    /// The awake ms the library's call went on past its bound (docs/adapters.md).
    pub blocked_ms: u64,
}

/// An outcome without an error line.
pub fn say(outcome: &str) -> Reply {
    Reply { outcome: outcome.into(), ..Reply::default() }
}

/// An outcome with the error that decided it.
pub fn fail(outcome: &str, error: impl std::fmt::Display) -> Reply {
    Reply { outcome: outcome.into(), error: one_line(&error.to_string()), blocked_ms: 0 }
}

pub type Fut<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// One library's calls. H is what an acquire holds; the kit hands a clone to release and extend.
pub struct Adapter<H> {
    /// init_ok's library: the name its users know it by.
    pub library: &'static str,
    /// The crate's version (the adapter's build.rs reads it from Cargo.lock).
    pub version: &'static str,
    /// The registry's words plus auto_extends, as the catalog says.
    pub capabilities: Vec<(&'static str, bool)>,
    /// Connects; returns the Redis key the library holds for init's key.
    pub init: Box<dyn FnMut(&Request) -> Result<String, String>>,
    /// The wait is the adapter's to keep (awake_sleep, within); the kit answers
    /// `unknown` at wait_ms + GRACE and gives back a hold that comes later.
    pub acquire: Arc<dyn Fn(Request) -> Fut<(Option<H>, Reply)> + Send + Sync>,
    /// Release and extend are bounded by ANSWER_WITHIN.
    pub release: Arc<dyn Fn(H) -> Fut<Reply> + Send + Sync>,
    /// None: the library has none.
    pub extend: Option<Arc<dyn Fn(H, Duration) -> Fut<Reply> + Send + Sync>>,
    /// Runs once stdin has ended, after the give-backs, within CLOSE_WITHIN (None: nothing to do).
    pub close: Option<Box<dyn FnOnce() + Send>>,
}

/// The text on one line, at most 300 bytes.
pub fn one_line(text: &str) -> String {
    let mut line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.len() > 300 {
        let mut end = 300;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        line.truncate(end);
    }
    line
}
