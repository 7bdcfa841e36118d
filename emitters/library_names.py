"""The names the system's headers declare at global scope, for `emitters/names.py`.

`names.py` keeps a hand list of the names a generated project meets (keywords, the
runtime's own names, the usual C functions). The C library declares thousands more:
`expf`, `strtok`, `struct tm`, and macros such as `EINVAL`, `M_PI` or `INT_MAX`, which
break even a member named so. This module lists them from the headers themselves:

- every macro the headers of a generated project define (`c++ -E -dM`);
- every function and variable of libc and libm that those headers declare (the
  libraries' exported symbols, kept where the preprocessed headers name them), with
  `_GNU_SOURCE` defined as g++ defines it (`pipe2`, `sincos`, `gettid`, ...);
- every type the C headers declare at global scope (`typedef ... NAME;`, `struct NAME`).

Names starting with `_` are left out: `names.py` prefixes all of them. The list is
written to `library_names.txt` beside this file, which `names.py` reads:

    python -m parafuse.emitters.library_names > emitters/library_names.txt

`tests/unit/test_library_names.py` runs it on the test machine and fails where a name
it finds is missing from the file, so the file follows the toolchain.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

LIST_FILE = Path(__file__).with_name("library_names.txt")

# The C and POSIX headers that generated projects include, directly or through the C++
# standard library, MPI and OpenMP.
C_HEADERS = """assert.h ctype.h errno.h fcntl.h float.h limits.h locale.h math.h sched.h signal.h
setjmp.h stdarg.h stddef.h stdint.h stdio.h stdlib.h string.h strings.h time.h unistd.h
wchar.h wctype.h pthread.h sys/mman.h sys/stat.h sys/time.h sys/types.h sys/wait.h
dlfcn.h immintrin.h omp.h mpi.h""".split()
# C++ headers: their macros also reach every name of the program.
CXX_HEADERS = """algorithm atomic chrono cmath cstdint cstdio cstdlib cstring fstream
iostream map memory mutex stdexcept string thread vector""".split()

IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
TYPEDEF = re.compile(r"typedef[^;{}]*?\b([A-Za-z][A-Za-z0-9_]*)\s*(?:\[[^\]]*\]\s*)?;")
TAG = re.compile(r"\b(?:struct|union|enum)\s+([A-Za-z][A-Za-z0-9_]*)")


def _preprocess(compiler: list[str], language: str, headers: list[str], *flags: str) -> str:
    source = "".join(f"#include <{h}>\n" for h in headers)
    return subprocess.run([*compiler, "-x", language, "-E", *flags, "-"], input=source,
                          capture_output=True, text=True, check=True).stdout


def _exported(library: str) -> set[str]:
    found = subprocess.run(["c++", f"-print-file-name={library}"], capture_output=True,
                           text=True, check=True).stdout.strip()
    symbols = subprocess.run(["nm", "-D", "--defined-only", found], capture_output=True,
                             text=True, check=True).stdout
    return {line.split()[-1].split("@")[0] for line in symbols.splitlines() if line.strip()}


def library_names(mpicc: str, mpicxx: str) -> set[str]:
    """Every global name the headers declare, but those starting with `_`."""
    c, cxx = [mpicc, "-fopenmp"], [mpicxx, "-std=gnu++17", "-fopenmp"]
    macros = {line.split()[1].split("(")[0]
              for line in _preprocess(cxx, "c++", C_HEADERS + CXX_HEADERS, "-dM").splitlines()
              if line.startswith("#define ")}
    declared = _preprocess(c, "c", C_HEADERS, "-D_GNU_SOURCE")  # as g++ compiles them
    tokens = set(IDENTIFIER.findall(declared))
    functions = tokens & (_exported("libc.so.6") | _exported("libm.so.6"))
    types = set(TYPEDEF.findall(declared)) | set(TAG.findall(declared))
    return {n for n in macros | functions | types if not n.startswith("_")}


def main() -> None:
    from parafuse.emitters.toolchain.cmake import Toolchain

    toolchain = Toolchain.current()
    names = library_names(toolchain.tool("mpicc"), toolchain.tool("mpicxx"))
    sys.stdout.write("".join(f"{n}\n" for n in sorted(names)))


if __name__ == "__main__":
    main()
