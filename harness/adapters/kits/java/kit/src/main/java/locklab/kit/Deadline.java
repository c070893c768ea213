package locklab.kit;

// A bound of `ms` in the time this process could run (docs/adapters.md, "A stop is not silence").
// A holder-pause SIGSTOPs a client with its adapter while the clock goes on: a plain deadline
// would have passed at SIGCONT, before the reply the pause held back. So time is taken in steps
// of STEP_MS, and a step that took longer than two (the process was stopped) counts as two, as
// AdapterLock counts its own bound (harness/support/awake_time.h) and the JS and Python kits do
// (awakeTimer, Deadline). left() must be called at least every step: the waits here do.
public final class Deadline {
  public static final long STEP_MS = 50;
  private static final long STEP_NS = STEP_MS * 1_000_000L;

  private long leftNs;
  private long last = System.nanoTime();

  public Deadline(long ms) {
    leftNs = Math.max(ms, 0) * 1_000_000L;
  }

  // Nanoseconds left, 0 once passed.
  public synchronized long leftNs() {
    long now = System.nanoTime();
    leftNs -= Math.min(now - last, 2 * STEP_NS);
    last = now;
    return Math.max(leftNs, 0);
  }

  public boolean passed() {
    return leftNs() <= 0;
  }

  // The next wait: at most one step, never past the deadline.
  public long stepNs() {
    return Math.min(leftNs(), STEP_NS);
  }
}
