#!/usr/bin/env bash
# Builds .whl/site312.tar.xz, the archive setup.sh unpacks on a lent device
# machine (Python 3.12 with torch and numba, no registry access): Ray,
# OpenSpiel and the small packages the device image lacks, as cp312 wheels
# unpacked into one folder, with the parts of Ray this project never imports
# removed so the archive fits the device's 64 MiB transfer limit.
# Usage (here, repository root, registry reachable): bash benchmarks/device/build_site.sh
set -euo pipefail
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo /.whl/ >> .git/info/exclude
pin() { grep -i "^$1==" constraints.txt | head -1; }
pkgs=(ray open_spiel ml-collections jsonschema jsonschema-specifications referencing rpds-py eval7 dm-tree)
mkdir -p .whl/dl
rm -rf .whl/site && mkdir -p .whl/site
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 \
    -d .whl/dl $(for p in "${pkgs[@]}"; do pin "$p"; done)
for w in .whl/dl/*.whl; do python3 -m zipfile -e "$w" .whl/site; done
# Ray's Java jars, dashboard front end and libraries (RLlib, Data, Serve, Tune, Train, LLM): not imported here.
rm -rf .whl/site/ray/jars .whl/site/ray/dashboard/client .whl/site/ray/rllib .whl/site/ray/data \
    .whl/site/ray/serve .whl/site/ray/tune .whl/site/ray/train .whl/site/ray/llm
find .whl/site -name __pycache__ -prune -exec rm -rf {} +
chmod -R u+rwX,go+rX .whl/site
find .whl/site -path '*/bin/*' -o -name '*.so*' -o -name 'raylet' -o -name 'gcs_server' | xargs chmod +x 2>/dev/null || true
tar -cJf .whl/site312.tar.xz -C .whl/site .
rm -rf .whl/site
ls -la .whl/site312.tar.xz
