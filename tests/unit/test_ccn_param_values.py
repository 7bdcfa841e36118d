"""Param values and defaults that the dtype cannot hold, signed defaults, and outputs that
cannot be written (docs/ccn-language.md, sections 3 and 9)."""

from __future__ import annotations

import errno
import os
import stat
import warnings

import numpy as np
import pytest
from click.testing import CliRunner

from parafuse.ccn_compiler.frontend import check_programs
from parafuse.ccn_compiler.reference import runner_io
from parafuse.cli.coconetc import main
from parafuse.grammar.ccn_parser import parse_ccn
from parafuse.grammar.diagnostics import CompileError

PROGRAM = """program p(N) {{
    param {decl}
    input x: f32[N] replicated
    y = x * 2
    output y
}}
"""

TOUR = """program p(N) {
    param a: f32 = +1
    param b: f32 = -2.5
    param d: i32 = 3
    param h: f16 = 2
    param k: bf16 = 1
    input x: f32[N] replicated
    y = x * a + b + d + h + k
    output y
}
"""


def defaults(decl: str) -> dict:
    module = parse_ccn(PROGRAM.format(decl=decl), "p.ccn")
    program = check_programs(module)["p"]
    return {p.name: p.default for p in program.params}


@pytest.mark.parametrize("decl, value", [
    ("a: f32 = +1", 1), ("a: f32 = -1", -1), ("a: f32 = +2.5e-3", 2.5e-3), ("d: i32 = +7", 7),
    ("d: i32 = -2147483648", -2147483648), ("d: i32 = 2147483647", 2147483647),
    ("d: i64 = 9223372036854775807", 9223372036854775807), ("h: f16 = 65504", 65504),
    ("h: f16 = 65519", 65519), ("h: f16 = -65504", -65504), ("h: f32 = 1e-50", 1e-50),
    ("h: f64 = 1e308", 1e308),
])
def test_defaults_that_fit_are_accepted_signed_or_not(decl, value) -> None:
    assert list(defaults(decl).values()) == [value]


@pytest.mark.parametrize("decl, dtype, held", [
    ("d: i32 = 3000000000", "i32", "-2147483648 to 2147483647"),
    ("d: i32 = -2147483649", "i32", "-2147483648 to 2147483647"),
    ("d: i64 = 9223372036854775808", "i64", "9223372036854775807"),
    ("h: f16 = 70000", "f16", "±65504"),
    ("h: f16 = -65520", "f16", "±65504"),
    ("h: bf16 = 1e39", "bf16", "±3.38953e+38"),
    ("h: f32 = 1e39", "f32", "±3.40282e+38"),
    ("h: f64 = 1e309", "f64", "±1.79769e+308"),
    ("h: f32 = " + "9" * 400, "f32", "±3.40282e+38"),
])
def test_a_default_the_dtype_cannot_hold_is_located_at_the_default(decl, dtype, held) -> None:
    with pytest.raises(CompileError) as caught:
        defaults(decl)
    error = caught.value
    assert f"does not fit {dtype}" in error.message and held in error.message
    literal = decl.split("= ")[1]
    assert (error.location.line, error.location.column) == (2, 11 + decl.index("= ") + 2)
    assert error.location.end_column - error.location.column == len(literal)


def test_a_plus_sign_is_only_for_param_defaults() -> None:
    source = PROGRAM.format(decl="a: f32").replace("replicated", "sliced(+0)")
    with pytest.raises(CompileError, match="found '\\+'"):
        parse_ccn(source, "p.ccn")


def run(tmp_path, *args: str, source: str = TOUR):
    path = tmp_path / "p.ccn"
    path.write_text(source)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning fails the test
        return CliRunner().invoke(main, ["run", str(path), "-n", "1", "--size", "N=2",
                                         "--random", "--json", *args])


