"""OpenSpiel's own test files, run against our solvers (issue 15).

At test time the installed OpenSpiel test files for CFR, discounted CFR,
exploitability, sequence-form utilities and PyTorch Deep CFR are read and
executed with an import hook: their `from ... import cfr / discounted_cfr /
exploitability / deep_cfr` statements bind shim modules whose public solvers
and evaluators are ours (every other name is OpenSpiel's own module). Every
test method then runs unchanged, assertions included, as one pytest case; so
the suite follows whatever OpenSpiel version is installed.

Substituted (SUBSTITUTES): `cfr.CFRSolver`, `cfr.CFRPlusSolver`,
`cfr._CFRSolver` (OpenSpiel's private base class; our `CFRSolver` has the same
three switches in the same order), `discounted_cfr.DCFRSolver` /
`LCFRSolver`, `exploitability.nash_conv` / `exploitability`,
`deep_cfr.DeepCFRSolver`.

Every case must call at least one substituted name (recorded at call time), so
a change in OpenSpiel's import style cannot make the suite silently test
OpenSpiel instead of us. The exceptions are listed:

  * SET_ASIDE (skipped, reason given): tests of OpenSpiel's private internals
    (`cfr._InfoStateNode`, `cfr._update_current_policy`).
  * REFUSED: tests on games with more than 2 players or general-sum
    utilities. They must raise our `UnsupportedGameError` (with the listed
    message): the array engine and our solvers are defined for 2-player
    zero-sum games only.
  * OPENSPIEL_ONLY: tests that call none of our names (OpenSpiel's C++
    solvers, `exploitability.best_response`, sequence-form constraints). They
    run unchanged and must keep calling none of ours.

A listed name that matches no installed test fails
`test_every_listed_exception_names_an_installed_test` (OpenSpiel renamed or
removed it: update the list). A missing installed file is a skip.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import importlib.util
import os
import re
import types
import unittest

import pytest
from absl import flags

import openspiel_cfrx
from openspiel_cfrx.tree.game_tree import UnsupportedGameError

TEST_FILES = {
    "cfr": "open_spiel/python/algorithms/cfr_test.py",
    "discounted_cfr": "open_spiel/python/algorithms/discounted_cfr_test.py",
    "exploitability": "open_spiel/python/algorithms/exploitability_test.py",
    "sequence_form_utils": "open_spiel/python/algorithms/sequence_form_utils_test.py",
    "deep_cfr_pytorch": "open_spiel/python/pytorch/deep_cfr_pytorch_test.py",
}


def _substitutes() -> dict[tuple[str, str], dict[str, object]]:
    """(package, module) -> {name in OpenSpiel's module: our object}."""
    return {
        ("open_spiel.python.algorithms", "cfr"): {
            "CFRSolver": openspiel_cfrx.CFRSolver,
            "CFRPlusSolver": openspiel_cfrx.CFRPlusSolver,
            # OpenSpiel's _CFRSolver(game, alternating_updates, linear_averaging,
            # regret_matching_plus): our CFRSolver takes the same switches.
            "_CFRSolver": openspiel_cfrx.CFRSolver,
        },
        ("open_spiel.python.algorithms", "discounted_cfr"): {
            "DCFRSolver": openspiel_cfrx.DCFRSolver,
            "LCFRSolver": openspiel_cfrx.LCFRSolver,
        },
        ("open_spiel.python.algorithms", "exploitability"): {
            "nash_conv": openspiel_cfrx.nash_conv,
            "exploitability": openspiel_cfrx.exploitability,
        },
        ("open_spiel.python.pytorch", "deep_cfr"): {
            "DeepCFRSolver": openspiel_cfrx.DeepCFRSolver,
        },
    }


SET_ASIDE = {
    "cfr:ModuleLevelFunctionTest.test__update_current_policy": (
        "builds OpenSpiel's private cfr._InfoStateNode records and calls "
        "cfr._update_current_policy: internals of OpenSpiel's implementation, not solver API"
    ),
}
# Tests on >2-player or general-sum games: (message our refusal must match, why).
REFUSED = {
    "cfr:CFRTest.test_cfr_cce_ce_dist_goofspiel": (
        "general-sum", "goofspiel with returns_type=total_points is general-sum"
    ),
    "cfr:CFRTest.test_cfr_kuhn_poker_runs_with_multiple_players": ("has 3 players", "3-player Kuhn"),
    "cfr:CorrDistTest.test_cce_dist_kuhn_3p": ("has 3 players", "3-player Kuhn"),
    "deep_cfr_pytorch:DeepCFRPyTorchTest.test_matching_pennies_3p": ("has 3 players", "3-player matching pennies"),
    # parameterized (3,), (4,)
    "exploitability:ExploitabilityTest.test_kuhn_poker_uniform_random_nash_conv0": ("has 3 players", "3-player Kuhn"),
    "exploitability:ExploitabilityTest.test_kuhn_poker_uniform_random_nash_conv1": ("has 4 players", "4-player Kuhn"),
    # parameterized ("kuhn_poker", 2), ("kuhn_poker", 3), ("kuhn_poker", 4): the first runs
    "exploitability:ExploitabilityTest.test_python_same_as_cpp_for_multiplayer_uniform_random_nash_conv1": (
        "has 3 players", "3-player Kuhn"
    ),
    "exploitability:ExploitabilityTest.test_python_same_as_cpp_for_multiplayer_uniform_random_nash_conv2": (
        "has 4 players", "4-player Kuhn"
    ),
}
# Tests that call none of our names; they run unchanged (and pass on OpenSpiel's code).
OPENSPIEL_ONLY = {
    "cfr:CorrDistTest.test_cce_dist_kuhn_3p_cpp": "OpenSpiel's C++ pyspiel.CFRSolver and cce_dist only",
    "cfr:CorrDistTest.test_cce_dist_sheriff_cpp": "OpenSpiel's C++ pyspiel.CFRSolver and cce_dist only",
    "exploitability:ExploitabilityTest.test_kuhn_poker_uniform_random_best_response_pid0": (
        "exploitability.best_response (not substituted: ours has another signature)"
    ),
    "exploitability:ExploitabilityTest.test_kuhn_poker_uniform_random_best_response_pid1": (
        "exploitability.best_response (not substituted: ours has another signature)"
    ),
    "sequence_form_utils:SequenceFormTest.test_sequence_tangent_projection": (
        "sequence_form_utils constraints on a uniform policy.TabularPolicy only"
    ),
}

_CALLS: list[str] = []  # substituted names called by the running case


def _recording(obj, label: str):
    @functools.wraps(obj, updated=())
    def call(*args, **kwargs):
        _CALLS.append(label)
        return obj(*args, **kwargs)

    return call


def _shim(original: types.ModuleType, ours: dict[str, object]) -> types.ModuleType:
    """A module exposing `ours` (recorded when called) and delegating every
    other name to OpenSpiel's `original`."""
    module = types.ModuleType(original.__name__)
    module.__dict__.update({name: _recording(obj, f"{original.__name__}.{name}") for name, obj in ours.items()})
    module.__getattr__ = lambda name: getattr(original, name)
    return module


def _hooked_import(shims: dict[tuple[str, str], types.ModuleType]):
    """`__import__` for the adapted module: `from PACKAGE import MODULE` of a
    substituted module gets its shim; everything else imports normally."""
    real_import = builtins.__import__

    def hooked(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002
        module = real_import(name, globals, locals, fromlist, level)
        wanted = [f for f in (fromlist or ()) if level == 0 and (name, f) in shims]
        if not wanted:
            return module
        view = types.ModuleType(name)
        view.__getattr__ = lambda attribute: getattr(module, attribute)
        for f in wanted:
            setattr(view, f, shims[(name, f)])
        return view

    return hooked


def _installed_path(relative: str) -> str | None:
    spec = importlib.util.find_spec("open_spiel")
    if spec is None or not spec.origin:
        return None
    path = os.path.join(os.path.dirname(os.path.dirname(spec.origin)), relative)
    return path if os.path.exists(path) else None


def _load_adapted(name: str) -> types.ModuleType | None:
    path = _installed_path(TEST_FILES[name])
    if path is None:
        return None
    with open(path, encoding="utf-8") as f:
        source = f.read()
    shims = {
        key: _shim(importlib.import_module(f"{key[0]}.{key[1]}"), ours) for key, ours in _substitutes().items()
    }
    module = types.ModuleType(f"openspiel_adapted_{name}")
    module.__file__ = path
    module.__dict__["__builtins__"] = {**vars(builtins), "__import__": _hooked_import(shims)}
    exec(compile(source, path, "exec"), module.__dict__)  # noqa: S102
    return module


def _collect():
    """([pytest params], {file: [test ids]} of the files that loaded)."""
    loader = unittest.TestLoader()
    cases, ids = [], {}
    for name in TEST_FILES:
        try:
            module = _load_adapted(name)
        except Exception as e:  # an installed file we cannot adapt: a failing case, not a hidden one
            cases.append(pytest.param(name, None, f"{type(e).__name__}: {e}", id=f"{name}:load"))
            continue
        if module is None:
            cases.append(pytest.param(name, None, None, id=f"{name}:missing", marks=pytest.mark.skip(
                reason=f"{TEST_FILES[name]} is not installed")))  # fmt: skip
            continue
        ids[name] = []
        for attribute in sorted(vars(module)):
            cls = getattr(module, attribute)
            if not (isinstance(cls, type) and issubclass(cls, unittest.TestCase)):
                continue
            if cls.__module__ != module.__name__:  # imported base classes
                continue
            for method in loader.getTestCaseNames(cls):
                test_id = f"{name}:{cls.__name__}.{method}"
                ids[name].append(test_id)
                cases.append(pytest.param(name, cls, method, id=test_id))
    return cases, ids


_CASES, _LOADED_IDS = _collect()


def _listed(table: dict, test_id: str):
    """The entry of `table` naming `test_id`: the same id, or its method name
    before absl parameterized's numeric suffix."""
    for key, value in table.items():
        if re.fullmatch(re.escape(key) + r"\d*", test_id):
            return key, value
    return None, None


@contextlib.contextmanager
def _one_torch_thread(active: bool):
    """Deep CFR's tiny networks: intra-op threads only add overhead (8x slower
    with 2 threads on 2 shared cores); restore the setting afterwards."""
    if not active:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _run(cls: type, method: str) -> None:
    cls.setUpClass()
    try:
        cls(method).debug()  # setUp, the test, tearDown; exceptions propagate
    finally:
        cls.tearDownClass()
        cls.doClassCleanups()


@pytest.mark.parametrize("name, cls, method", _CASES)
def test_openspiel_file(name, cls, method):
    if cls is None:
        pytest.fail(f"could not adapt the installed {TEST_FILES[name]}: {method}")
    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()
    test_id = f"{name}:{cls.__name__}.{method}"
    key, reason = _listed(SET_ASIDE, test_id)
    if key:
        pytest.skip(reason)
    _CALLS.clear()
    with _one_torch_thread(name == "deep_cfr_pytorch"):
        key, refusal = _listed(REFUSED, test_id)
        if key:
            with pytest.raises(UnsupportedGameError, match=refusal[0]):
                _run(cls, method)
            return
        _run(cls, method)
    key, why = _listed(OPENSPIEL_ONLY, test_id)
    if key:
        assert not _CALLS, f"listed in OPENSPIEL_ONLY ({why}) but called {sorted(set(_CALLS))}: unlist it"
    else:
        assert _CALLS, "called none of our substituted names: did OpenSpiel change how it imports the module?"


def test_every_listed_exception_names_an_installed_test():
    stale = [
        key
        for table in (SET_ASIDE, REFUSED, OPENSPIEL_ONLY)
        for key in table
        if key.split(":")[0] in _LOADED_IDS
        and not any(_listed({key: None}, test_id)[0] for test_id in _LOADED_IDS[key.split(":")[0]])
    ]
    assert not stale, f"no installed OpenSpiel test matches {stale}: update the lists"
