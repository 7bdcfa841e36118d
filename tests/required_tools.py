"""Tools a test needs (the C++ compiler, nvcc, the hyperscan module): a missing one skips
the test on a developer's machine and fails it where $PARAFUSE_REQUIRE_TOOLS is set
(`.ci/run` sets it), so that CI cannot stay green with whole modules skipped."""

from __future__ import annotations

import importlib
import os
import shutil
from types import ModuleType
from typing import NoReturn

import pytest

REQUIRE_VARIABLE = "PARAFUSE_REQUIRE_TOOLS"


def tools_required() -> bool:
    return os.environ.get(REQUIRE_VARIABLE, "") not in ("", "0")


def tool_missing(reason: str, module_level: bool = False) -> NoReturn:
    """Skip (locally) or fail (where tools are required) for want of a tool."""
    if tools_required():
        pytest.fail(f"{reason} (required: {REQUIRE_VARIABLE} is set)", pytrace=False)
    pytest.skip(reason, allow_module_level=module_level)


def require_tool(available: bool, reason: str) -> None:
    if not available:
        tool_missing(reason)


def require_cxx() -> None:
    require_tool(shutil.which("c++") is not None, "needs a C++ compiler (c++ on PATH)")


def require_nvcc() -> None:
    from parafuse.emitters.toolchain.nvidia import find_nvcc

    require_tool(find_nvcc() is not None, "no nvcc on this machine (CUDA_HOME, PATH)")


def require_module(name: str, module_level: bool = False) -> ModuleType:
    """The imported module, in place of pytest.importorskip."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        tool_missing(f"cannot import {name}: {error}", module_level)
