#!/usr/bin/env python3
"""Every narrated claim checked against the story's recorded events (ctest, label `narration`).

    narration_claims_test.py BINARY [--lock LOCK ...] [--flag FLAG ...]
    narration_claims_test.py --self-test

Runs BINARY once per lock and flag set (every lock alone, and every lock with
each flag), each in English and in Chinese (--lang zh), with --json, and
checks every claim a step carries (harness/scenario/claims.h) against what the
story recorded: the steps' send and reply times, their effects on the lock key,
the leases the view rebuilt, and the server's own log of the key (the witness's
keyspace feed: "server_log"). A claim that the record does not prove fails.

The claims are data in the story record, so a new scenario's claims are checked
here without a new case. Two checks hold every story, claim or not:
  - a step that narrates a death ("crashed at ...") carries its claim {"dead": W};
  - an English narration line that says something of order, leases or death
    (the words in CLAIM_WORDS) carries a claim, or is listed in UNCLAIMED with
    the reason its words claim nothing checkable.
A step's claims do not depend on the language (Scenario::say_claiming takes the
English key, the claims beside it), but each language's run is a run of its
own, so both are checked. Which claims a run makes can differ from run to run
(pubsub_wakeup explains a refusal only when one happened).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

REMOVALS = {"del", "expired", "evicted"}
RELEASES = ("DEL", "EVAL", "EVALSHA")

# English words that make a line claim an order, a time against a lease, or a death.
CLAIM_WORDS = re.compile(r"\b(dies|died|dead|crash\w*|before|after|first|lapsed|within|while|ran out|expired?)\b")
# Lines whose claim words are stagecraft or the lesson's explanation, not a claim about this run's events.
UNCLAIMED = [
    (r"^\(waited .* until ", "the director's wait: the condition held, its own line"),
    (r"^the key has no TTL: ", "a PTTL read, printed on the step before"),
    (r"^SETNX happened, EXPIRE never did", "the PTTL -1 read just before, and A's crash step (dead claim)"),
    (r"^without `oldValueStr", "the seed's code, not this run"),
    (r"^index3 will ask for a ", "a configuration"),
    (r"^index1, index2 and index3 were inside at once", "the overlaps the view's sections show"),
    (r"^its release script answers the holds left", "the script's convention"),
    (r"^the seed's script returns 0", "the script's convention"),
    (r"^only B holds the lock: A was told", "the WAIT reply and its time, on the step before"),
    (r"^A's validity has not run out", "Redlock's validity, a client-side time"),
    (r"^its validity is over", "Redlock's validity, a client-side time"),
    (r"^N3 restarts (after the TTL|at once)", "a server restart, the director's act"),
    (r"^node N3 crashes \(SIGKILL\)", "a server's crash, the director's act"),
    (r"^the master is SIGKILLed", "a server's crash, the director's act"),
    (r"^masters N4 .* are SIGKILLed", "a server's crash, the director's act"),
    (r"^nodes N4 and N5 are down", "the director's act"),
    (r"^after A's release B holds", "A's release and B's acquire, on the steps before"),
    (r"^W\d: \d+ round trips to acquire", "measured figures"),
    (r"^index1 is parked at step point .* (GET said|nothing sent yet)", "lua_delete_fixes_it: claims after_lease"),
    (r"^wakes up, still believing", "gc_pause_fencing: the pause's end, the director's act"),
    (r"^read .* a GC pause begins", "gc_pause_fencing: the pause's start, the director's act"),
    (r"^C[12] read .* parked before its GETSET", "a step gate the director holds"),
    (r"^C1 holds the lock, but the key carries C2's expiry", "a GETSET stamp, read on the step before"),
    (r"^no watchdog: nothing renewed the lease", "the lanes show no renewal"),
    (r"^works; the work takes longer than the", "a plan: the next steps show it"),
    (r"^its business logic takes longer than its lease", "a plan: 'finishes its work, long after' claims it"),
    (r"^SIGSTOP A ", "the director's act"),
    (r"^SIGCONT A", "the director's act"),
    (r"^the key carries a lease: the server will free it", "a PTTL read, printed on the step before"),
    (r"^the key carries its lease from the start", "a PTTL read, printed on the step before"),
    (r"^(gives|gave) up after \d+ ms", "a duration the client waited; its refused retries are the steps before"),
    (r"^try_acquire => error \(only \d+ of", "the lock's own error text (WAIT's timeout)"),
    (r"SET NX refuses any value while the key exists", "Redis's rule for SET NX, not an event of the run"),
    (r"^after N3's restart: Z ", "the director's sequence: N3's restart is the step before"),
    (r"^A's validity had run out before Z acquired", "Redlock's validity, a client-side time (no server lease)"),
    (r"^PTTL \S+ => -2: the key expired", "lease_watch's PTTL read: the read is the record"),
]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(binary, args):
    with tempfile.TemporaryDirectory(prefix="locklab-claims-") as work:
        path = os.path.join(work, "story.json")
        done = subprocess.run([binary, *args, "--quiet", "--json", path], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=120)
        if done.returncode != 0:
            fail("%s %s: exit %d\n%s" % (binary, " ".join(args), done.returncode,
                                         done.stdout.decode(errors="replace")))
        with open(path) as document:
            return json.load(document)


# ---- the record ----------------------------------------------------------

def effect(step):
    return step.get("lock", {}).get("effect", "")


def start(step):
    """When a step began: a command reached the server no earlier than it was sent."""
    return step["sent_ms"] if step["kind"] == "command" and "sent_ms" in step else step["t_ms"]


def end(step):
    """When a step was over: a command's reply came back after the server ran it."""
    return step["t_ms"]


