"""Where $PARAFUSE_REQUIRE_TOOLS is set (CI), a missing tool fails instead of skipping; and
the tools CI requires are all present there."""

from __future__ import annotations

import pytest

from tests.required_tools import (
    REQUIRE_VARIABLE,
    require_cxx,
    require_module,
    require_nvcc,
    require_tool,
)


def test_a_missing_tool_skips_locally(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REQUIRE_VARIABLE, raising=False)
    with pytest.raises(pytest.skip.Exception, match="needs frobnicate"):
        require_tool(False, "needs frobnicate")
    with pytest.raises(pytest.skip.Exception, match="no_such_module_here"):
        require_module("no_such_module_here")


def test_a_missing_tool_fails_where_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REQUIRE_VARIABLE, "1")
    with pytest.raises(pytest.fail.Exception, match="needs frobnicate"):
        require_tool(False, "needs frobnicate")
    with pytest.raises(pytest.fail.Exception, match="no_such_module_here"):
        require_module("no_such_module_here")
    require_tool(True, "present")


def test_the_tools_ci_requires() -> None:
    """Every tool some test of the suite needs, checked once by name."""
    require_cxx()
    require_nvcc()
    require_module("hyperscan")
