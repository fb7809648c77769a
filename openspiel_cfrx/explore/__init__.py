"""The strategy explorer: one HTML page that shows what a policy plays in a
flop hold'em game and where the exact best response gains against it.

    from openspiel_cfrx.explore import Explorer, load_policy, write_page
    explorer = Explorer(game, [load_policy(game, "uniform")])
    write_page(explorer, "page.html")

`analysis` computes (policies on the public tree, per-node best-response
gains, per-board views), `page` writes the self-contained page, `server`
serves a large game's boards one at a time (docs/explore.md).
"""

from openspiel_cfrx.explore.analysis import (
    DEFAULT_MAX_EMBED_BYTES,
    Analysis,
    ExploreError,
    Explorer,
    NamedPolicy,
    check_game,
    expand_isomorphic,
    load_policy,
)
from openspiel_cfrx.explore.page import board_json, page_data, page_html, write_page
from openspiel_cfrx.explore.server import serve

__all__ = ["Analysis", "DEFAULT_MAX_EMBED_BYTES", "ExploreError", "Explorer", "NamedPolicy", "board_json",
           "check_game", "expand_isomorphic", "load_policy", "page_data", "page_html", "serve", "write_page"]  # fmt: skip
