#!/usr/bin/env bash
# Measurements on a lent GPU machine (one NVIDIA H100/H200, 16 cores, python3 3.12
# with torch and numba, no registry access), about 4-6.5 minutes in all:
#   (a) one SGD step of the MLP and Appendix C networks (d = 96, 256; batch 10,000)
#       on cuda and on 16 CPU threads of the same machine, for their ratio;
#   (b) 5x2 FHP traversals (K = 10,000) on 1, 2, 4, 8 and 16 Ray workers.
# Ray, OpenSpiel and the small packages the machine lacks come from one archive
# built here beforehand: cp312 manylinux wheels of ray 2.60.0, open_spiel 2.0.2,
# ml-collections, jsonschema (+ jsonschema-specifications, referencing, rpds-py),
# dm-tree, eval7 and future, unzipped into one folder with Ray's jars, dashboard
# client and libraries (rllib, data, serve, tune, train, llm) removed, tar -cJf:
#   .whl/site312.tar.xz  ->  $SITE_DIR (default /tmp/site; the machine starts bare),
#   put on sys.path with a .pth file in python3's site-packages.
# Usage (device, repository root, `.whl` carried): bash benchmarks/device.sh
# Files under $OUT: device.log, poker_network_step_{cuda,cpu16}.md, distributed_16core.md.
set -u
: "${OUT:?OUT: the folder whose files come back (set on the device machine)}"
site_dir=${SITE_DIR:-/tmp/site}
mkdir -p "$OUT" "$site_dir"
exec > >(tee "$OUT/device.log") 2>&1
tee_pid=$!
start=$(date +%s)
stamp() { echo "== $(( $(date +%s) - start )) s: $*  (load $(cut -d' ' -f1-3 /proc/loadavg))"; }
finish() { stamp "${1:-done}"; exec >&- 2>&-; wait "$tee_pid" 2>/dev/null; exit "${2:-0}"; }

python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' ||
    finish "python3 is not 3.12: the archive holds cp312 builds" 1
[ -f .whl/site312.tar.xz ] || finish ".whl/site312.tar.xz missing: carry .whl" 1
[ -e "$site_dir/ray" ] || tar -xJf .whl/site312.tar.xz -C "$site_dir" || finish "unpacking failed" 1
echo "$site_dir" > "$(python3 -c 'import site; print(site.getsitepackages()[0])')/zz_openspiel_cfrx_site.pth"
export PYTHONUNBUFFERED=1 RAY_USAGE_STATS_ENABLED=0 PYTHONPATH=.
stamp "archive unpacked into $site_dir"

nvidia-smi -L
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
echo "nproc $(nproc); $(grep -m1 'model name' /proc/cpuinfo); $(free -g | awk '/^Mem/ {print $2 " GiB memory"}'); $(uname -r)"
python3 -c 'import sys, numpy, torch, ray, pyspiel, open_spiel, numba
print("python", sys.version.split()[0], "| torch", torch.__version__, "cuda", torch.cuda.is_available(),
      "| numpy", numpy.__version__, "| numba", numba.__version__, "| ray", ray.__version__,
      "| open_spiel", getattr(open_spiel, "__version__", "?"), pyspiel.__file__)' ||
    finish "imports failed" 1
git log -1 --format='commit %h %s' 2>/dev/null | cut -c1-120

stamp "(a) network step on cuda"
timeout -k 5 90 python3 benchmarks/bench_poker_network_step.py --device=cuda --steps=50 --repeats=2 \
    --output="$OUT/poker_network_step_cuda.md"
echo "rc $?"

stamp "(a) network step on 16 CPU threads"
timeout -k 5 70 python3 benchmarks/bench_poker_network_step.py --threads=16 --steps=5 --repeats=2 \
    --output="$OUT/poker_network_step_cpu16.md"
echo "rc $?"

stamp "(b) 5x2 FHP, K = 10,000, Ray workers 1..16 (rows are printed as each ends)"
timeout -k 10 210 python3 benchmarks/bench_distributed.py --workloads=fhp --in_process_threads=1 \
    --num_traversals=10000 --iterations=2 --workers=1,2,4,8,16 --projection=64 \
    --output="$OUT/distributed_16core.md"
echo "rc $?"

ls -la "$OUT"
finish
