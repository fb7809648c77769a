#!/usr/bin/env bash
# Issue 21, session 24: the networks' training on the GPU with the current code
# (device-resident memories vs the host-sampled minibatches before; bfloat16),
# one Deep CFR iteration of full FHP at the paper's settings (poker traversal
# backend, 1 and 16 workers, learner on the GPU), the committed full-FHP run's
# settings on this machine, and CFR-MIX's bfloat16 option on the GPU.
# Build the archive first (here): bash benchmarks/device/build_site.sh
# Usage (on the device, repository root): bash benchmarks/device/run_checks7.sh OUTDIR
source "$(dirname "$0")/setup.sh" "$@"
r=/tmp/results; mkdir -p "$r"
pack() { tar -czf "$out/results.tgz" -C "$r" . ; }
python3 -c 'import ray, pyspiel, numba, numpy, torch; print("ray", ray.__version__, "numba", numba.__version__, "numpy", numpy.__version__, "torch", torch.__version__, torch.cuda.get_device_name())' || exit 1
nproc; uptime; nvidia-smi -L
stamp "device-resident memory batches test"
timeout 90 python3 -m pytest -q -p no:cacheprovider tests/test_deep_cfr.py -k device_resident 2>&1 | tail -3
stamp "solver's SGD on cuda: host batches / resident / resident bfloat16"
for variant in "host --host-batches" "resident" "resident_bf16 --training-precision=bfloat16"; do
  set -- $variant
  timeout 100 python3 benchmarks/bench_poker_deep_cfr.py --games=flop_holdem,hulh --device=cuda \
      --traversal-backend=poker --traversals=10000 --traversal-batch-size=4096 --sgd-steps=300 \
      --memory-capacity=2000000 "${@:2}" --out="$r/poker_deep_cfr_$1.md" | grep -E '^\| (flop|hulh)' | head -2
  pack
done
stamp "one full-FHP iteration at the paper's settings, 1 and 16 workers, learner on cuda"
timeout 240 python3 benchmarks/bench_distributed.py --workloads=full_fhp_paper --workers=1,16 --iterations=1 \
    --device=cuda --projection=64 --output="$r/distributed_paper.md" | tail -4
pack
stamp "network step alone (as session 15)"
timeout 45 python3 benchmarks/bench_poker_network_step.py --device=cuda --dims=96,256 --steps=50 --repeats=1 \
    --output="$r/network_step_cuda.md" | tail -4
pack
stamp "full FHP, the committed 60-minute run's settings, 1 and 16 workers, learner on cuda"
timeout 90 python3 benchmarks/bench_distributed.py --workloads=full_fhp --workers=1,16 --iterations=3 \
    --device=cuda --projection=64 --output="$r/distributed_full_fhp.md" | tail -4
pack
stamp "CFR-MIX float32 vs bfloat16 on cuda"
timeout 75 python3 benchmarks/bench_cfr_mix_precision.py --device=cuda --rounds=1 --iterations=4 \
    --cases=goofspiel4_256x256_b2048 --output="$r/cfr_mix_precision_cuda.md" | tail -4
pack
stamp done
