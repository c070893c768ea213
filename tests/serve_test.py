#!/usr/bin/env python3
"""`locklab serve` end to end, with real redis-servers.

  - `serve --masters 2` prints two HOST:PORT lines; each answers PING with
    +PONG; its redis-server children are found in /proc. Closing its stdin
    ends it with exit 0, and then every one of those processes is gone and
    every port refuses connections.
  - The same with SIGTERM instead of closing stdin.
  - Bad flags (--masters 0, an unknown flag) are one line on stderr and exit 2;
    --help is exit 0.

    serve_test.py LOCKLAB
Exit 0 when all hold, 1 with the first failure.
"""
import os
import signal
import socket
import subprocess
import sys
import time

DEADLINE_S = 30  # a loaded 2-core machine: generous, but every wait is a polled condition


def fail(message):
    sys.exit("FAIL " + message)


def wait_until(condition, what):
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.02)
    fail("timed out waiting until " + what)


def ping(address):
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as conn:
        conn.sendall(b"PING\r\n")
        return conn.recv(64)


def refused(address):
    host, port = address.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=1).close()
        return False
    except OSError:
        return True


def children(pid):
    """The pids whose parent is `pid`, with their command names."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            with open("/proc/%s/comm" % entry) as comm:
                name = comm.read().strip()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found[int(entry)] = name
    return found


def alive(pid, name):
    try:
        with open("/proc/%d/comm" % pid) as comm:
            return comm.read().strip() == name
    except OSError:
        return False


def serve_and_stop(locklab, stop_by):
    serve = subprocess.Popen([locklab, "serve", "--masters", "2"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        addresses = [serve.stdout.readline().strip() for _ in range(2)]
        if not all(":" in address for address in addresses):
            fail("%s: expected two HOST:PORT lines, got %r (%s)" % (stop_by, addresses, serve.stderr.read()))
        for address in addresses:
            if not ping(address).startswith(b"+PONG"):
                fail("%s: %s did not answer PING" % (stop_by, address))
        servers = {pid: name for pid, name in children(serve.pid).items() if name.startswith("redis-server")}
        if len(servers) != 2:
            fail("%s: expected 2 redis-server children of serve, found %r" % (stop_by, servers))
        if stop_by == "stdin":
            serve.stdin.close()
        else:
            serve.send_signal(signal.SIGTERM)
        code = serve.wait(timeout=DEADLINE_S)
        if code != 0:
            fail("%s: serve exited %d: %s" % (stop_by, code, serve.stderr.read().strip()))
        wait_until(lambda: not any(alive(pid, name) for pid, name in servers.items()), stop_by + ": servers gone")
        for address in addresses:
            wait_until(lambda: refused(address), "%s: %s refuses connections" % (stop_by, address))
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()


def bad_flags(locklab):
    for args in (["--masters", "0"], ["--no-such-flag"]):
        done = subprocess.run([locklab, "serve", *args], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=DEADLINE_S)
        lines = done.stderr.strip().splitlines()
        if done.returncode != 2 or len(lines) != 1:
            fail("serve %s: expected exit 2 and one line, got %d and %r" % (" ".join(args), done.returncode, lines))
    done = subprocess.run([locklab, "serve", "--help"], capture_output=True, text=True, timeout=DEADLINE_S)
    if done.returncode != 0 or "--masters" not in done.stdout:
        fail("serve --help: exit %d, %r" % (done.returncode, done.stdout[:200]))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: serve_test.py LOCKLAB")
    locklab = sys.argv[1]
    serve_and_stop(locklab, "stdin")
    serve_and_stop(locklab, "sigterm")
    bad_flags(locklab)
    print("ok: serve printed, served, and stopped its servers on stdin's end and on SIGTERM")


if __name__ == "__main__":
    main()
