"""The explorer's page: one self-contained HTML file (inline CSS and script,
the data as inline JSON; nothing loaded from the network).

`page_data(explorer)` is what the script reads: the betting tree, the boards,
each policy's NashConv and per-node gains, and the views (action
probabilities, own reach and per-hand gains of every hand not meeting the
board) of every board when `explorer.embedded`, else of the preflop only:
the page then asks its server for `board/<b>.json` (`board_json`, `serve`).
"""

from __future__ import annotations

import json
import os

import numpy as np

from openspiel_cfrx.checkpoint_io import atomic_write
from openspiel_cfrx.explore.analysis import Explorer
from openspiel_cfrx.explore.template import TEMPLATE
from openspiel_cfrx.poker.policy_reading import RANK_NAMES, SUIT_NAMES

DIGITS = 6  # significant digits of the probabilities, reach and per-hand gains in the page
GAIN_DIGITS = 12  # of the per-node and per-board gains (their sum is checked against the NashConv)


def _numbers(values, digits: int = DIGITS) -> list[float]:
    """Floats rounded to `digits` significant digits (JSON writes them that short)."""
    return [float(f"{x:.{digits}g}") for x in np.asarray(values, dtype=np.float64).reshape(-1)]


def _view_json(view: dict) -> dict:
    return {str(n): {"p": _numbers(probs), "r": _numbers(reach), "g": None if gains is None else _numbers(gains)}
            for n, (probs, reach, gains) in view.items()}  # fmt: skip


def board_json(explorer: Explorer, board: int | None) -> dict:
    """One board's views, as the page reads them: per policy, per decision node,
    "p" (probabilities [hands x actions], flattened), "r" (own reach), "g" (gains
    or null) over the hands not meeting the board, in hand order."""
    return {"views": [_view_json(view) for view in explorer.board_view(board)]}


def _nodes(explorer: Explorer) -> list[dict]:
    return [{"k": node.kind, "r": node.round, "p": node.player, "l": list(node.legal), "c": list(node.children),
             "a": list(node.actions), "s": list(node.contributions)}
            for node in explorer.tree.nodes]  # fmt: skip


def _policies(explorer: Explorer) -> list[dict]:
    rules, out = explorer.rules, []
    for a in explorer.analyses:
        out.append({
            "name": a.name, "reading": a.reading, "nash_conv": a.nash_conv,
            "nash_conv_mbb": float(rules.mbb_per_game(a.nash_conv)),
            "best_response": a.best_response.tolist(), "on_policy": a.on_policy.tolist(),
            "gains_by_player": a.gains_by_player.tolist(), "seconds": round(a.seconds, 3),
            "node_gain": _numbers(a.node_gain, GAIN_DIGITS),
            "board_gain": {str(n): _numbers(g, GAIN_DIGITS) for n, g in a.board_gain.items()},
        })  # fmt: skip
    return out


def page_data(explorer: Explorer) -> dict:
    """Everything the page's script reads (module doc)."""
    tree, deck = explorer.tree, explorer.tree.deck
    views = {"pre": board_json(explorer, None)["views"]}
    if explorer.embedded:
        for b in range(len(tree.first_boards)):
            views[str(b)] = board_json(explorer, b)["views"]
    return {
        "game": explorer.game_name,
        "ranks": deck.num_ranks, "suits": deck.num_suits,
        "rank_names": RANK_NAMES[: deck.num_ranks], "suit_names": SUIT_NAMES[: deck.num_suits],
        "hands": deck.hand_cards.tolist(),
        "big_blind": explorer.rules.big_blind,
        "isomorphism": bool(tree.isomorphism),
        "num_all_boards": int(round(float(explorer.board_weights.sum()))),
        "boards": tree.first_boards.tolist(), "board_weights": [int(round(w)) for w in explorer.board_weights],
        "first_deal_round": tree.first_deal_round,
        "nodes": _nodes(explorer),
        "policies": _policies(explorer),
        "embedded": bool(explorer.embedded),
        "views": views,
    }  # fmt: skip


def page_html(explorer: Explorer) -> str:
    """The page's HTML text."""
    data = json.dumps(page_data(explorer), separators=(",", ":"), allow_nan=False)
    data = data.replace("<", "\\u003c")  # no "</script>" inside the script element
    title = " vs ".join(a.name for a in explorer.analyses) + f" on {explorer.game_name}"
    title = title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return TEMPLATE.replace("__TITLE__", title).replace("__DATA__", data)


def write_page(explorer: Explorer, path: str) -> int:
    """Writes the page to `path` atomically; returns its size in bytes."""
    text = page_html(explorer).encode("utf-8")
    atomic_write(path, lambda f: f.write(text))
    return os.path.getsize(path)