def creations(items):
    """Indices of the key's creations in the server's log: the first event after the start or a removal."""
    found, absent = [], True
    for i, item in enumerate(items):
        if item["event"] in REMOVALS:
            absent = True
        elif absent:
            found.append(i)
            absent = False
    return found


def acquire_index(steps, number):
    """Which acquire of the key step `number` is, when the acquires' order is known (none overlapped)."""
    index, last_reply, count = None, -1.0, 0
    for s in steps:
        if not effect(s).startswith("acquired"):
            continue
        if s.get("sent_ms", -1) < last_reply:
            return None
        last_reply = s["t_ms"]
        if s["step"] == number:
            index = count
        count += 1
    return index


class Story:
    def __init__(self, document):
        self.doc = document
        self.steps = document["steps"]
        log = document.get("server_log") or {}
        self.log = log.get("items", []) if log.get("complete") else None

    def resolve(self, ref, at):
        """The step a reference names, seen from step `at` (1-based)."""
        if ref == "this":
            return self.steps[at - 1]
        if "step" in ref:
            return self.steps[ref["step"] - 1]
        if "death" in ref:
            dying = [s for s in self.steps if {"dead": ref["death"]} in s.get("claims", [])]
            return dying[0] if dying else None
        matching = [s for s in self.steps if self.matches(s, ref)]
        which = ref.get("which", "first")
        if which == "last":
            matching = [s for s in matching if s["step"] < at][-1:]
        elif which == "next":
            matching = [s for s in matching if s["step"] > at][:1]
        return matching[0] if matching else None

    @staticmethod
    def matches(step, selector):
        if step["who"] != selector["who"]:
            return False
        if "kind" in selector and step["kind"] != selector["kind"]:
            return False
        if "command" in selector:
            words = selector["command"] if isinstance(selector["command"], list) else [selector["command"]]
            if not step.get("command") or step["command"][0].upper() not in words:
                return False
        return "effect" not in selector or effect(step).startswith(selector["effect"])

    # -- orders
    def refused_after(self, refused, acquired):
        """The server ran refusal `refused` after acquire `acquired` (server_order.h's second rule)."""
        if self.log is None:
            return False
        k = acquire_index(self.steps, acquired["step"])
        made = creations(self.log)
        if k is None or k >= len(made):
            return False
        freed = [i for i, item in enumerate(self.log) if item["event"] in REMOVALS and item["t_ms"] <= start(refused)]
        if not freed:
            return False
        later = [c for c in made if c > freed[-1]]
        return bool(later) and later[0] >= made[k]

    def before(self, a, b):
        if a["step"] == b["step"]:
            return False
        if end(a) <= start(b):
            return True
        if effect(a).startswith("acquired") and effect(b).startswith("refused"):
            return self.refused_after(b, a)
        return False

    # -- leases
    def within_lease(self, event, acquire):
        """`event` ended before the key `acquire` wrote could run out: the last lease set on it from the
        write up to the event (the view's leases run from their send time, the earliest end) had not
        ended, or the key had no TTL at all (SETNX before its EXPIRE)."""
        lane = acquire.get("lock", {}).get("lane")
        if lane is None:
            return False, None
        leases = [l for l in self.doc["view"]["keys"][lane]["leases"] if acquire["step"] <= l["step"] <= event["step"]]
        if not leases:
            return False, None
        until = leases[-1]["until"]
        return until is None or end(event) <= until, until

    def expiry_after(self, acquire):
        """The server's log index of the expiry that ended the lease `acquire` took (None: not an expiry)."""
        if self.log is None:
            return None
        k = acquire_index(self.steps, acquire["step"])
        made = creations(self.log)
        if k is None or k >= len(made):
            return None
        removals = [i for i in range(made[k] + 1, len(self.log)) if self.log[i]["event"] in REMOVALS]
        return removals[0] if removals and self.log[removals[0]]["event"] == "expired" else None

    def after_lease(self, event, acquire):
        """`event` came after the expiry that ended the lease `acquire` took: it began after the
        expiry's stamp (an upper bound: the feed stamps an event when it reads it, and reads a burst at
        once), or it is, or began after the reply of, an acquire whose creation the server logged after
        the expiry."""
        x = self.expiry_after(acquire)
        if x is None:
            return False
        if start(event) >= self.log[x]["t_ms"]:
            return True
        made = creations(self.log)
        for s in self.steps:
            k = acquire_index(self.steps, s["step"]) if effect(s).startswith("acquired") else None
            if k is not None and k < len(made) and made[k] > x and (s is event or end(s) <= start(event)):
                return True
        return False


