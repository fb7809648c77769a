"""One-time extraction of a 2-player zero-sum pyspiel game into flat numpy arrays.

The game is walked once (depth-first over `pyspiel.State.child`) and stored as

* a **history tree** in breadth-first order (all histories of depth d are
  contiguous, children of one history are contiguous and ordered like their
  parents), with parent/child links, acting player, infoset id, the action that
  led to each history, chance probabilities and terminal utilities; and
* a **sequence form** per player: every infoset I of player p owns the
  sequences (I, a) for its legal actions a, stored at flat index
  `I * num_actions + a`; each player also has one empty sequence at index
  `num_infosets * num_actions + p`. Each infoset knows its parent sequence (the
  last (infoset, action) of its own player above it), and each terminal knows
  the last sequence of both players and the product of chance probabilities on
  its path.

Everything the tabular solvers and the exact best response need is in the
sequence form: a strategy profile maps to realization plans by one top-down
pass over each player's infoset tree, expected payoffs are one sparse
matrix-vector product, and counterfactual values / best responses are one
bottom-up pass (see `sequence_form.py`). Nothing walks `pyspiel.State` objects
again after extraction.

Memory (see `GameTree.memory_bytes`): per history 25 bytes (parent int32,
action int32, infoset int32, child offset int32, chance probability float64,
player int8); per terminal 40 bytes (history id, two sequence ids, chance
reach, two utilities) plus the sparse payoff matrix (at most 2 entries of 12
bytes per terminal); per infoset ~ (num_actions + 20) bytes plus its
information-state string. A game with 10^7 histories takes well under 1 GB of
arrays; extraction itself needs ~3x that transiently (Python lists).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pyspiel
import scipy.sparse

CHANCE = int(pyspiel.PlayerId.CHANCE)  # -1
TERMINAL = int(pyspiel.PlayerId.TERMINAL)  # -4


class UnsupportedGameError(ValueError):
    """The game is outside what the array engine (and our CFR variants) support."""


class TreeTooLargeError(UnsupportedGameError):
    """Extracting the game's tree would not fit in the memory limit."""


# Peak bytes per history while extracting (Python lists, the pyspiel states on
# the walk's stack, infoset keys), measured 400-460 on Leduc, Liar's dice and
# Goofspiel; the arrays kept afterwards are smaller (see `GameTree.memory_bytes`).
EXTRACTION_BYTES_PER_HISTORY = 500
# Default memory limit for extraction, as a fraction of the memory available
# when extraction starts. `None` here means "use the fraction"; set a number of
# bytes to change the default for every call (or pass max_memory_bytes=).
MAX_TREE_BYTES: int | None = None
DEFAULT_MEMORY_FRACTION = 0.6


def default_memory_limit() -> int:
    """Bytes extraction may use when no limit is given: `MAX_TREE_BYTES`, or
    60% of the memory available now."""
    if MAX_TREE_BYTES is not None:
        return int(MAX_TREE_BYTES)
    import psutil

    return int(DEFAULT_MEMORY_FRACTION * psutil.virtual_memory().available)


def estimate_num_histories(game: pyspiel.Game, num_playouts: int = 256, seed: int = 0) -> float:
    """Unbiased estimate of the number of histories (Knuth 1975): along a path
    that picks a uniformly random child at every node (chance included), the
    sum over depths of the product of branching factors above; averaged over
    `num_playouts` paths. Costs num_playouts x depth pyspiel steps."""
    rng = np.random.default_rng(seed)
    total = 0.0
    for _ in range(num_playouts):
        state = game.new_initial_state()
        nodes, width = 1.0, 1.0
        while not state.is_terminal():
            if state.is_chance_node():
                actions = [a for a, _ in state.chance_outcomes()]
            elif state.is_simultaneous_node():
                return float("nan")  # refused by check_game_supported anyway
            else:
                actions = state.legal_actions()
            width *= len(actions)
            nodes += width
            state.apply_action(actions[int(rng.integers(len(actions)))])
        total += nodes
    return total / num_playouts


