// The kit's toy adapter for tests/adapter_kit_test.py (RustKit), no Redis: its ttl_ms picks
// what the "library" does, as the Go kit's toy's does. `toy wait MS` prints how long
// awake_sleep(MS) took, a SIGSTOP meanwhile counting as two steps.
use std::sync::Arc;
use std::time::{Duration, Instant};

use locklab_kit::{awake_sleep, say, serve, Adapter, Fut, Reply, Request};

fn acquire(m: Request) -> Fut<(Option<u64>, Reply)> {
    Box::pin(async move {
        match m.ttl_ms {
            13 => panic!("lost reply"),
            17 => tokio::time::sleep(Duration::from_secs(3)).await, // ignores its wait: unknown at wait_ms + GRACE
            19 => return (Some(19), say("acquired")),              // a hold whose release does not answer
            29 => {
                // a win 600 ms in, whatever the wait: in the grace after wait_ms 300, kept
                awake_sleep(Duration::from_millis(600)).await;
                return (Some(29), say("acquired"));
            }
            23 => {
                // a win after wait_ms + GRACE: answered unknown, then given back. Counted in awake
                // time as the kit's bounds are, so that a loaded machine, whose late steps stretch
                // the kit's bound, stretches this wait alike (a plain sleep could end first).
                awake_sleep(Duration::from_millis(1200)).await;
                return (Some(23), say("acquired"));
            }
            _ => {}
        }
        (None, Reply { outcome: "timed_out".into(), error: format!("retry {}", m.retry().as_millis()), blocked_ms: 0 })
    })
}

fn release(hold: u64) -> Fut<Reply> {
    let given = std::env::args().nth(1).unwrap_or_default() + if hold == 29 { ".given29" } else { ".given" };
    Box::pin(async move {
        if hold == 19 {
            tokio::time::sleep(Duration::from_secs(3)).await; // the kit answers error with blocked_ms
        }
        let _ = std::fs::write(given, "given back");
        say("released")
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() > 2 && args[1] == "wait" {
        let ms: u64 = args[2].parse().unwrap_or(0);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
        let start = Instant::now();
        println!("ready");
        runtime.block_on(awake_sleep(Duration::from_millis(ms)));
        println!("{}", start.elapsed().as_millis());
        return;
    }
    let closed = args.get(1).cloned().unwrap_or_default();
    serve(Adapter {
        library: "toy",
        version: "0",
        capabilities: vec![("expires", true)],
        init: Box::new(|m: &Request| Ok(m.key.clone())),
        acquire: Arc::new(acquire),
        release: Arc::new(release),
        extend: None,
        close: Some(Box::new(move || {
            let _ = std::fs::write(closed, "closed");
        })),
    })
}