# ---- the claims ----------------------------------------------------------

def check_claim(story, step, claim):
    """None when the record proves `claim` (made at `step`), else why not."""
    at = step["step"]
    kind, value = next(iter(claim.items()))

    def refs(pair):
        found = [story.resolve(ref, at) for ref in pair]
        missing = [ref for ref, s in zip(pair, found) if s is None]
        return found, ("names an event that did not happen: %s" % missing[0] if missing else None)

    if kind == "dead":
        after = [s for s in story.steps if s["step"] > at and (s["who"] == value or s["who"].startswith(value + "/"))]
        return "step %d by %s comes after its death: %s" % (after[0]["step"], value, after[0]["text"]) if after else None
    if kind == "inside":
        inside = step.get("state", {}).get("inside", [])
        return None if value in inside else "%s is not inside its critical section at step %d: %s" % (value, at, inside)
    if kind == "none":
        found = [s for s in story.steps if story.matches(s, value)]
        return "step %d matches %s" % (found[0]["step"], value) if found else None
    (a, b), missing = refs(value)
    if missing:
        return missing
    if kind == "before":
        return None if story.before(a, b) else "step %d is not proven before step %d" % (a["step"], b["step"])
    if kind == "unordered":
        if story.before(a, b) or story.before(b, a):
            return "steps %d and %d can be ordered from the record" % (a["step"], b["step"])
        return None
    if kind == "within_lease":
        within, until = story.within_lease(a, b)
        if not within:
            return "step %d (%.3f ms) is not within the lease step %d took (until %s)" % (a["step"], end(a),
                                                                                        b["step"], until)
        return None
    if kind == "after_lease":
        return None if story.after_lease(a, b) else \
            "step %d is not proven after the lease step %d took ran out (server log: %s)" % (a["step"], b["step"],
                                                                                            story.log)
    return "unknown claim %r" % kind


def narrates_death(text):
    """The narrator's crash line (messages.cpp), in either language."""
    return text.startswith("crashed at ") or (text.startswith("在步骤点 ") and "崩溃" in text)


def unclaimed(text):
    return next((reason for pattern, reason in UNCLAIMED if re.search(pattern, text)), None)


