"""Helpers shared by the games in this package."""

from __future__ import annotations

import pyspiel


def two_player_zero_sum_game_type(
    short_name: str, long_name: str, parameters: dict, observations: bool = True
) -> pyspiel.GameType:
    """GameType of our games: 2 players, zero-sum, sequential, explicit chance,
    imperfect information, terminal rewards, information-state strings and
    (with `observations`) information-state tensors and observation strings
    and tensors."""
    return pyspiel.GameType(
        short_name=short_name,
        long_name=long_name,
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=observations,
        provides_observation_string=observations,
        provides_observation_tensor=observations,
        parameter_specification=parameters,
    )
