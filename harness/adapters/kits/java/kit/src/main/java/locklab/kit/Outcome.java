package locklab.kit;

// A reply's outcome word with the one line that explains it (docs/adapters.md, "The words").
public final class Outcome {
  public final String word;
  public final String error;
  // The ms the library's call went on past its bound (0: it answered in time); the harness judges it liveness.
  public final long blockedMs;
  // The fencing token an `acquired` hands out (docs/adapters.md, acquire), null for none.
  public final Long fencingToken;

  private Outcome(String word, String error, long blockedMs) {
    this(word, error, blockedMs, null);
  }

  private Outcome(String word, String error, long blockedMs, Long fencingToken) {
    this.word = word;
    this.error = error;
    this.blockedMs = blockedMs;
    this.fencingToken = fencingToken;
  }

  private Outcome(String word, String error) {
    this(word, error, 0);
  }

  // A call still running past its bound (docs/adapters.md): acquire `unknown`, release and extend `error`.
  public static Outcome blocked(String word, String error, long blockedMs) {
    return new Outcome(word, error, blockedMs);
  }

  // `acquired` with the token the library returned (Redisson's RFencedLock): the harness judges it at the resource.
  public static Outcome acquired(long fencingToken) {
    return new Outcome("acquired", null, 0, fencingToken);
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
