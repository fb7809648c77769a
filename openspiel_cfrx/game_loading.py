"""`load_game(string)`: `pyspiel.load_game` with one-line errors.

`pyspiel.load_game("no_such_game(x=1)")` prints OpenSpiel's list of ~145 games
on the process's stderr (from C++) and raises a SpielError whose last line is
the last game of that list. Here the game names in the string (nested ones
included, e.g. `turn_based_simultaneous_game(game=goofspiel(...))`) are
checked against `pyspiel.registered_names()` first, with the closest
registered names suggested; a bad parameter is reported with the game's
parameters (OpenSpiel's failed checks such as `leduc_poker.cc:790
num_players_ <= kGameType.max_num_players` become the allowed player range or
the game's parameters and defaults); and whatever OpenSpiel writes to stderr
during the call is captured, so a caller sees exactly one line.
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
# OpenSpiel's SPIEL_CHECK failures: "/path/file.cc:123 condition" (or file.h).
_CHECK = re.compile(r"\S+\.(?:cc|h):\d+\s+(.*)")


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


def _game_types(names: list[str]) -> list:
    types = {t.short_name: t for t in pyspiel.registered_games()}
    return [types[n] for n in names if n in types]


def _explain(message: str, names: list[str]) -> str:
    """Makes OpenSpiel's failed-check messages (`file.cc:123 condition`) and
    empty values readable: the player range, or the game's parameters."""
    message = re.sub(r"got (k\w+) with$", r"got \1 with an empty value", message)
    check = _CHECK.search(message)
    if not check:
        return message
    condition = check.group(1).strip()
    game_types = _game_types(names)
    if "num_players" in condition:
        for t in reversed(game_types):  # innermost game with a player count
            if "players" in dict(t.parameter_specification):
                return (f"players must be in [{t.min_num_players}, {t.max_num_players}] for "
                        f"{t.short_name} (OpenSpiel check failed: {condition})")  # fmt: skip
    if game_types:
        t = game_types[-1]
        spec = ", ".join(f"{k}={v!r}" for k, v in sorted(dict(t.parameter_specification).items()))
        return (
            f"OpenSpiel check failed: {condition}; {t.short_name}'s parameters (defaults): {spec}"
        )
    return f"OpenSpiel check failed: {condition}"


def _suggestions(name: str, registered: set[str]) -> list[str]:
    """Up to 3 registered names close to `name`, ignoring case (game names are
    lower case: `KUHN_POKER` suggests kuhn_poker)."""
    by_lower = {n.lower(): n for n in sorted(registered)}
    if name.lower() in by_lower:
        return [by_lower[name.lower()]]
    close = difflib.get_close_matches(name.lower(), sorted(by_lower), n=3, cutoff=0.5)
    return [by_lower[n] for n in close]


def load_game(game_string: str) -> pyspiel.Game:
    """Loads `game_string` like `pyspiel.load_game`, raising `GameStringError`
    (one line: the unknown name with suggestions, or the bad parameter with the
    game's parameters) instead of printing OpenSpiel's list of games.

    Spaces around the whole string are ignored (OpenSpiel would call
    `' kuhn_poker'` an unknown game)."""
    if not isinstance(game_string, str) or not game_string.strip():
        raise GameStringError(
            f"game must be a non-empty game string like 'kuhn_poker', got {game_string!r}"
        )
    game_string = game_string.strip()
    registered = set(pyspiel.registered_names())
    names = _game_names(game_string)
    for name in names:
        if name not in registered:
            close = _suggestions(name, registered)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            if name in _PROJECT_GAMES:
                hint = "; `import games` registers it"
            raise GameStringError(f"unknown game {name!r} in {game_string!r}{hint}")
    try:
        with _captured_stderr():
            return pyspiel.load_game(game_string)
    except (pyspiel.SpielError, ValueError) as e:
        lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()]
        message = _explain(lines[0], names) if lines else type(e).__name__
        raise GameStringError(f"cannot load game {game_string!r}: {message}") from None
