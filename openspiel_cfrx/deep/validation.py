"""One place that checks the neural solvers' settings and training health.

`check_settings(values, rules)` validates constructor arguments against
declarative rules, the same way for `DeepCFRSolver` and `CFRMixSolver`, and
raises ValueError naming the argument, the rule and the value (NaN and inf are
rejected wherever a finite number is expected). `check_loss(loss, ...)` stops
a run whose training loss is NaN/inf with `TrainingDivergedError` naming the
network, player and iteration, instead of training on into a NaN policy.
"""

from __future__ import annotations

import math
import numbers


class TrainingDivergedError(FloatingPointError):
    """A network's training loss became NaN or infinite."""


def _is_int(value) -> bool:
    """An int, or a float with an integral value (OpenSpiel passes e.g. 1e7)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, numbers.Integral):
        return True
    return isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer()


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


# rule -> (test, description)
RULES = {
    "int>=1": (lambda v: _is_int(v) and v >= 1, "an int >= 1"),
    "int>=0": (lambda v: _is_int(v) and v >= 0, "an int >= 0"),
    "int>=1|None": (lambda v: v is None or (_is_int(v) and v >= 1), "an int >= 1 or None"),
    "int>=1|None|auto": (
        lambda v: v is None or _allowed(v, ("auto",)) or (_is_int(v) and v >= 1),
        "an int >= 1, 'auto' or None (torch's setting left alone)",
    ),
    "real>0": (lambda v: _is_real(v) and math.isfinite(v) and v > 0, "a finite number > 0"),
    "real>=0": (lambda v: _is_real(v) and math.isfinite(v) and v >= 0, "a finite number >= 0"),
    "real>0|None": (
        lambda v: v is None or (_is_real(v) and math.isfinite(v) and v > 0),
        "a finite number > 0 or None (off)",
    ),
    "real>0|auto|pot": (
        lambda v: _allowed(v, ("auto", "pot")) or (_is_real(v) and math.isfinite(v) and v > 0),
        "a finite number > 0, 'auto' or 'pot'",
    ),
    "bool": (lambda v: isinstance(v, bool), "True or False"),
    "bool|unit": (
        lambda v: isinstance(v, bool) or (_is_real(v) and math.isfinite(v) and 0 <= v <= 1),
        "True, False or a number in [0, 1]",
    ),
    "bool|None": (lambda v: v is None or isinstance(v, bool), "True, False or None (the variant's default)"),
    "address|None": (lambda v: v is None or isinstance(v, str), "None, 'auto', 'host:port' or 'ray://host:port'"),
    "layers": (
        lambda v: isinstance(v, (tuple, list)) and len(v) > 0 and all(_is_width(h) for h in v),
        "a non-empty tuple of hidden-layer widths, each an int >= 1, e.g. (64, 64)",
    ),
}


def _is_width(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 1


def _rule_message(name: str, description: str, value) -> str:
    """The one-line refusal of `value` for `name`, with the fix where the mistake is a known one."""
    message = f"{name} must be {description}, got {value!r}"
    if description == RULES["layers"][1] and _is_width(value):
        return message + f"; write ({value},) for one layer of {value}"
    if isinstance(value, (list, tuple)) and len(value) == 1 and description != RULES["layers"][1]:
        return message + f"; write {value[0]!r} (one value, not a {type(value).__name__})"
    return message


def _allowed(value, options: tuple) -> bool:
    """`value in options`, False (not an error) for unhashable values and arrays."""
    for option in options:
        try:
            if value is option or bool(value == option):
                return True
        except (TypeError, ValueError):  # an array's elementwise ==
            return False
    return False


def check_settings(values: dict, rules: dict) -> None:
    """Raises ValueError for the first `values[name]` that breaks `rules[name]`
    (a key of `RULES`, or a tuple of allowed values)."""
    for name, rule in rules.items():
        value = values[name]
        if isinstance(rule, tuple):
            if not _allowed(value, rule):
                message = f"{name} must be one of {', '.join(map(repr, rule))}, got {value!r}"
                if isinstance(value, (list, tuple)) and len(value) == 1:
                    message += f"; write {value[0]!r} (one value, not a {type(value).__name__})"
                raise ValueError(message)
            continue
        test, description = RULES[rule]
        if not test(value):
            raise ValueError(_rule_message(name, description, value))


def check_device(device) -> None:
    """A torch device string that can be used here ('cpu', 'cuda', 'cuda:N')."""
    import torch

    name = str(device)
    try:
        torch.device(name)
    except (RuntimeError, TypeError):
        raise ValueError(f"device={name!r} is not a torch device; use 'cpu', 'cuda' or 'cuda:N'") from None
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device={name!r} requested but torch.cuda.is_available() is False; use 'cpu'")


def check_loss(loss, what: str, iteration: int) -> None:
    """Raises `TrainingDivergedError` if `loss` is NaN or infinite."""
    if loss is not None and not math.isfinite(float(loss)):
        raise TrainingDivergedError(
            f"{what} training loss is {float(loss)} at iteration {iteration}: training diverged; "
            "lower learning_rate, set gradient_clip, or check the game's utilities"
        )
