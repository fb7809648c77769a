#!/usr/bin/env bash
# Non-editable install check: builds a wheel from this checkout, installs it
# (pinned by constraints.txt) into a fresh virtual environment in a temporary
# directory and, from outside the checkout, with the checkout off sys.path:
#   * imports openspiel_cfrx and games from site-packages,
#   * checks that `import games` does not load torch,
#   * checks the packaged Libratus endgame data (all four subgames load),
#   * runs every example program as a console script (`cfrx-<name> --helpfull`)
#     and as a module (`python -m cfrx_examples.<name> --helpfull`),
#   * runs every other program once at a tiny budget as a console script,
#   * runs cfrx-oftrl-endgames on subgame 4 for 10 iterations,
#   * runs a small Kuhn poker Deep CFR, as a console script and with python -m.
# The examples are part of the package (cfrx_examples/).
#
#   .ci/wheel_check.sh            # PYTHON=python3.12 .ci/wheel_check.sh for another interpreter
#   KEEP=1 .ci/wheel_check.sh     # keep the temporary directory for inspection
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-python3}"                       # creates the fresh venv
BUILD_PYTHON="${BUILD_PYTHON:-$ROOT/.venv/bin/python}"  # builds the wheel (has setuptools)
[ -x "$BUILD_PYTHON" ] || BUILD_PYTHON="$PYTHON"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/wheel_check.XXXXXX")"
START=$SECONDS
if [ -z "${KEEP:-}" ]; then trap 'rm -rf "$TMP"' EXIT; fi
unset PYTHONPATH PYTHONHOME PYTHONSTARTUP

step() { printf '\n==> [%4ss] %s\n' "$((SECONDS - START))" "$*"; }
fail() { echo "wheel_check: FAILED: $*" >&2; exit 1; }

step "temporary directory $TMP"

# 1. Wheel, built from a copy of the working tree's files (tracked and untracked,
#    not ignored), so stale build/ output or ignored files cannot leak into it.
step "building the wheel from $ROOT"
mkdir -p "$TMP/src" "$TMP/dist"
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard \
        | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
        | xargs -0 cp --parents -t "$TMP/src")
else
    (cd "$ROOT" && tar --exclude=./.venv --exclude=./build --exclude='*.egg-info' -cf - .) | tar -xf - -C "$TMP/src"
fi
isolation=()
"$BUILD_PYTHON" -c "import setuptools" 2>/dev/null && isolation=(--no-build-isolation)
(cd "$TMP/src" && "$BUILD_PYTHON" -m pip wheel --quiet --no-deps "${isolation[@]}" -w "$TMP/dist" .)
WHEEL="$(ls "$TMP"/dist/openspiel_cfrx-*.whl)"
echo "built $(basename "$WHEEL")"
"$BUILD_PYTHON" - "$WHEEL" <<'EOF'
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
data = [f"games/data/libratus_endgames/{n}" for n in
        ("README.md", "SOURCE.md", "subgame1.txt", "subgame2.txt", "subgame3.txt", "subgame4.txt")]
programs = [f"cfrx_examples/{n}.py" for n in ("_common", "contenders", "deep_cfr", "cfr_mix", "oftrl_cfr")]
missing = [n for n in data + programs + ["openspiel_cfrx/__init__.py", "games/__init__.py"] if n not in names]
if missing:
    sys.exit(f"the wheel lacks {missing}")
if not any(n.endswith(".dist-info/licenses/LICENSE") or n.endswith(".dist-info/LICENSE") for n in names):
    sys.exit("the wheel carries no LICENSE")
tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
if tops != {"openspiel_cfrx", "games", "cfrx_examples"}:
    sys.exit(f"the wheel's top-level entries are {sorted(tops)}, not openspiel_cfrx, games and cfrx_examples")
scripts = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
entry = zipfile.ZipFile(sys.argv[1]).read(scripts[0]).decode() if scripts else ""
if "cfrx-deep-cfr = cfrx_examples.deep_cfr:run" not in entry:
    sys.exit(f"the wheel declares no console script cfrx-deep-cfr:\n{entry}")
print(f"wheel holds {len(names)} files: the packaged endgame data, the example programs, their "
      f"{entry.count('cfrx-')} console scripts and LICENSE; no tests or benchmarks")
EOF

