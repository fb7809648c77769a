"""Helpers shared by the example binaries."""

from __future__ import annotations

import errno
import re
import sys
from typing import NoReturn

import pyspiel
from absl import app, flags

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
        f"Directory for the outputs ({outputs}, each CSV with its <name>.config.json); created if missing. "
        "One run at a time (a second run into it refuses); results of the same configuration are "
        "replaced, those of another are refused (see --allow_changed), as are another program's results "
        "and results whose .config.json is missing.",
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
    define_allow_changed_flag()
    define_tensorboard_flag()


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


# ------------------------------------------------------------- run folders
# One run per folder: a run holds `<folder>/.run.lock` (host, pid, start time,
# command; created with O_CREAT | O_EXCL) on its --output_dir and
# --checkpoint_dir, and on the folder of a checkpoint file given outside them,
# until it exits (normally, on Ctrl-C, SIGTERM or SIGHUP). A second run into a
# held folder refuses, and so does an output file (--policy_file, ...) aimed
# into one; the lock of a process that no longer runs on this host is taken
# over with a one-line note.
LOCK_NAME = ".run.lock"
_HELD: list[str] = []  # lock files this process created


def lock_run_folders(**folders: str) -> None:
    """Takes the run lock of each folder (flag name -> path; '' skipped, the
    same folder under two flags locked once, a folder this process already
    holds skipped); exits with one line naming the holder if another run has one."""
    import os

    seen = {os.path.realpath(os.path.dirname(held)) for held in _HELD}
    for flag, path in folders.items():
        if not path or os.path.realpath(path) in seen:
            continue
        seen.add(os.path.realpath(path))
        _acquire(os.path.join(path, LOCK_NAME), f"--{flag}={path}", f"another --{flag}")


def lock_run_file(path: str, flag: str) -> None:
    """The run lock of the folder holding the file `path` (e.g. a --checkpoint
    given outside --output_dir): locks are per folder, so a file flag pointing
    into a folder another run holds refuses like a folder flag would."""
    import os

    if not path:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.realpath(folder) in {os.path.realpath(os.path.dirname(held)) for held in _HELD}:
        return
    _acquire(os.path.join(folder, LOCK_NAME), f"--{flag}={path} (in {folder})", f"another --{flag}")


def check_folder_not_held(path: str, flag: str) -> None:
    """Refuses (one line naming the holder) an output file `path` in a folder
    that another live run holds; the folder is not locked (a file written
    once at the end, e.g. --policy_file, may share a folder with other such files)."""
    import os

    if not path:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.realpath(folder) in {os.path.realpath(os.path.dirname(held)) for held in _HELD}:
        return
    holder = _read_lock(os.path.join(folder, LOCK_NAME))
    if isinstance(holder, dict) and holder.get("pid") != os.getpid():
        alive, who = _holder_alive(holder), _holder_text(holder)
        if alive is not False:
            hint = f" (if that run is gone, delete {os.path.join(folder, LOCK_NAME)})" if alive is None else ""
            usage_error(f"--{flag}={path} is in a folder in use by another run: {who}; choose another --{flag}, "
                        f"or wait for that run to end{hint}")  # fmt: skip


def _process_start(pid: int) -> str | None:
    """The start time of process `pid` (Linux /proc, clock ticks since boot), to
    tell a live holder from a later process that reuses its pid; None if unknown."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rpartition(")")[2].split()[19]
    except (OSError, IndexError):
        return None


def _holder_alive(holder: dict) -> bool | None:
    """True / False for a lock of this host; None when it cannot be told (another host)."""
    import socket

    from openspiel_cfrx.checkpoint_io import _pid_alive

    if holder.get("host") != socket.gethostname():
        return None
    pid = holder.get("pid")
    if not isinstance(pid, int) or pid <= 0 or not _pid_alive(pid):
        return False
    start = holder.get("start")
    return start is None or _process_start(pid) in (None, start)


def _holder_text(holder: dict) -> str:
    """'pid P on HOST since TIME (PROGRAM)': a lock's holder, for a refusal."""
    program = str(holder.get("command") or "?").split(" ", 1)[0]  # the whole command: in the file
    return f"pid {holder.get('pid')} on {holder.get('host')} since {holder.get('since')} ({program})"


_NOT_REGULAR = "not a regular file"  # `_read_lock` of a path that is not a regular file


