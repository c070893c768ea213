#!/usr/bin/env python3
"""What a story records for the view, checked on real runs (ctest label `view`).

    story_record_test.py SCENARIOS_DIR CASE

Runs a scenario binary from SCENARIOS_DIR with --json (real redis-servers,
started by the story) and checks what its steps say happened to the lock key
(harness/scenario/story_record.h, lock_lanes.h) against what the story is
known to do. Every case also checks the document's shape: steps numbered 1..N
in time order, every step with its kind and its state, a command's send time
before its reply, and no lane whose rebuilt state a read contradicted
("mismatches": 0).
"""
import json
import os
import subprocess
import sys
import tempfile

KINDS = {"command", "push", "narration", "enter", "leave"}


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(scenarios, name, *args):
    with tempfile.TemporaryDirectory(prefix="locklab-record-") as work:
        path = os.path.join(work, "story.json")
        done = subprocess.run([os.path.join(scenarios, name), *args, "--quiet", "--json", path],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
        if done.returncode != 0:
            fail("%s %s: exit %d\n%s" % (name, " ".join(args), done.returncode, done.stdout.decode(errors="replace")))
        with open(path) as document:
            story = json.load(document)
    check_shape(story)
    return story


def check_shape(story):
    steps = story["steps"]
    if [s["step"] for s in steps] != list(range(1, len(steps) + 1)):
        fail("steps are not numbered 1..N")
    times = [s["t_ms"] for s in steps]
    if times != sorted(times):
        fail("step times go backwards")
    for s in steps:
        if s["kind"] not in KINDS or "state" not in s or "inside" not in s["state"]:
            fail("step %d lacks its kind or state: %s" % (s["step"], s))
        if s["kind"] == "command" and not ("command" in s and "reply" in s and s.get("sent_ms", -1) <= s["t_ms"]):
            fail("command step %d lacks its request, reply or send time: %s" % (s["step"], s))
    for lane in story["view"]["keys"]:
        if lane["mismatches"] != 0:
            fail("lane %s: %d reads contradicted the rebuilt state" % (lane["label"], lane["mismatches"]))


def effects(story, who=None):
    return [s["lock"]["effect"] for s in story["steps"] if "lock" in s and (who is None or s["who"] == who)]


def expect(condition, message, story):
    if not condition:
        fail(message + "; effects: %s" % effects(story))


def wrong_owner_delete_is_shown(scenarios):
    story = run(scenarios, "check_then_delete_race", "--lock", "set-nx-px-token")
    expect("deleted index2's lock" in effects(story, "index1"), "index1's DEL of index2's lock is not recorded", story)
    events = [e["what"] for e in story["view"]["keys"][0]["events"]]
    expect("the lease ran out: the key expired" in events and "deleted index2's lock" in events,
           "the lane lacks the expiry or the wrong-owner delete: %s" % events, story)
    fixed = run(scenarios, "check_then_delete_race", "--lock", "lua-safe-delete")
    expect(not any("'s lock" in e and e.startswith("deleted") for e in effects(fixed)),
           "lua-safe-delete recorded a wrong-owner delete", fixed)
    expect(any(e.startswith("refused: the key holds index2") for e in effects(fixed, "index1")),
           "index1's refused compare-and-delete is not recorded", fixed)
    last = fixed["steps"][-1]["state"]["keys"][0]
    expect(last["held"] and last["owner"] == "index2", "at the end the key should hold index2's token: %s" % last, fixed)
    print("PASS: set-nx-px-token records index1 deleting index2's lock; lua-safe-delete leaves index2's lock")


def setnx_expire_gap_has_no_ttl(scenarios):
    story = run(scenarios, "ttl_shorter_than_work", "--lock", "setnx-expire")
    lane = story["view"]["keys"][0]
    no_ttl = [lease for lease in lane["leases"] if lease["until"] is None]
    expect(no_ttl, "no 'no TTL' lease between a SETNX and its EXPIRE: %s" % lane["leases"], story)
    expect("deleted index3's lock" in effects(story, "index1"), "index1's blind DEL of index3's lock is not recorded", story)
    expired = [e for e in lane["events"] if e["what"] == "the lease ran out: the key expired"]
    expect(len(expired) >= 2, "index1's and index2's leases should run out: %s" % lane["events"], story)
    print("PASS: setnx-expire shows the SETNX/EXPIRE gap, two expiries and index1 deleting index3's lock")


def watchdog_renewals_are_recorded(scenarios):
    story = run(scenarios, "watchdog_renewal", "--lock", "reentrant-watchdog")
    renewals = [s for s in story["steps"] if s.get("lock", {}).get("effect") == "lease renewed"]
    expect(len(renewals) >= 3 and all(s["who"] == "A/background" and s["lock"]["owner"] == "A" for s in renewals),
           "A's watchdog (relayed from A's forked process) should renew A's lease 3 times", story)
    expect(any(e.startswith("refused: held by A") for e in effects(story, "B")), "B's refusal is not recorded", story)
    owners = {o["who"] for o in story["view"]["keys"][0]["owners"]}
    expect(owners == {"A"}, "only A should own the key: %s" % owners, story)
    print("PASS: %d watchdog renewals of A's lease, B refused" % len(renewals))


def reentrant_holds_are_counted(scenarios):
    story = run(scenarios, "reentrancy", "--lock", "reentrant-watchdog")
    seen = effects(story)
    for wanted in ("acquired", "entered again (hold count + 1)", "still held: 1 hold(s) left", "released"):
        expect(wanted in seen, "missing effect %r" % wanted, story)
    print("PASS: reentrant-watchdog: acquired, entered again, still held, released")


def redlock_nodes_are_lanes(scenarios):
    story = run(scenarios, "redlock_minority_down")
    labels = [lane["label"] for lane in story["view"]["keys"]]
    expect(labels == ["lock @ N%d" % i for i in range(1, 6)], "one lane per node: %s" % labels, story)
    holders = [sorted({o["who"] for o in lane["owners"]}) for lane in story["view"]["keys"]]
    expect(holders[:3] == [["A", "B"]] * 3 and holders[3:] == [[], []],
           "A, then B after A's release, should hold nodes 1-3, nobody the crashed 4 and 5: %s" % holders, story)
    print("PASS: five node lanes, A then B on nodes 1-3")


def getset_stamp_is_a_lease(scenarios):
    story = run(scenarios, "getset_clock_skew")
    stamps = [lease for lease in story["view"]["keys"][0]["leases"] if lease["kind"] == "stamp"]
    expect(stamps and stamps[0]["until"] - stamps[0]["from"] > 5000,
           "A's stamp, 10 s ahead, should be a lease running past the story: %s" % stamps, story)
    print("PASS: getset-timestamp's expiry stamp is drawn as its lease")


CASES = {f.__name__: f for f in (wrong_owner_delete_is_shown, setnx_expire_gap_has_no_ttl, watchdog_renewals_are_recorded,
                                 reentrant_holds_are_counted, redlock_nodes_are_lanes, getset_stamp_is_a_lease)}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in CASES:
        print("usage: story_record_test.py SCENARIOS_DIR {%s}" % "|".join(CASES), file=sys.stderr)
        return 2
    CASES[sys.argv[2]](sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
