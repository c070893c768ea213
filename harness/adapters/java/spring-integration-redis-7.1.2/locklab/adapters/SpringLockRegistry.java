package locklab.adapters;

import com.google.gson.JsonObject;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import locklab.kit.Adapter;
import locklab.kit.Kit;
import locklab.kit.Outcome;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;

// locklab adapter (docs/adapters.md; docs/peers.md, "Spring Integration RedisLockRegistry"): Spring
// Integration's RedisLockRegistry as its reference documentation builds it, on the first server:
// new RedisLockRegistry(connectionFactory, registryKey, expireAfter) over a LettuceConnectionFactory at its
// defaults, obtain(key), tryLock(wait_ms, MILLISECONDS), unlock(). Paths: org/springframework/integration/
// redis/util/RedisLockRegistry.java of spring-integration-redis 7.1.2's sources jar.
// - The lease is the registry's expireAfter (default 60 s, :115), fixed at construction: the run's ttl,
//   init's ttl_ms (as Redisson's rows carry it in lockWatchdogTimeout); acquire's ttl_ms is not read.
// - The default RedisLockType is SPIN_LOCK (:151): tryLock runs the obtain script (:422-432, SET PX or, for
//   our clientId, PEXPIRE) every idleBetweenTries (100 ms, :119, :943-945) until wait_ms ran out.
//   The clientId is one per registry (:139): a process's holds re-enter at Redis, and a local
//   ReentrantLock (:454, :570) makes them the calling thread's; the kit runs every call on one thread.
// - Nothing renews the lease: a renewal runs only with setRenewalTaskScheduler (:161, :598-603).
// - unlock() with a nested hold only counts it down (:620-623); else the compare-and-delete (on Redis < 8.4
//   the UNLINK script, :915-922, after one DELEX that the server refuses, :952-966) and, when it deleted
//   nothing, ConcurrentModificationException "Lock was released in the store due to expiration" (:676-677;
//   Spring Integration #2660, PR #2661): the key expired or is another's, the script cannot tell: not_owner.
// - extend: the registry's renewLock(key, ttl) (:364-381): PEXPIRE if the key is ours, else
//   IllegalStateException (not_owner).
// A Redis error (Lettuce's command timeout is 60 s at the factory's defaults) reaches the kit as a throw.
public final class SpringLockRegistry implements Adapter {
  static final String REGISTRY_KEY = "lock-registry";  // the Redis key is "lock-registry:" + the run's key (:466-468)
  private LettuceConnectionFactory factory;
  private RedisLockRegistry registry;
  private String key;
  private Lock lock;
  private int depth;  // our holds not yet released (the local ReentrantLock's count, as far as we know)

  public static void main(String[] args) {
    if (args.length != 1 || !args[0].equals("lock")) {
      System.err.println("usage: SpringLockRegistry lock");
      System.exit(2);
    }
    Kit.serve(new SpringLockRegistry());
  }

  @Override public String library() { return "spring-integration-redis"; }

  @Override public String version() {
    return Objects.requireNonNullElse(RedisLockRegistry.class.getPackage().getImplementationVersion(), "unknown");
  }

  @Override public Map<String, Boolean> capabilities() {
    return Map.of("expires", true, "owner_checked_release", true, "reentrant", true, "fencing", false,
                  "multi_node", false, "notifies_waiters", false, "auto_extends", false);
  }

  @Override public Map<String, Object> init(JsonObject m) {
    JsonObject server = m.getAsJsonArray("servers").get(0).getAsJsonObject();
    factory = new LettuceConnectionFactory(
        new RedisStandaloneConfiguration(server.get("host").getAsString(), server.get("port").getAsInt()));
    factory.afterPropertiesSet();  // what the Spring container does with the bean: start(), the client
    factory.initConnection();  // connected now, as a running service is (by default at its first command)
    key = m.get("key").getAsString();
    registry = new RedisLockRegistry(factory, REGISTRY_KEY, Kit.longField(m, "ttl_ms"));
    lock = registry.obtain(key);
    return Map.of("key", REGISTRY_KEY + ":" + key);
  }

  @Override public Object acquire(JsonObject m) throws InterruptedException {
    if (!lock.tryLock(Kit.longField(m, "wait_ms"), TimeUnit.MILLISECONDS)) return "timed_out";
    depth += 1;
    return "acquired";
  }

  // A tryLock that won after the kit answered `unknown`: nobody wants this hold, give it back.
  @Override public void lateAcquire(Object result) {
    try {
      if ("acquired".equals(result)) release(null);
    } catch (RuntimeException ignored) {  // a Redis error: the key is left to its TTL
    }
  }

  @Override public Object release(JsonObject m) {
    if (depth == 0) return "already_expired";  // no hold of ours: unlock() would only throw, nothing sent
    depth -= 1;
    try {
      lock.unlock();
    } catch (ConcurrentModificationException e) {  // the delete found the key gone or another's
      return Outcome.of("not_owner", Kit.text(e));
    }
    return depth > 0 ? "still_held" : "released";
  }

  @Override public Object extend(JsonObject m) {
    try {
      registry.renewLock(key, Duration.ofMillis(Kit.longField(m, "ttl_ms")));
    } catch (IllegalStateException e) {  // the renew found the key gone or another's
      return Outcome.of("not_owner", Kit.text(e));
    }
    return "extended";
  }

  @Override public void close() {
    if (registry != null) registry.destroy();
    if (factory != null) factory.destroy();
  }
}
