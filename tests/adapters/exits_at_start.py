#!/usr/bin/python3
"""A broken adapter (tests/adapter_lock_test.cpp): exits with status 3 before reading anything."""
import sys

sys.exit(3)
