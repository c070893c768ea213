package locklab.adapters;

import com.google.gson.JsonObject;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import locklab.kit.Adapter;
import locklab.kit.Kit;
import locklab.kit.Outcome;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

// locklab adapter (docs/adapters.md; docs/peers.md, "Redisson"): Redisson's RLock, getLock(key), on
// the first server, or, when init marks it "cluster" (the failover column on seed 000's Redis Cluster),
// on the cluster it seeds: the client is RedissonSetup's (../redisson-setup/: Config's defaults, the
// address and lockWatchdogTimeout = init's ttl_ms alone). Built once per Redisson version
// (java/redisson-<version>/pom.xml).
// Modes (argv[0]):
// - "lock": lock() with its watchdog, bounded: tryLock(wait_ms, MILLISECONDS). Without a lease time
//   it takes the same path as lock() (leaseTime -1: the watchdog renews every
//   lockWatchdogTimeout / 3), and unlike lock() its wait has a bound, which the harness needs.
//   The lease is Redisson's own option, Config.setLockWatchdogTimeout(init's ttl_ms);
//   acquire's ttl_ms is not read.
// - "trylock": tryLock(wait_ms, ttl_ms, MILLISECONDS), the bounded form of Redisson's Lock documentation:
//   a fixed lease, no watchdog.
// Redisson's lock belongs to the thread that took it; the kit runs every call on one thread.
// At Config's defaults, 3 retries 1.5 s apart: a refused release outlasts the kit's 1.5 s answer bound
// (blocked, liveness). argv[1] "--failfast" (the row redisson+failfast; docs/peers.md, "Defaults and
// variants"): RedissonSetup's failFast client, whose commands fail within the kit's bounds.
public final class RedissonGetLock implements Adapter {
  private final boolean withLease;
  private final boolean failFast;
  private RedissonClient redisson;
  private RLock lock;
  private int depth;  // our holds not yet released (the hash's count for our field, as far as we know)

  private RedissonGetLock(boolean withLease, boolean failFast) {
    this.withLease = withLease;
    this.failFast = failFast;
  }

  public static void main(String[] args) {
    boolean mode = args.length >= 1 && (args[0].equals("lock") || args[0].equals("trylock"));
    boolean flag = args.length == 1 || (args.length == 2 && args[1].equals("--failfast"));
    if (!mode || !flag) {
      System.err.println("usage: RedissonGetLock lock|trylock [--failfast]");
      System.exit(2);
    }
    Kit.serve(new RedissonGetLock(args[0].equals("trylock"), args.length == 2));
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
    return Map.of("expires", true, "owner_checked_release", true, "reentrant", true, "fencing", false,
                  "multi_node", false, "notifies_waiters", true, "auto_extends", !withLease);
  }

  @Override
  public Map<String, Object> init(JsonObject m) {
    redisson = RedissonSetup.client(m, 0, failFast);
    lock = redisson.getLock(m.get("key").getAsString());
    return null;
  }

  @Override
  public Object acquire(JsonObject m) throws InterruptedException {
    long wait = Kit.longField(m, "wait_ms");
    boolean got = withLease ? lock.tryLock(wait, Kit.longField(m, "ttl_ms"), TimeUnit.MILLISECONDS)
                            : lock.tryLock(wait, TimeUnit.MILLISECONDS);
    if (!got) return "timed_out";
    depth += 1;
    return "acquired";
  }

  // A tryLock that won after the kit answered `unknown`: nobody wants this hold, give it back.
  @Override
  public void lateAcquire(Object result) {
    if (!"acquired".equals(result)) return;
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
      // the unlock script found no field of ours (RedissonBaseLock): another holder, or the hash expired
      depth = 0;
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
