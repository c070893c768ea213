package locklab.kit;

// A reply's outcome word with the one line that explains it (docs/adapters.md, "The words").
public final class Outcome {
  public final String word;
  public final String error;
  // The ms the library's call went on past its bound (0: it answered in time); the harness judges it liveness.
  public final long blockedMs;

  private Outcome(String word, String error, long blockedMs) {
    this.word = word;
    this.error = error;
    this.blockedMs = blockedMs;
  }

  private Outcome(String word, String error) {
    this(word, error, 0);
  }

  // A call still running past its bound (docs/adapters.md): acquire `unknown`, release and extend `error`.
  public static Outcome blocked(String word, String error, long blockedMs) {
    return new Outcome(word, error, blockedMs);
  }

  public static Outcome of(String word, String error) {
    return new Outcome(word, error);
  }

  public static Outcome error(String error) {
    return new Outcome("error", error);
  }

  public static Outcome unknown(String error) {
    return new Outcome("unknown", error);
  }
}
