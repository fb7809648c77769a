"""`load_game(string)`: `pyspiel.load_game` with one-line errors.

`pyspiel.load_game("no_such_game(x=1)")` prints OpenSpiel's list of ~145 games
on the process's stderr (from C++) and raises a SpielError whose last line is
the last game of that list. Here the game names in the string (nested ones
included, e.g. `turn_based_simultaneous_game(game=goofspiel(...))`) are
checked against `pyspiel.registered_names()` first, with the closest
registered names suggested; a bad parameter is reported with the game's
parameters; and whatever OpenSpiel writes to stderr during the call is
captured, so a caller sees exactly one line.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import tempfile

import pyspiel


class GameStringError(ValueError):
    """A game string names an unknown game or a bad parameter."""


_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_PROJECT_GAMES = ("flop_holdem", "hulh", "team_goofspiel", "nest")


@contextlib.contextmanager
def _captured_stderr():
    """Redirects file descriptor 2 (C++ writes there) into a temporary file."""
    try:
        saved = os.dup(2)
    except OSError:  # no stderr at all
        yield
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _game_names(game_string: str) -> list[str]:
    names = _NAME.findall(game_string)
    if not names:
        names = [game_string.strip()]
    return names


def load_game(game_string: str) -> pyspiel.Game:
    """Loads `game_string` like `pyspiel.load_game`, raising `GameStringError`
    (one line: the unknown name with suggestions, or the bad parameter with the
    game's parameters) instead of printing OpenSpiel's list of games."""
    if not isinstance(game_string, str) or not game_string.strip():
        raise GameStringError(f"game must be a non-empty game string like 'kuhn_poker', got {game_string!r}")
    registered = set(pyspiel.registered_names())
    for name in _game_names(game_string):
        if name not in registered:
            close = difflib.get_close_matches(name, sorted(registered), n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            if name in _PROJECT_GAMES:
                hint = "; `import games` registers it"
            raise GameStringError(f"unknown game {name!r} in {game_string!r}{hint}")
    try:
        with _captured_stderr():
            return pyspiel.load_game(game_string)
    except (pyspiel.SpielError, ValueError) as e:
        lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()]
        message = lines[0] if lines else type(e).__name__
        raise GameStringError(f"cannot load game {game_string!r}: {message}") from None