@pytest.mark.parametrize("param, held", [
    ("d=3000000000", "i32 holds -2147483648 to 2147483647"),
    ("d=-2147483649", "i32 holds -2147483648 to 2147483647"),
    ("h=70000", "f16 holds finite values up to ±65504"),
    ("h=1e400", "f16 holds finite values up to ±65504"),
    ("k=1e39", "bf16 holds finite values up to ±3.38953e+38"),
    ("a=1e39", "f32 holds finite values up to ±3.40282e+38"),
    ("b=1e400", "f32 holds finite values up to ±3.40282e+38"),
])
def test_an_out_of_range_param_is_one_line_like_the_compiled_runner(tmp_path, param,
                                                                    held) -> None:
    result = run(tmp_path, "--param", param)
    assert result.exit_code == 1
    dtype = {"d": "i32", "h": "f16", "k": "bf16", "a": "f32", "b": "f32"}[param[0]]
    assert result.stderr.splitlines() == [
        f"coconetc: error: --param {param}: not a {dtype} number (out of range: {held})"
    ]
    assert result.stdout == ""


@pytest.mark.parametrize("param", ["d=abc", "d=1_000", "a=1_0.5", "d=2.5"])
def test_a_param_that_is_no_number_is_one_line(tmp_path, param) -> None:
    result = run(tmp_path, "--param", param)
    assert result.exit_code == 1
    dtype = "i32" if param[0] == "d" else "f32"
    assert result.stderr == f"coconetc: error: --param {param}: not a {dtype} number\n"


@pytest.mark.parametrize("param", ["d=2147483647", "d=-2147483648", "h=65504", "h=-65519",
                                   "h=inf", "h=-inf", "h=nan", "a=+3", "h=1e-20", "k=3e38"])
def test_params_in_range_run_without_warnings(tmp_path, param) -> None:
    result = run(tmp_path, "--param", param)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""


def test_parse_params_keeps_the_value_exactly(tmp_path) -> None:
    module = parse_ccn(TOUR, "p.ccn")
    program = check_programs(module)["p"]
    values = runner_io.parse_params(program, ("d=2147483647", "h=-65504"))
    assert values["d"].dtype == np.int32 and int(values["d"]) == 2147483647
    assert values["h"].dtype == np.float16 and float(values["h"]) == -65504
    assert float(values["a"]) == 1.0 and float(values["b"]) == -2.5


def test_sizes_and_params_drop_spaces_and_refuse_a_name_given_twice() -> None:
    """As the compiled runners do (cpp_runtime/ccn/runner_options.hpp): ` N = 5 ` is N=5;
    a name given twice is one error naming both values (the last one was taken silently)."""
    program = check_programs(parse_ccn(TOUR, "p.ccn"))["p"]
    assert runner_io.parse_sizes(program, (" N = 5 ",)) == {"N": 5}
    assert int(runner_io.parse_params(program, ("d =7",))["d"]) == 7
    with pytest.raises(CompileError, match=r"^error: --size N given twice \(N=4 and N=5\)$"):
        runner_io.parse_sizes(program, ("N=4", "N =5"))
    with pytest.raises(CompileError, match=r"^error: --param a given twice \(a=1 and a=1\)$"):
        runner_io.parse_params(program, ("a=1", "a=1"))
    with pytest.raises(CompileError, match=r"^error: --size  =5: expected NAME=VALUE$"):
        runner_io.parse_sizes(program, (" =5",))


def test_outputs_that_fail_half_way_leave_nothing(tmp_path, monkeypatch) -> None:
    """A write failing after some files were written: no file and no new folder remain."""
    source = TOUR.replace("output y", "z = y + 1\n    output y, z")
    out = tmp_path / "new" / "out"
    saved = []

    def failing_save(handle, array, allow_pickle=False):
        if saved:
            raise OSError(errno.ENOSPC, "No space left on device", str(out / "z.rank0.npy"))
        saved.append(array)
        np.lib.format.write_array(handle, np.asarray(array), allow_pickle=False)

    monkeypatch.setattr(runner_io.np, "save", failing_save)
    result = run(tmp_path, "--outputs", str(out), source=source)
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines() == [
        f"coconetc: error: --outputs {out}: cannot write the outputs: No space left on device "
        f"('{out / 'z.rank0.npy'}')"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.ccn"]


def test_outputs_into_an_existing_folder_keep_what_was_there(tmp_path, monkeypatch) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("mine")

    def failing_save(handle, array, allow_pickle=False):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(runner_io.np, "save", failing_save)
    result = run(tmp_path, "--outputs", str(out))
    assert result.exit_code == 1 and "Input/output error" in result.stderr
    assert [p.name for p in out.iterdir()] == ["mine.txt"]


def test_outputs_are_written_when_all_is_well(tmp_path) -> None:
    out = tmp_path / "a" / "b"
    result = run(tmp_path, "--outputs", str(out))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "y.rank0.npy"]