def _too_large(game, what: str, need: float, limit: int) -> TreeTooLargeError:
    return TreeTooLargeError(
        f"game {game} {what}: extracting its tree needs about {need / 2**30:.3g} GiB, over the "
        f"{limit / 2**30:.3g} GiB limit (60% of available memory by default); pass "
        "max_memory_bytes=... to get_tree / nash_conv / extract (or set "
        "openspiel_cfrx.tree.game_tree.MAX_TREE_BYTES) to try anyway, or use a smaller game, "
        "a sampled evaluation, or the poker evaluator for poker"
    )


def check_game_supported(game: pyspiel.Game) -> None:
    """Raises `UnsupportedGameError` naming the problem and the fix.

    Supported: 2 players, sequential (turn-based) dynamics, zero-sum or
    constant-sum utilities, explicit chance, information-state strings.
    """
    if not isinstance(game, pyspiel.Game):
        raise TypeError(
            f"expected a pyspiel.Game (e.g. pyspiel.load_game('kuhn_poker')), got "
            f"{type(game).__name__}"
        )
    game_type = game.get_type()
    name = game_type.short_name
    if game.num_players() != 2:
        raise UnsupportedGameError(
            f"game '{name}' has {game.num_players()} players; only 2-player games are "
            "supported (load it with players=2 if the game has that parameter)"
        )
    if game_type.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        raise UnsupportedGameError(
            f"game '{name}' is simultaneous-move; wrap it as a sequential game with "
            f"pyspiel.load_game('turn_based_simultaneous_game(game={name}(...))') or "
            "pyspiel.convert_to_turn_based(game)"
        )
    if game_type.utility not in (
        pyspiel.GameType.Utility.ZERO_SUM,
        pyspiel.GameType.Utility.CONSTANT_SUM,
    ):
        raise UnsupportedGameError(
            f"game '{name}' is {game_type.utility.name.lower().replace('_', '-')}; "
            "exploitability and CFR convergence are defined here only for zero-sum "
            "or constant-sum games"
        )
    if game_type.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
        raise UnsupportedGameError(
            f"game '{name}' has sampled (implicit) chance; the exact engine needs "
            "explicit chance outcomes with probabilities"
        )
    if not game_type.provides_information_state_string:
        raise UnsupportedGameError(
            f"game '{name}' does not provide information_state_string, which "
            "identifies infosets; use a game (or parameters) that provides it"
        )


