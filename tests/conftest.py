"""Fixtures shared by several test files, and the order the files run in.

`make test` runs `pytest -n 2 --dist loadfile --no-loadscope-reorder`: each
file runs whole on one xdist worker (its module fixtures and cached game
trees are built once; test_distributed.py's local Ray instance and
test_ray_cluster.py's two-node cluster on 127.0.0.1 are the suite's Ray
instances: the library starts its local one with address="local", so neither
joins the other), files handed out in collection order, which
`pytest_collection_modifyitems` below starts with the longest ones.
"""

import os
import signal

import pyspiel
import pytest

import games  # noqa: F401  (registers flop_holdem, hulh and the team games)

if os.environ.get("PYTEST_XDIST_WORKER"):
    # Every core already runs a worker: one OpenMP thread per process (torch in the
    # workers and in the examples they start) instead of each sizing itself to the machine.
    os.environ.setdefault("OMP_NUM_THREADS", "1")

# The files that take longest (subprocesses, Ray, solver runs), longest first: started
# first, they cannot be the last file a worker is still running when the other is idle.
LONGEST_FIRST = (
    "test_examples.py",
    "test_cli_sweep.py",
    "test_resume_examples.py",
    "test_cfr_mix.py",
    "test_distributed.py",
    "test_ray_cluster.py",
    "test_sharp_edges_examples.py",
    "test_poker_public_tree.py",
    "test_run_folders.py",
    "test_exact_resume.py",
    "test_docs_snippets.py",
)


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: file order kept


@pytest.fixture(scope="session")
def fhp():
    return pyspiel.load_game("flop_holdem")


@pytest.fixture(scope="session")
def hulh():
    return pyspiel.load_game("hulh")


@pytest.fixture(scope="session", autouse=True)
def ctrl_c_reaches_the_tests():
    """A test run started in the background by a shell without job control
    inherits SIGINT as ignored (POSIX), and so would every example the
    interrupt tests start: Ctrl-C could never reach them. Restore Python's
    handler for the session (a handled signal is reset to the default in
    children at exec, so they get KeyboardInterrupt as a foreground run does)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield


@pytest.fixture(scope="module")
def kuhn():
    return pyspiel.load_game("kuhn_poker")


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium driven by selenium (the explorer's page tests, marker `browser`);
    skipped when /usr/bin/chromium, /usr/bin/chromedriver or selenium is missing."""
    import shutil
    import tempfile

    from explore_browser import CHROMEDRIVER, CHROMIUM

    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.skip(f"headless Chromium is not installed ({CHROMIUM}, {CHROMEDRIVER}: apt-get install chromium "
                    "chromium-driver)")  # fmt: skip
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install "
                                    "'openspiel_cfrx[test]')")  # fmt: skip
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="explore-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1400,1000", f"--user-data-dir={profile}"):  # fmt: skip
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)
