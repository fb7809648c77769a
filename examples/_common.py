"""Helpers shared by the example binaries."""

from __future__ import annotations

import errno
import re
import sys
from typing import NoReturn

import pyspiel
from absl import flags

from openspiel_cfrx.game_loading import GameStringError, load_game
from openspiel_cfrx.tree import UnsupportedGameError, check_game_supported

# Flags defined below are attributed to the calling example (absl lists them
# under that binary in --helpshort/--helpfull), not to this helper module.
flags.disclaim_key_flags()

# The flags every example binary defines, with the same names and meaning.
COMMON_FLAGS = ("game", "iterations", "seed", "output_dir", "eval_every", "device")


def define_common_flags(
    *,
    game: str,
    game_help: str,
    iterations: int,
    iterations_help: str,
    seed_help: str,
    output_dir: str,
    outputs: str,
    eval_every: int,
    eval_every_help: str,
    torch_device: bool,
    device_help: str,
    seed: int = 0,
) -> None:
    """Defines --game, --iterations, --seed, --output_dir, --eval_every and
    --device with one wording style; each binary supplies what they mean for it.

    `torch_device=True`: --device is a torch device passed to the solver
    (cpu, cuda, cuda:N); otherwise only "cpu" is accepted (see `check_device`).
    """
    flags.DEFINE_string(
        "game", game,
        f"OpenSpiel game string, parameters in parentheses (quote them in a shell). {game_help}",
    )  # fmt: skip
    flags.DEFINE_integer("iterations", iterations, iterations_help)
    flags.DEFINE_integer("seed", seed, f"Integer random seed. {seed_help}")
    flags.DEFINE_string(
        "output_dir", output_dir,
        f"Directory for the outputs ({outputs}); created if missing, existing files are overwritten.",
    )  # fmt: skip
    flags.DEFINE_integer("eval_every", eval_every, eval_every_help)
    if torch_device:
        device_help = (
            "torch device for the networks: cpu, cuda or cuda:N (cuda needs torch.cuda.is_available(); "
            f"otherwise a one-line error). {device_help}"
        )
    else:
        device_help = (
            f"Compute device; only cpu is accepted (anything else is an error): {device_help}"
        )
    flags.DEFINE_string("device", "cpu", device_help)


def define_worker_flags() -> None:
    """--num_workers / --ray_address: traversals on Ray workers (`openspiel_cfrx.deep.distributed`)."""
    flags.DEFINE_integer("num_workers", 1, "Traversal workers: 1 runs them in this process (no Ray); N > 1 runs "
                         "them on N Ray actors (pip install 'openspiel_cfrx[ray]'), same results for the same "
                         "--seed and N.")  # fmt: skip
    flags.DEFINE_string("ray_address", "", "With --num_workers > 1: '' starts a local Ray instance; 'auto' or "
                        "host:port joins a running cluster (`ray start --head` prints the address).")  # fmt: skip


def worker_settings() -> dict:
    """The solver arguments of --num_workers / --ray_address (one-line error if invalid)."""
    values = flags.FLAGS
    if values.num_workers < 1:
        usage_error(f"--num_workers must be >= 1, got {values.num_workers}")
    if values.ray_address and values.num_workers == 1:
        usage_error("--ray_address needs --num_workers > 1 (one worker runs in this process)")
    return {"num_workers": values.num_workers, "ray_address": values.ray_address or None}


def check_device(device: str, torch_device: bool, cpu_only_reason: str = "") -> str:
    """Validates --device (see `define_common_flags`); exits with a one-line
    error for an unknown device, a GPU on a CPU-only binary, or cuda without CUDA."""
    if not torch_device:
        if device != "cpu":
            usage_error(f"--device={device} is not supported: {cpu_only_reason}; use --device=cpu")
        return device
    if not re.fullmatch(r"cpu|cuda(:\d+)?", device):
        usage_error(f"--device={device} is not a supported torch device; use cpu, cuda or cuda:N")
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            usage_error(
                f"--device={device} requested but torch.cuda.is_available() is False; use --device=cpu"
            )
        index = int(device.partition(":")[2] or 0)
        if index >= torch.cuda.device_count():
            usage_error(
                f"--device={device}: only {torch.cuda.device_count()} CUDA device(s) visible"
            )
    return device


def load_game_or_exit(game_string: str, check_supported: bool = True) -> pyspiel.Game:
    """Loads a game (registering ours first); exits with a one-line error on a
    bad name/parameter or an unsupported game instead of a traceback."""
    try:
        import games  # noqa: F401  registers flop_holdem, hulh, team games, ...
    except ImportError:
        pass
    try:
        game = load_game(game_string)
    except GameStringError as e:
        sys.exit(f"error: {e}")
    if check_supported:
        try:
            check_game_supported(game)
        except (UnsupportedGameError, TypeError) as e:
            sys.exit(f"error: {e}")
    return game


