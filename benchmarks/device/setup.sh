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