def _read_lock(path: str):
    """The holder recorded in a lock file: a dict, None if the file is gone, "" if
    unreadable, `_NOT_REGULAR` if `path` is a link, folder, FIFO, ... (opened
    without following links or blocking, so a FIFO cannot hang the program)."""
    import errno
    import json
    import os
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as e:
        return _NOT_REGULAR if e.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO) else ""
    try:
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return _NOT_REGULAR
            holder = json.loads(f.read(1 << 16).decode("utf-8"))
    except (OSError, ValueError):
        return ""
    return holder if isinstance(holder, dict) else ""


def _not_a_lock(path: str) -> str | None:
    """What `path` is if it exists but is not a regular file ("a directory", "a
    FIFO (named pipe)", "a symbolic link", ...); None if it is one or is absent."""
    import os
    import stat

    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    kinds = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
             (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))  # fmt: skip
    return next((kind for test, kind in kinds if test(mode)), "not a regular file")


def _refuse_not_a_lock(lock_path: str, what: str) -> NoReturn:
    kind = _not_a_lock(lock_path) or "not a regular file"
    usage_error(f"{lock_path} is {kind}, not a run lock file, so {what} cannot be locked; rename or remove it "
                "(runs only ever write a regular file there), then rerun")  # fmt: skip


def _acquire(lock_path: str, what: str, other: str) -> None:
    import json
    import os
    import socket
    import time

    me = {"host": socket.gethostname(), "pid": os.getpid(), "start": _process_start(os.getpid()),
          "since": time.strftime("%Y-%m-%d %H:%M:%S %z"),
          "command": " ".join([os.path.basename(sys.argv[0]), *sys.argv[1:]])}  # fmt: skip
    for _ in range(5):
        if _not_a_lock(lock_path):
            _refuse_not_a_lock(lock_path, what)
        try:
            fd = os.open(lock_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except FileExistsError:
            holder = _read_lock(lock_path)
            if holder is _NOT_REGULAR:
                _refuse_not_a_lock(lock_path, what)
            if holder is None:  # released meanwhile
                continue
            if holder == "":  # being written right now, or damaged long ago
                try:
                    age = time.time() - os.path.getmtime(lock_path)
                except OSError:
                    continue
                if age < 30:
                    time.sleep(0.2)
                    continue
                alive, who = False, f"an unreadable lock file ({age:.0f} s old)"
            else:
                alive, who = _holder_alive(holder), _holder_text(holder)
            if alive is not False:
                hint = f" (if that run is gone, delete {lock_path})" if alive is None else ""
                usage_error(f"{what} is in use by another run: {who}; choose {other}, or wait for that run "
                            f"to end{hint}")  # fmt: skip
            if _read_lock(lock_path) == holder:  # unchanged since read: still the dead run's
                try:
                    os.remove(lock_path)
                except FileNotFoundError:
                    pass
                print(f"note: {what}: took over the lock of a run that is no longer running: {who}",
                      file=sys.stderr)  # fmt: skip
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(me, f)
        if not _HELD:
            _install_release()
        _HELD.append(lock_path)
        return
    usage_error(f"cannot take the lock {lock_path} of {what} (other runs keep taking it); try again")


def release_run_locks() -> None:
    """Removes the lock files this process holds (atexit and signal handlers call it)."""
    import os

    while _HELD:
        path = _HELD.pop()
        holder = _read_lock(path)
        if isinstance(holder, dict) and holder.get("pid") == os.getpid():
            try:
                os.remove(path)
            except OSError:
                pass


def _install_release() -> None:
    import atexit
    import os
    import signal

    atexit.register(release_run_locks)

    def on_signal(signum, frame):  # release, then die of the signal as before
        release_run_locks()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) == signal.SIG_DFL:
            signal.signal(sig, on_signal)


# ------------------------------------------------------- run configuration
# Every results CSV has a `game` column and a sidecar `<name>.config.json`
# holding the run configuration (`run_config`): the program, the game, every
# flag and, for the neural solvers, the solver's settings record. A run into a
# folder whose results (or checkpoint) come from another configuration refuses,
# naming each differing setting, unless the difference is always safe
# (`ALWAYS_SAFE`) or allowed with --allow_changed.
CONFIG_SCHEMA = 1
# Flags that say where outputs go, not what is computed: recorded, never compared.
NOT_COMPARED = frozenset({"output_dir", "checkpoint_dir", "policy_file", "checkpoint", "fresh", "allow_changed",
                          "tensorboard_dir", "save_policy", "save_strategy"})
