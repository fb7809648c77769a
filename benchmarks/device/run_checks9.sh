#!/usr/bin/env bash
# Issue 21, session 24, third call (short: what device time was left): the
# GPU tests again after two mends (the step's loss no longer holds its
# autograd graph: the stream-mismatch warning of run_checks8.sh; CFR-MIX's
# array batches gathered on the device), and CFR-MIX eager vs CUDA graph.
# Usage (on the device, repository root): bash benchmarks/device/run_checks9.sh OUTDIR
source "$(dirname "$0")/setup.sh" "$@"
r=/tmp/results; mkdir -p "$r"
pack() { tar -czf "$out/results.tgz" -C "$r" . ; }
nvidia-smi -L
stamp "GPU tests"
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_deep_cfr.py -k "device_resident or cuda_graph" 2>&1 | tail -4
for variant in "eager --eager" "graph"; do
  set -- $variant
  stamp "CFR-MIX on cuda, $1"
  timeout 50 python3 benchmarks/bench_cfr_mix_precision.py --device=cuda --rounds=1 --iterations=4 \
      --cases=goofspiel4_256x256_b2048 "${@:2}" --output="$r/cfr_mix_cuda_$1.md" 2>&1 | tail -2
  pack
done
stamp done
