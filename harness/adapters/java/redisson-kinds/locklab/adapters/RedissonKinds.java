package locklab.adapters;

import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import locklab.kit.Adapter;
import locklab.kit.Kit;
import locklab.kit.Outcome;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

// locklab adapter (docs/adapters.md; docs/peers.md, "Redisson's other locks"): Redisson's other RLocks,
// the kind named by argv[0], each as the README calls it, on RedissonSetup's clients (../redisson-setup/:
// Config's defaults, the address and lockWatchdogTimeout = init's ttl_ms alone, as the getLock rows):
// - "fair": getFairLock(key) on the first server;
// - "spin": getSpinLock(key) on the first server (polls with its exponential back-off, no pub/sub);
// - "redlock": getRedLock(lock1..lockN), one Redisson client (useSingleServer()) and getLock(key) per
//   server, as Redisson's RedLock documentation builds it (deprecated in both versions, shipped by both).
// - "lock": what kits/java/train runs every adapter with: the fair lock's calls.
// Every kind acquires with tryLock(wait_ms, MILLISECONDS): lock()'s path (leaseTime -1, the watchdog),
// bounded, as the getLock rows do. Built once per Redisson version (java/redisson-kinds-<version>/pom.xml).
public final class RedissonKinds implements Adapter {
  private final String kind;
  private final List<RedissonClient> clients = new ArrayList<>();
  private RLock lock;
  private int depth;  // our holds not yet released

  private RedissonKinds(String kind) {
    this.kind = kind;
  }

  public static void main(String[] args) {
    if (args.length != 1 || !List.of("fair", "spin", "redlock", "lock").contains(args[0])) {
      System.err.println("usage: RedissonKinds fair|spin|redlock");
      System.exit(2);
    }
    Kit.serve(new RedissonKinds(args[0].equals("lock") ? "fair" : args[0]));
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
                  "multi_node", kind.equals("redlock"), "notifies_waiters", !kind.equals("spin"), "auto_extends", true);
  }

  // One client per server the kind uses (RedissonSetup.clients: created at once); its lock on each.
  @Override
  public Map<String, Object> init(JsonObject m) {
    String key = m.get("key").getAsString();
    List<RLock> locks = new ArrayList<>();
    clients.addAll(RedissonSetup.clients(m, kind.equals("redlock") ? m.getAsJsonArray("servers").size() : 1));
    for (RedissonClient client : clients)
      locks.add(kind.equals("fair") ? client.getFairLock(key) : kind.equals("spin") ? client.getSpinLock(key) : client.getLock(key));
    lock = kind.equals("redlock") ? clients.get(0).getRedLock(locks.toArray(new RLock[0])) : locks.get(0);
    return null;
  }

  @Override
  public Object acquire(JsonObject m) throws InterruptedException {
    if (!lock.tryLock(Kit.longField(m, "wait_ms"), TimeUnit.MILLISECONDS)) return "timed_out";
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

  // The fair lock's unlock answers 1 when the hash is gone, and RedLock's skips every lock's failure:
  // neither throws for a lost lease (docs/peers.md); getSpinLock's throws as getLock's does.
  @Override
  public Object release(JsonObject m) {
    try {
      lock.unlock();
    } catch (IllegalMonitorStateException e) {
      depth = 0;
      return Outcome.of("not_owner", Kit.text(e));
    }
    depth = Math.max(depth - 1, 0);
    return depth > 0 ? "still_held" : "released";
  }

  @Override
  public void close() {
    for (RedissonClient client : clients) RedissonSetup.shutdown(client);
  }
}
