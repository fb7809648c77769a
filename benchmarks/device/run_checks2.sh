#!/usr/bin/env bash
# Follow-up to run_checks.sh on the same kind of device machine (issue 20):
# what 16 logical CPUs give N busy processes without Ray, and where a 16-worker
# iteration's time goes (slowest vs mean worker).  Usage: bash run_checks2.sh OUTDIR
source "$(dirname "$0")/setup.sh" "$@"
lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket|MHz|NUMA|L3' | tee "$out/lscpu.txt"
stamp contention
timeout 150 python3 benchmarks/bench_worker_contention.py --processes=1,4,8,16 --num_traversals=625 --rounds=3 \
    --output="$out/worker_contention.md"
stamp distributed, K=10000
timeout 200 python3 benchmarks/bench_distributed.py --workloads=fhp --workers=1,8,16 --in_process_threads=1 \
    --num_traversals=10000 --iterations=2 --projection=64 --output="$out/distributed_k10000_b.md"
stamp done
