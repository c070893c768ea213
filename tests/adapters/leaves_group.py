#!/usr/bin/python3
"""An adapter that leaves its client's process group (tests/adapter_lock_test.cpp): it calls
setsid(), then answers like liar.py. A pause or a crash acts on the client's group, so this
adapter would run on through both: the client must refuse it at init, with one line."""
import os
import sys

os.setsid()
os.execv(sys.executable, [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "liar.py")])
