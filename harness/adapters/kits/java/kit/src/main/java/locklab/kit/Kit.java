package locklab.kit;

import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.Gson;
import com.google.gson.TypeAdapter;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;

// locklab's Java adapter kit (docs/adapters.md): the adapter protocol's JSON-lines loop, so that
// an adapter is only its library's calls. serve(adapter) reads one request a line from stdin and
// answers it, in order, with its id: noop and init_ok itself, acquire, release and extend through
// the adapter's handlers on one worker thread (Worker). A handler that throws answers "when in
// doubt": acquire `unknown`, release and extend `error`. Bounds, each in awake time (Deadline):
// acquire wait_ms + GRACE_MS, release and extend ANSWER_MS, init INIT_MS. When stdin ends the
// kit answers what it has read, runs the adapter's close() for at most CLOSE_MS and halts the
// JVM, holding or not: a library's non-daemon threads (Redisson's netty loops) end with it.
// What a library prints on System.out or System.err goes out as `log` events (LogEvents): on
// stdout it would break the protocol.
public final class Kit {
  public static final int RETRY_MS = 5;  // the pause between attempts when the acquire carries no retry_ms
  public static final long GRACE_MS = 1000;  // a library's own bounded wait still silent wait_ms + this later: stuck
  public static final long ANSWER_MS = 1500;  // release and extend, under AdapterLock's 2000 ms margin
  public static final long CLOSE_MS = 500;  // close() at the end of stdin, under AdapterLock's 1000 ms exit grace
  // init: past Redisson's default connectTimeout (10 s), so a slow connect fails in the library, with its line;
  // AdapterLock's init bound must be above it (harness/workload/adapter_lock.h).
  public static final long INIT_MS = 12000;

