"""Per-board speed of the poker engine's pieces on the 52-card deck (1,326 hands).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_poker_engine_core.py

Prints ms per board (best of 5 repeats): `rank_hands` for 50 random 3-, 4- and
5-card boards, `showdown_values` and `fold_values` for one flop with a random
opponent reach. Single process; numbers depend on the machine and its load.
"""

import timeit

import numpy as np

from openspiel_cfrx.poker import Deck, fold_values, rank_hands, showdown_values


def main():
    deck, rng = Deck(13, 4), np.random.default_rng(0)
    for size in (3, 4, 5):
        boards = [rng.choice(deck.num_cards, size, replace=False) for _ in range(50)]
        rank_hands(deck.hand_cards, boards[0], 4)  # builds the lookup table once
        best = min(timeit.repeat(lambda boards=boards: [rank_hands(deck.hand_cards, b, 4) for b in boards], number=4, repeat=5))
        print(f"rank_hands, {size}-card board: {best / 200 * 1e3:.3f} ms")
    board = rng.choice(deck.num_cards, 3, replace=False)
    ranks = rank_hands(deck.hand_cards, board, 4)
    reach = np.where(deck.conflicts(board), 0.0, rng.random(deck.num_hands))
    for name, call in [("showdown_values", lambda: showdown_values(ranks, reach, deck.hand_cards, deck.card_hands)),
                       ("fold_values", lambda: fold_values(reach, deck.hand_cards, deck.card_hands))]:  # fmt: skip
        best = min(timeit.repeat(call, number=200, repeat=5))
        print(f"{name}: {best / 200 * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