def usage_error(message: str) -> NoReturn:
    """Exits with a one-line `error: ...` message (no usage dump, no traceback)."""
    sys.exit(f"error: {message}")


# ---------------------------------------------------------------- outputs
def check_writable_dir(path: str, flag: str) -> str:
    """Creates `path` if needed and checks a file can be written there; exits
    with a one-line error naming `--flag` otherwise (before any compute)."""
    import os
    import tempfile

    if not path:
        return path
    if os.path.exists(path) and not os.path.isdir(path):
        usage_error(f"--{flag}={path} is a file, not a directory; choose a directory")
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".write-test-"):
            pass
    except OSError as e:
        usage_error(f"--{flag}={path} is not writable ({e.strerror or e}); choose another directory")
    return path


def write_csv_rows(path: str, rows: list[dict], fields: list[str] | None = None) -> None:
    """Writes `rows` to `path` atomically (temporary file, fsync, rename), so
    an interrupted run never leaves a half-written CSV."""
    import csv
    import io

    from openspiel_cfrx.checkpoint_io import atomic_write

    fields = fields or list(dict.fromkeys(key for row in rows for key in row))  # rows of a resumed older run
    buffer = io.StringIO()                                                     # may lack a newer column
    writer = csv.DictWriter(buffer, fieldnames=fields, restval="")
    writer.writeheader()
    writer.writerows(rows)
    data = buffer.getvalue().encode("utf-8")
    atomic_write(path, lambda f: f.write(data))


def resumed_rows(csv_rows: list[dict], checkpoint_rows, resumed: bool, keep) -> list[dict]:
    """Curve rows to continue from after a resume.

    The rows saved inside the checkpoint (`checkpoint_rows`, written with it)
    are exactly the uninterrupted run's rows up to the checkpoint, so they win;
    a checkpoint written before rows were stored falls back to the CSV's rows
    that `keep(row)` accepts (those at or before the checkpoint). A fresh run
    (`resumed=False`) starts empty: rows of a killed run beyond the last
    checkpoint are recomputed, never duplicated or lost.
    """
    if not resumed:
        return []
    if checkpoint_rows is not None:
        return [dict(row) for row in checkpoint_rows]
    return [dict(row) for row in csv_rows if keep(row)]


_WRITE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EFBIG, errno.EIO)


def guarded(main):
    """Wraps an absl `main` so that the library's refusals (bad values,
    unsupported or too-large games, damaged checkpoints, unwritable or full
    disks, diverged training) and Ctrl-C end the program with one `error:`
    line instead of a traceback. Programming errors still show tracebacks."""
    import functools

    from openspiel_cfrx.checkpoint_io import CheckpointWriteError
    from openspiel_cfrx.deep.distributed import RayConnectionError, RayUnavailableError
    from openspiel_cfrx.deep.sampler import TraversalTooLargeError
    from openspiel_cfrx.deep.validation import TrainingDivergedError
    from openspiel_cfrx.poker.vector_cfr import VectorCFRTooLargeError

    @functools.wraps(main)
    def run(argv):
        try:
            return main(argv)
        except KeyboardInterrupt:
            sys.exit("interrupted (Ctrl-C); outputs written so far are kept")
        except (ValueError, TrainingDivergedError, CheckpointWriteError, RayUnavailableError,
                RayConnectionError, TraversalTooLargeError, VectorCFRTooLargeError) as e:  # fmt: skip
            sys.exit(f"error: {' '.join(str(e).split())}")
        except OSError as e:  # an output that cannot be written (e.g. a full disk under a plot)
            if e.errno not in _WRITE_ERRNOS:
                raise
            where = f" {e.filename}" if e.filename else " an output file"
            sys.exit(f"error: cannot write{where}: {e.strerror or e}; free some space or choose another "
                     "--output_dir")  # fmt: skip

    return run


# ------------------------------------------------------- flag validation
# One-line refusals of flag values the library would reject with a traceback,
# run forever on, or silently ignore. Each names the flag and the value.
MAX_SEED = 2**31 - 1  # OpenSpiel's C++ solvers take the seed as a C int


def parse_flags(argv: list[str]) -> list[str]:
    """absl's flag parser for `app.run(..., flags_parser=parse_flags)`: a bad
    flag (unknown name, wrong type, value outside an enum) and positional
    arguments (every example takes flags only; `deep_cfr.py leduc_poker` would
    otherwise silently run the default game) end with one `error:` line."""
    try:
        rest = flags.FLAGS(argv)
    except flags.Error as e:
        usage_error(f"{' '.join(str(e).split())} (--helpshort lists the flags)")
    if len(rest) > 1:
        hint = f"; did you mean --game={rest[1]}?" if "game" in flags.FLAGS and len(rest) == 2 else ""
        usage_error(f"unexpected argument(s) {' '.join(rest[1:])!r}: flags only, e.g. --name=value{hint}")
    return rest


