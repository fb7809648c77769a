"""Fixtures shared by several test files."""

import pyspiel
import pytest

import games  # noqa: F401  (registers flop_holdem, hulh and the team games)


@pytest.fixture(scope="session")
def fhp():
    return pyspiel.load_game("flop_holdem")


@pytest.fixture(scope="session")
def hulh():
    return pyspiel.load_game("hulh")
