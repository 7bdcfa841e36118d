#!/usr/bin/env bash
# GPU check of coconetc's CUDA backend (needs an NVIDIA GPU, nvcc, and `make venv` done;
# works offline). Builds every sample and schedule for this GPU, runs each at one rank
# (mpirun -np 1) on random inputs against the reference interpreter, and measures the
# fused optimizer steps' bandwidth against a device-to-device copy; prints a table last.
# PARAFUSE_CUDA_ARCH=90 (say) compiles for that architecture instead of the GPU present.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
export PARAFUSE_CACHE="${PARAFUSE_CACHE:-$PWD/build/gpu_check_cache}"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
timeout 470 .venv/bin/python bench/gpu_check.py