# 2. Fresh venv + the wheel, pinned.
step "fresh venv ($("$PYTHON" --version)) and pip install of the wheel with -c constraints.txt"
"$PYTHON" -m venv "$TMP/venv"
VPY="$TMP/venv/bin/python"
# --no-compile: no up-front byte-compiling of torch & co. (most of an install's time); the log is shown on failure.
"$VPY" -m pip install --disable-pip-version-check --no-compile -c "$ROOT/constraints.txt" "$WHEEL" \
    > "$TMP/pip_install.log" 2>&1 || { tail -40 "$TMP/pip_install.log" >&2; fail "pip install of the wheel"; }
grep '^Successfully installed' "$TMP/pip_install.log" | fold -s -w 120
"$VPY" -m pip check

# 3. Everything below runs from $TMP, outside the checkout.
cd "$TMP"
[ ! -e "$TMP/openspiel_cfrx" ] && [ ! -e "$TMP/games" ] || fail "$TMP must not hold the packages"

step "import openspiel_cfrx, games from site-packages; checkout not on sys.path"
CHECKOUT="$ROOT" "$VPY" - <<'EOF'
import os, sys, sysconfig
checkout = os.path.realpath(os.environ["CHECKOUT"])
on_path = [p for p in sys.path if p and os.path.realpath(p).startswith(checkout)]
assert not on_path, f"the checkout is on sys.path: {on_path}"
import openspiel_cfrx, games
site = os.path.realpath(sysconfig.get_paths()["purelib"])
for module in (openspiel_cfrx, games):
    where = os.path.realpath(module.__file__)
    assert where.startswith(site + os.sep), f"{module.__name__} imported from {where}, not {site}"
    print(f"{module.__name__} {getattr(module, '__version__', '')} from {where}")
from importlib.metadata import version
installed = version("openspiel_cfrx")
assert openspiel_cfrx.__version__ == installed, f"openspiel_cfrx.__version__ {openspiel_cfrx.__version__} != wheel {installed}"
print("installed distribution openspiel_cfrx", installed, "= openspiel_cfrx.__version__")
EOF

step "import games does not load torch"
"$VPY" -c "
import sys
import games
assert 'torch' not in sys.modules, 'import games loaded torch'
print('torch not in sys.modules after import games')
"

step "packaged Libratus endgame data: subgames 1-4 load; hunl_endgame loads in pyspiel"
"$VPY" - <<'EOF'
import os, sysconfig
import pyspiel
import games
from games.libratus_endgames import DATA, load_endgame
site = os.path.realpath(sysconfig.get_paths()["purelib"])
assert os.path.realpath(str(DATA)).startswith(site + os.sep), DATA
for number in (1, 2, 3, 4):
    endgame = load_endgame(number)
    assert endgame.reach.shape == (2, 1326), endgame.reach.shape
    print(f"subgame {number}: round {endgame.round}, pot {endgame.pot}, {(endgame.reach > 0).sum()} hands in range")
game = pyspiel.load_game("hunl_endgame(subgame=4,max_hands=12)")
print("pyspiel.load_game('hunl_endgame(subgame=4,max_hands=12)'):", game.num_distinct_actions(), "actions")
EOF