@dataclasses.dataclass(eq=False)
class GameTree:
    """Flat array view of a 2-player zero-sum extensive-form game.

    Shapes use H = num_histories, Z = num_terminals, N = num_infosets
    (both players), A = num_actions (= game.num_distinct_actions()),
    S = N * A + 2 (sequence index space).
    """

    game: pyspiel.Game
    num_actions: int
    # --- history tree, breadth-first order (history 0 is the root) -----------
    history_parent: np.ndarray  # [H] int32, -1 for the root
    history_action: np.ndarray  # [H] int32, action leading here, -1 for root
    history_player: np.ndarray  # [H] int8, 0/1, CHANCE (-1) or TERMINAL (-4)
    history_infoset: np.ndarray  # [H] int32, -1 unless a decision history
    history_chance_prob: np.ndarray  # [H] float64, prob. of the chance action leading here (else 1)
    child_offsets: np.ndarray  # [H + 1] int64, children of h are child_offsets[h]:child_offsets[h+1]
    depth_offsets: np.ndarray  # [D + 1] int64, histories of depth d are depth_offsets[d]:[d+1]
    # --- terminals --------------------------------------------------------------
    terminal_history: np.ndarray  # [Z] int32
    terminal_utility: np.ndarray  # [Z, 2] float64
    terminal_chance_reach: np.ndarray  # [Z] float64
    terminal_sequence: np.ndarray  # [Z, 2] int64, last sequence of each player
    # --- infosets / sequence form ----------------------------------------------
    infoset_player: np.ndarray  # [N] int8
    infoset_key: list[str]  # [N] information_state_string
    infoset_legal_mask: np.ndarray  # [N, A] bool
    infoset_parent_sequence: np.ndarray  # [N] int64, index into [S]
    infoset_depth: np.ndarray  # [N] int32, number of own actions above the infoset
    infoset_history: np.ndarray  # [N] int32, one representative history
    extraction_seconds: float = 0.0

    def __post_init__(self):
        n, a = self.num_infosets, self.num_actions
        self.num_sequences = n * a + 2
        self.infoset_index = {
            (int(p), key): i
            for i, (p, key) in enumerate(zip(self.infoset_player, self.infoset_key, strict=True))
        }
        if len(self.infoset_index) != n:
            raise AssertionError("duplicate infoset keys in extracted tree")
        # Infosets are sorted by (player, own depth): player p owns the id range
        # infoset_range[p], and level d of p's infoset tree is the range
        # level_offsets[p][d]:level_offsets[p][d + 1].
        self.infoset_range = []
        self.level_offsets = []
        for p in (0, 1):
            lo, hi = np.searchsorted(self.infoset_player, [p, p + 1])
            depths = self.infoset_depth[lo:hi]
            num_levels = int(depths.max(initial=-1)) + 1
            offsets = lo + np.searchsorted(depths, np.arange(num_levels + 1))
            self.infoset_range.append((int(lo), int(hi)))
            self.level_offsets.append([int(o) for o in offsets])
        if np.any(np.diff(self.infoset_player) < 0) or any(
            np.any(np.diff(self.infoset_depth[lo:hi]) < 0) for lo, hi in self.infoset_range
        ):
            raise ValueError("GameTree infosets must be sorted by (player, depth); use extract()")
        self.empty_sequence = np.array([n * a, n * a + 1], dtype=np.int64)
        # Player p's sequences in a local index space of size
        # local_size[p] = (hi - lo) * A + 1: sequence (I, a) at (I - lo) * A + a,
        # the empty sequence last. For each infoset, the parent sequence as a
        # local index relative to the start of the parent level's block (levels
        # d >= 1), so bottom-up passes scatter into one level-sized slice.
        self.local_size = []
        self.local_parent = []
        self.payoff = []
        for p in (0, 1):
            lo, hi = self.infoset_range[p]
            offsets = self.level_offsets[p]
            local_parent = np.zeros(hi - lo, dtype=np.int64)
            for d in range(1, len(offsets) - 1):
                parent = self.infoset_parent_sequence[offsets[d] : offsets[d + 1]]
                local_parent[offsets[d] - lo : offsets[d + 1] - lo] = parent - offsets[d - 1] * a
            self.local_size.append((hi - lo) * a + 1)
            self.local_parent.append(local_parent)
            # Sparse payoff matrix [local_size[p], S]:
            # (payoff[p] @ x)[s] = sum over terminals z whose last p-sequence is s
            # of chance_reach(z) * u_p(z) * x[last sequence of the opponent in z].
            own = self.terminal_sequence[:, p]
            rows = np.where(own >= n * a, (hi - lo) * a, own - lo * a)
            self.payoff.append(
                scipy.sparse.csr_matrix(
                    (
                        self.terminal_chance_reach * self.terminal_utility[:, p],
                        (rows, self.terminal_sequence[:, 1 - p]),
                    ),
                    shape=(self.local_size[p], self.num_sequences),
                )
            )
            self.payoff[p].sum_duplicates()
        self._states_cache: list[pyspiel.State] | None = None
        self._reach_matrices: list[scipy.sparse.csr_matrix] | None = None
        self.max_abs_utility = float(np.abs(self.terminal_utility).max(initial=0.0))

    def reach_matrix(self, player: int) -> scipy.sparse.csr_matrix:
        """Sparse [hi - lo, S] matrix whose product with a realization plan `x`
        gives, for each of `player`'s infosets I, the counterfactual reach
        sum over h in I of pi_c(h) * pi_{-player}(h) (built on first use)."""
        if self._reach_matrices is None:
            num_histories, a = self.num_histories, self.num_actions
            chance_reach = np.ones(num_histories)
            last_sequence = np.empty((2, num_histories), dtype=np.int64)
            last_sequence[:, 0] = self.empty_sequence
            for d in range(1, self.max_depth + 1):
                lo, hi = self.depth_offsets[d], self.depth_offsets[d + 1]
                parent = self.history_parent[lo:hi]
                chance_reach[lo:hi] = chance_reach[parent] * self.history_chance_prob[lo:hi]
                own = self.history_infoset[parent].astype(np.int64) * a + self.history_action[lo:hi]
                for p in (0, 1):
                    last_sequence[p, lo:hi] = np.where(
                        self.history_player[parent] == p, own, last_sequence[p, parent]
                    )
            self._reach_matrices = []
            for p in (0, 1):
                lo, hi = self.infoset_range[p]
                h = np.flatnonzero(self.history_player == p)
                self._reach_matrices.append(
                    scipy.sparse.csr_matrix(
                        (chance_reach[h], (self.history_infoset[h] - lo, last_sequence[1 - p, h])),
                        shape=(hi - lo, self.num_sequences),
                    )
                )
        return self._reach_matrices[player]

    # ------------------------------------------------------------------ sizes
    @property
    def num_histories(self) -> int:
        return int(self.history_parent.shape[0])

    @property
    def num_terminals(self) -> int:
        return int(self.terminal_history.shape[0])

    @property
    def num_infosets(self) -> int:
        return int(self.infoset_player.shape[0])

    def num_infosets_of(self, player: int) -> int:
        return int(np.count_nonzero(self.infoset_player == player))

    @property
    def max_depth(self) -> int:
        return len(self.depth_offsets) - 2

    def memory_bytes(self) -> dict[str, int]:
        """Bytes held by the numpy/scipy arrays, grouped by part of the tree."""
        history = sum(
            a.nbytes
            for a in (
                self.history_parent,
                self.history_action,
                self.history_player,
                self.history_infoset,
                self.history_chance_prob,
                self.child_offsets,
            )
        )
        terminal = sum(
            a.nbytes
            for a in (
                self.terminal_history,
                self.terminal_utility,
                self.terminal_chance_reach,
                self.terminal_sequence,
            )
        )
        payoff = sum(m.data.nbytes + m.indices.nbytes + m.indptr.nbytes for m in self.payoff)
        infoset = sum(
            a.nbytes
            for a in (
                self.infoset_player,
                self.infoset_legal_mask,
                self.infoset_parent_sequence,
                self.infoset_depth,
                self.infoset_history,
            )
        )
        return {
            "history": history,
            "terminal": terminal,
            "payoff_matrix": payoff,
            "infoset": infoset,
            "total": history + terminal + payoff + infoset,
        }

    # ----------------------------------------------------------------- lookup
    def infoset_id(self, state: pyspiel.State) -> int:
        """Infoset id of a decision state (KeyError if not in the tree)."""
        player = state.current_player()
        return self.infoset_index[(player, state.information_state_string(player))]

    def history_actions(self, history: int) -> list[int]:
        """Actions from the root to `history`."""
        actions = []
        while history > 0:
            actions.append(int(self.history_action[history]))
            history = int(self.history_parent[history])
        return actions[::-1]

    def state(self, history: int) -> pyspiel.State:
        """Rebuilds the pyspiel state of a history by replaying its actions."""
        state = self.game.new_initial_state()
        for action in self.history_actions(history):
            state.apply_action(action)
        return state

    def infoset_states(self) -> list[pyspiel.State]:
        """One representative `pyspiel.State` per infoset, in infoset order.

        Built by one depth-first replay and cached (states are small next to the
        cost of rebuilding them on every policy evaluation).
        """
        if self._states_cache is None:
            wanted = np.zeros(self.num_histories, dtype=bool)
            wanted[self.infoset_history] = True
            # Mark every ancestor of a wanted history so the replay prunes the rest.
            keep = wanted.copy()
            for d in range(self.max_depth, 0, -1):
                lo, hi = self.depth_offsets[d], self.depth_offsets[d + 1]
                kept = lo + np.flatnonzero(keep[lo:hi])
                keep[self.history_parent[kept]] = True
            history_state: dict[int, pyspiel.State] = {}
            stack = [(0, self.game.new_initial_state())]
            while stack:
                h, st = stack.pop()
                if wanted[h]:
                    history_state[h] = st
                lo, hi = self.child_offsets[h], self.child_offsets[h + 1]
                for c in range(lo, hi):
                    if keep[c]:
                        stack.append((c, st.child(int(self.history_action[c]))))
            self._states_cache = [history_state[int(h)] for h in self.infoset_history]
        return self._states_cache

    def __repr__(self) -> str:
        return (
            f"GameTree({self.game}, histories={self.num_histories}, "
            f"terminals={self.num_terminals}, infosets={self.num_infosets_of(0)}+"
            f"{self.num_infosets_of(1)}, actions={self.num_actions})"
        )


