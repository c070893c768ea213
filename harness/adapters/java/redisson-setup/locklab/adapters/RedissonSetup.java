package locklab.adapters;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import locklab.kit.Kit;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.ClusterServersConfig;
import org.redisson.config.Config;
import org.redisson.config.SingleServerConfig;

// The Redisson client every Redisson adapter starts from (docs/adapters.md, "The Java kit"), in one
// place: compiled into each Redisson adapter's jar beside its own source (java/redisson-*-<version>/pom.xml
// name both folders), against that adapter's Redisson version, so the kit stays library-free.
// The client is Config's defaults (issue #26: a departure from them is a variant row), the address
// and the lease (lockWatchdogTimeout = init's ttl_ms) alone: timeout 3000 ms, 3 retries 1.5 s apart,
// connectTimeout 10 s, 24 idle connections, Redisson's default codec.
// A server init marks "cluster" (the failover column on seed 000's Redis Cluster, for a row whose
// catalog entry says "failover_topology": "cluster") is a seed: useClusterServers().addNodeAddress(),
// as seed 000 shows it; Redisson finds the masters and replicas from the seed. Else useSingleServer().
// failFast (the variant rows +failfast; docs/peers.md, "Defaults and variants"): timeout 1000 ms and no
// retries, connectTimeout 5000 ms (1000 ms and 3000 ms failed inits when six JVMs started at once on a
// loaded 2-core machine), and on one server one idle connection (default 24: each client opens 24
// links through the fault proxy at start), so that a dead server's commands fail within the kit's bounds.
final class RedissonSetup {
  private RedissonSetup() {}

  // The Redisson on the class path, as its jar's manifest names it.
  static String version() {
    String version = Redisson.class.getPackage().getImplementationVersion();
    return version == null ? "unknown" : version;
  }

  // The client of init's server `index` (0: the first, the one a single-server lock uses).
  static RedissonClient client(JsonObject init, int index, boolean failFast) {
    JsonObject server = init.getAsJsonArray("servers").get(index).getAsJsonObject();
    String address = "redis://" + server.get("host").getAsString() + ":" + server.get("port").getAsInt();
    Config config = new Config();
    config.setLockWatchdogTimeout(Kit.longField(init, "ttl_ms"));
    if (server.has("cluster") && server.get("cluster").getAsBoolean()) {
      ClusterServersConfig cluster = config.useClusterServers().addNodeAddress(address);
      if (failFast) cluster.setTimeout(1000).setRetryAttempts(0).setConnectTimeout(5000);
    } else {
      SingleServerConfig single = config.useSingleServer().setAddress(address);
      if (failFast) single.setTimeout(1000).setRetryAttempts(0).setConnectTimeout(5000).setConnectionMinimumIdleSize(1);
    }
    return Redisson.create(config);
  }

  // A client per server of init's first `count`, created at once (five Redisson.create() one after
  // another, each opening its 24 idle connections, outlasted the kit's 12 s init bound with six JVMs
  // starting on a loaded 2-core machine), in the servers' order.
  static List<RedissonClient> clients(JsonObject init, int count) {
    JsonArray servers = init.getAsJsonArray("servers");
    return IntStream.range(0, Math.min(count, servers.size())).parallel().mapToObj(i -> client(init, i, false))
        .collect(Collectors.toList());
  }

  // At the end of stdin (Adapter.close(), within the kit's CLOSE_MS): no quiet period, 200 ms for the rest.
  static void shutdown(RedissonClient client) {
    if (client != null) client.shutdown(0, 200, TimeUnit.MILLISECONDS);
  }
}
