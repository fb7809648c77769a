"""Runs `python cfrx_examples/<name>.py ...` many times without paying the start-up
each time: a warm process imports the heavy modules once (torch, pyspiel,
matplotlib, the library) and forks one child per run, which executes the
script as `__main__` with its own argv, working directory, environment and
stdout/stderr files, and exits with the script's status (a traceback and
status 1 for an uncaught exception, as the interpreter). A run that outlives
its timeout is killed with its process group and reported as hung.

A child starts in ~0.1 s instead of the 3-4 s of a fresh interpreter, which
is most of a careless-input case. What it cannot see is a module the script
forgets to import that the warm process already holds: tests/test_examples.py
and the other example tests run fresh interpreters.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRELOAD = ("numpy", "torch", "pyspiel", "matplotlib", "matplotlib.pyplot", "absl.app", "absl.flags", "openspiel_cfrx",
           "openspiel_cfrx.deep", "openspiel_cfrx.poker", "games", "open_spiel.python.policy",
           "open_spiel.python.algorithms.exploitability")  # fmt: skip

_SERVER = r'''
import atexit, importlib, json, os, runpy, signal, sys, time, traceback
for name in json.loads(sys.argv[1]):
    importlib.import_module(name)
base_path = list(sys.path)

def child(job):
    os.setpgid(0, 0)
    os.chdir(job["cwd"])
    os.environ.clear()
    os.environ.update(job["env"])
    for fd, path in ((1, job["out"]), (2, job["err"])):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(target, fd)
        os.close(target)
    sys.stdin = open(os.devnull)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.argv = [job["script"], *job["args"]]
    sys.path[:] = [os.path.dirname(job["script"])] + base_path
    code = 0
    try:
        runpy.run_path(job["script"], run_name="__main__")
    except SystemExit as e:
        if e.code is None:
            code = 0
        elif isinstance(e.code, int):
            code = e.code
        else:
            print(e.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code & 0xFF)

for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        child(job)
    deadline, hung = time.monotonic() + job["timeout"], False
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            hung = True
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            status = -signal.SIGKILL
            break
        time.sleep(0.01)
    rc = os.waitstatus_to_exitcode(status) if status >= 0 else status
    sys.stdout.write(json.dumps({"rc": rc, "hung": hung}) + "\n")
    sys.stdout.flush()
'''

_server: subprocess.Popen | None = None


def _start() -> subprocess.Popen:
    global _server
    if _server is None or _server.poll() is not None:
        env = {**os.environ, "PYTHONPATH": ROOT, "MPLBACKEND": "Agg"}
        _server = subprocess.Popen([sys.executable, "-c", _SERVER, json.dumps(PRELOAD)], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env)  # fmt: skip
        atexit.register(_server.kill)
    return _server


def run_script(script: str, args: list[str], cwd: str, env: dict, timeout: float) -> tuple[int, str, str, bool]:
    """(exit status, stdout, stderr, hung) of `python script *args` in `cwd` with `env`."""
    server = _start()
    with tempfile.TemporaryDirectory() as tmp:
        out, err = os.path.join(tmp, "stdout"), os.path.join(tmp, "stderr")
        job = dict(script=str(script), args=[str(a) for a in args], cwd=str(cwd), env={str(k): str(v) for k, v in env.items()},
                   timeout=float(timeout), out=out, err=err)  # fmt: skip
        server.stdin.write(json.dumps(job) + "\n")
        server.stdin.flush()
        reply = server.stdout.readline()
        if not reply:
            raise RuntimeError("the example runner's warm process died; rerun the test")
        result = json.loads(reply)
        texts = []
        for path in (out, err):
            with open(path, encoding="utf-8", errors="replace") as f:
                texts.append(f.read())
    return result["rc"], texts[0], texts[1], result["hung"]


def run(command: list[str], cwd: str, timeout: float = 600, env: dict | None = None) -> subprocess.CompletedProcess:
    """`subprocess.run(command, capture_output=True, text=True, ...)` for a
    command `[sys.executable, script, *args]`, through the warm process."""
    assert command[0] == sys.executable, command
    env = {**os.environ, "PYTHONPATH": ROOT} if env is None else env
    rc, stdout, stderr, hung = run_script(command[1], command[2:], cwd=str(cwd), env=env, timeout=timeout)
    if hung:
        raise subprocess.TimeoutExpired(command, timeout, stdout, stderr)
    return subprocess.CompletedProcess(command, rc, stdout, stderr)