def history_string_rank(
    history_parent: np.ndarray,
    history_action: np.ndarray,
    depth_offsets: np.ndarray,
) -> np.ndarray:
    """Rank of every history in the sort order of `state.history_str()`.

    `history_str()` joins the actions with spaces, and a space sorts before
    every digit, so comparing two history strings is comparing their action
    lists element by element as *strings* ("10" < "2"), a prefix first. That is
    a preorder walk that visits children in the string order of their
    actions; this computes it level by level from subtree sizes (no strings).

    Returns:
      [H] int64, 0 for the root.
    """
    num_histories = history_parent.shape[0]
    size = np.ones(num_histories, dtype=np.int64)
    num_levels = depth_offsets.shape[0] - 1
    for d in range(num_levels - 1, 0, -1):
        lo, hi = depth_offsets[d], depth_offsets[d + 1]
        size += np.bincount(history_parent[lo:hi], weights=size[lo:hi], minlength=num_histories).astype(
            np.int64
        )
    values = np.unique(history_action)
    string_rank = np.empty(values.shape[0], dtype=np.int64)
    string_rank[np.argsort(np.array([str(v) for v in values]), kind="stable")] = np.arange(
        values.shape[0]
    )
    action_rank = string_rank[np.searchsorted(values, history_action)]
    rank = np.zeros(num_histories, dtype=np.int64)
    for d in range(1, num_levels):
        lo, hi = depth_offsets[d], depth_offsets[d + 1]
        parent = history_parent[lo:hi]
        order = lo + np.lexsort((action_rank[lo:hi], parent))  # siblings in string order
        sizes = size[order]
        before = np.cumsum(sizes) - sizes  # subtree sizes of everything earlier on the level
        group_start = np.searchsorted(parent[order - lo], parent[order - lo], side="left")
        offset = before - before[group_start]
        rank[order] = rank[history_parent[order]] + 1 + offset
    return rank


