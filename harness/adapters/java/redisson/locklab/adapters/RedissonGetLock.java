package locklab.adapters;

import com.google.gson.JsonObject;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import locklab.kit.Adapter;
import locklab.kit.Kit;
import locklab.kit.Outcome;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.ClusterServersConfig;
import org.redisson.config.Config;
import org.redisson.config.SingleServerConfig;

// locklab adapter (docs/adapters.md; docs/peers.md, "Redisson"): Redisson's RLock, getLock(key), on
// the first server (useSingleServer()), or, when init marks it "cluster" (the failover column on
// seed 000's Redis Cluster), on the cluster it seeds (useClusterServers()). Built once per Redisson version (java/redisson-<version>/pom.xml).
// Modes (argv[0]):
// - "lock": lock() with its watchdog, bounded: tryLock(wait_ms, MILLISECONDS). Without a lease time
//   it takes the same path as lock() (leaseTime -1: the watchdog renews every
//   lockWatchdogTimeout / 3), and unlike lock() its wait has a bound, which the harness needs.
//   The lease is Redisson's own option, Config.setLockWatchdogTimeout(init's ttl_ms);
//   acquire's ttl_ms is not read.
// - "trylock": tryLock(wait_ms, ttl_ms, MILLISECONDS), the bounded form of Redisson's Lock documentation:
//   a fixed lease, no watchdog.
// Redisson's lock belongs to the thread that took it; the kit runs every call on one thread.
// The client is Config's defaults (issue #26: a departure from them is a variant row), the address
// and the lease (lockWatchdogTimeout = the run's ttl) alone: timeout 3000 ms, 3 retries 1.5 s apart
// (a refused release outlasts the kit's 1.5 s answer bound: blocked, liveness), connectTimeout 10 s.
// argv[1] "--failfast" (the row redisson+failfast; docs/peers.md, "Defaults and variants"): timeout
// 1000 ms and no retries, connectTimeout 5000 ms (1000 ms and 3000 ms failed inits when six JVMs started
// at once on a loaded 2-core machine), one idle connection (default 24: each client opens 24 links
// through the fault proxy at start), so that a dead server's commands fail within the kit's bounds.
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
    String version = Redisson.class.getPackage().getImplementationVersion();
    return version == null ? "unknown" : version;
  }

  @Override
  public Map<String, Boolean> capabilities() {
    return Map.of("expires", true, "owner_checked_release", true, "reentrant", true, "fencing", false,
                  "multi_node", false, "notifies_waiters", true, "auto_extends", !withLease);
  }

  @Override
  public Map<String, Object> init(JsonObject m) {
    JsonObject server = m.getAsJsonArray("servers").get(0).getAsJsonObject();
    String address = "redis://" + server.get("host").getAsString() + ":" + server.get("port").getAsInt();
    Config config = new Config();
    config.setLockWatchdogTimeout(Kit.longField(m, "ttl_ms"));
    if (server.has("cluster") && server.get("cluster").getAsBoolean()) {
      // A Redis Cluster's seed (the failover column of seed 000's topology): useClusterServers() as the
      // seed shows it, Config's defaults otherwise; Redisson finds the masters and replicas from the seed.
      ClusterServersConfig cluster = config.useClusterServers().addNodeAddress(address);
      if (failFast) cluster.setTimeout(1000).setRetryAttempts(0).setConnectTimeout(5000);
    } else {
      SingleServerConfig single = config.useSingleServer().setAddress(address);
      if (failFast) single.setTimeout(1000).setRetryAttempts(0).setConnectTimeout(5000).setConnectionMinimumIdleSize(1);
    }
    redisson = Redisson.create(config);
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
    if (redisson != null) redisson.shutdown(0, 200, TimeUnit.MILLISECONDS);
  }
}
