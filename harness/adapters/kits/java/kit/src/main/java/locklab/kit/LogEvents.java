package locklab.kit;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

// System.out and System.err as `log` events (docs/adapters.md, "Unasked lines"), a line each,
// cut at 500 characters: what a library prints would otherwise break the protocol on stdout
// or interleave with locklab's own lines on stderr. The harness ignores them.
final class LogEvents extends OutputStream {
  private static final int MAX = 500;
  private final String level;
  private final ByteArrayOutputStream line = new ByteArrayOutputStream();

  private LogEvents(String level) {
    this.level = level;
  }

  static PrintStream stream(String level) {
    return new PrintStream(new LogEvents(level), true, StandardCharsets.UTF_8);
  }

  @Override
  public synchronized void write(int b) {
    if (b == '\n') {
      flushLine();
    } else if (line.size() < MAX) {
      line.write(b);
    }
  }

  @Override
  public synchronized void flush() {
    if (line.size() > 0) flushLine();
  }

  private void flushLine() {
    String text = line.toString(StandardCharsets.UTF_8);
    line.reset();
    Kit.event("log", "text", level + ": " + text);
  }
}