# Flags that may always change between the run that wrote a folder and the next
# one: iteration counts and budgets, evaluation cadence, verbosity, and where
# it runs (device, threads, parallel jobs, the Ray address).
ALWAYS_SAFE = frozenset({
    "iterations", "seconds", "max_minutes", "baseline_seconds", "checkpoint_minutes",
    "eval_every", "eval_points", "evaluations", "progress", "quiet",
    "device", "threads", "torch_threads", "jobs", "ray_address",
})  # fmt: skip
# Solver settings ("group.field" of `settings.to_record()`) set by the common flags.
SETTING_FLAGS = {
    "openspiel.num_iterations": "iterations", "core.num_iterations": "iterations",
    "openspiel.device": "device", "core.device": "device", "openspiel.seed": "seed", "core.seed": "seed",
    "workers.num_workers": "num_workers", "workers.ray_address": "ray_address",
}  # fmt: skip


def define_allow_changed_flag() -> None:
    flags.DEFINE_list(
        "allow_changed", [],
        "Comma-separated flags (or solver settings, group.field as the refusal names them) that may differ from "
        "the configuration that wrote the --output_dir results or the checkpoint being resumed. Always allowed: "
        f"{', '.join(sorted(ALWAYS_SAFE))}; never: the game.",
    )  # fmt: skip


def _plain(value):
    """`value` as JSON data (lists, dicts, str, numbers, bool, None)."""
    import json

    return json.loads(json.dumps(value, default=str))


def run_config(game_string: str, game=None, settings=None) -> dict:
    """The run configuration of this command: program, game (as given and as
    loaded), every flag of the program, and `settings` (a solver's
    `settings.to_record()`, or {name: record} for several)."""
    import os

    module = flags.FLAGS.find_module_defining_flag("output_dir") or sys.argv[0]
    values = {flag.name: flag.value for flag in flags.FLAGS.get_flags_for_module(module)}
    return _plain({"schema": CONFIG_SCHEMA, "program": os.path.basename(sys.argv[0]), "game": game_string.strip(),
                   "game_loaded": str(game) if game is not None else game_string.strip(),
                   "flags": values, "settings": settings})  # fmt: skip


def config_differences(saved: dict, now: dict, saved_settings=None, now_settings=None,
                       setting_flags: dict | None = None) -> dict[str, tuple]:  # fmt: skip
    """{name: (saved value, current value)} of the run configurations `saved`
    and `now` (`run_config`): the game, each flag both record, and each solver
    setting (`saved_settings` / `now_settings`, `settings.to_record()`) that
    differs, named by the flag that sets it (`setting_flags`: "group.field" ->
    flag) or as group.field; a setting whose flag already differs is named once."""
    from openspiel_cfrx.deep.checkpoint import settings_differences

    setting_flags = {**SETTING_FLAGS, **(setting_flags or {})}
    differences = {}
    if saved.get("game_loaded", saved.get("game")) != now.get("game_loaded", now.get("game")):
        differences["game"] = (saved.get("game"), now.get("game"))
    old, new = saved.get("flags") or {}, now.get("flags") or {}
    for name in sorted(set(old) & set(new) - NOT_COMPARED - {"game"}):
        if old[name] != new[name]:
            differences[name] = (old[name], new[name])
    if saved_settings is not None and now_settings is not None:
        for path, values in (settings_differences(_plain(saved_settings), _plain(now_settings)) or {}).items():
            differences.setdefault(setting_flags.get(path, path), values)
    return differences


def refuse_changed(differences: dict[str, tuple], where: str, fix: str, fixed: dict[str, str] | None = None) -> None:
    """Exits with one line naming each difference (`config_differences`) that is
    neither always safe nor in --allow_changed; `fixed` (name -> reason): names
    that cannot change even when allowed (the game always)."""
    allowed = set(getattr(flags.FLAGS, "allow_changed", None) or ())
    never = {"game": "the game cannot change", **(fixed or {})}
    refused = {name: values for name, values in differences.items()
               if name in never or (name not in ALWAYS_SAFE and name not in allowed)}  # fmt: skip
    if not refused:
        return

    def label(name):
        return name if "." in name or name == "schema" else f"--{name}"

    details = "; ".join(f"{label(name)}: {a!r} there vs {b!r} now" + (f" ({never[name]})" if name in never else "")
                        for name, (a, b) in refused.items())  # fmt: skip
    changeable = [name for name in refused if name not in never]
    allow = f", or pass --allow_changed={','.join(changeable)} to accept the change" if changeable else ""
    usage_error(f"{where} comes from a run with other settings ({details}); {fix}{allow}")


