"""Helpers shared by the example binaries."""

from __future__ import annotations

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


def guarded(main):
    """Wraps an absl `main` so that the library's refusals (bad values,
    unsupported or too-large games, damaged checkpoints, unwritable or full
    disks, diverged training) and Ctrl-C end the program with one `error:`
    line instead of a traceback. Programming errors still show tracebacks."""
    import functools

    from openspiel_cfrx.checkpoint_io import CheckpointWriteError
    from openspiel_cfrx.deep.distributed import RayConnectionError, RayUnavailableError
    from openspiel_cfrx.deep.validation import TrainingDivergedError

    @functools.wraps(main)
    def run(argv):
        try:
            return main(argv)
        except KeyboardInterrupt:
            sys.exit("interrupted (Ctrl-C); outputs written so far are kept")
        except (ValueError, TrainingDivergedError, CheckpointWriteError, RayUnavailableError,
                RayConnectionError) as e:  # fmt: skip
            sys.exit(f"error: {' '.join(str(e).split())}")

    return run
