r"""The strategy explorer: a web page of what a policy plays and, in poker,
where the exact best response gains against it (docs/explore.md).

    cfrx-explore --game='flop_holdem(num_ranks=4,num_suits=2)' --policy=uniform --output=page.html
    cfrx-explore --policy=out/deep_cfr/policy.pt --compare=out/vector/strategy.npz --output=cmp.html
    cfrx-explore --game=flop_holdem --policy=uniform --output=fhp.html --serve
    cfrx-explore --game=leduc_poker --policy=leduc_cfr.npz --compare=uniform --output=leduc.html
    cfrx-explore --game='team_goofspiel(num_cards=3,num_agents=2,num_turns=2)' --policy=mix.pt

Games: flop hold'em variants (rank x rank grids per board), two-player
kuhn_poker and leduc_poker (a list of private cards per public card), and
factored team games such as team_goofspiel and nest (each agent's action
probabilities at every infoset, no best-response gains).

A policy (--policy, --compare) is one of
  uniform                  the uniform random policy
  PATH                     a Deep CFR checkpoint or policy file (cfrx-deep-cfr --checkpoint_dir /
                           --policy_file) or, for a team game, a CFR-MIX checkpoint (cfrx-cfr-mix
                           --checkpoint_dir), read with torch.load(weights_only=True); a VectorCFR
                           strategy .npz (cfrx-poker-vector-cfr --save_strategy); or a tabular
                           policy .npz (cfrx-oftrl-cfr --save_policy)
  module:function          function(game) returning an OpenSpiel policy (the module found on the
                           Python path or in the current directory)

The page is one self-contained HTML file (no network). Small games embed every
board; larger ones (full flop hold'em) embed the preflop and the gains, and
--serve serves the page on 127.0.0.1 with each board's grids computed when
the page asks for them.
"""

from __future__ import annotations

import os
import sys
import time

from absl import flags

from cfrx_examples._common import check_output_file, load_game_or_exit, run_program, usage_error
from openspiel_cfrx.explore import (
    ExploreError,
    game_kind,
    load_policy,
    make_explorer,
    serve,
    write_page,
)

FLAGS = flags.FLAGS
flags.DEFINE_string("game", "flop_holdem(num_ranks=4,num_suits=2)",
                    "OpenSpiel game string, parameters in parentheses (quote them in a shell): a flop hold'em "
                    "variant ('flop_holdem(num_ranks=4,num_suits=2)', flop_holdem), kuhn_poker, leduc_poker, or a "
                    "team game ('team_goofspiel(num_cards=3,num_agents=2,num_turns=2)', nest(...)).")  # fmt: skip
flags.DEFINE_string("policy", "uniform", "The policy to show: uniform, a Deep CFR checkpoint or policy file, a "
                    "CFR-MIX checkpoint (team games), a VectorCFR strategy .npz, a tabular policy .npz, or "
                    "module:function (see the module docstring).")  # fmt: skip
flags.DEFINE_string("compare", "", "A second policy of the same kinds, shown beside --policy with their difference.")
flags.DEFINE_string("output", "explore.html", "The page to write (one self-contained HTML file).")
flags.DEFINE_boolean("serve", False, "After writing the page, serve it on 127.0.0.1 (--port) until Ctrl-C; a "
                     "large game's boards are computed when the page asks for them.")  # fmt: skip
flags.DEFINE_integer("port", 8000, "With --serve: the port on 127.0.0.1 (0: any free port).")
flags.DEFINE_float("max_embed_mb", 40.0, "Embed every board's grids when they take at most this many MB; above "
                   "it, the page holds the preflop and the gains and --serve gives the boards.")  # fmt: skip


def main(argv):
    del argv
    if not FLAGS.output.strip():
        usage_error("--output is empty; give the page's file name, e.g. --output=explore.html")
    check_output_file("output")
    if not 0 <= FLAGS.port <= 65535:
        usage_error(f"--port must be in 0..65535, got {FLAGS.port}")
    if not FLAGS.max_embed_mb >= 0:
        usage_error(f"--max_embed_mb must be >= 0, got {FLAGS.max_embed_mb}")
    game = load_game_or_exit(FLAGS.game, check_supported=False)
    if os.getcwd() not in sys.path:  # module:function policies from the current directory, as `python -m` finds them
        sys.path.insert(0, os.getcwd())
    start = time.perf_counter()
    try:
        game_kind(game)
        policies = [load_policy(game, spec) for spec in (FLAGS.policy, FLAGS.compare) if spec]
        explorer = make_explorer(game, policies, max_embed_bytes=int(FLAGS.max_embed_mb * 2**20),
                                 game_name=FLAGS.game)  # fmt: skip
    except ExploreError as e:
        usage_error(str(e))
    size = write_page(explorer, FLAGS.output)
    seconds = time.perf_counter() - start
    for analysis in explorer.analyses:
        mbb = explorer.mbb_per_game(analysis.nash_conv)
        print(f"{analysis.name}: NashConv {analysis.nash_conv:.6g} chips"
              f"{'' if mbb is None else f' ({mbb:.6g} mbb/g)'}, read as {analysis.reading}, {analysis.seconds:.1f} s")
    print(f"wrote {FLAGS.output}: {size / 2**20:.2f} MB in {seconds:.1f} s ({_contents(explorer)})", flush=True)
    if FLAGS.serve:
        serve(explorer, FLAGS.port, ready=lambda url: print(f"serving {url} (Ctrl-C stops)", flush=True))


def _contents(explorer) -> str:
    """What the page holds, in words."""
    if explorer.layout == "team":
        return f"{explorer.tree.num_infosets:,} infosets with each agent's action probabilities"
    if explorer.embedded:
        return "every board embedded" if explorer.layout == "grid" else "every view embedded"
    return (f"preflop and gains embedded; each board's grids (~{explorer.embedded_bytes() / 2**20:,.0f} MB for all "
            f"{explorer.num_boards:,} boards) come from --serve")  # fmt: skip


def run():
    """The console script's entry point."""
    run_program(main, __name__)


if __name__ == "__main__":
    run()
