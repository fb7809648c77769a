"""Regret matching (Hart & Mas-Colell 2000), the one implementation both
neural solvers use: Deep CFR on predicted advantages (Brown et al. 2019,
eq. 4) and CFR-MIX per agent on its R_i (Li et al. 2021, Theorem 2: regret
matching+ on the mixed R_tot is regret matching+ on each agent's R_i)."""

from __future__ import annotations

import numpy as np

from openspiel_cfrx.deep import settings

FALLBACKS = ("argmax", "uniform")
settings.FALLBACKS.register_all(dict.fromkeys(FALLBACKS))


def regret_matching(
    values: np.ndarray, legal_mask: np.ndarray, fallback: str = "argmax", min_total: float = 0.0
) -> np.ndarray:
    """sigma(a) = max(v(a), 0) / sum_a' max(v(a'), 0) over legal actions, on the
    last axis (any leading shape: [B, A] for Deep CFR, [B, n, A] per agent).

    Args:
      values: predicted advantages / cumulative regrets (any value where illegal).
      legal_mask: bool, same shape.
      fallback: where no legal value exceeds `min_total` in sum: "argmax" (Deep
        CFR's choice: the highest legal value with probability 1, the first on
        ties) or "uniform" over the legal actions (standard regret matching).
      min_total: the positive part's sum must exceed this to be matched
        (CFR-MIX uses 1e-12 so that outputs that are zero up to rounding play
        uniformly).

    Returns:
      float64 strategies, zero where illegal; rows sum to 1 (0 for rows with no
      legal action).
    """
    if fallback not in FALLBACKS:
        raise ValueError(f"fallback must be one of {FALLBACKS}, got {fallback!r}")
    values = np.asarray(values, dtype=np.float64)
    shape = values.shape
    legal_mask = np.broadcast_to(np.asarray(legal_mask, dtype=bool), shape).reshape(-1, shape[-1])
    values = values.reshape(-1, shape[-1])
    out = np.where(legal_mask, np.maximum(values, 0.0), 0.0)
    total = out.sum(axis=-1, keepdims=True)
    has_positive = total > min_total
    np.divide(out, total, out=out, where=has_positive)
    missing = np.flatnonzero(~has_positive[:, 0])
    if len(missing):  # the fallback, only where needed (the hot path is sigma^t in traversals)
        legal = np.take(legal_mask, missing, axis=0)
        if fallback == "argmax":
            best = np.where(legal, np.take(values, missing, axis=0), -np.inf).argmax(axis=-1)
            backup = np.zeros(legal.shape)
            backup[np.arange(len(missing)), best] = 1.0
        else:
            backup = legal / np.maximum(legal.sum(axis=-1, keepdims=True), 1)
        out[missing] = backup
    return out.reshape(shape)


def uniform_strategy(legal_mask: np.ndarray) -> np.ndarray:
    """Uniform over legal actions: regret matching on the initial all-zero
    regrets ("the network returns 0 for all inputs", Algorithm 1 line 2)."""
    legal_mask = np.asarray(legal_mask)
    return legal_mask / np.maximum(legal_mask.sum(axis=-1, keepdims=True), 1)