def run_sized(tmp_path, size: str, *args: str):
    """`run` with one --size of the test's choosing (and --random unless --inputs is given)."""
    path = tmp_path / "p.ccn"
    path.write_text(TOUR)
    filling = [] if "--inputs" in args else ["--random"]
    return CliRunner().invoke(main, ["run", str(path), "-n", "1", "--size", size, *filling,
                                     *args])


@pytest.mark.parametrize("size, message", [
    ("N=1000000000000", "sizes N=1000000000000: this rank's tensors do not fit in memory"),
    ("N=9223372036854775807",
     "sizes N=9223372036854775807: this rank's tensors do not fit in memory"),
    ("N=99999999999999999999", "--size N=99999999999999999999: not an integer"),
    ("N=10_0", "--size N=10_0: not an integer"),
])
def test_a_size_too_big_or_misspelt_is_the_compiled_runners_one_line(tmp_path, size,
                                                                    message) -> None:
    """As the compiled runners say it (a size is an int64 there; library.j2's too_big)."""
    out = tmp_path / "out"
    result = run_sized(tmp_path, size, "--outputs", str(out))
    assert result.exit_code == 1, result.output
    assert result.stderr == f"coconetc: error: {message}\n"
    assert not out.exists()


def test_an_empty_npy_file_is_not_a_readable_npy_file(tmp_path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "x.npy").write_bytes(b"")
    result = run_sized(tmp_path, "N=2", "--inputs", str(tmp_path / "in"),
                       "--outputs", str(tmp_path / "out"))
    assert result.exit_code == 1, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"coconetc: error: {tmp_path / 'in' / 'x.npy'}: not a readable .npy file ("), lines
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args, message", [
    (["--outputs", ""], "--outputs: an empty path"),
    (["--outputs", " "], "--outputs: an empty path"),
    (["--inputs", "", "--outputs", "out"], "--inputs: an empty path"),
    (["--random", "--inputs", "in", "--outputs", "out"],
     "--inputs and --random: give one (--random fills every input)"),
])
@pytest.mark.parametrize("backend", ["reference", "cpu"])
def test_empty_folders_and_inputs_with_random_are_one_line(tmp_path, monkeypatch, args,
                                                           message, backend) -> None:
    """Refused before anything is built or written, on every backend."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in").mkdir()
    np.save(tmp_path / "in" / "x.npy", np.zeros(2, np.float32))
    (tmp_path / "p.ccn").write_text(TOUR)
    result = CliRunner().invoke(main, ["run", str(tmp_path / "p.ccn"), "-n", "1", "--size",
                                       "N=2", "--backend", backend, *args])
    assert result.exit_code == 1, result.output
    assert result.stderr == f"coconetc: error: {message}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "p.ccn"]


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_outputs_have_the_mode_of_a_normal_file(tmp_path, mask) -> None:
    """0666 less the umask, not the 0600 of the temporary files they are renamed from."""
    out = tmp_path / "out"
    old = os.umask(mask)
    try:
        result = run(tmp_path, "--outputs", str(out))
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in out.iterdir()}
    assert modes == {"manifest.json": 0o666 & ~mask, "y.rank0.npy": 0o666 & ~mask}


@pytest.mark.parametrize("literal, fits", [("-2147483648", True), ("2147483647", True),
                                           ("-2147483649", False), ("2147483648", False),
                                           ("--2147483648", False)])
def test_an_integer_literal_fits_the_dtype_it_takes(literal, fits) -> None:
    """The whole literal, sign included, is checked against the dtype it takes (i32 here)."""
    source = (f"program p(N) {{\n    input x: i32[N] local\n    y = x + {literal}\n"
              "    output y\n}\n")
    module = parse_ccn(source, "p.ccn")
    if fits:
        check_programs(module)
        return
    with pytest.raises(CompileError, match="this number does not fit i32"):
        check_programs(module)
