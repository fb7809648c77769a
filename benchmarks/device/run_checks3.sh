#!/usr/bin/env bash
# Follow-up to run_checks2.sh (issue 20): K = 10,000 traversals cut into a
# multiple of N shares (one per worker, or 2-4 smaller ones taken by whichever
# worker is free).  Usage: bash run_checks3.sh OUTDIR
source "$(dirname "$0")/setup.sh" "$@"
nvidia-smi -L
for ms in 0 150 300; do
  stamp "distributed, K=10000, min_share=$ms"
  workers=1,16; [ "$ms" = 0 ] && workers=1,8,16
  timeout 85 python3 benchmarks/bench_distributed.py --workloads=fhp --workers=$workers --in_process_threads=1 \
      --num_traversals=10000 --iterations=2 --min_share=$ms --projection=64 --output="$out/distributed_k10000_ms$ms.md"
done
stamp done
