#!/usr/bin/python3
"""A broken adapter (tests/adapter_lock_test.cpp): its library is not installed; it dies at
start with a traceback whose last line names the error. The harness must show that line."""
import locklab_no_such_library  # noqa: F401  (ModuleNotFoundError, exit status 1)
