package locklab.kit;

// A reply's outcome word with the one line that explains it (docs/adapters.md, "The words").
public final class Outcome {
  public final String word;
  public final String error;

  private Outcome(String word, String error) {
    this.word = word;
    this.error = error;
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
