"""The example programs, shipped with the package (the application layer:
the one part of the distribution that imports `games`; `import openspiel_cfrx`
does not load it).

Each program is a console script and a module:

    cfrx-deep-cfr --game=leduc_poker --iterations=20
    python -m cfrx_examples.deep_cfr --game=leduc_poker --iterations=20

`python -m cfrx_examples` lists them.
"""

# module -> what it runs; setup.py's console scripts are `cfrx-<module with dashes>`.
PROGRAMS = {
    "deep_cfr": "Deep CFR (Brown et al. 2019) on any 2-player zero-sum game, exact NashConv curve",
    "cfr_mix": "CFR-MIX (Li et al. 2021) and its baselines on team games",
    "oftrl_cfr": "the tabular CFR family and OFTRL-CFR (Farina et al. 2019) against OpenSpiel's CFR",
    "oftrl_endgames": "the OFTRL paper's Libratus endgames (data packaged in games)",
    "poker_vector_cfr": "lossless vector CFR on flop hold'em / HULH with exact exploitability",
    "card_abstraction": "k-means card abstractions solved by CFR or external-sampling Linear MCCFR",
    "benchmark": "every algorithm at equal compute against OpenSpiel's CFR, MCCFR, NFSP and Deep CFR",
    "head_to_head": "duplicate head-to-head poker matches between named policies",
    "explore": "a web page of what a flop hold'em policy plays and where the best response gains",
    "openspiel_swap": "an OpenSpiel script with our solver swapped in",
}
