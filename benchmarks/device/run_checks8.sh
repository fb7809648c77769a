#!/usr/bin/env bash
# Issue 21, session 24, second call: the trainer's CUDA-graph step (one
# captured step replayed; run_checks7.sh found the GPU step launch-bound),
# side by side with the eager step in one call; then the paper's full-FHP
# iteration and the committed full-FHP settings with it, and CFR-MIX.
# Build the archive first (here): bash benchmarks/device/build_site.sh
# Usage (on the device, repository root): bash benchmarks/device/run_checks8.sh OUTDIR
source "$(dirname "$0")/setup.sh" "$@"
r=/tmp/results; mkdir -p "$r"
pack() { tar -czf "$out/results.tgz" -C "$r" . ; }
nproc; nvidia-smi -L
stamp "GPU tests: resident memory, CUDA-graph fit vs eager fit (MLP, Appendix C; float32, bfloat16)"
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_deep_cfr.py -k "device_resident or cuda_graph" \
    2>&1 | tail -15
stamp "solver's SGD on cuda: eager / CUDA graph / CUDA graph bfloat16"
for variant in "eager --eager" "graph" "graph_bf16 --training-precision=bfloat16"; do
  set -- $variant
  timeout 75 python3 benchmarks/bench_poker_deep_cfr.py --games=flop_holdem,hulh --device=cuda \
      --traversal-backend=poker --traversals=10000 --traversal-batch-size=4096 --sgd-steps=1000 \
      --memory-capacity=2000000 "${@:2}" --out="$r/poker_deep_cfr_$1.md" 2>&1 | grep -E '^\| (flop|hulh)|Warn|Error' | head -4
  pack
done
stamp "one full-FHP iteration at the paper's settings, in-process, learner on cuda (graphs)"
timeout 75 python3 benchmarks/bench_distributed.py --workloads=full_fhp_paper --workers=1 --iterations=1 \
    --device=cuda --projection=16 --output="$r/distributed_paper_graph.md" 2>&1 | grep -E '^\| full|Warn|Error'
pack
stamp "full FHP, the committed 60-minute run's settings, in-process, learner on cuda (graphs)"
timeout 60 python3 benchmarks/bench_distributed.py --workloads=full_fhp --workers=1 --iterations=3 \
    --device=cuda --projection=16 --output="$r/distributed_full_fhp_graph.md" 2>&1 | grep -E '^\| full|Warn|Error'
pack
stamp "CFR-MIX float32 vs bfloat16 on cuda (graphs)"
timeout 70 python3 benchmarks/bench_cfr_mix_precision.py --device=cuda --rounds=1 --iterations=4 \
    --cases=goofspiel4_256x256_b2048 --output="$r/cfr_mix_precision_cuda_graph.md" 2>&1 | tail -3
pack
stamp done
