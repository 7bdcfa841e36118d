"""docs/architecture.svg is drawn from the code (docs/architecture_picture.py): the committed
picture is what the generator draws from today's imports, and the parts it draws import
one another in layers only (a cycle between parts is an error of the generator)."""

from __future__ import annotations

import importlib.util

import pytest

from tests.conftest import REPO


def generator():
    spec = importlib.util.spec_from_file_location("architecture_picture",
                                                  REPO / "docs" / "architecture_picture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_picture_is_current() -> None:
    picture = generator()
    assert picture.PICTURE.read_text() == picture.picture(), \
        "docs/architecture.svg is stale: run python docs/architecture_picture.py"


def test_every_part_is_drawn_and_cli_is_on_top() -> None:
    picture = generator()
    rows = picture.layers(picture.imports_between_parts())
    assert sorted(p for row in rows for p in row) == sorted(picture.PARTS)
    assert rows[0] == ["cli"] and "grammar" in rows[-1]


def test_a_cycle_between_parts_is_refused() -> None:
    picture = generator()
    with pytest.raises(ValueError, match="cycle: grammar -> cli"):
        picture.layers(picture.imports_between_parts() | {("grammar", "cli")})
