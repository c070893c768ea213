package locklab.adapters;

import com.google.gson.JsonObject;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import locklab.kit.Adapter;
import locklab.kit.Kit;
import locklab.kit.Outcome;
import org.redisson.api.RFencedLock;
import org.redisson.api.RedissonClient;

// locklab adapter (docs/adapters.md; docs/peers.md, "Redisson's other locks"): Redisson's RFencedLock,
// getFencedLock(key) (Redisson 3.2x on; built against 4.7.0: java/redisson-fenced-4.7.0/pom.xml), on the
// first server, RedissonSetup's client (../redisson-setup/: Config's defaults but the address and
// lockWatchdogTimeout = init's ttl_ms, as the getLock rows). acquire: tryLockAndGetToken(wait_ms, MILLISECONDS), the bounded form of
// the README's lockAndGetToken(): leaseTime -1, the watchdog. Its token (the INCR of
// redisson_lock_token:{K} in the acquire script, RedissonFencedLock.java:106-118) goes out as
// `fencing_token`: the harness carries it to the fenced counter, which refuses a stale one.
// argv[0] "lock" (the kits' one mode; kits/java/train runs every adapter with it).
public final class RedissonFenced implements Adapter {
  private RedissonClient redisson;
  private RFencedLock lock;
  private int depth;  // our holds not yet released

  public static void main(String[] args) {
    if (args.length != 1 || !args[0].equals("lock")) {
      System.err.println("usage: RedissonFenced lock");
      System.exit(2);
    }
    Kit.serve(new RedissonFenced());
  }

  @Override
  public String library() {
    return "redisson";
  }

  @Override
  public String version() {
    return RedissonSetup.version();
  }

  @Override
  public Map<String, Boolean> capabilities() {
    return Map.of("expires", true, "owner_checked_release", true, "reentrant", true, "fencing", true,
                  "multi_node", false, "notifies_waiters", true, "auto_extends", true);
  }

  @Override
  public Map<String, Object> init(JsonObject m) {
    redisson = RedissonSetup.client(m, 0, false);
    lock = redisson.getFencedLock(m.get("key").getAsString());
    return null;
  }

  // null: the wait ran out (RedissonFencedLock.java:173-178).
  @Override
  public Object acquire(JsonObject m) {
    Long token = lock.tryLockAndGetToken(Kit.longField(m, "wait_ms"), TimeUnit.MILLISECONDS);
    if (token == null) return "timed_out";
    depth += 1;
    return Outcome.acquired(token);
  }

  // A tryLock that won after the kit answered `unknown`: nobody wants this hold, give it back.
  @Override
  public void lateAcquire(Object result) {
    if (!(result instanceof Outcome)) return;
    try {
      lock.unlock();
      depth -= 1;
    } catch (RuntimeException ignored) {
      // gone already: nothing to give back
    }
  }

  @Override
  public Object release(JsonObject m) {
    try {
      lock.unlock();
    } catch (IllegalMonitorStateException e) {
      depth = 0;  // the unlock script found no field of ours (RedissonLock's, inherited)
      return Outcome.of("not_owner", Kit.text(e));
    }
    depth = Math.max(depth - 1, 0);
    return depth > 0 ? "still_held" : "released";
  }

  @Override
  public void close() {
    RedissonSetup.shutdown(redisson);
  }
}