def sidecar_path(csv_path: str) -> str:
    """`curve.csv` -> `curve.config.json`: the run configuration that wrote the CSV."""
    import os

    return os.path.splitext(csv_path)[0] + ".config.json"


def read_results_config(csv_path: str) -> dict | None:
    """The run configuration of the results at `csv_path` (its sidecar); None
    if there are no results or they predate the sidecars."""
    import json
    import os

    if not os.path.exists(csv_path) or not os.path.exists(sidecar_path(csv_path)):
        return None
    try:
        with open(sidecar_path(csv_path), encoding="utf-8") as f:
            config = json.load(f)
    except (OSError, ValueError) as e:
        usage_error(f"cannot read {sidecar_path(csv_path)} ({type(e).__name__}: {e}), the configuration of "
                    f"{csv_path}; delete both or choose another --output_dir")  # fmt: skip
    return config if isinstance(config, dict) else {}


def program_name(recorded) -> str:
    """The program a `run_config` records, one name however it was started:
    `deep_cfr.py`, `python -m cfrx_examples.deep_cfr` and the console
    script `cfrx-deep-cfr` are all `deep_cfr` ('' if none is recorded)."""
    import os

    name = os.path.basename(str(recorded or "").strip())
    name = name[:-3] if name.endswith(".py") else name
    name = name[5:] if name.startswith("cfrx-") else name
    return name.replace("-", "_")


def _refuse_other_program(saved: dict, config: dict, where: str, fix: str) -> None:
    """One line if `saved` (a `run_config`) was written by another program than `config`'s."""
    old, new = program_name(saved.get("program")), program_name(config.get("program"))
    if old and new and old != new:
        usage_error(f"{where} written by {old}, not {new}: the outputs of two programs do not mix; {fix}")


def check_results_folder(config: dict, *csv_paths: str, setting_flags: dict | None = None,
                         fixed: dict[str, str] | None = None, fix: str = "") -> None:  # fmt: skip
    """Refuses (one line) to write into a folder holding results it cannot
    keep apart from this run's: the results of another program (any
    `<name>.config.json` sidecar in the folders of `csv_paths` that records
    another program), results at `csv_paths` without their sidecar (their
    configuration cannot be checked), or results at `csv_paths` written by
    another configuration (`refuse_changed`; `fixed` as there; `fix`: the
    remedy to offer, by default another --output_dir or deleting those results)."""
    import glob
    import json
    import os

    me = program_name(config.get("program"))
    for folder in dict.fromkeys(os.path.dirname(path) or "." for path in csv_paths):
        for sidecar in sorted(glob.glob(os.path.join(glob.escape(folder), "*.config.json"))):
            try:
                with open(sidecar, encoding="utf-8") as f:
                    saved = json.load(f)
            except (OSError, ValueError):
                continue  # not a sidecar (a user's file); one of ours at csv_paths is read below
            if not (isinstance(saved, dict) and "schema" in saved and program_name(saved.get("program"))):
                continue
            csv_name = os.path.basename(sidecar)[: -len(".config.json")] + ".csv"
            files = [name for name in (csv_name, os.path.basename(sidecar)) if os.path.exists(os.path.join(folder, name))]
            _refuse_other_program(saved, config, f"{folder} holds {' and '.join(files)}",
                                  f"give {me} another --output_dir (one program per folder)")  # fmt: skip
    unchecked = [path for path in csv_paths if os.path.exists(path) and not os.path.exists(sidecar_path(path))]
    if unchecked:
        names = " and ".join(unchecked)
        usage_error(f"{names} has no {os.path.basename(sidecar_path(unchecked[0]))} beside it: results without "
                    f"their configuration cannot be checked against this run; choose another --output_dir, or "
                    f"move or delete {names} to replace them")  # fmt: skip
    found = {path: saved for path in csv_paths if (saved := read_results_config(path)) is not None}
    for path, saved in found.items():
        differences = config_differences(saved, config, saved.get("settings"), config.get("settings"),
                                         setting_flags)  # fmt: skip
        refuse_changed(differences, path, fix or f"rerun with that run's flags, choose another --output_dir, or "
                       f"delete {' and '.join(found)} to replace those results", fixed)  # fmt: skip


