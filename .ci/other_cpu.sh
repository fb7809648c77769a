#!/usr/bin/env bash
# The fixed-seed fingerprints (tests/test_fingerprints.py) and the exact-resume
# tests (tests/test_exact_resume.py) under emulated older x86 CPUs: numpy's
# dispatched SIMD kernels, numba's target CPU, torch's ATen kernels, MKL and
# OpenBLAS capped at a lower instruction set. The fingerprints must hold to
# their stated tolerances; resume stays bit for bit, since within one run of
# pytest the emulated CPU does not change.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python

# numpy's dispatch targets above its baseline that this CPU has, all of them or
# only the AVX-512 ones (naming a baseline target is an error for numpy).
npy_targets() {
    "$PY" - "$1" <<'PYEOF'
import sys
try:
    from numpy._core import _multiarray_umath as m
except ImportError:  # numpy 1.x
    from numpy.core import _multiarray_umath as m
level = sys.argv[1]
names = [f for f in m.__cpu_dispatch__ if m.__cpu_features__.get(f) and f not in m.__cpu_baseline__]
if level == "avx2":
    names = [f for f in names if "512" in f or f == "X86_V4"]
print(" ".join(names))
PYEOF
}

run() {  # name, then the environment of the emulation
    local name=$1
    shift
    local cache
    cache=$(mktemp -d)  # numba's cache=True code was compiled for this CPU
    echo "== emulated CPU: $name"
    printf '   %s\n' "$@"
    local start=$SECONDS rc=0
    env "$@" NUMBA_CACHE_DIR="$cache" \
        "$PY" -m pytest -q -p no:xdist -p no:cacheprovider -m "not slow" \
        tests/test_fingerprints.py tests/test_exact_resume.py || rc=$?
    rm -rf "$cache"
    echo "== $name: $([ $rc = 0 ] && echo passed || echo FAILED) in $((SECONDS - start)) s"
    return $rc
}

status=0
run "x86-64 baseline (no AVX)" \
    NUMBA_CPU_NAME=generic NUMBA_CPU_FEATURES= NPY_DISABLE_CPU_FEATURES="$(npy_targets all)" ATEN_CPU_CAPABILITY=default \
    MKL_ENABLE_INSTRUCTIONS=SSE4_2 OPENBLAS_CORETYPE=Nehalem DNNL_MAX_CPU_ISA=SSE41 || status=1
run "AVX2 + FMA, no AVX-512 (Haswell)" \
    NUMBA_CPU_NAME=haswell NUMBA_CPU_FEATURES= NPY_DISABLE_CPU_FEATURES="$(npy_targets avx2)" ATEN_CPU_CAPABILITY=avx2 \
    MKL_ENABLE_INSTRUCTIONS=AVX2 OPENBLAS_CORETYPE=Haswell DNNL_MAX_CPU_ISA=AVX2 || status=1
exit $status
