"""`make_explorer(game, policies)`: the explorer that shows `game`
(`policies.game_kind`): `analysis.Explorer` for flop hold'em,
`cards.CardExplorer` for Kuhn and Leduc poker, `team.TeamExplorer` for
factored team games."""

from __future__ import annotations

import pyspiel

from openspiel_cfrx.explore.analysis import DEFAULT_MAX_EMBED_BYTES, Explorer
from openspiel_cfrx.explore.cards import CardExplorer
from openspiel_cfrx.explore.policies import NamedPolicy, game_kind
from openspiel_cfrx.explore.team import TeamExplorer


def make_explorer(game: pyspiel.Game, policies: list[NamedPolicy], *, game_name: str | None = None,
                  max_embed_bytes: int = DEFAULT_MAX_EMBED_BYTES):  # fmt: skip
    """The explorer of `game`'s kind for `policies` (one shown, or two compared);
    ExploreError (one line) for a game no explorer shows. `max_embed_bytes`
    applies to flop hold'em (`analysis.Explorer`), whose large games' boards are
    served one at a time."""
    kind = game_kind(game)
    if kind == "poker":
        return Explorer(game, policies, max_embed_bytes=max_embed_bytes, game_name=game_name)
    if kind == "cards":
        return CardExplorer(game, policies, game_name=game_name)
    return TeamExplorer(game, policies, game_name=game_name)
