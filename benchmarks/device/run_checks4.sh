#!/usr/bin/env bash
# Issue 20, session 17: 5x2 FHP at K = 10,000 with the GC pause in the state
# backend and shares by factoring. First the in-process baseline and 16
# workers; then 16 workers with one equal share each, 16 workers at Ray worker
# niceness 0, the machine's ceiling (16 plain processes), and 2 / 4 / 8 workers.
# Usage: bash run_checks4.sh OUTDIR
source "$(dirname "$0")/setup.sh" "$@"
nvidia-smi -L; nproc
stamp "1 and 16 workers (factoring)"
bench 150 --workers=1,16 --output="$out/k10000_factoring.md"
base=$(rate "$out/k10000_factoring.md" 2>/dev/null || echo 0); echo "baseline nodes/s: $base"
stamp "16 workers, one equal share each"
bench 60 --workers=16 --min_share=100000 --baseline_rate="$base" --output="$out/k10000_equal.md"
stamp "16 workers, factoring, RAY_worker_niceness=0"
RAY_worker_niceness=0 bench 60 --workers=16 --baseline_rate="$base" --output="$out/k10000_factoring_nice0.md"
stamp "ceiling: 16 plain processes"
timeout 80 python3 benchmarks/bench_worker_contention.py --processes=1,16 --num_traversals=625 --rounds=3 \
    --output="$out/worker_contention.md"
stamp "2, 4, 8 workers (factoring)"
bench 150 --workers=2,4,8 --baseline_rate="$base" --output="$out/k10000_factoring_2_4_8.md"
stamp done
