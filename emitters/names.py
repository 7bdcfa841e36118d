"""User names -> C++ names that cannot collide (both compilers).

A `.ccn` program, size, param or schedule and a `.fsm` machine may be named anything
the grammars accept (`[A-Za-z_][A-Za-z0-9_]*`). Printed raw into C++, some of those
names break the build: `namespace pipe` collides with POSIX `pipe()`, a size named
`errno` or `linux` is a macro, `class` is a keyword, `test` is a target CMake
reserves. Every emitter therefore prints a user's name through `cpp_name`, which
keeps the name where nothing can collide with it and prefixes it otherwise:

    cpp_name("adam")  == "adam"        cpp_name("pipe")   == "pf_pipe"
    cpp_name("class") == "pf_class"    cpp_name("_x")     == "pf__x"
    cpp_name("pf_a")  == "pf_pf_a"     cpp_name("a__")    == "pf2_a"

The mapping is one-to-one, and no C++ name it gives ends with `_` (except `pfK_`
for a name of K underscores), so that the `NAME_` members beside `NAME` locals of
generated classes cannot meet either.

The names users see (runner JSON, `.npy` files, Python attributes, a machine's
state and tag names) stay theirs: only identifiers change. Names that are only
printed after a prefix of ours (values and stages: `v_NAME`, `x_NAME_`) cannot meet
a keyword or a library name, so `prefixed_stem` keeps all of them but those that
could meet each other (`a_` and `pf1_a`).
"""

from __future__ import annotations

import re
from pathlib import Path

CXX_KEYWORDS = frozenset("""
alignas alignof and and_eq asm atomic_cancel atomic_commit atomic_noexcept auto bitand
bitor bool break case catch char char8_t char16_t char32_t class compl concept const
consteval constexpr constinit const_cast continue co_await co_return co_yield decltype
default delete do double dynamic_cast else enum explicit export extern false float for
friend goto if import inline int long module mutable namespace new noexcept not not_eq
nullptr operator or or_eq private protected public reflexpr register reinterpret_cast
requires return short signed sizeof static static_assert static_cast struct switch
synchronized template this thread_local throw true try typedef typeid typename union
unsigned using virtual void volatile wchar_t while xor xor_eq final override
""".split())

# Every macro, and every global function, variable and type, of the system headers a
# generated project includes (listed from the headers by emitters/library_names.py) ...
SYSTEM_NAMES = frozenset(
    (Path(__file__).with_name("library_names.txt")).read_text().split())
# ... and by hand: names of headers the list does not read (sockets, directories,
# CUDA, NCCL, pybind11) or that some platforms define (`i386`, math.h's SVID macros),
# the namespaces generated code uses, and the names it declares beside a user's names.
LIBRARY_NAMES = SYSTEM_NAMES | frozenset("""
accept atexit basename bind closedir connect dirname exec gets ioctl isfinite listen
main major makedev minor opendir poll readdir recv recvfrom send sendto shutdown signbit
socket uname utime i386 DOMAIN OVERFLOW UNDERFLOW SING TLOSS PLOSS endl
std pf parafuse fsm py pybind11 detail cub thrust nvcuda cooperative_groups
dim3 blockIdx blockDim threadIdx gridDim warpSize half nv_bfloat16 clock64
Program Sizes Params Slot ScheduleImpl Result Options Match Tables world
""".split())

# Names ending in `_t` are POSIX's types (`size_t`, `pid_t`, ...), all of them reserved.
# Prefixes of whole families of library names (MPI, Open MPI, OpenMP, CUDA, NCCL,
# cuBLAS, CPython); `_` because such names are the implementation's.
RESERVED_PREFIXES = ("_", "mpi_", "pmpi_", "mpix_", "ompi_", "opal_", "omp_",
                     "cuda", "cublas", "nccl", "py")

# Target names CMake reserves (`add_library(test ...)` is an error).
CMAKE_RESERVED = frozenset("all clean depend edit_cache help install list_install_components "
                           "package package_source rebuild_cache test".split())


OUR_PREFIX = re.compile(r"pf\d*(_|$)", re.IGNORECASE)  # what cpp_name gives, and PF_ macros


def collides(user: str) -> bool:
    """Whether `user` printed raw could clash with a keyword, a library name, a target
    CMake reserves or a name cpp_name gives (prefixes compared without case)."""
    folded = user.lower()
    return (user in CXX_KEYWORDS or user in LIBRARY_NAMES or folded in CMAKE_RESERVED
            or folded.startswith(RESERVED_PREFIXES) or bool(OUR_PREFIX.match(user))
            or user.endswith(("_", "_t")))


def cpp_name(user: str) -> str:
    """The C++ (and CMake) identifier of a user's name: itself where nothing can collide,
    `pf_NAME` otherwise, and `pfK_STEM` for a name ending in K underscores."""
    if not collides(user):
        return user
    stem = user.rstrip("_")
    trailing = len(user) - len(stem)
    return f"pf{trailing}_{stem}" if trailing else f"pf_{user}"


def schedule_class(schedule: str) -> str:
    """The class of one schedule: `Schedule_NAME` (the autotuner's variants are
    `Variant_NAME_cK`: emitters/ccn/chunk_policy.py)."""
    return f"Schedule_{schedule}"


def prefixed_stem(user: str) -> str:
    """The part of a generated identifier after a prefix of ours (`v_` + stem): one-to-one
    and never ending in `_`, like cpp_name, but keywords and library names stay."""
    if not (user.endswith("_") or OUR_PREFIX.match(user)):
        return user
    return cpp_name(user)


def may_be_macro(user: str) -> bool:
    """Whether a library header may define `user` as a macro (a module named so must
    `#undef` it before PYBIND11_MODULE, the last thing of its file)."""
    return user in LIBRARY_NAMES