def check_resumed_checkpoint(path: str, saved_run: dict | None, saved_settings, config: dict,
                             now_settings=None, setting_flags: dict | None = None,
                             fixed: dict[str, str] | None = None) -> None:  # fmt: skip
    """Refuses (one line) to resume the checkpoint `path` under a configuration
    other than the one that wrote it: `saved_run` (the `run_config` stored in
    its `extra`) and `saved_settings` (its solver settings record) against
    `config` and `now_settings`."""
    fix = "resume with that run's flags, or start a new run in another --checkpoint_dir"
    _refuse_other_program(saved_run or {}, config, f"checkpoint {path} was", fix)
    differences = config_differences(saved_run or {}, config, saved_settings, now_settings, setting_flags)
    refuse_changed(differences, f"checkpoint {path}", fix, fixed)


_SIDECARS: dict[str, bytes] = {}  # CSV path -> the sidecar this process wrote


def write_results(path: str, rows: list[dict], config: dict, fields: list[str] | None = None) -> None:
    """`rows` to the CSV `path` with a `game` column first (`write_csv_rows`),
    after the sidecar `<name>.config.json` holding `config` (both atomic)."""
    import json

    from openspiel_cfrx.checkpoint_io import atomic_write

    data = (json.dumps(config, indent=1, sort_keys=True, default=str) + "\n").encode("utf-8")
    if _SIDECARS.get(path) != data:  # written once per configuration, not with every row
        atomic_write(sidecar_path(path), lambda f: f.write(data))
        _SIDECARS[path] = data
    game = config["game"]
    rows = [{"game": row.get("game") or game, **{k: v for k, v in row.items() if k != "game"}} for row in rows]
    write_csv_rows(path, rows, ["game", *[f for f in fields if f != "game"]] if fields else None)
    board = tensorboard()
    if board is not None:
        board.settings(config)
        board.rows(rows, default_label=str(config.get("program", "run")).removesuffix(".py"))


# ------------------------------------------------------------- TensorBoard
# --tensorboard_dir: every row an example writes to its CSV also goes to
# TensorBoard (one scalar per numeric column, tagged <solver>/<column>, at the
# row's iteration), the run's configuration as text and hparams, and what an
# example logs per iteration (Deep CFR: losses, nodes, iterations/s, memory
# fill). The `tensorboard` package is optional (pip extra "tensorboard").
_BOARD: list = []  # the process's TensorBoardLog, created on first use


def define_tensorboard_flag() -> None:
    flags.DEFINE_string(
        "tensorboard_dir", "",
        "Also write TensorBoard event files here (`tensorboard --logdir=DIR`): every CSV column as a scalar "
        "per solver and iteration, per-iteration training statistics where the program has them (Deep CFR: "
        "advantage losses, nodes touched, iterations per second, memory fill), and the run's settings as "
        "hparams. Needs the tensorboard package: pip install 'openspiel_cfrx[tensorboard]'.",
    )  # fmt: skip


def _check_tensorboard_flag() -> None:
    """--tensorboard_dir: the package importable and the folder writable, before any work."""
    import importlib.util

    if "tensorboard_dir" not in flags.FLAGS or not flags.FLAGS.tensorboard_dir:
        return
    try:
        found = importlib.util.find_spec("tensorboard") is not None
    except ValueError:  # sys.modules["tensorboard"] is None: imports of it are blocked
        found = False
    if not found:
        usage_error("--tensorboard_dir needs the tensorboard package, which is not installed: "
                    "pip install 'openspiel_cfrx[tensorboard]' (or drop --tensorboard_dir)")  # fmt: skip
    check_writable_dir(flags.FLAGS.tensorboard_dir, "--tensorboard_dir")


def tensorboard() -> TensorBoardLog | None:
    """The run's TensorBoard log (None without --tensorboard_dir)."""
    if "tensorboard_dir" not in flags.FLAGS or not flags.FLAGS.tensorboard_dir:
        return None
    if not _BOARD:
        _BOARD.append(TensorBoardLog(flags.FLAGS.tensorboard_dir))
    return _BOARD[0]


def _scalar(value) -> float | None:
    """A CSV cell as a finite float (None: text, empty, bool, nan or inf)."""
    import math

    if isinstance(value, bool) or value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


