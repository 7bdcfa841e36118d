#!/usr/bin/env bash
# Builds gemm_candidates.cpp against each GEMM library found in the venv's wheels
# (the hand-written kernel always; OpenBLAS from scipy-openblas32 and oneDNN from
# onednn-devel-cpu-gomp where installed) and runs each on one thread, pinned to one core.
# Usage: bench/gemm/run_candidates.sh [REPS]   (from the repository root; results are in
# bench/results/gemm_candidates.txt). DNNL_PREFIXES="DIR ..." adds other oneDNN installs.
set -uo pipefail
PY=${PYTHON:-.venv/bin/python}
OUT=${OUT_DIR:-build/gemm_candidates}
rm -rf "$OUT" && mkdir -p "$OUT"
SRC=bench/gemm/gemm_candidates.cpp
FLAGS="-O3 -march=native -std=c++17 -fopenmp -Icpp_runtime"
g++ $FLAGS $SRC -o "$OUT/handwritten"
if OB=$($PY -c 'import scipy_openblas32 as o; print(o.get_include_dir(), o.get_lib_dir())' 2>/dev/null); then
  set -- $OB
  g++ $FLAGS -DHAVE_OPENBLAS -Dcblas_sgemm=scipy_cblas_sgemm $SRC -I"$1" -L"$2" \
    -lscipy_openblas -Wl,-rpath,"$2" -o "$OUT/openblas"
  shift 2
fi
WHEEL=$($PY -c 'from parafuse.emitters.toolchain.onednn import dnnl_cmake_dir as d; print(d())')
[ -n "$WHEEL" ] && DNNL_PREFIXES="$(cd "$WHEEL/../../.." && pwd) ${DNNL_PREFIXES:-}"
for prefix in ${DNNL_PREFIXES:-}; do
  g++ $FLAGS -DHAVE_DNNL $SRC -I"$prefix/include" -L"$prefix/lib" -ldnnl \
    -Wl,-rpath,"$prefix/lib" -o "$OUT/onednn_$(echo "$prefix" | tr / _)"
done
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
for exe in "$OUT"/*; do
  echo "### $(basename "$exe")"
  taskset -c 0 "$exe" "${1:-7}" || echo "(failed: $?)"
done
