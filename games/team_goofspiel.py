"""Team Goofspiel: n bidding agents against one adversary (CFR-MIX, Sec. 5.1).

Li et al. 2021, "CFR-MIX: Solving Imperfect Information Extensive-Form Games
with Combinatorial Action Space", Section 5.1: Goofspiel (Ross 1971) in the
imperfect-information form of Lanctot et al. 2014, with several players forming
a team against one opponent; "if one of the team players wins, the whole team
wins".

Rules implemented (see docs/team_games.md):
  * Every team agent and the adversary holds bid cards 1..K.  There are R
    rounds.  Each round a point card is revealed (points_order: descending
    K, K-1, ...; ascending 1, 2, ...; or random, drawn by a chance node from
    the cards not yet used).
  * The team (pyspiel player 0) bids one card per agent as one joint action;
    the adversary (player 1) then bids without seeing the team's cards.
  * The highest bid wins the point card for that individual bidder; a highest
    bid shared by two or more bidders (team mates included) discards it.
  * Everyone sees who won each round (agent i / adversary / discarded) and so
    the point totals; nobody sees the other side's bid cards.  The team's one
    information set holds all its agents' hands and bids.
  * returns_type=win_loss: +1 to the team if its best agent's points exceed
    the adversary's, -1 if below, 0 if equal.  point_difference: best team
    agent's points minus the adversary's.  The adversary gets the negation.

Loadable as ``pyspiel.load_game("team_goofspiel(num_cards=6,num_agents=4)")``
after ``import games``.  Team actions are mixed-radix joint bids (agent 0 least
significant, digit c-1 for card c); the factored protocol of
`openspiel_cfrx.team` is available on the game and on every state.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import pyspiel

from games import _team
from openspiel_cfrx import team as team_protocol

_NUM_PLAYERS = 2
_TEAM = team_protocol.TEAM_PLAYER
_ADVERSARY = team_protocol.ADVERSARY_PLAYER
_POINTS_ORDERS = ("descending", "ascending", "random")
_RETURNS_TYPES = ("win_loss", "point_difference")
# Winner codes per round: 0..P-1 a team agent, P the adversary, P+1 discarded.

_DEFAULT_PARAMS = {
    "num_cards": 4,
    "num_agents": 2,
    "num_turns": -1,
    "points_order": "descending",
    "returns_type": "win_loss",
    "max_joint_actions": team_protocol.DEFAULT_MAX_ENUMERATED_JOINT_ACTIONS,
}

_GAME_TYPE = _team.team_game_type(
    "team_goofspiel", "Team Goofspiel (team of bidders vs one adversary)", _DEFAULT_PARAMS
)


class _Config(_team.FrozenConfig):
    """Validated parameters and derived constants of one team Goofspiel."""

    def __init__(self, params):
        full = _team.full_params("team_goofspiel", params, _DEFAULT_PARAMS)
        self.num_cards = int(full["num_cards"])
        self.num_agents = int(full["num_agents"])
        num_turns = int(full["num_turns"])
        self.points_order = str(full["points_order"])
        self.returns_type = str(full["returns_type"])
        self.max_joint_actions = int(full["max_joint_actions"])
        if self.num_cards < 1:
            raise ValueError(f"team_goofspiel: num_cards={self.num_cards} must be >= 1")
        if self.num_agents < 1:
            raise ValueError(
                f"team_goofspiel: num_agents={self.num_agents} must be >= 1 "
                f"(the team's size, the adversary is extra)"
            )
        if num_turns == -1:
            num_turns = self.num_cards
        if not 1 <= num_turns <= self.num_cards:
            raise ValueError(
                f"team_goofspiel: num_turns={num_turns} must be in [1, num_cards="
                f"{self.num_cards}] (each round uses one card), or -1 for num_cards"
            )
        self.num_turns = num_turns
        if self.points_order not in _POINTS_ORDERS:
            raise ValueError(
                f"team_goofspiel: points_order={self.points_order!r}; use one of {_POINTS_ORDERS}"
            )
        if self.returns_type not in _RETURNS_TYPES:
            raise ValueError(
                f"team_goofspiel: returns_type={self.returns_type!r}; use one of {_RETURNS_TYPES}"
            )
        if self.max_joint_actions < 1:
            raise ValueError(
                f"team_goofspiel: max_joint_actions={self.max_joint_actions} must be >= 1"
            )
        if self.num_cards**self.num_agents >= 2**63:
            raise ValueError(
                f"team_goofspiel: num_cards**num_agents = {self.num_cards}**"
                f"{self.num_agents} overflows OpenSpiel's int64 action ids; "
                f"use fewer cards or agents"
            )
        k, p, r = self.num_cards, self.num_agents, self.num_turns
        self.radices = (k,) * p
        self.adversary_num_actions = k  # the adversary bids from 1..K too
        self.full_hand = (1 << k) - 1  # bit c-1 set <=> card c in hand
        # Largest total any one player can collect: the R largest point cards
        # that can appear (ascending order only ever shows 1..R).
        if self.points_order == "ascending":
            self.max_points = r * (r + 1) // 2
        else:
            self.max_points = sum(range(k - r + 1, k + 1))
        self.agent_observation_size = p + k + r * k

    def fixed_point_card(self, round_index: int) -> int:
        """Point card of a round for the non-random orders."""
        if self.points_order == "descending":
            return self.num_cards - round_index
        return round_index + 1


@functools.lru_cache(maxsize=1 << 16)
def _digits(mask: int) -> tuple[int, ...]:
    """Bitmask of held cards -> ascending action digits (card - 1).

    Cached: a game has at most 2^K hands, and legality checks and legal
    lists are the hot path of a playout.
    """
    return tuple(i for i in range(mask.bit_length()) if mask >> i & 1)


def _cards(mask: int) -> list[int]:
    """Bitmask -> ascending card values."""
    return [d + 1 for d in _digits(mask)]


class _Progress(NamedTuple):
    """Everything that changes during a game; replaced, never mutated.

    OpenSpiel clones a Python state by deep-copying its attributes; one
    immutable record that deep-copies to itself makes `state.child(a)` cost a
    constructor call instead of a recursive copy of every tuple.
    """

    hands: tuple  # [P+1] bitmasks of cards still held (bit c-1: card c); P = adversary
    points: tuple  # [P+1] points collected; P = adversary
    point_cards: tuple  # revealed point cards, one per started round
    team_bids: tuple  # per finished round, [P] cards
    adversary_bids: tuple  # per finished round, one card
    winners: tuple  # per finished round, winner code (agent i, P adversary, P+1 discarded)
    pending: tuple | None  # [P] cards the team bid this round, hidden from the adversary

    def __deepcopy__(self, memo):
        return self


class TeamGoofspielGame(_team.TeamGameMixin, pyspiel.Game):
    """Team Goofspiel; see the module docstring for the rules."""

    def __init__(self, params=None):
        self._cfg = _Config(params or {})
        cfg = self._cfg
        if cfg.returns_type == "win_loss":
            max_utility = 1.0
        else:
            max_utility = float(cfg.max_points)
        game_info = pyspiel.GameInfo(
            num_distinct_actions=cfg.num_cards**cfg.num_agents,
            max_chance_outcomes=cfg.num_cards if cfg.points_order == "random" else 0,
            num_players=_NUM_PLAYERS,
            min_utility=-max_utility,
            max_utility=max_utility,
            utility_sum=0.0,
            # Per round: (chance), team, adversary.
            max_game_length=cfg.num_turns * (3 if cfg.points_order == "random" else 2),
        )
        super().__init__(_GAME_TYPE, game_info, params or {})

    def team_worst_case(self, policy, method: str = "auto", **options):
        """Team worst case by the dynamic program over the adversary's
        observations (`games.team_goofspiel_worst_case`; the
        `openspiel_cfrx.eval.team_best_response.team_worst_case` protocol):
        "exact", "particle" (the same program on sampled team bids: a
        bracket, for any number of rounds), or "auto": exact where it fits its
        limits, else particle. `options` go to the method they name
        (exact: max_terminal_pairs, max_team_states, max_round_histories; particle: num_particles,
        num_eval_games, seed, max_histories)."""
        from games import team_goofspiel_worst_case as worst

        if method not in ("auto", "exact", "particle"):
            raise ValueError(f"team_worst_case: method must be 'auto', 'exact' or 'particle', got {method!r}")
        exact_keys = {"max_terminal_pairs", "max_team_states", "max_round_histories"}
        particle_keys = {"num_particles", "num_eval_games", "seed", "max_histories"}
        unknown = set(options) - exact_keys - particle_keys
        if unknown:
            raise ValueError(f"team_worst_case: unknown option(s) {sorted(unknown)}; exact takes {sorted(exact_keys)}, "
                             f"particle {sorted(particle_keys)}")  # fmt: skip
        exact = {k: v for k, v in options.items() if k in exact_keys}
        particle = {k: v for k, v in options.items() if k in particle_keys}
        if method != "particle":
            try:
                return worst.exact_goofspiel_team_worst_case(self, policy, **exact)
            except worst.WorstCaseTooLargeError:
                if method == "exact":
                    raise
        return worst.particle_goofspiel_team_worst_case(self, policy, **particle)

    def new_initial_state(self):
        return TeamGoofspielState(self)

    def __reduce__(self):
        # Pickles as its game string (pyspiel's own pickling of a Python game
        # skips __init__, leaving no _cfg): solvers holding the game pickle.
        return pyspiel.load_game, (str(self),)

    def make_py_observer(self, iig_obs_type=None, params=None):
        if params:
            raise ValueError(f"team_goofspiel observers take no parameters; got {params}")
        return TeamGoofspielObserver(
            iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), self._cfg
        )


class TeamGoofspielState(_team.TeamStateMixin, pyspiel.State):
    """State of team Goofspiel.

    Everything is ints and tuples (cards as bitmasks) so that OpenSpiel's
    deep-copy clone and `apply_action` stay cheap.
    """

    def __init__(self, game):
        super().__init__(game)
        cfg = game._cfg
        self._cfg = cfg
        n = cfg.num_agents + 1
        first_cards = () if cfg.points_order == "random" else (cfg.fixed_point_card(0),)
        self._s = _Progress((cfg.full_hand,) * n, (0,) * n, first_cards, (), (), (), None)

    # --- pyspiel API -----------------------------------------------------

    def current_player(self):
        num_rounds = len(self._s.winners)
        if num_rounds == self._cfg.num_turns:
            return pyspiel.PlayerId.TERMINAL
        if len(self._s.point_cards) == num_rounds:
            return pyspiel.PlayerId.CHANCE
        return _TEAM if self._s.pending is None else _ADVERSARY

    def is_terminal(self):
        return len(self._s.winners) == self._cfg.num_turns

    def _legal_actions(self, player):
        if player == _TEAM:
            return self._team_legal_joint_actions()
        return list(_digits(self._s.hands[-1]))

    def chance_outcomes(self):
        used = 0
        for card in self._s.point_cards:
            used |= 1 << (card - 1)
        outcomes = [card - 1 for card in _cards(self._cfg.full_hand & ~used)]
        prob = 1.0 / len(outcomes)
        return [(o, prob) for o in outcomes]

    def _apply_action(self, action):
        player = self.current_player()
        if player == pyspiel.PlayerId.CHANCE:
            card = action + 1
            if not 1 <= card <= self._cfg.num_cards or card in self._s.point_cards:
                raise ValueError(f"chance outcome {action} is not an unused point card")
            self._s = self._s._replace(point_cards=self._s.point_cards + (card,))
        elif player == _TEAM:
            bids = self.decode_joint_action(action)
            hands = self._s.hands
            for agent, digit in enumerate(bids):
                if not hands[agent] >> digit & 1:
                    raise ValueError(
                        f"illegal team action {action}: agent {agent} bids card "
                        f"{digit + 1}, which is not in its hand {_cards(hands[agent])}"
                    )
            self._s = self._s._replace(pending=tuple(d + 1 for d in bids))
        elif player == _ADVERSARY:
            card = action + 1
            if not 1 <= card <= self._cfg.num_cards or not self._s.hands[-1] >> action & 1:
                raise ValueError(
                    f"illegal adversary action {action}: card {card} is not in its "
                    f"hand {_cards(self._s.hands[-1])}"
                )
            self._resolve_round(card)
        else:
            raise ValueError("cannot apply an action to a terminal state")

    def _resolve_round(self, adversary_card):
        cfg = self._cfg
        progress = self._s
        bids = progress.pending + (adversary_card,)  # [P+1]; P = adversary
        high = max(bids)
        top_bidders = [i for i, b in enumerate(bids) if b == high]
        points = progress.points
        if len(top_bidders) == 1:
            winner = top_bidders[0]
            points = list(points)
            points[winner] += progress.point_cards[-1]
            points = tuple(points)
        else:
            winner = cfg.num_agents + 1  # tie at the top: card discarded
        point_cards = progress.point_cards
        next_round = len(progress.winners) + 1
        if next_round < cfg.num_turns and cfg.points_order != "random":
            point_cards += (cfg.fixed_point_card(next_round),)
        self._s = _Progress(
            hands=tuple(h & ~(1 << (b - 1)) for h, b in zip(progress.hands, bids, strict=True)),
            points=points,
            point_cards=point_cards,
            team_bids=progress.team_bids + (progress.pending,),
            adversary_bids=progress.adversary_bids + (adversary_card,),
            winners=progress.winners + (winner,),
            pending=None,
        )

    def _action_to_string(self, player, action):
        if player == pyspiel.PlayerId.CHANCE:
            return f"Point card {action + 1}"
        if player == _TEAM:
            bids = self.decode_joint_action(action)
            return "Bids[" + " ".join(f"a{i}:{d + 1}" for i, d in enumerate(bids)) + "]"
        return f"Bid {action + 1}"

    def returns(self):
        if not self.is_terminal():
            return [0.0, 0.0]
        diff = max(self._s.points[:-1]) - self._s.points[-1]
        if self._cfg.returns_type == "win_loss":
            value = float((diff > 0) - (diff < 0))
        else:
            value = float(diff)
        return [value, -value]

    def __str__(self):
        hands = " ".join(
            f"{'adv' if i == self._cfg.num_agents else f'a{i}'}:"
            + "".join(str(c) + "." for c in _cards(h))
            for i, h in enumerate(self._s.hands)
        )
        return (
            f"points cards {list(self._s.point_cards)} | hands {hands} | "
            f"team bids {list(self._s.team_bids)} pending {self._s.pending} | "
            f"adversary bids {list(self._s.adversary_bids)} | winners "
            f"{[self._winner_name(w) for w in self._s.winners]} | points {list(self._s.points)}"
        )

    # --- factored team protocol -------------------------------------------

    def legal_agent_actions(self, agent):
        self._check_team_turn(agent)
        return list(_digits(self._s.hands[agent]))

    def agent_observation_tensor(self, agent):
        """Agent features [P + K + R*K]: agent one-hot, own hand, own bids by round."""
        cfg = self._cfg
        if not 0 <= agent < cfg.num_agents:
            raise ValueError(f"agent {agent} does not exist; agents are 0..{cfg.num_agents - 1}")
        k = cfg.num_cards
        features = [0.0] * cfg.agent_observation_size
        features[agent] = 1.0
        for card in _cards(self._s.hands[agent]):
            features[cfg.num_agents + card - 1] = 1.0
        offset = cfg.num_agents + k
        for round_index, bids in enumerate(self._s.team_bids):
            features[offset + round_index * k + bids[agent] - 1] = 1.0
        return features

    # --- helpers -----------------------------------------------------------

    def _winner_name(self, code):
        if code < self._cfg.num_agents:
            return f"a{code}"
        return "adv" if code == self._cfg.num_agents else "discard"


class TeamGoofspielObserver:
    """Observer for both sides (PyObserver interface, see kuhn_poker.py).

    Perfect recall (information state), tensor pieces in order:
      player [2]; point_card_sequence [R, K]; win_sequence [R, P+2]
      (agent 0..P-1, adversary, discarded); points [P+1];
      private to the team: team_hands [P, K], team_bids [R, P, K];
      private to the adversary: adversary_hand [K], adversary_bids [R, K].
    Without perfect recall (observation): player [2]; current_point_card [K];
      remaining_point_cards [K]; points [P+1]; last_winner [P+2];
      private: team_hands [P, K] / adversary_hand [K].
    Blocks private to the other side are all zeros.
    """

    def __init__(self, iig_obs_type, cfg):
        self._cfg = cfg
        k, p, r = cfg.num_cards, cfg.num_agents, cfg.num_turns
        self._perfect_recall = iig_obs_type.perfect_recall
        self._public = iig_obs_type.public_info
        self._private = iig_obs_type.private_info == pyspiel.PrivateInfoType.SINGLE_PLAYER
        pieces = [("player", (2,))]
        if self._public:
            if self._perfect_recall:
                pieces += [("point_card_sequence", (r, k)), ("win_sequence", (r, p + 2))]
            else:
                pieces += [("current_point_card", (k,)), ("remaining_point_cards", (k,))]
            pieces.append(("points", (p + 1,)))
            if not self._perfect_recall:
                pieces.append(("last_winner", (p + 2,)))
        if self._private:
            pieces += [("team_hands", (p, k)), ("adversary_hand", (k,))]
            if self._perfect_recall:
                pieces += [("team_bids", (r, p, k)), ("adversary_bids", (r, k))]
        self.tensor, self.dict = _team.allocate_pieces(pieces)

    def set_from(self, state, player):
        cfg = self._cfg
        self.tensor.fill(0)
        d = self.dict
        d["player"][player] = 1
        if self._public:
            if self._perfect_recall:
                for i, card in enumerate(state._s.point_cards):
                    d["point_card_sequence"][i, card - 1] = 1
                for i, code in enumerate(state._s.winners):
                    d["win_sequence"][i, code] = 1
            else:
                if not state.is_terminal() and len(state._s.point_cards) > len(state._s.winners):
                    d["current_point_card"][state._s.point_cards[-1] - 1] = 1
                remaining = [
                    c for c in range(1, cfg.num_cards + 1) if c not in state._s.point_cards
                ]
                for card in remaining:
                    d["remaining_point_cards"][card - 1] = 1
                if state._s.winners:
                    d["last_winner"][state._s.winners[-1]] = 1
            d["points"][:] = state._s.points
        if self._private:
            if player == _TEAM:
                for agent in range(cfg.num_agents):
                    for card in _cards(state._s.hands[agent]):
                        d["team_hands"][agent, card - 1] = 1
                if self._perfect_recall:
                    for i, bids in enumerate(state._s.team_bids):
                        for agent, card in enumerate(bids):
                            d["team_bids"][i, agent, card - 1] = 1
            else:
                for card in _cards(state._s.hands[-1]):
                    d["adversary_hand"][card - 1] = 1
                if self._perfect_recall:
                    for i, card in enumerate(state._s.adversary_bids):
                        d["adversary_bids"][i, card - 1] = 1

    def string_from(self, state, player):
        cfg = self._cfg
        lines = [f"P{player} {'team' if player == _TEAM else 'adversary'}"]
        if self._private:
            if player == _TEAM:
                lines.append(
                    "hands: "
                    + " ".join(
                        f"a{i}:" + "".join(f"{c}." for c in _cards(state._s.hands[i]))
                        for i in range(cfg.num_agents)
                    )
                )
                if self._perfect_recall:
                    lines.append(
                        "bids: " + " ".join("/".join(map(str, b)) for b in state._s.team_bids)
                    )
            else:
                lines.append("hand: " + "".join(f"{c}." for c in _cards(state._s.hands[-1])))
                if self._perfect_recall:
                    lines.append("bids: " + " ".join(map(str, state._s.adversary_bids)))
        if self._public:
            winners = [state._winner_name(w) for w in state._s.winners]
            if self._perfect_recall:
                lines.append("point cards: " + " ".join(map(str, state._s.point_cards)))
                lines.append("winners: " + " ".join(winners))
            else:
                current = (
                    state._s.point_cards[-1]
                    if len(state._s.point_cards) > len(state._s.winners)
                    else "-"
                )
                lines.append(f"point card: {current}")
                lines.append(f"last winner: {winners[-1] if winners else '-'}")
            lines.append("points: " + " ".join(map(str, state._s.points)))
        return "\n".join(lines)


pyspiel.register_game(_GAME_TYPE, TeamGoofspielGame)
