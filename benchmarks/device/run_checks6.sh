#!/usr/bin/env bash
# Issue 20, session 17, third call: the sampler's new defaults (factoring,
# 2 shares queued per worker, workers at niceness 0 on a local instance) with
# 16 workers at K = 10,000, three times, against one in-process baseline; and
# the same with 1 share queued, and with one equal share per worker.
# Usage: bash run_checks6.sh OUTDIR
source "$(dirname "$0")/setup.sh" "$@"
nvidia-smi -L; nproc
stamp "1 and 16 workers (defaults)"
bench 150 --workers=1,16 --output="$out/a_defaults.md"
base=$(rate "$out/a_defaults.md" 2>/dev/null || echo 0); echo "baseline nodes/s: $base"
stamp "16 workers, 1 share queued"
bench 50 --workers=16 --queued=1 --baseline_rate="$base" --output="$out/b_queued1.md"
stamp "16 workers, defaults again"
bench 50 --workers=16 --baseline_rate="$base" --output="$out/c_defaults.md"
stamp "16 workers, one equal share each"
bench 50 --workers=16 --min_share=100000 --baseline_rate="$base" --output="$out/d_equal.md"
stamp "16 workers, defaults a third time"
bench 50 --workers=16 --baseline_rate="$base" --output="$out/e_defaults.md"
stamp done
