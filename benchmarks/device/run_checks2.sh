#!/usr/bin/env bash
# Follow-up to run_checks.sh on the same kind of device machine (issue 20):
# what 16 logical CPUs give N busy processes without Ray, and where a 16-worker
# iteration's time goes (slowest vs mean worker).  Usage: bash run_checks2.sh OUTDIR
set -u
out=${1:?usage: run_checks2.sh OUTDIR}
mkdir -p "$out" /tmp/site
export PYTHONUNBUFFERED=1 RAY_USAGE_STATS_ENABLED=0 PYTHONPATH=.
start=$(date +%s)
stamp() { echo "== $(( $(date +%s) - start )) s: $*"; }
[ -e /tmp/site/ray ] || tar -xJf .whl/site312.tar.xz -C /tmp/site || exit 1
echo /tmp/site > "$(python3 -c 'import site; print(site.getsitepackages()[0])')/zz_openspiel_cfrx_site.pth"
lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket|MHz|NUMA|L3' | tee "$out/lscpu.txt"
stamp contention
timeout 150 python3 benchmarks/bench_worker_contention.py --processes=1,4,8,16 --num_traversals=625 --rounds=3 \
    --output="$out/worker_contention.md"
stamp distributed, K=10000
timeout 200 python3 benchmarks/bench_distributed.py --workloads=fhp --workers=1,8,16 --in_process_threads=1 \
    --num_traversals=10000 --iterations=2 --projection=64 --output="$out/distributed_k10000_b.md"
stamp done
