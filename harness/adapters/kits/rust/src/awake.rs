//! Bounds counted in the time this process could run (docs/adapters.md, "A stop
//! is not silence"). A holder-pause SIGSTOPs a client with its adapter, and
//! tokio's clock (CLOCK_MONOTONIC) runs on meanwhile: a plain timeout would pass
//! during the pause and answer "unknown" for the reply that comes right after
//! SIGCONT. So a bound is counted in steps of AWAKE_STEP, a step that took longer
//! than two (the process was stopped) counting as two, as AdapterLock counts its
//! own (harness/support/awake_time.h; kits/go/awake.go).

use std::future::Future;
use std::time::{Duration, Instant};

/// The longest wait between two looks at the clock.
pub const AWAKE_STEP: Duration = Duration::from_millis(50);

/// Returns once `d` of awake time has passed.
pub async fn awake_sleep(d: Duration) {
    let mut left = d;
    let mut last = Instant::now();
    while !left.is_zero() {
        tokio::time::sleep(left.min(AWAKE_STEP)).await;
        let now = Instant::now();
        left = left.saturating_sub((now - last).min(2 * AWAKE_STEP));
        last = now;
    }
}

/// The value of `f` if it comes within `d` of awake time, else None (`f` is dropped).
pub async fn within<T>(d: Duration, f: impl Future<Output = T>) -> Option<T> {
    tokio::select! {
        biased; // a value that came in the same instant still counts
        value = f => Some(value),
        _ = awake_sleep(d) => None,
    }
}
