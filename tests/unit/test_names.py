"""emitters/names.py: one-to-one, never a name a library or the generated code holds, and
no C++ name ending in `_` (CUDA members `NAME_` sit beside locals `NAME`)."""

from __future__ import annotations

import itertools

from parafuse.emitters.ccn.chunk_policy import ChunkVariant
from parafuse.emitters.names import (
    CXX_KEYWORDS,
    LIBRARY_NAMES,
    cpp_name,
    prefixed_stem,
    schedule_class,
)

# every name of up to 4 characters over letters that build our prefixes and suffixes
SMALL = ["".join(chars) for k in range(1, 5) for chars in itertools.product("ap_ft1", repeat=k)
         if not chars[0].isdigit()]


def test_the_mapping_is_one_to_one_and_never_ends_in_an_underscore() -> None:
    for mapping in (cpp_name, prefixed_stem):
        images = {}
        for name in SMALL + sorted(CXX_KEYWORDS | LIBRARY_NAMES):
            image = mapping(name)
            assert images.setdefault(image, name) == name, (name, images[image])
        for image in images:
            assert not (image.endswith("_") and image[:-1] in images), image


def test_keywords_and_library_names_are_renamed_and_plain_names_kept() -> None:
    for name in CXX_KEYWORDS | LIBRARY_NAMES | {"size_t", "MPI_Comm", "cudaMalloc", "test"}:
        assert cpp_name(name) != name, name
    for name in ("adam", "N", "lr", "split_only", "w1"):
        assert cpp_name(name) == name == prefixed_stem(name)
    assert (cpp_name("pipe"), cpp_name("a__"), prefixed_stem("pipe")) == \
        ("pf_pipe", "pf2_a", "pipe")


def test_autotune_variants_cannot_meet_a_schedule() -> None:
    assert ChunkVariant("fused", 4).class_name == "Variant_fused_c4"
    assert schedule_class("fused_c4") == "Schedule_fused_c4"
    assert ChunkVariant("fused", 4).name == "fused.c4"  # a dot: no schedule's name


def test_every_global_name_of_the_system_headers_is_renamed() -> None:
    """emitters/library_names.txt follows the toolchain: every macro, C function and type
    the headers of a generated project declare is in it (else regenerate it: python -m
    parafuse.emitters.library_names > emitters/library_names.txt)."""
    import shutil

    from parafuse.emitters.library_names import library_names
    from parafuse.emitters.toolchain.cmake import Toolchain
    from tests.required_tools import require_cxx, require_tool

    require_cxx()
    require_tool(shutil.which("nm") is not None, "needs nm (binutils)")
    toolchain = Toolchain.current()
    found = library_names(toolchain.tool("mpicc"), toolchain.tool("mpicxx"))
    assert {"expf", "strtok", "tm", "FILE", "EINVAL", "M_PI", "INT_MAX"} <= found
    # GNU extensions, which g++'s _GNU_SOURCE declares (a program named so did not build)
    assert {"pipe2", "sincos", "dup3", "gettid", "exp10", "clone", "fadd"} <= found
    missing = sorted(found - LIBRARY_NAMES)
    assert not missing, f"{len(missing)} names not renamed: {missing[:40]}"
