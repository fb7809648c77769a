"""The explorer's page: one self-contained HTML file (inline CSS and script,
the data as inline JSON; nothing loaded from the network).

`page_data(explorer)` is what the script reads. For flop hold'em
(`analysis.Explorer`), Kuhn and Leduc (`cards.CardExplorer`): the betting
tree, the cards, hands and boards (`explorer.page_fields()`), each policy's
NashConv and per-node gains, and the views (action probabilities, own reach
and per-hand gains of every hand not meeting the board) of every board when
`explorer.embedded`, else of the first round only: the page then asks its
server for `board/<b>.json` (`board_json`, `serve`). For a team game
(`team.TeamExplorer`): its infosets with each agent's action probabilities
(`TEAM_TEMPLATE`).
"""

from __future__ import annotations

import json
import os

import numpy as np

from openspiel_cfrx.checkpoint_io import atomic_write
from openspiel_cfrx.explore.template import TEAM_TEMPLATE, TEMPLATE

DIGITS = 6  # significant digits of the probabilities, reach and per-hand gains in the page
GAIN_DIGITS = 12  # of the per-node and per-board gains (their sum is checked against the NashConv)


def _numbers(values, digits: int = DIGITS) -> list[float]:
    """Floats rounded to `digits` significant digits (JSON writes them that short)."""
    return [float(f"{x:.{digits}g}") for x in np.asarray(values, dtype=np.float64).reshape(-1)]


def _view_json(view: dict) -> dict:
    return {str(n): {"p": _numbers(probs), "r": _numbers(reach), "g": None if gains is None else _numbers(gains)}
            for n, (probs, reach, gains) in view.items()}  # fmt: skip


def board_json(explorer, board: int | None) -> dict:
    """One board's views, as the page reads them: per policy, per decision node,
    "p" (probabilities [hands x actions], flattened), "r" (own reach), "g" (gains
    or null) over the hands not meeting the board, in hand order."""
    return {"views": [_view_json(view) for view in explorer.board_view(board)]}


def _policies(explorer) -> list[dict]:
    out = []
    for a in explorer.analyses:
        out.append({
            "name": a.name, "reading": a.reading, "nash_conv": a.nash_conv,
            "nash_conv_mbb": explorer.mbb_per_game(a.nash_conv),
            "best_response": a.best_response.tolist(), "on_policy": a.on_policy.tolist(),
            "gains_by_player": a.gains_by_player.tolist(), "seconds": round(a.seconds, 3),
            "node_gain": _numbers(a.node_gain, GAIN_DIGITS),
            "board_gain": {str(n): _numbers(g, GAIN_DIGITS) for n, g in a.board_gain.items()},
        })  # fmt: skip
    return out


def page_data(explorer) -> dict:
    """Everything the page's script reads (module doc)."""
    if explorer.layout == "team":
        return explorer.page_data()
    views = {"pre": board_json(explorer, None)["views"]}
    if explorer.embedded:
        for b in range(explorer.num_boards):
            views[str(b)] = board_json(explorer, b)["views"]
    return {
        "game": explorer.game_name, **explorer.page_fields(), "nodes": explorer.page_nodes(),
        "policies": _policies(explorer), "embedded": bool(explorer.embedded), "views": views,
    }  # fmt: skip


def page_html(explorer) -> str:
    """The page's HTML text."""
    data = json.dumps(page_data(explorer), separators=(",", ":"), allow_nan=False)
    data = data.replace("<", "\\u003c")  # no "</script>" inside the script element
    title = " vs ".join(p.name for p in explorer.policies) + f" on {explorer.game_name}"
    title = title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    template = TEAM_TEMPLATE if explorer.layout == "team" else TEMPLATE
    return template.replace("__TITLE__", title).replace("__DATA__", data)


def write_page(explorer, path: str) -> int:
    """Writes the page to `path` atomically; returns its size in bytes."""
    text = page_html(explorer).encode("utf-8")
    atomic_write(path, lambda f: f.write(text))
    return os.path.getsize(path)