step "every example program's --helpfull, as a console script and with python -m"
BIN="$TMP/venv/bin"
for name in $("$VPY" -c "
import importlib.metadata as m
print(' '.join(sorted(e.value.split(':')[0].rpartition('.')[2] for e in m.entry_points(group='console_scripts')
                      if e.value.startswith('cfrx_examples.'))))"); do
    script="cfrx-${name//_/-}"
    for how in script module; do
        out="$TMP/helpfull_${name}_$how"
        rc=0
        if [ "$how" = script ]; then
            "$BIN/$script" --helpfull > "$out.txt" 2> "$out.err" || rc=$?
        else
            "$VPY" -m "cfrx_examples.$name" --helpfull > "$out.txt" 2> "$out.err" || rc=$?
        fi
        # absl exits 1 after printing --helpfull; anything else (an import error: 1 with a traceback) fails.
        if [ "$rc" -gt 1 ] || grep -q Traceback "$out.err" || ! grep -q "^  --output_dir\|^  --game\|^  --subgames" "$out.txt"; then
            cat "$out.err" >&2
            fail "$how $name --helpfull (exit $rc) did not list its flags"
        fi
    done
    echo "$script and python -m cfrx_examples.$name: --helpfull lists $(grep -c '^  --' "$out.txt") flags"
done

step "one short run of every other program, as a console script, from $TMP"
tiny="flop_holdem(num_ranks=4,num_suits=2,max_raises=1 1)"
declare -A short=(
    [benchmark]="--game=kuhn_poker --seconds=0.5 --algorithms=cfr+ --eval_points=2 --iterations=3"
    [card_abstraction]="--game=$tiny --buckets=,5 --output=$TMP/out/card_abstraction/tiny.npz"
    [cfr_mix]="--iterations=1 --traversals=4 --train_steps=2 --hidden=8 --seconds=3 --variants=cfr_mix --eval_every=1 --particles=5 --eval_games=20"
    [head_to_head]="--game=kuhn_poker --deals=4 --policies=call,raise"
    [oftrl_cfr]="--game=kuhn_poker --iterations=4 --solvers=cfr,oftrl --stepsize_scales=1"
    [openspiel_swap]="--iterations=2 --episodes=2 --impl=cfrx"
    [poker_vector_cfr]="--game=$tiny --iterations=3"
)
mkdir -p "$TMP/out/card_abstraction"
for name in benchmark card_abstraction cfr_mix head_to_head oftrl_cfr openspiel_swap poker_vector_cfr; do
    read -r -a args <<< "${short[$name]}"
    [ "$name" = card_abstraction ] || args+=("--output_dir=$TMP/out/$name")
    if [ "$name" = card_abstraction ] || [ "$name" = poker_vector_cfr ]; then  # the game string has a space
        args=("--game=$tiny" "${args[@]:2}")
    fi
    "$BIN/cfrx-${name//_/-}" "${args[@]}" > "$TMP/run_$name.log" 2>&1 \
        || { tail -20 "$TMP/run_$name.log" >&2; fail "cfrx-${name//_/-} ${short[$name]}"; }
    echo "cfrx-${name//_/-}: ran ($(ls "$TMP/out/$name" | tr '\n' ' '))"
done
mkdir -p "$TMP/out/explore"  # the explorer writes one page (no --output_dir)
"$BIN/cfrx-explore" "--game=$tiny" --policy=uniform --output="$TMP/out/explore/page.html" > "$TMP/run_explore.log" 2>&1 \
    || { tail -20 "$TMP/run_explore.log" >&2; fail "cfrx-explore --game=$tiny --policy=uniform"; }
[ -s "$TMP/out/explore/page.html" ] || fail "cfrx-explore wrote no page"
echo "cfrx-explore: ran (page.html)"

step "cfrx-oftrl-endgames on subgame 4, 10 iterations (packaged data)"
"$BIN/cfrx-oftrl-endgames" --subgames=4 --iterations=10 --evaluations=3 \
    --update_modes=simultaneous --tuned_scales=10 --threads=2 --output_dir="$TMP/out/oftrl_endgames"
for f in curves.csv runs.csv summary.md subgame4_simultaneous.png; do
    [ -s "$TMP/out/oftrl_endgames/$f" ] || fail "oftrl_endgames wrote no $f"
done
echo "oftrl_endgames wrote: $(ls "$TMP/out/oftrl_endgames" | tr '\n' ' ')"

step "Deep CFR on kuhn_poker, small settings: cfrx-deep-cfr and python -m cfrx_examples.deep_cfr"
small=(--game=kuhn_poker --iterations=4 --traversals=100 --advantage_steps=20 --policy_steps=50 --layers=16,16 --eval_every=2)
"$BIN/cfrx-deep-cfr" "${small[@]}" --output_dir="$TMP/out/deep_cfr"
[ -s "$TMP/out/deep_cfr/curve.csv" ] || fail "cfrx-deep-cfr wrote no curve.csv"
"$VPY" -m cfrx_examples.deep_cfr "${small[@]}" --output_dir="$TMP/out/deep_cfr_module"
[ -s "$TMP/out/deep_cfr_module/curve.csv" ] || fail "python -m cfrx_examples.deep_cfr wrote no curve.csv"
echo "deep_cfr wrote: $(ls "$TMP/out/deep_cfr" | tr '\n' ' ')"
"$VPY" -c "import torch; print('torch', torch.__version__, 'in the fresh venv')"

step "wheel check passed in $((SECONDS - START)) s"
