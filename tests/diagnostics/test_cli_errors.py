"""Mistakes on the command line and outputs that cannot be written, for both tools: one line
`PROG: error: ...` naming the option or path, exit code 1, no traceback, nothing written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from parafuse import __version__
from parafuse.cli.boostfsm import main as boostfsm
from parafuse.cli.coconetc import main as coconetc
from tests.conftest import REPO

SAMPLES = REPO / "samples"
SGD = str(SAMPLES / "sgd.ccn")
DIV7 = str(SAMPLES / "div7.fsm")
RUN_SGD = ["run", SGD, "--size", "N=4", "--random"]


def one_line_error(result, prog: str, *words: str) -> str:
    """The single stderr line of a failed command, checked for the house style."""
    assert result.exit_code == 1, (result.exit_code, result.output)
    assert "Traceback" not in result.output and "internal error" not in result.stderr
    assert "Usage:" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"{prog}: error: "), lines[0]
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


COCONETC_USAGE = [
    (RUN_SGD, ["missing option '-n'", "coconetc run --help"]),
    (RUN_SGD + ["-n", "abc"], ["'-n'", "'abc' is not a valid integer"]),
    (RUN_SGD + ["-n", "2", "--iters", "abc"], ["'--iters'", "'abc'"]),
    (RUN_SGD + ["-n", "2", "--backend", "foo"], ["'--backend'", "'foo'", "reference"]),
    (["build", SGD, "--backend", "reference"], ["'--backend'", "'reference'", "cpu"]),
    (RUN_SGD + ["-n", "2", "--frob"], ["no such option '--frob'"]),
    (RUN_SGD + ["-n", "2", "--rando"], ["'--rando'", "--random"]),
    (["frob"], ["no such command 'frob'", "commands: build, check, run, show"]),
    (["--frob"], ["no such option '--frob'"]),
    (["run", "-n", "2"], ["missing argument 'FILE'"]),
    (["check"], ["missing argument 'FILE'"]),
    (["check", SGD, "extra"], ["extra argument"]),
    (RUN_SGD + ["-n"], ["'-n' requires an argument"]),
]


@pytest.mark.parametrize("args, words", COCONETC_USAGE,
                         ids=[" ".join(a[:1] + a[2:])[:60] for a, _ in COCONETC_USAGE])
def test_coconetc_usage_error_is_one_line_exit_1(args, words) -> None:
    one_line_error(CliRunner().invoke(coconetc, args), "coconetc", *words)


@pytest.mark.parametrize("backend", ["reference", "cpu", "cuda-emulated", "cuda"])
@pytest.mark.parametrize("ranks", ["0", "-1"])
def test_a_rank_count_below_one_is_refused_alike_on_every_backend(backend, ranks) -> None:
    """Before any build, in the reference's words (the CPU backend ran 0 ranks as 2, exit
    0, and -1 failed without a word)."""
    result = CliRunner().invoke(coconetc, RUN_SGD + ["-n", ranks, "--backend", backend])
    one_line_error(result, "coconetc", f"-n {ranks}: at least one rank is needed")


@pytest.mark.parametrize("ranks", ["0", "-1"])
def test_autotune_for_a_rank_count_below_one_is_refused(ranks, tmp_path) -> None:
    result = CliRunner().invoke(coconetc, ["build", SGD, "--autotune", "-n", ranks, "--size",
                                           "N=4", "-o", str(tmp_path / "out")])
    one_line_error(result, "coconetc", f"-n {ranks}: at least one rank is needed")
    assert not (tmp_path / "out").exists()


BOOSTFSM_USAGE = [
    (["frob"], ["no such command 'frob'", "analyze, check, compile, run"]),
    (["check"], ["missing argument 'FILE'"]),
    (["run", DIV7], ["missing argument 'INPUT'"]),
    (["run", DIV7, DIV7, "--backend", "foo"], ["'--backend'", "'foo'"]),
    (["run", DIV7, DIV7, "--threads", "abc"], ["'--threads'", "'abc'"]),
    (["run", DIV7, DIV7, "--threads", "-1"], ["'--threads'", "-1"]),
    (["check", DIV7, "--max-states", "0"], ["'--max-states'"]),
    (["compile", DIV7, "--frob"], ["no such option '--frob'", "boostfsm compile --help"]),
]


@pytest.mark.parametrize("args, words", BOOSTFSM_USAGE,
                         ids=[" ".join(a[:1] + a[2:])[:60] for a, _ in BOOSTFSM_USAGE])
def test_boostfsm_usage_error_is_one_line_exit_1(args, words) -> None:
    one_line_error(CliRunner().invoke(boostfsm, args), "boostfsm", *words)


@pytest.mark.parametrize("main", [coconetc, boostfsm], ids=["coconetc", "boostfsm"])
@pytest.mark.parametrize("args", [["--help"], [], ["check", "--help"]],
                         ids=["help", "no-arguments", "command-help"])
def test_help_and_no_arguments_print_the_help_and_exit_0(main, args) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Usage: ") and result.stderr == ""


@pytest.mark.parametrize("main,prog", [(coconetc, "coconetc"), (boostfsm, "boostfsm")])
def test_version_prints_the_package_version_and_exits_0(main, prog) -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{prog} {__version__}\n" and result.stderr == ""


def test_outputs_naming_a_file_is_refused(tmp_path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("keep me")
    result = CliRunner().invoke(coconetc, RUN_SGD + ["-n", "2", "--outputs", str(afile)])
    one_line_error(result, "coconetc", "'--outputs'", "is a file")
    assert afile.read_text() == "keep me"


@pytest.mark.parametrize("under", ["afile/sub", "afile"])
def test_outputs_under_a_file_is_one_line_and_writes_nothing(tmp_path, under) -> None:
    (tmp_path / "afile").write_text("keep me")
    out = tmp_path / under / "deeper"
    result = CliRunner().invoke(coconetc, RUN_SGD + ["-n", "2", "--outputs", str(out)])
    one_line_error(result, "coconetc", f"--outputs {out}", "Not a directory", "is a file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
    assert (tmp_path / "afile").read_text() == "keep me"


@pytest.mark.parametrize("out", ["afile/sub", "afile"])
def test_boostfsm_compile_into_a_file_is_one_line_and_writes_nothing(tmp_path, monkeypatch,
                                                                     out) -> None:
    monkeypatch.chdir(tmp_path)
    Path("afile").write_text("keep me")
    result = CliRunner().invoke(boostfsm, ["compile", DIV7, "-o", out, "--no-build"])
    one_line_error(result, "boostfsm", f"-o {out}", "Not a directory", "'afile' is a file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
    assert Path("afile").read_text() == "keep me"


def test_boostfsm_compile_reports_an_os_error_of_its_folder(tmp_path, monkeypatch) -> None:
    """An error the checks before writing cannot foresee (here, /proc refuses new files)."""
    if not Path("/proc/self").is_dir():
        pytest.skip("needs /proc")
    result = CliRunner().invoke(boostfsm, ["compile", DIV7, "-o", "/proc/parafuse_out",
                                           "--no-build"])
    one_line_error(result, "boostfsm", "-o /proc/parafuse_out", "cannot write")


@pytest.mark.parametrize("backend", ["cpu", "cuda", "cuda-emulated"])
def test_coconetc_build_into_a_file_is_one_line_and_builds_nothing(tmp_path, backend) -> None:
    (tmp_path / "afile").write_text("keep me")
    out = tmp_path / "afile" / "sub"
    result = CliRunner().invoke(coconetc, ["build", SGD, "--backend", backend, "-o", str(out)])
    one_line_error(result, "coconetc", f"-o {out}", "Not a directory")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.mark.parametrize("target, reason", [("afile/t.npy", "Not a directory"),
                                            ("missing/t.npy", "No such file"),
                                            ("folder", "Is a directory")])
def test_tokens_out_that_cannot_be_written_is_one_line(tmp_path, monkeypatch, target,
                                                       reason) -> None:
    monkeypatch.chdir(tmp_path)
    Path("afile").write_text("keep me")
    Path("folder").mkdir()
    Path("in.json").write_text('{"a": [1, 2]}')
    result = CliRunner().invoke(boostfsm, ["run", str(SAMPLES / "tokens" / "json_tokens.fsm"),
                                           "in.json", "--backend", "reference",
                                           "--tokens-out", target])
    one_line_error(result, "boostfsm", f"--tokens-out {target}", reason)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "folder", "in.json"]
    assert list(Path("folder").iterdir()) == []


@pytest.mark.parametrize("tool, args", [
    ("coconetc", ["run", SGD, "--size", "N=4", "--random"]),
    ("coconetc", ["frob"]),
    ("boostfsm", ["compile", DIV7, "-o", "afile/sub", "--no-build"]),
])
def test_the_installed_commands_exit_1_with_one_line(tmp_path, tool, args) -> None:
    (tmp_path / "afile").write_text("")
    done = subprocess.run([str(Path(sys.executable).parent / tool), *args], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith(f"{tool}: error: ")
    assert done.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.mark.parametrize("fsm", [DIV7, str(SAMPLES / "tokens" / "json_tokens.fsm")],
                         ids=["machine", "token_set"])
@pytest.mark.parametrize("given, reason", [("missing.txt", "No such file"),
                                           ("folder", "Is a directory")])
def test_run_reports_an_unreadable_input_before_building(tmp_path, monkeypatch, fsm, given,
                                                         reason) -> None:
    """`boostfsm run` says the input cannot be read at once, not after a build of minutes."""
    import parafuse.cli.fsm_kinds as cli

    def no_build(*_args, **_kwargs):
        raise AssertionError("built a project for an input that cannot be read")

    monkeypatch.setattr(cli, "runner_for", no_build)
    monkeypatch.setattr(cli, "run_cpp_tokens", no_build)
    monkeypatch.chdir(tmp_path)
    Path("folder").mkdir()
    result = CliRunner().invoke(boostfsm, ["run", fsm, given])
    one_line_error(result, "boostfsm", f"cannot read input '{given}'", reason)


@pytest.mark.parametrize("extra, given", [
    (["-n", "2", "--size", "N=5"], "-n 2 and --size N=5 are"),
    (["-n", "2"], "-n 2 is"),
    (["--size", "N=5"], "--size N=5 is"),
])
def test_coconetc_build_refuses_n_and_size_without_autotune(tmp_path, monkeypatch, extra,
                                                            given) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(coconetc, ["build", SGD, *extra])
    line = one_line_error(result, "coconetc")
    assert line == (f"coconetc: error: {given} for --autotune only (the runner takes sizes at "
                    "run time: sgd_run --size N=...)")
    assert list(tmp_path.iterdir()) == []


def test_coconetc_build_refuses_an_empty_project_folder(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(coconetc, ["build", SGD, "-o", ""])
    one_line_error(result, "coconetc", "-o: an empty path")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("text", ["", "# only a comment\n\n"])
@pytest.mark.parametrize("command", [["check"], ["show"], ["run", "-n", "1"], ["build"]])
def test_a_file_without_programs_is_one_line_for_every_command(tmp_path, monkeypatch, text,
                                                               command) -> None:
    monkeypatch.chdir(tmp_path)
    Path("empty.ccn").write_text(text)
    result = CliRunner().invoke(coconetc, [command[0], "empty.ccn", *command[1:]])
    line = one_line_error(result, "coconetc")
    assert line == "coconetc: error: empty.ccn defines no program"
    assert [p.name for p in tmp_path.iterdir()] == ["empty.ccn"]


def _sum_of(terms: int) -> str:
    return ("program p(N) {\n    input x: f32[N] local\n    y = " + " + ".join(["x"] * terms)
            + "\n    output y\n}\n")


def test_a_long_expression_compiles_and_a_far_too_long_one_is_one_error(tmp_path) -> None:
    """A chain of 2000 operands checks (the default recursion limit stopped at about 400);
    one the parser cannot nest is one line, exit 1, not an internal error."""
    (tmp_path / "long.ccn").write_text(_sum_of(2000))
    result = CliRunner().invoke(coconetc, ["check", str(tmp_path / "long.ccn")])
    assert result.exit_code == 0, result.output
    (tmp_path / "deep.ccn").write_text(_sum_of(15000))
    one_line_error(CliRunner().invoke(coconetc, ["check", str(tmp_path / "deep.ccn")]),
                   "coconetc", "nests too deeply", "split it into several statements")


@pytest.mark.parametrize("tool, sample", [(boostfsm, DIV7), (coconetc, SGD)])
def test_a_byte_order_mark_first_is_dropped(tmp_path, tool, sample) -> None:
    """Some editors write a UTF-8 byte order mark first; it read as a character at 1:1."""
    with_mark = tmp_path / Path(sample).name
    with_mark.write_bytes(b"\xef\xbb\xbf" + Path(sample).read_bytes())
    result = CliRunner().invoke(tool, ["check", str(with_mark)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("backend", ["reference", "cpp"])
def test_output_into_a_closed_pipe_stops_quietly(tmp_path, backend) -> None:
    """`boostfsm run ... | head -1`: no 'internal error' when the reader leaves (reference:
    Python's BrokenPipeError), and exit 128 + SIGPIPE as a C tool killed by it (cpp: the
    runner is, and its status was passed on as 243)."""
    data = tmp_path / "bits"
    data.write_bytes(b"0110\n" * 200_000)
    boostfsm_cli = Path(sys.executable).parent / "boostfsm"
    done = subprocess.run(["bash", "-c", f"'{boostfsm_cli}' run '{DIV7}' '{data}' --matches "
                           f"--backend {backend} 2>err | head -1 >/dev/null; "
                           "echo ${PIPESTATUS[0]}; cat err"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    status, *stderr = done.stdout.splitlines()
    stderr = [line for line in stderr if not line.startswith("boostfsm: compiling ")]  # a build
    assert (status, stderr) == ("141", []), done.stdout


def test_a_snippet_prints_no_raw_bytes_and_cuts_long_lines(tmp_path) -> None:
    """A binary file's snippet is escaped (it printed raw bytes to the terminal), and a long
    line is cut around the caret, which still points at the token."""
    binary = tmp_path / "binary.fsm"
    binary.write_bytes(b"\x7fELF\x02\x01\x00" * 80)
    result = CliRunner().invoke(boostfsm, ["check", str(binary)])
    assert result.exit_code == 1
    snippet, carets = result.stderr.splitlines()[1:3]
    assert snippet.isprintable() and snippet.startswith("    \\x7fELF\\x02")
    assert len(snippet) <= 4 + 3 + 100 + 3 and carets == "    ^^^^"
    long_line = tmp_path / "long.fsm"
    long_line.write_text("machine m {\n  " + "x" * 300 + " @ }\n")
    result = CliRunner().invoke(boostfsm, ["check", str(long_line)])
    snippet, carets = result.stderr.splitlines()[1:3]
    assert len(snippet) <= 4 + 100 + 3 and snippet.endswith("...")
    assert carets.index("^") == snippet.index("x")
