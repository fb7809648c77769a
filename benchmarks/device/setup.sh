# Sourced by run_checks*.sh on a lent device machine (Python 3.12 with torch and
# numba, no registry access): the output folder, the environment, a timer, and
# Ray + OpenSpiel + small pure-Python dependencies from one archive built here
# beforehand (cp312 wheels unpacked; Ray's jars / dashboard client / rllib /
# data / serve / tune / train / llm removed to fit the 64 MiB transfer limit):
#   .whl/site312.tar.xz  ->  /tmp/site, put on sys.path with a .pth file
set -u
python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' ||
    { echo "setup.sh: for the device machine's python3 3.12 (the archive holds cp312 builds)"; exit 1; }
out=${1:?usage: bash benchmarks/device/run_checksN.sh OUTDIR (from the repository root)}
mkdir -p "$out" /tmp/site
export PYTHONUNBUFFERED=1 RAY_USAGE_STATS_ENABLED=0 PYTHONPATH=.
start=$(date +%s)
stamp() { echo "== $(( $(date +%s) - start )) s: $*"; }
[ -e /tmp/site/ray ] || tar -xJf .whl/site312.tar.xz -C /tmp/site || exit 1
echo /tmp/site > "$(python3 -c 'import site; print(site.getsitepackages()[0])')/zz_openspiel_cfrx_site.pth"
# Issue 20's K = 10,000 runs on 5x2 FHP (bench_distributed.py): `bench TIMEOUT ARGS...`, and the
# in-process row's nodes/s of a file it wrote (for --baseline_rate in later commands): `rate FILE`.
bench() { timeout "$1" python3 benchmarks/bench_distributed.py --workloads=fhp --in_process_threads=1 \
    --num_traversals=10000 --iterations=2 --projection=64 "${@:2}"; }
rate() { python3 -c "import re,sys; print([l.split('|')[6].strip().replace(',','') for l in open(sys.argv[1]) if re.match(r'\| 5x2 FHP \(state\) \| 1 \|', l)][0])" "$1"; }