def extract(
    game: pyspiel.Game, max_histories: int | None = None, max_memory_bytes: int | None = None
) -> GameTree:
    """Walks `game` once and returns its `GameTree`.

    Memory is bounded: before walking, the number of histories is estimated
    from random playouts, and a game whose estimated extraction memory
    (EXTRACTION_BYTES_PER_HISTORY per history) exceeds the limit is refused at
    once with `TreeTooLargeError`; the walk itself also stops with that error
    as soon as it passes the limit's number of histories.

    Args:
      game: a 2-player, sequential, zero-/constant-sum pyspiel game with explicit
        chance and perfect recall.
      max_histories: optional safety cap; exceeding it raises ValueError instead
        of exhausting memory.
      max_memory_bytes: memory limit for extraction; default
        `default_memory_limit()` (60% of available memory).

    Raises:
      UnsupportedGameError: for unsupported game types, or when imperfect recall
        is detected (two histories of one infoset reached by different own
        sequences, or with different legal actions).
    """
    check_game_supported(game)
    limit = default_memory_limit() if max_memory_bytes is None else int(max_memory_bytes)
    memory_cap = _history_cap(game, limit)
    start = time.perf_counter()
    num_actions = game.num_distinct_actions()
    walk = _walk(game, num_actions, limit, memory_cap, max_histories)
    tree = _build_tree(game, num_actions, walk)
    tree.extraction_seconds = time.perf_counter() - start
    return tree