  private static final Map<String, String> REPLY = Map.of("acquire", "acquire_ok", "release", "release_ok",
                                                          "extend", "extend_ok");
  private static final Map<String, String> IN_DOUBT = Map.of("acquire", "unknown", "release", "error",
                                                             "extend", "error");
  private static final TypeAdapter<JsonElement> JSON = new Gson().getAdapter(JsonElement.class);
  private static final PrintStream OUT =
      new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);

  private Kit() {}

  // The acquire request's pause between attempts (the run's --retry), else RETRY_MS.
  public static int retryMs(JsonObject m) {
    JsonElement retry = m.get("retry_ms");
    int ms = retry != null && retry.isJsonPrimitive() ? retry.getAsInt() : 0;
    return ms > 0 ? ms : RETRY_MS;
  }

  public static long longField(JsonObject m, String name) {
    return m.get(name).getAsLong();
  }

  // One line on the real stdout; System.out is the log events' (serve()).
  static synchronized void send(JsonObject message) {
    OUT.print(message.toString());
    OUT.print('\n');
    OUT.flush();
  }

  // An unasked line: {"type":"event","event":"lost"} when the library reports a lost lock.
  public static void event(String name, String field, String text) {
    JsonObject message = new JsonObject();
    message.addProperty("type", "event");
    message.addProperty("event", name);
    if (field != null) message.addProperty(field, text);
    send(message);
  }

  public static void serve(Adapter adapter) {
    System.setOut(LogEvents.stream("info"));
    System.setErr(LogEvents.stream("error"));
    Worker worker = new Worker();
    try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      for (String line = in.readLine(); line != null; line = in.readLine()) handle(adapter, worker, line);
    } catch (Exception ignored) {
      // stdin broke: end as at its end
    }
    worker.closeWithin(adapter::close, CLOSE_MS);
    OUT.flush();
    Runtime.getRuntime().halt(0);  // not exit(): no shutdown hook of the library's may hold the end up
  }

  private static void handle(Adapter adapter, Worker worker, String line) {
    JsonElement parsed;
    try {
      parsed = strictJson(line);
    } catch (Exception e) {
      parsed = null;
    }
    if (parsed == null || !parsed.isJsonObject()) {  // as the other kits: the line, and go on
      JsonObject reply = new JsonObject();
      reply.add("id", JsonNull.INSTANCE);
      reply.addProperty("type", "error");
      String what = parsed == null ? "not JSON: " : "not a request: ";
      reply.addProperty("error", what + line.substring(0, Math.min(line.length(), 80)));
      send(reply);
      return;
    }
    JsonObject message = parsed.getAsJsonObject();
    JsonObject reply;
    try {
      reply = answer(adapter, worker, message);
    } catch (RuntimeException e) {  // a request without its fields ("wait_ms"): say so, and go on
      reply = new JsonObject();
      reply.addProperty("type", "error");
      reply.addProperty("error", "bad request: " + text(e));
    }
    JsonElement id = message.get("id");
    reply.add("id", id == null ? JsonNull.INSTANCE : id);
    send(reply);
  }

  // The line as JSON, strictly: JsonParser.parseString is lenient and reads `hello` as a string.
  private static JsonElement strictJson(String line) throws java.io.IOException {
    JsonReader reader = new JsonReader(new StringReader(line));
    reader.setLenient(false);
    JsonElement element = JSON.read(reader);
    if (reader.peek() != JsonToken.END_DOCUMENT) throw new java.io.IOException("more after the value");
    return element;
  }

  private static JsonObject answer(Adapter adapter, Worker worker, JsonObject m) {
    String type = m.has("type") && m.get("type").isJsonPrimitive() ? m.get("type").getAsString() : "";
    JsonObject reply = new JsonObject();
    if (type.equals("noop")) {
      reply.addProperty("type", "noop_ok");
    } else if (type.equals("init")) {
      return initOk(adapter, worker, m);
    } else if (REPLY.containsKey(type)) {
      reply.addProperty("type", REPLY.get(type));
      outcome(reply, call(adapter, worker, type, m), IN_DOUBT.get(type));
    } else {
      reply.addProperty("type", "error");
      reply.addProperty("error", "unknown request type " + type);
    }
    return reply;
  }

  private static JsonObject initOk(Adapter adapter, Worker worker, JsonObject m) {
    JsonObject reply = new JsonObject();
    Worker.Result result = worker.run(() -> adapter.init(m), INIT_MS, late -> {});
    if (result.late || result.thrown != null) {
      reply.addProperty("type", "error");
      reply.addProperty("error", result.late ? "init did not finish in " + INIT_MS + " ms" : text(result.thrown));
      return reply;
    }
    reply.addProperty("type", "init_ok");
    reply.addProperty("library", adapter.library());
    reply.addProperty("version", adapter.version());
    reply.addProperty("language", "java");
    JsonObject capabilities = new JsonObject();
    adapter.capabilities().forEach(capabilities::addProperty);
    reply.add("capabilities", capabilities);
    @SuppressWarnings("unchecked")
    Map<String, Object> extra = (Map<String, Object>) result.value;
    if (extra != null) extra.forEach((k, v) -> reply.addProperty(k, String.valueOf(v)));
    return reply;
  }

  // The handler's result; a throw or a late answer is the type's word "when in doubt".
  private static Object call(Adapter adapter, Worker worker, String type, JsonObject m) {
    Worker.Result result;
    long began = System.nanoTime();
    if (type.equals("acquire")) {
      result = worker.run(() -> adapter.acquire(m), longField(m, "wait_ms") + GRACE_MS, adapter::lateAcquire);
    } else if (type.equals("release")) {
      result = worker.run(() -> adapter.release(m), ANSWER_MS, late -> {});
    } else {
      result = worker.run(() -> adapter.extend(m), ANSWER_MS, late -> {});
    }
    if (result.late) return blocked(type, m, (System.nanoTime() - began) / 1_000_000);
    if (result.thrown != null) return Outcome.of(IN_DOUBT.get(type), text(result.thrown));
    return result.value;
  }

  // A call still running past its bound, as the JS kit says it: acquire past wait_ms + GRACE_MS, release and
  // extend past ANSWER_MS; blocked_ms is the ms past the bound, which the harness judges liveness.
  private static Outcome blocked(String type, JsonObject m, long tookMs) {
    if (!type.equals("acquire")) {
      return Outcome.blocked("error", type + " blocked past " + ANSWER_MS + " ms (the library still waiting)", ANSWER_MS);
    }
    long ms = Math.max(tookMs - longField(m, "wait_ms"), GRACE_MS);
    return Outcome.blocked("unknown", "acquire blocked " + ms + " ms past its wait bound (the library still waiting)", ms);
  }

  private static void outcome(JsonObject reply, Object result, String inDoubt) {
    if (result instanceof Outcome) {
      Outcome outcome = (Outcome) result;
      reply.addProperty("outcome", outcome.word);
      if (outcome.blockedMs > 0) reply.addProperty("blocked_ms", outcome.blockedMs);
      if (outcome.error != null) reply.addProperty("error", outcome.error);
      if (outcome.fencingToken != null) reply.addProperty("fencing_token", outcome.fencingToken);
    } else if (result instanceof String) {
      reply.addProperty("outcome", (String) result);
    } else {
      reply.addProperty("outcome", inDoubt);
      reply.addProperty("error", "the adapter returned " + result);
    }
  }

  // One line: the exception's class and message, its first line only.
  public static String text(Throwable thrown) {
    String message = thrown.getClass().getSimpleName() + ": " + thrown.getMessage();
    int newline = message.indexOf('\n');
    return newline < 0 ? message : message.substring(0, newline);
  }
}
