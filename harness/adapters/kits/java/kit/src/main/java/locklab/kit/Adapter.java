package locklab.kit;

import com.google.gson.JsonObject;
import java.util.Map;

// One lock library's calls (docs/adapters.md): what Kit.serve() needs from an adapter. Each
// handler gets the request and returns an outcome word ("acquired", "released", ...) or an
// Outcome with an error text; one that throws answers "when in doubt" (acquire `unknown`,
// release and extend `error`). Every handler runs on the kit's one worker thread, in order:
// a library whose locks belong to a thread (Redisson's RLock) finds its own.
public interface Adapter {
  String library();

  String version();

  Map<String, Boolean> capabilities();

  // Connects; may return extra init_ok fields ({"key": ...}), or null.
  Map<String, Object> init(JsonObject m) throws Exception;

  // Bounds its own wait: the kit gives up at wait_ms + GRACE_MS (unknown) and hands a
  // late result to lateAcquire().
  Object acquire(JsonObject m) throws Exception;

  Object release(JsonObject m) throws Exception;

  default Object extend(JsonObject m) throws Exception {
    return Outcome.error(library() + " has no extend");
  }

  // An acquire answered `unknown` (too late) that then returned `result`: give back a lock
  // nobody asked for any more. Runs on the worker thread, right after the late call.
  default void lateAcquire(Object result) {}

  // At the end of stdin, bounded by Kit.CLOSE_MS: stop the library's threads.
  default void close() {}
}
