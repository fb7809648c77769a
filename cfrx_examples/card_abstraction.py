r"""Builds a k-means card abstraction of a limit hold'em game and saves it.

The Deep CFR paper's comparison abstractions on flop hold'em (Brown et al. 2019,
Figure 2: 40,000 and 3.6 million clusters over all decisions) with
`openspiel_cfrx.poker.abstraction`: lossless preflop classes, OCHS features on
the last round, hand-strength distributions on rounds with cards to come,
weighted k-means. Prints the buckets each paper size means, the build's time
and peak memory, and the abstract infosets against the game's.

    .venv/bin/cfrx-card-abstraction --game=flop_holdem --abstract_infosets=40000 \
        --output=/tmp/abstractions/fhp_40k.npz
    .venv/bin/cfrx-card-abstraction --game=flop_holdem --abstract_infosets=3600000 \
        --output=/tmp/abstractions/fhp_3.6m.npz

`--buckets=,690` gives the buckets per round directly (an empty entry: the
lossless preflop classes). Load with `CardAbstraction.load(path, tree)`.
"""

from __future__ import annotations

import os
import resource
import sys
import time

from absl import flags

from cfrx_examples._common import (
    check_number,
    check_output_file,
    check_seed,
    load_game_or_exit,
    run_program,
    usage_error,
)
from openspiel_cfrx.checkpoint_io import CheckpointWriteError
from openspiel_cfrx.poker import PublicTree, UnsupportedPokerGameError
from openspiel_cfrx.poker import abstraction as abstraction_lib

FLAGS = flags.FLAGS
flags.DEFINE_string("game", "flop_holdem", "A two-player limit hold'em game: flop_holdem(...), or a limit "
                    "universal_poker game.")  # fmt: skip
flags.DEFINE_integer("abstract_infosets", 40000, "Target size in the paper's terms: the sum over decision nodes of "
                     "the round's buckets (Figure 2: 40000 or 3600000). Ignored with --buckets.")  # fmt: skip
flags.DEFINE_list("buckets", [], "Buckets per round, comma-separated (an empty entry: lossless preflop classes), "
                  "e.g. ',690'; overrides --abstract_infosets.")  # fmt: skip
flags.DEFINE_integer("preflop_buckets", 0, "With --abstract_infosets: k-means buckets preflop (0: the lossless classes).")
flags.DEFINE_integer("seed", 0, "k-means seed (the build is deterministic given it).")
flags.DEFINE_integer("opponent_clusters", 8, "OCHS opponent clusters (the last round's features).")
flags.DEFINE_integer("histogram_bins", 10, "Hand-strength histogram bins (rounds with cards to come).")
flags.DEFINE_integer("max_iterations", 100, "Lloyd iterations at most per round.")
flags.DEFINE_float("tolerance", 1e-4, "Stop when an iteration lowers the distortion by less than this (relative).")
flags.DEFINE_bool("clamp", False, "Lower a k above a round's distinct feature vectors to that number.")
flags.DEFINE_bool("isomorphism", True, "Index the tree's flops by suit class (the buckets agree either way).")
flags.DEFINE_string("output", "", "Where to save the abstraction (.npz); empty: not saved.")
flags.DEFINE_bool("quiet", False, "Print only the summary.")


def _buckets(tree: PublicTree) -> tuple:
    if FLAGS.buckets:
        if len(FLAGS.buckets) != tree.num_rounds:
            usage_error(f"--buckets needs one entry per round ({tree.num_rounds}), got {','.join(FLAGS.buckets)}")
        try:
            return tuple(int(b) if b.strip() else None for b in FLAGS.buckets)
        except ValueError:
            usage_error(f"--buckets={','.join(FLAGS.buckets)}: entries are integers or empty")
    check_number("abstract_infosets", 1)
    pre = FLAGS.preflop_buckets or None
    return abstraction_lib.buckets_for_abstract_infosets(tree, FLAGS.abstract_infosets, pre)


def main(argv):
    try:
        build()
    except KeyboardInterrupt:
        sys.exit("interrupted (Ctrl-C); nothing saved")
    except (ValueError, MemoryError, CheckpointWriteError) as e:  # the library's refusals, in one line
        sys.exit(f"error: {' '.join(str(e).split())}")


def build() -> None:
    check_output_file("output")
    check_seed()
    check_number("preflop_buckets", 0)
    check_number("max_iterations", 1)
    check_number("tolerance", 0)
    game = load_game_or_exit(FLAGS.game, check_supported=False)
    try:
        tree = PublicTree(game, isomorphism=FLAGS.isomorphism)
    except UnsupportedPokerGameError as e:
        usage_error(str(e))
    buckets = _buckets(tree)
    print(f"{FLAGS.game}: boards per round {tree.num_boards}, {tree.num_hands} hands; "
          f"game infosets {abstraction_lib.game_infosets(tree):,}")  # fmt: skip
    if not FLAGS.buckets:
        print(f"{FLAGS.abstract_infosets:,} abstract infosets -> buckets per round {list(buckets)} "
              "(None: lossless preflop classes)")  # fmt: skip
    start = time.perf_counter()
    abstraction = abstraction_lib.kmeans_abstraction(
        tree, buckets, seed=FLAGS.seed, opponent_clusters=FLAGS.opponent_clusters,
        histogram_bins=FLAGS.histogram_bins, clamp=FLAGS.clamp, max_iterations=FLAGS.max_iterations,
        tolerance=FLAGS.tolerance, progress=None if FLAGS.quiet else lambda line: print(line, flush=True))  # fmt: skip
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB (Linux)
    print(abstraction.summary(tree))
    for r, record in enumerate(abstraction.description["rounds"]):
        print(f"round {r}: {abstraction.num_buckets[r]:,} buckets; {record}")
    print(f"built in {seconds:.1f} s, peak resident memory {peak:.2f} GiB")
    if FLAGS.output:
        abstraction.save(FLAGS.output)
        print(f"saved {FLAGS.output} ({os.path.getsize(FLAGS.output) / 2**20:.1f} MiB)")


def run():
    """The console script's entry point."""
    run_program(main, __name__, guard=False)


if __name__ == "__main__":
    run()