def check_story(document, english):
    story = Story(document)
    problems, kinds = [], []
    for step in story.steps:
        claims = step.get("claims", [])
        kinds += [next(iter(c)) for c in claims]
        for claim in claims:
            why = check_claim(story, step, claim)
            if why:
                problems.append("step %d %r claims %s: %s" % (step["step"], step["text"], claim, why))
        if narrates_death(step["text"]) and {"dead": step["who"]} not in claims:
            problems.append("step %d narrates %s's death without its claim" % (step["step"], step["who"]))
        if english and step["kind"] == "narration" and not claims and CLAIM_WORDS.search(step["text"]) \
                and not unclaimed(step["text"]):
            problems.append("step %d says something of order, leases or death but carries no claim: %r"
                            % (step["step"], step["text"]))
    return problems, sorted(kinds)


def variants(locks, flags):
    for lock in locks:
        yield ["--lock", lock]
        for flag in flags:
            yield ["--lock", lock, "--" + flag]


def self_test():
    """The checker fails false claims: each planted one must be caught."""
    steps = [
        {"step": 1, "t_ms": 1.0, "sent_ms": 0.5, "who": "A", "kind": "command", "command": ["SET"], "text": "",
         "lock": {"lane": 0, "effect": "acquired"}, "state": {"inside": ["A"]}},
        {"step": 2, "t_ms": 2.0, "who": "A", "kind": "leave", "text": ""},
        {"step": 3, "t_ms": 3.0, "who": "A", "kind": "narration", "text": "", "claims": [{"dead": "A"}]},
        {"step": 4, "t_ms": 200.0, "sent_ms": 199.0, "who": "B", "kind": "command", "command": ["SET"], "text": "",
         "lock": {"lane": 0, "effect": "acquired"}},
    ]
    document = {"steps": steps, "server_log": {"complete": True, "items": [
        {"t_ms": 0.9, "event": "set"}, {"t_ms": 101.0, "event": "expired"}, {"t_ms": 199.5, "event": "set"}]},
        "view": {"keys": [{"leases": [{"step": 1, "until": 100.5}]}]}}
    story = Story(document)
    good = [(steps[2], {"before": [{"who": "A", "kind": "leave", "which": "last"}, "this"]}),
            (steps[1], {"within_lease": ["this", {"step": 1}]}),
            (steps[3], {"after_lease": ["this", {"step": 1}]}),
            (steps[0], {"none": {"who": "A", "command": list(RELEASES)}}),
            (steps[0], {"inside": "A"})]
    bad = [(steps[1], {"dead": "A"}),  # A's death comes later
           (steps[2], {"before": ["this", {"step": 2}]}),  # a leave before the death, claimed the other way
           (steps[3], {"within_lease": ["this", {"step": 1}]}),  # B's acquire came after A's lease
           (steps[1], {"after_lease": ["this", {"step": 1}]}),  # A left within its lease
           (steps[0], {"unordered": [{"step": 1}, {"step": 4}]}),  # B's request left after A's reply
           (steps[0], {"none": {"who": "B", "command": "SET"}}),
           (steps[2], {"inside": "A"})]  # A left at step 2
    for step, claim in good:
        if check_claim(story, step, claim):
            fail("self-test: a true claim failed: %s: %s" % (claim, check_claim(story, step, claim)))
    for step, claim in bad:
        if not check_claim(story, step, claim):
            fail("self-test: a false claim passed: %s" % claim)
    print("PASS: %d true claims pass, %d false ones are caught" % (len(good), len(bad)))
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary, locks, flags, rest = argv[1], [], [], argv[2:]
    while rest:
        if len(rest) < 2 or rest[0] not in ("--lock", "--flag"):
            print("usage: narration_claims_test.py BINARY [--lock LOCK ...] [--flag FLAG ...]", file=sys.stderr)
            return 2
        (locks if rest[0] == "--lock" else flags).append(rest[1])
        rest = rest[2:]
    name, total, problems = os.path.basename(binary), 0, []
    for args in variants(locks, flags):
        for lang in ("en", "zh"):
            found, kinds = check_story(run(binary, args + ["--lang", lang]), lang == "en")
            problems += ["%s %s --lang %s: %s" % (name, " ".join(args), lang, p) for p in found]
            total += len(kinds)
    if problems:
        print("FAIL: " + "\n  ".join([name] + problems))
        return 1
    print("PASS: %s: %d claims checked over %d runs (every lock and flag, en and zh)"
          % (name, total, 2 * len(list(variants(locks, flags)))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
