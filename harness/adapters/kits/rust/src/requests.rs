//! The requests that hold or give up the lock, each within its bound: acquire
//! within wait_ms + GRACE, release and extend within ANSWER_WITHIN (awake time).

use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

use crate::{fail, within, Adapter, Reply, Request, ANSWER_WITHIN, GRACE};

/// What the loop keeps between requests: the last acquire's hold, and the late
/// wins still being given back (the end of stdin waits for them).
pub(crate) struct State<H> {
    pub hold: Option<H>,
    pub give_backs: Vec<JoinHandle<()>>,
}

/// The library's acquire runs on its own task; at wait_ms + GRACE the answer is
/// `unknown` and a hold that comes later is released through the library. An
/// acquire that fails leaves the hold it had untouched.
pub(crate) async fn acquire<H: Send + 'static>(a: &Adapter<H>, s: &mut State<H>, m: Request) -> Reply {
    let began = Instant::now();
    let mut task = tokio::spawn((a.acquire)(m.clone()));
    match within(m.wait() + GRACE, &mut task).await {
        Some(Ok((hold, reply))) => {
            if reply.outcome == "acquired" {
                match hold {
                    Some(hold) => s.hold = Some(hold),
                    None => return fail("unknown", "the adapter answered acquired without a hold"),
                }
            }
            reply
        }
        Some(Err(panic)) => fail("unknown", format!("panic: {panic}")), // when in doubt
        None => {
            let release = a.release.clone();
            s.give_backs.push(tokio::spawn(async move {
                // a late win: the harness was told `unknown`, so the lock goes back
                if let Ok((Some(late), reply)) = task.await {
                    if reply.outcome == "acquired" {
                        within(ANSWER_WITHIN, release(late)).await;
                    }
                }
            }));
            // as the other kits: the call went on past its wait bound, which the harness judges liveness
            let ms = began.elapsed().saturating_sub(m.wait()).max(GRACE).as_millis() as u64;
            Reply {
                outcome: "unknown".into(),
                error: format!("acquire blocked {ms} ms past its wait bound (the library still waiting)"),
                blocked_ms: ms,
            }
        }
    }
}

/// Runs `call` on its own task, answering `error` when it is still running at ANSWER_WITHIN.
async fn bounded(name: &str, call: crate::Fut<Reply>) -> Reply {
    let mut task = tokio::spawn(call);
    match within(ANSWER_WITHIN, &mut task).await {
        Some(Ok(reply)) => reply,
        Some(Err(panic)) => fail("error", format!("panic: {panic}")),
        None => Reply {
            outcome: "error".into(),
            error: format!("{name} blocked past {} ms (the library still waiting)", ANSWER_WITHIN.as_millis()),
            blocked_ms: ANSWER_WITHIN.as_millis() as u64,
        },
    }
}

/// Ends the last acquire's hold (already_expired when there is none).
pub(crate) async fn release<H>(a: &Adapter<H>, s: &mut State<H>) -> Reply {
    match s.hold.take() {
        None => fail("already_expired", "no hold to release"),
        Some(hold) => bounded("release", (a.release)(hold)).await,
    }
}

/// Lengthens the hold, where the library has an extend.
pub(crate) async fn extend<H: Clone>(a: &Adapter<H>, s: &State<H>, ttl: Duration) -> Reply {
    let Some(extend) = &a.extend else {
        return fail("error", format!("{} has no extend", a.library));
    };
    match &s.hold {
        None => fail("not_owner", "no hold to extend"),
        Some(hold) => bounded("extend", extend(hold.clone(), ttl)).await,
    }
}