def check_list(name: str, choices=None, *, allow_empty: bool = False, unique: bool = True) -> list[str]:
    """The value of list flag --`name`: entries stripped, none empty, no
    duplicates if `unique` (each would write a duplicate series), each in
    `choices` if given (with a suggestion); empty only if `allow_empty`."""
    import difflib

    values = [str(v).strip() for v in (flags.FLAGS[name].value or [])]
    given = ",".join(values)
    if not values:
        if allow_empty:
            return []
        usage_error(f"--{name} is empty; give at least one"
                    + (f" of {', '.join(choices)}" if choices else " value"))  # fmt: skip
    if "" in values:
        usage_error(f"--{name}={given} has an empty entry; separate entries by single commas")
    duplicates = sorted({v for v in values if values.count(v) > 1}) if unique else []
    if duplicates:
        usage_error(f"--{name}={given} names {', '.join(duplicates)} more than once; give each once")
    if choices is not None:
        for value in values:
            if value not in choices:
                close = difflib.get_close_matches(value, list(choices), n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]}?)" if close else ""
                usage_error(f"--{name}: unknown entry {value!r}{hint}; choose from {', '.join(choices)}")
    return values


def check_number_list(name: str, kind=float, minimum: float | None = None, maximum: float | None = None,
                      *, strict: bool = False, allow_empty: bool = False, unique: bool = True) -> list:  # fmt: skip
    """List flag --`name` as numbers of `kind` (int or float): finite, within
    [minimum, maximum] (`strict`: minimum excluded), no duplicates if `unique`."""
    texts = check_list(name, allow_empty=allow_empty, unique=unique)
    values = []
    for text in texts:
        try:
            value = kind(text)
        except ValueError:
            noun = "integers" if kind is int else "numbers"
            usage_error(f"--{name}: entry {text!r} is not a number; give comma-separated {noun}")
        values.append(_in_range(f"--{name} entry", value, minimum, maximum, strict))
    if unique and len(set(values)) < len(values):
        usage_error(f"--{name}={','.join(texts)} gives the same value twice; give each once")
    return values


def _in_range(label: str, value, minimum, maximum, strict: bool):
    import math

    if isinstance(value, float) and not math.isfinite(value):
        usage_error(f"{label} must be a finite number, got {value}")
    if minimum is not None and (value <= minimum if strict else value < minimum):
        usage_error(f"{label} must be {'>' if strict else '>='} {minimum}, got {value}")
    if maximum is not None and value > maximum:
        usage_error(f"{label} must be <= {maximum}, got {value}")
    return value


def check_number(name: str, minimum: float | None = None, maximum: float | None = None, *,
                 strict: bool = False, allow_none: bool = False):  # fmt: skip
    """The value of numeric flag --`name`: finite (no nan/inf), within
    [minimum, maximum] (`strict`: minimum excluded); None passes if `allow_none`."""
    value = flags.FLAGS[name].value
    if value is None and allow_none:
        return None
    return _in_range(f"--{name}", value, minimum, maximum, strict)


def check_seed(name: str = "seed") -> int:
    """--seed in [0, 2^31 - 1] (OpenSpiel's C++ solvers and torch take it)."""
    return check_number(name, 0, MAX_SEED)


def check_local_workers(name: str = "num_workers", address_flag: str = "ray_address") -> None:
    """--num_workers: a local Ray instance (no --ray_address) runs one process
    per worker on this machine; more than its cores only queue (1000 start
    1000 interpreters and never make progress). A cluster address takes any
    count."""
    import os

    values = flags.FLAGS
    count = values[name].value
    cores = os.cpu_count() or 1
    if count > 1 and not values[address_flag].value and count > cores:
        usage_error(f"--{name}={count} exceeds this machine's {cores} CPU cores for a local Ray instance; use "
                    f"--{name} <= {cores}, or --{address_flag} of a cluster with that many")  # fmt: skip


def check_output_file(name: str) -> str:
    """File flag --`name`: not a directory, its directory writable (checked
    before any compute, so a long run does not end in a failed write)."""
    import os

    path = flags.FLAGS[name].value
    if not path:
        return path
    if os.path.isdir(path) or path.endswith(os.sep):
        usage_error(f"--{name}={path} is a directory; give a file path, e.g. {os.path.join(path, name)}")
    check_writable_dir(os.path.dirname(os.path.abspath(path)), name)
    return path


def check_output_dir(name: str = "output_dir") -> str:
    """--`name` is not empty: an empty value would scatter the outputs over
    the current directory (the directory itself is checked by `check_writable_dir`)."""
    path = flags.FLAGS[name].value
    if not path or not path.strip():
        usage_error(f"--{name} is empty; give a directory (. for the current one)")
    return path
