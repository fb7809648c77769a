"""Registry of network-input encoders that games contribute (no torch here).

Game-specific network inputs (e.g. the Deep CFR paper's card/bet encoding for
limit hold'em, Appendix C) live with their games; a game package registers a
factory under a network name and the solvers look it up:

    register_input_encoder("poker", lambda game: PokerNetworkEncoder(game))   # in games/
    input_encoder("poker", game)                                              # in a solver

So `openspiel_cfrx` never imports `games`; the factory raises ValueError for a
game it cannot encode.
"""

from __future__ import annotations

from collections.abc import Callable

_INPUT_ENCODERS: dict[str, Callable] = {}


def register_input_encoder(network: str, factory: Callable) -> None:
    """Registers `factory(game) -> encoder` as the input of `network`."""
    _INPUT_ENCODERS[network] = factory


def input_encoder(network: str, game):
    """The registered encoder of `network` for `game`; ValueError naming the fix
    if none is registered."""
    factory = _INPUT_ENCODERS.get(network)
    if factory is None:
        raise ValueError(
            f"network={network!r} needs an input encoder that a game package registers "
            f"(`import games` registers 'poker' for flop_holdem / hulh), or an explicit encoder="
        )
    return factory(game)
