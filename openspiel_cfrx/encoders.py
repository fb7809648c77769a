"""Network-input encoders (no torch here): the default information-state
tensor encoder, and a registry of encoders that games contribute.

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

import numpy as np
import pyspiel

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
            f"(`import games` registers 'poker' for flop_holdem / hulh), or an explicit NetworkSettings(encoder=...)"
        )
    return factory(game)


class InformationStateTensorEncoder:
    """Encodes an infoset as the game's `information_state_tensor(player)`."""

    name = "information_state_tensor"

    def __init__(self, game: pyspiel.Game):
        if not game.get_type().provides_information_state_tensor:
            raise ValueError(
                f"game '{game.get_type().short_name}' has no information_state_tensor; "
                "pass NetworkSettings(encoder=<callable(state, player) -> list of floats>) with a feature_size attribute"
            )
        self.feature_size = int(np.prod(game.information_state_tensor_shape()))

    def __call__(self, state: pyspiel.State, player: int) -> list[float]:
        return state.information_state_tensor(player)


def encoded_size(game, encoder) -> int:
    """Width of `encoder`'s output: its `feature_size`, else measured on the first decision state."""
    size = int(getattr(encoder, "feature_size", 0))
    if size >= 1:
        return size
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    return len(encoder(state, state.current_player()))
