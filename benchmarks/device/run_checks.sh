#!/usr/bin/env bash
# The GPU / 16-core measurements of issues 20 and 21, as one short script for a
# lent device machine (Python 3.12 with torch and numba, no registry access).
# Ray and OpenSpiel travel as one archive (setup.sh).
# Usage (on the device, repository root): bash benchmarks/device/run_checks.sh OUTDIR
source "$(dirname "$0")/setup.sh" "$@"
python3 -c 'import ray, pyspiel, numba, numpy, torch; print("ray", ray.__version__, "numba", numba.__version__, "numpy", numpy.__version__, "torch", torch.__version__, torch.cuda.get_device_name())' || exit 1
nproc; uptime; nvidia-smi -L
stamp distributed, K=1500
timeout 200 python3 benchmarks/bench_distributed.py --workloads=fhp --workers=1,2,4,8,16 --in_process_threads=0,1 \
    --iterations=3 --projection=32,64 --output="$out/distributed_k1500.md"
stamp network step, cuda
timeout 90 python3 benchmarks/bench_poker_network_step.py --device=cuda --dims=96,256 --steps=50 --repeats=1 \
    --output="$out/network_step_cuda.md"
stamp distributed, K=10000
timeout 120 python3 benchmarks/bench_distributed.py --workloads=fhp --workers=1,16 --in_process_threads=1 \
    --num_traversals=10000 --iterations=2 --projection=64 --output="$out/distributed_k10000.md"
stamp Deep CFR solver on cuda
timeout 90 python3 benchmarks/bench_poker_deep_cfr.py --games=flop_holdem,hulh --traversals=200 \
    --traversal-batch-size=200 --sgd-steps=50 --device=cuda --out="$out/poker_deep_cfr_cuda.md"
stamp network step, 16 CPU threads
timeout 60 python3 benchmarks/bench_poker_network_step.py --threads=16 --dims=96,256 --steps=3 --repeats=1 \
    --output="$out/network_step_cpu16.md"
stamp done
