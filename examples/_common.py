"""Helpers shared by the example binaries."""

from __future__ import annotations

import sys
from typing import NoReturn

import pyspiel

from openspiel_cfrx.tree import UnsupportedGameError, check_game_supported


def load_game_or_exit(game_string: str, check_supported: bool = True) -> pyspiel.Game:
    """Loads a game (registering ours first); exits with a one-line error on a
    bad name/parameter or an unsupported game instead of a traceback."""
    try:
        import games  # noqa: F401  registers flop_holdem, hulh, team games, ...
    except ImportError:
        pass
    try:
        game = pyspiel.load_game(game_string)
    except (pyspiel.SpielError, ValueError) as e:
        first = str(e).strip().splitlines()[-1] if str(e).strip() else repr(e)
        sys.exit(f"error: cannot load game {game_string!r}: {first}")
    if check_supported:
        try:
            check_game_supported(game)
        except (UnsupportedGameError, TypeError) as e:
            sys.exit(f"error: {e}")
    return game


def usage_error(message: str) -> NoReturn:
    """Exits with a one-line `error: ...` message (no usage dump, no traceback)."""
    sys.exit(f"error: {message}")
