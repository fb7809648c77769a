"""Fixtures shared by several test files."""

import signal

import pyspiel
import pytest

import games  # noqa: F401  (registers flop_holdem, hulh and the team games)


@pytest.fixture(scope="session")
def fhp():
    return pyspiel.load_game("flop_holdem")


@pytest.fixture(scope="session")
def hulh():
    return pyspiel.load_game("hulh")


@pytest.fixture(scope="session", autouse=True)
def ctrl_c_reaches_the_tests():
    """A test run started in the background by a shell without job control
    inherits SIGINT as ignored (POSIX), and so would every example the
    interrupt tests start: Ctrl-C could never reach them. Restore Python's
    handler for the session (a handled signal is reset to the default in
    children at exec, so they get KeyboardInterrupt as a foreground run does)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