def _history_cap(game: pyspiel.Game, limit: int) -> int:
    """The number of histories `limit` bytes allow while extracting; a game
    estimated (from random playouts) to have more is refused at once."""
    memory_cap = max(1, limit // EXTRACTION_BYTES_PER_HISTORY)
    estimate = estimate_num_histories(game)
    if estimate > memory_cap:
        raise _too_large(
            game,
            f"has about {estimate:.2g} histories (estimated from random playouts)",
            estimate * EXTRACTION_BYTES_PER_HISTORY,
            limit,
        )
    return memory_cap


@dataclasses.dataclass(eq=False)
class _Walk:
    """What the depth-first walk records, as Python lists.

    Histories are numbered in preorder and infosets in order of discovery.
    Sequences are encoded as I * A + a; the empty sequence of player p is
    -1 - p during the walk and remapped once N is known (`_remap_sequences`).
    """

    # --- per history, preorder ---------------------------------------------
    parent: list[int] = dataclasses.field(default_factory=list)
    action: list[int] = dataclasses.field(default_factory=list)
    player: list[int] = dataclasses.field(default_factory=list)
    infoset: list[int] = dataclasses.field(default_factory=list)
    chance_prob: list[float] = dataclasses.field(default_factory=list)
    depth: list[int] = dataclasses.field(default_factory=list)
    # --- per terminal -------------------------------------------------------
    terminal_history: list[int] = dataclasses.field(default_factory=list)
    terminal_utility: list[tuple[float, float]] = dataclasses.field(default_factory=list)
    terminal_reach: list[float] = dataclasses.field(default_factory=list)
    terminal_seq0: list[int] = dataclasses.field(default_factory=list)
    terminal_seq1: list[int] = dataclasses.field(default_factory=list)
    # --- per infoset, in discovery order -------------------------------------
    infoset_index: dict[tuple[int, str], int] = dataclasses.field(default_factory=dict)
    infoset_player: list[int] = dataclasses.field(default_factory=list)
    infoset_key: list[str] = dataclasses.field(default_factory=list)
    infoset_legal: list[tuple[int, ...]] = dataclasses.field(default_factory=list)
    infoset_parent_seq: list[int] = dataclasses.field(default_factory=list)
    infoset_depth: list[int] = dataclasses.field(default_factory=list)


def _walk(
    game: pyspiel.Game, num_actions: int, limit: int, memory_cap: int, max_histories: int | None
) -> _Walk:
    """Depth-first walk over `pyspiel.State.child` recording every history,
    terminal and infoset (see `_Walk`); raises as soon as it passes
    `memory_cap` or `max_histories` histories, reaches a simultaneous node or
    finds imperfect recall."""
    walk = _Walk()
    # The loop appends to local names (one attribute lookup per list, not per history).
    parent_list, action_list, player_list = walk.parent, walk.action, walk.player
    infoset_list, chance_prob_list, depth_list = walk.infoset, walk.chance_prob, walk.depth
    terminal_hist, terminal_util = walk.terminal_history, walk.terminal_utility
    terminal_reach = walk.terminal_reach
    terminal_seq0, terminal_seq1 = walk.terminal_seq0, walk.terminal_seq1
    infoset_index = walk.infoset_index
    infoset_legal, infoset_parent_seq = walk.infoset_legal, walk.infoset_parent_seq
    # Stack entries: (state, parent id, action, chance prob, depth, chance reach,
    #                 last seq of p0, last seq of p1, own depth of p0, own depth of p1)
    stack = [(game.new_initial_state(), -1, -1, 1.0, 0, 1.0, -1, -2, 0, 0)]
    while stack:
        state, parent, action, cprob, depth, reach, seq0, seq1, od0, od1 = stack.pop()
        h = len(parent_list)
        if h >= memory_cap or (max_histories is not None and h >= max_histories):
            raise _too_many_histories(game, h, limit, memory_cap, max_histories)
        parent_list.append(parent)
        action_list.append(action)
        chance_prob_list.append(cprob)
        depth_list.append(depth)
        if state.is_terminal():
            player_list.append(TERMINAL)
            infoset_list.append(-1)
            returns = state.returns()
            terminal_hist.append(h)
            terminal_util.append((returns[0], returns[1]))
            terminal_reach.append(reach)
            terminal_seq0.append(seq0)
            terminal_seq1.append(seq1)
            continue
        if state.is_chance_node():
            player_list.append(CHANCE)
            infoset_list.append(-1)
            outcomes = state.chance_outcomes()
            for a, p in reversed(outcomes):
                stack.append(
                    (state.child(a), h, a, p, depth + 1, reach * p, seq0, seq1, od0, od1)
                )
            continue
        if state.is_simultaneous_node():
            raise UnsupportedGameError(
                f"game {game} reached a simultaneous node; wrap it with "
                "pyspiel.convert_to_turn_based(game)"
            )
        player = state.current_player()
        legal = tuple(state.legal_actions())
        key = state.information_state_string(player)
        own_seq = seq0 if player == 0 else seq1
        infoset = infoset_index.get((player, key))
        if infoset is None:
            infoset = _add_infoset(walk, player, key, legal, own_seq, od0 if player == 0 else od1)
        elif infoset_parent_seq[infoset] != own_seq or infoset_legal[infoset] != legal:
            raise _imperfect_recall(game, player, key, infoset_legal[infoset] != legal)
        player_list.append(player)
        infoset_list.append(infoset)
        for a in reversed(legal):
            seq = infoset * num_actions + a
            if player == 0:
                item = (state.child(a), h, a, 1.0, depth + 1, reach, seq, seq1, od0 + 1, od1)
            else:
                item = (state.child(a), h, a, 1.0, depth + 1, reach, seq0, seq, od0, od1 + 1)
            stack.append(item)
    return walk


def _too_many_histories(
    game: pyspiel.Game, h: int, limit: int, memory_cap: int, max_histories: int | None
) -> Exception:
    """The error for a walk at history `h` that passed the memory limit's cap
    (`TreeTooLargeError`) or else `max_histories` (ValueError)."""
    if h >= memory_cap:
        return _too_large(
            game,
            f"has more than {memory_cap:,} histories (found while extracting)",
            h * EXTRACTION_BYTES_PER_HISTORY,
            limit,
        )
    return ValueError(
        f"game {game} has more than max_histories={max_histories} histories; "
        "raise the cap or use a smaller game"
    )


def _add_infoset(
    walk: _Walk, player: int, key: str, legal: tuple[int, ...], parent_seq: int, own_depth: int
) -> int:
    """Registers a newly discovered infoset and returns its (discovery) id."""
    infoset = len(walk.infoset_player)
    walk.infoset_index[(player, key)] = infoset
    walk.infoset_player.append(player)
    walk.infoset_key.append(key)
    walk.infoset_legal.append(legal)
    walk.infoset_parent_seq.append(parent_seq)
    walk.infoset_depth.append(own_depth)
    return infoset


def _imperfect_recall(
    game: pyspiel.Game, player: int, key: str, legal_differs: bool
) -> UnsupportedGameError:
    what = "legal actions" if legal_differs else "own action sequences"
    return UnsupportedGameError(
        f"game {game} does not have perfect recall: infoset {key!r} of player "
        f"{player} is reached with different {what}; the exact engine and CFR "
        "need perfect recall"
    )


def _build_tree(game: pyspiel.Game, num_actions: int, walk: _Walk) -> GameTree:
    """The `GameTree` of the walk's lists: infosets renumbered by (player, own
    depth), histories in breadth-first order."""
    num_infosets = len(walk.infoset_player)
    infoset_player_arr = np.asarray(walk.infoset_player, dtype=np.int8)
    infoset_depth_arr = np.asarray(walk.infoset_depth, dtype=np.int32)
    infoset_order, infoset_new = _renumber_infosets(infoset_player_arr, infoset_depth_arr)
    bfs_order, new_id, history_parent, child_offsets, depth_offsets = _breadth_first(walk)
    history_action = np.asarray(walk.action, dtype=np.int32)[bfs_order]
    history_infoset_old = np.asarray(walk.infoset, dtype=np.int64)[bfs_order]
    representative = _representative_histories(
        history_parent, history_action, depth_offsets, history_infoset_old, num_infosets
    )
    legal_mask = np.zeros((num_infosets, num_actions), dtype=bool)
    for i, legal in enumerate(walk.infoset_legal):
        legal_mask[infoset_new[i], list(legal)] = True
    terminal_seq0 = _remap_sequences(walk.terminal_seq0, infoset_new, num_actions)
    terminal_seq1 = _remap_sequences(walk.terminal_seq1, infoset_new, num_actions)
    parent_seq = _remap_sequences(walk.infoset_parent_seq, infoset_new, num_actions)
    return GameTree(
        game=game,
        num_actions=num_actions,
        history_parent=history_parent,
        history_action=history_action,
        history_player=np.asarray(walk.player, dtype=np.int8)[bfs_order],
        history_infoset=np.where(
            history_infoset_old < 0, -1, infoset_new[np.maximum(history_infoset_old, 0)]
        ).astype(np.int32),
        history_chance_prob=np.asarray(walk.chance_prob, dtype=np.float64)[bfs_order],
        child_offsets=child_offsets,
        depth_offsets=depth_offsets.astype(np.int64),
        terminal_history=new_id[np.asarray(walk.terminal_history, dtype=np.int64)].astype(np.int32),
        terminal_utility=np.asarray(walk.terminal_utility, dtype=np.float64).reshape(-1, 2),
        terminal_chance_reach=np.asarray(walk.terminal_reach, dtype=np.float64),
        terminal_sequence=np.stack([terminal_seq0, terminal_seq1], axis=1),
        infoset_player=infoset_player_arr[infoset_order],
        infoset_key=[walk.infoset_key[i] for i in infoset_order],
        infoset_legal_mask=legal_mask,
        infoset_parent_sequence=parent_seq[infoset_order],
        infoset_depth=infoset_depth_arr[infoset_order],
        infoset_history=representative[infoset_order].astype(np.int32),
    )


def _renumber_infosets(
    infoset_player: np.ndarray, infoset_depth: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Renumbers infosets by (player, own depth, discovery) so that each player's
    infosets, and each level of a player's infoset tree, are contiguous ranges:
    the per-iteration passes then work on array slices instead of gathers.

    Returns:
      (new id -> old id, old id -> new id), both [N].
    """
    num_infosets = infoset_player.shape[0]
    infoset_order = np.lexsort((np.arange(num_infosets), infoset_depth, infoset_player))
    infoset_new = np.empty(num_infosets, dtype=np.int64)
    infoset_new[infoset_order] = np.arange(num_infosets)
    return infoset_order, infoset_new


def _remap_sequences(seqs, infoset_new: np.ndarray, num_actions: int) -> np.ndarray:
    """Walk sequences to final ids: I * A + a with I renumbered (`infoset_new`),
    -1 -> empty of p0 (N*A), -2 -> empty of p1 (N*A + 1)."""
    empty_base = infoset_new.shape[0] * num_actions
    seqs = np.asarray(seqs, dtype=np.int64)
    safe = np.maximum(seqs, 0)
    renumbered = infoset_new[safe // num_actions] * num_actions + safe % num_actions
    return np.where(seqs < 0, empty_base - 1 - seqs, renumbered)


def _breadth_first(walk: _Walk) -> tuple[np.ndarray, ...]:
    """Breadth-first renumbering: a stable sort of the preorder by depth keeps the
    children of one parent contiguous and in parent order.

    Returns:
      (new id -> preorder id, preorder id -> new id, history_parent [H] int32,
      child_offsets [H + 1], depth_offsets [D + 1]).
    """
    depth = np.asarray(walk.depth, dtype=np.int32)
    bfs_order = np.argsort(depth, kind="stable")  # new id -> preorder id
    new_id = np.empty_like(bfs_order)
    new_id[bfs_order] = np.arange(len(bfs_order))
    parent_pre = np.asarray(walk.parent, dtype=np.int64)[bfs_order]
    history_parent = np.where(parent_pre < 0, -1, new_id[np.maximum(parent_pre, 0)]).astype(
        np.int32
    )
    num_histories = len(bfs_order)
    child_counts = np.bincount(history_parent[1:], minlength=num_histories)
    child_offsets = np.ones(num_histories + 1, dtype=np.int64)  # history 0 has no parent
    child_offsets[1:] += np.cumsum(child_counts)
    depth_sorted = depth[bfs_order]
    depth_offsets = np.searchsorted(depth_sorted, np.arange(int(depth_sorted[-1]) + 2))
    return bfs_order, new_id, history_parent, child_offsets, depth_offsets


def _representative_histories(
    history_parent: np.ndarray,
    history_action: np.ndarray,
    depth_offsets: np.ndarray,
    history_infoset_old: np.ndarray,
    num_infosets: int,
) -> np.ndarray:
    """Representative history of each infoset (by old id): the one whose
    `history_str()` sorts first, the state OpenSpiel's `TabularPolicy(game)`
    keeps for it."""
    rank = history_string_rank(history_parent, history_action, depth_offsets)
    decision = np.flatnonzero(history_infoset_old >= 0)
    first = decision[np.lexsort((rank[decision], history_infoset_old[decision]))]
    is_first = np.ones(first.shape[0], dtype=bool)
    is_first[1:] = history_infoset_old[first[1:]] != history_infoset_old[first[:-1]]
    representative = np.empty(num_infosets, dtype=np.int64)
    representative[history_infoset_old[first[is_first]]] = first[is_first]
    return representative
