package locklab.kit;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

// The one thread every handler runs on, in order (Adapter), and the awake-time bound of each
// call: run() waits for the call in Deadline steps and gives up once the Deadline passed. A
// call still running then holds up the requests after it until it returns; a value it returns
// after that goes to `onLate` on the worker thread (the adapter gives back a lock it no longer
// wants). The thread is a daemon: a stuck call does not hold up the JVM's end.
final class Worker {
  static final class Result {
    boolean late;
    boolean finished;
    Object value;
    Throwable thrown;
  }

  private final ExecutorService thread = Executors.newSingleThreadExecutor(runnable -> {
    Thread t = new Thread(runnable, "locklab-kit-worker");
    t.setDaemon(true);
    return t;
  });

  Result run(Callable<Object> call, long ms, Consumer<Object> onLate) {
    Result result = new Result();
    Future<?> done = thread.submit(() -> {
      Object value;
      try {
        value = call.call();
      } catch (Throwable thrown) {
        synchronized (result) {
          result.thrown = thrown;
          result.finished = true;
        }
        return;
      }
      boolean late;
      synchronized (result) {
        result.value = value;
        result.finished = true;
        late = result.late;
      }
      if (late) onLate.accept(value);
    });
    Deadline deadline = new Deadline(ms);
    while (!done.isDone()) {
      long step = deadline.stepNs();
      if (step <= 0) break;
      try {
        done.get(step, TimeUnit.NANOSECONDS);
      } catch (Exception ignored) {
        // a timeout: count the step and wait again; the call's own exception is in result
      }
    }
    synchronized (result) {
      result.late = !result.finished;
    }
    return result;
  }

  // The worker's queue first (a late acquire's give-back, onLate, may be queued or running there:
  // halt() would drop it and the late win's key would stay held until its ttl), then close() on a
  // thread of its own (the worker may be stuck in a call): both within `ms`.
  void closeWithin(Runnable close, long ms) {
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
    try {
      thread.submit(() -> {}).get(ms, TimeUnit.MILLISECONDS);
    } catch (Exception ignored) {
      // still stuck at the bound: close() gets what is left of it
    }
    Thread closer = new Thread(close, "locklab-kit-close");
    closer.setDaemon(true);
    closer.start();
    try {
      closer.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime())));
    } catch (InterruptedException ignored) {
      Thread.currentThread().interrupt();
    }
  }
}
