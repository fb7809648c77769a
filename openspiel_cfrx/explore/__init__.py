"""The strategy explorer: one HTML page that shows what a policy plays and,
in poker, where the exact best response gains against it.

    from openspiel_cfrx.explore import load_policy, make_explorer, write_page
    explorer = make_explorer(game, [load_policy(game, "uniform")])
    write_page(explorer, "page.html")

`policies` reads the game's kind and the policies named on the command line;
`analysis` computes flop hold'em (policies on the public tree, per-node
best-response gains, per-board views), `cards` the same for Kuhn and Leduc
poker on their extracted tree, `team` the per-agent action tables of a team
game; `page` writes the self-contained page, `server` serves a large game's
boards one at a time (docs/explore.md).
"""

from openspiel_cfrx.explore.analysis import (
    DEFAULT_MAX_EMBED_BYTES,
    Analysis,
    Explorer,
    check_game,
    expand_isomorphic,
)
from openspiel_cfrx.explore.cards import CardExplorer, PublicCardTree
from openspiel_cfrx.explore.explorers import make_explorer
from openspiel_cfrx.explore.page import board_json, page_data, page_html, write_page
from openspiel_cfrx.explore.policies import ExploreError, NamedPolicy, game_kind, load_policy
from openspiel_cfrx.explore.server import serve
from openspiel_cfrx.explore.team import TeamExplorer

__all__ = ["Analysis", "CardExplorer", "DEFAULT_MAX_EMBED_BYTES", "ExploreError", "Explorer", "NamedPolicy",
           "PublicCardTree", "TeamExplorer", "board_json", "check_game", "expand_isomorphic", "game_kind",
           "load_policy", "make_explorer", "page_data", "page_html", "serve", "write_page"]  # fmt: skip