class TensorBoardLog:
    """TensorBoard event files of one run (`torch.utils.tensorboard.SummaryWriter`)."""

    LABELS = ("solver", "variant", "algorithm", "policy_a")  # the row's series name, where it has one
    STEPS = ("iteration", "steps", "episodes")  # the row's x value, where it has one

    def __init__(self, log_dir: str):
        import atexit

        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(log_dir=log_dir)
        self._logged: set = set()
        self._settings: set = set()
        atexit.register(self.writer.close)

    def settings(self, config: dict) -> None:
        """The run's configuration: as text, and its scalar fields as hparams (once per configuration)."""
        import json

        text = json.dumps(config, indent=1, sort_keys=True, default=str)
        if text in self._settings:
            return
        self._settings.add(text)
        self.writer.add_text("settings", "\n".join("    " + line for line in text.splitlines()))
        flat = {}
        for key, value in _flattened(config):
            flat[key] = value if isinstance(value, (bool, int, float, str)) else str(value)
        self.writer.add_hparams(flat, {}, run_name="hparams")

    def rows(self, rows: list[dict], default_label: str = "run") -> None:
        """Every numeric cell of rows not logged before, as <label>/<column> at the row's step
        (label: the row's solver / variant / algorithm, else `default_label`)."""
        for index, row in enumerate(rows):
            label = next((str(row[k]) for k in self.LABELS if row.get(k) not in (None, "")), default_label)
            step = next((int(_scalar(row[k])) for k in self.STEPS if _scalar(row.get(k)) is not None), index)
            for name, value in row.items():
                number = _scalar(value)
                key = (label, name, step)
                if number is None or name in self.LABELS or name in self.STEPS or key in self._logged:
                    continue
                self._logged.add(key)
                self.writer.add_scalar(f"{label}/{name}", number, step)
        self.writer.flush()

    def scalars(self, prefix: str, step: int, values: dict) -> None:
        """`values` (name -> number; None and non-finite skipped) as <prefix>/<name> at `step`."""
        for name, value in values.items():
            number = _scalar(value)
            if number is not None:
                self.writer.add_scalar(f"{prefix}/{name}", number, step)
        self.writer.flush()


def _flattened(config: dict, prefix: str = ""):
    """(dotted key, value) of a nested configuration."""
    for key, value in config.items():
        if isinstance(value, dict):
            yield from _flattened(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def point_rows(points) -> list[dict]:
    """Curve points (dataclasses, e.g. `eval.CurvePoint`) as CSV rows, floats as `eval.write_csv` writes them."""
    import dataclasses

    def text(value):
        return f"{value:.10g}" if isinstance(value, float) else ("" if value is None else value)

    return [{name: text(value) for name, value in dataclasses.asdict(point).items()} for point in points]


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
    _check_tensorboard_flag()
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
    """File flag --`name`: not a directory, its directory writable and not
    held by another run (checked before any compute, so a long run does not
    end in a failed write or write into another run's folder)."""
    import os

    path = flags.FLAGS[name].value
    if not path:
        return path
    if os.path.isdir(path) or path.endswith(os.sep):
        usage_error(f"--{name}={path} is a directory; give a file path, e.g. {os.path.join(path, name)}")
    check_writable_dir(os.path.dirname(os.path.abspath(path)), name)
    check_folder_not_held(path, name)
    return path


def check_output_dir(name: str = "output_dir") -> str:
    """--`name` is not empty: an empty value would scatter the outputs over
    the current directory (the directory itself is checked by `check_writable_dir`)."""
    path = flags.FLAGS[name].value
    if not path or not path.strip():
        usage_error(f"--{name} is empty; give a directory (. for the current one)")
    return path


def run_program(main, module: str, *, guard: bool = True) -> None:
    """Runs an example's `main` under absl, as a script, as `python -m` or as a
    console script (`cfrx-<name>`). absl's `--help` lists the key flags of the
    module named by `sys.argv[0]`; a console script's `sys.argv[0]` is the
    script, so the program module's key flags (and its docstring, the usage
    text) are registered for it too."""
    program = sys.argv[0]
    if module != "__main__" and module != program:
        for flag in flags.FLAGS.get_key_flags_for_module(module):
            flags.FLAGS.register_key_flag_for_module(program, flag)
        launcher = sys.modules.get("__main__")
        if launcher is not None and not launcher.__doc__:
            launcher.__doc__ = sys.modules[module].__doc__
    app.run(guarded(main) if guard else main, flags_parser=parse_flags)
