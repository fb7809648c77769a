#!/usr/bin/env bash
# Issue 21, session 28: the 5x2 FHP floor at equal iterations, eight Deep CFR
# runs side by side on the lent machine (advantage SGD on the GPU, traversals
# and exact NashConv on its CPU cores): regrets in pots (session 27) with the
# 128x128 / 2M-memory network and with more capacity (256x256, 8M memories),
# on three seeds, to see which settings keep falling past 240 iterations.
# Same protocol as benchmarks/results/fhp_plateau.md (diag_fhp_floor.py run
# --exact_average); equal iterations, so the runs' seconds do not compare.
# Usage (on the device, repository root): bash benchmarks/device/run_checks10.sh OUTDIR
source "$(dirname "$0")/setup.sh" "$@"
r=/tmp/results; mkdir -p "$r"
pack() { tar -czf "$out/results.tgz" -C "$r" . ; }
nvidia-smi -L; nproc
base='"policy_network_layers": [128, 128], "policy_network_train_steps": 4000, "num_traversals": 5000, "advantage_network_train_steps": 150, "memory_feature_dtype": "float16", "reinitialize_advantage_networks": 0.05, "training_precision": "bfloat16", "regret_scale": "pot", "device": "cuda"'
diag() { python3 benchmarks/diag_fhp_floor.py run --exact_average "$@"; }
stamp "smoke: 2 iterations of 200 traversals on cuda"
timeout 150 python3 benchmarks/diag_fhp_floor.py run --exact_average --iterations=2 --at=2 \
    --deep_cfr="{$base, \"num_traversals\": 200, \"policy_network_train_steps\": 50}" > "$r/smoke.log" 2>&1
rc=$?; tail -5 "$r/smoke.log"; pack; [ $rc = 0 ] || { stamp "smoke failed ($rc)"; exit 1; }
w256='"advantage_network_layers": [256, 256]'; m8='"memory_capacity": 8000000, "strategy_memory_capacity": 2000000'
runs=(
  "a128_2m_s0|0|{$base}"
  "a128_2m_s1|1|{$base}"
  "a128_8m_s0|0|{$base, $m8}"
  "a256_8m_s0|0|{$base, $w256, $m8}"
  "a256_8m_s1|1|{$base, $w256, $m8}"
  "a256_8m_s2|2|{$base, $w256, $m8}"
  "a256_2m_s0|0|{$base, $w256}"
  "a256_8m_300steps_s0|0|{$base, $w256, $m8, \"advantage_network_train_steps\": 300}"
)
stamp "sweep: ${#runs[@]} runs in parallel"
for spec in "${runs[@]}"; do
  IFS='|' read -r name seed json <<< "$spec"
  echo "$name: seed $seed $json" > "$r/$name.log"
  timeout "${SWEEP_SECONDS:-420}" python3 benchmarks/diag_fhp_floor.py run --exact_average --seed="$seed" \
      --iterations=420 --at=57,123,240,313,420 --deep_cfr="$json" >> "$r/$name.log" 2>&1 &
done
while [ -n "$(jobs -r)" ]; do sleep 30; pack; stamp "$(grep -h '^iteration' "$r"/a*.log | wc -l) checkpoints so far"; done
pack
for f in "$r"/a*.log; do echo "== $(basename "$f")"; grep -h "^iteration" "$f" | sed 's/ (earlier evaluations included)//; s/advantage losses/losses/'; tail -1 "$f" | grep -v "^iteration" | cut -c1-200; done
stamp done
