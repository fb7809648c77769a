#!/usr/bin/env bash
# Issue 20, session 17, second call: repeats of 16 workers at K = 10,000 with
# Ray's default worker niceness (15) and with RAY_worker_niceness=0, one equal
# share each at niceness 0, and the machine's ceiling (1, 2, 16 plain
# processes), all against one in-process baseline. Usage: bash run_checks5.sh OUTDIR
source "$(dirname "$0")/setup.sh" "$@"
nvidia-smi -L; nproc
stamp "1 and 16 workers (factoring, niceness 15)"
bench 150 --workers=1,16 --output="$out/a_k10000_nice15.md"
base=$(rate "$out/a_k10000_nice15.md" 2>/dev/null || echo 0); echo "baseline nodes/s: $base"
stamp "16 workers, niceness 0"
RAY_worker_niceness=0 bench 50 --workers=16 --baseline_rate="$base" --output="$out/b_k10000_nice0.md"
stamp "16 workers, niceness 15 again"
bench 50 --workers=16 --baseline_rate="$base" --output="$out/c_k10000_nice15.md"
stamp "16 workers, niceness 0 again"
RAY_worker_niceness=0 bench 50 --workers=16 --baseline_rate="$base" --output="$out/d_k10000_nice0.md"
stamp "16 workers, niceness 0, one equal share each"
RAY_worker_niceness=0 bench 50 --workers=16 --min_share=100000 --baseline_rate="$base" --output="$out/e_k10000_nice0_equal.md"
stamp "ceiling: 1, 2, 16 plain processes"
timeout 90 python3 benchmarks/bench_worker_contention.py --processes=1,2,16 --num_traversals=625 --rounds=3 \
    --output="$out/f_worker_contention.md"
stamp done
