"""The byte-pair model of text (fsm_compiler/engines/byte_pairs.py) and the mixture its
table is counted from (byte_pairs_build.py)."""

from __future__ import annotations

import pytest

from parafuse.fsm_compiler.engines import byte_pairs_build
from parafuse.fsm_compiler.engines.byte_pairs import pair_bits, pair_bits_after
from parafuse.fsm_compiler.engines.byte_pairs_build import SCALE, logs, mixture


def _string(text: str) -> tuple[int, ...]:
    return tuple(1 << byte for byte in text.encode())


def _bits(*texts: str) -> float:
    return pair_bits([_string(text) for text in texts])


def test_digits_come_in_runs_and_punctuation_is_not_alike() -> None:
    assert _bits("00") < _bits("0") + 5  # a digit after a digit is likely
    assert _bits("00") < _bits("!")  # rarer in code and logs than a pair of zeros
    assert _bits("e") < _bits("0") < _bits("!")
    assert _bits("qx") > _bits("q") + 8  # a pair text hardly holds


def test_sets_and_byte_sets_add_their_members_chances() -> None:
    assert 2.0 ** -_bits("ab", "cd") == pytest.approx(2.0 ** -_bits("ab") + 2.0 ** -_bits("cd"))
    either = pair_bits([(1 << ord("a") | 1 << ord("c"), 1 << ord("b"))])
    assert 2.0 ** -either == pytest.approx(2.0 ** -_bits("ab") + 2.0 ** -_bits("cb"))
    assert pair_bits([]) == float("inf")
    assert pair_bits([()]) == 0.0


def test_what_follows_a_set_of_bytes() -> None:
    """`.` right after a digit (versions, addresses) is likelier than anywhere; `k` right
    after `q` is rarer than anywhere; nothing follows an empty set."""
    digits = sum(1 << byte for byte in b"0123456789")
    assert pair_bits_after(digits, [_string(".")]) < _bits(".") - 1
    assert pair_bits_after(1 << ord("q"), [_string("k")]) > _bits("k")
    assert pair_bits_after(digits, [_string("."), _string(",")]) < \
        pair_bits_after(digits, [_string(".")])
    assert pair_bits_after(0, [_string(".")]) == float("inf")


def test_every_kind_of_text_weighs_the_same() -> None:
    """A short text counts as much as a long one: `ab` is half of the pairs of a text of
    `ab` alone and none of a text of `cd` a hundred times longer."""
    pairs = mixture([b"ab", b"cd" * 100])
    assert pairs[(ord("a"), ord("b"))] == SCALE // 2
    assert sum(pairs.values()) == pytest.approx(SCALE, rel=1e-6)
    assert logs(1000) == logs(1000) and len(logs(1000)) >= 1000


def test_the_table_is_written_only_from_a_checkout(tmp_path, monkeypatch) -> None:
    """An installed package holds no documentation: the builder stops with one line and
    writes nothing, instead of a table counted from code alone."""
    table = tmp_path / "byte_pairs.txt"
    monkeypatch.setattr(byte_pairs_build, "REPOSITORY", tmp_path)
    monkeypatch.setattr(byte_pairs_build, "TABLE", table)
    (tmp_path / "module.py").write_text("x = 1\n")
    with pytest.raises(SystemExit, match="run it from a checkout"):
        byte_pairs_build.main()
    assert not table.exists()
