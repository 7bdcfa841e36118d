"""The emulated device's projects as the tests build them: the product's
(emitters/ccn/cuda/emulated.py, `--backend cuda-emulated`), cached by content, with an
optional P_bound_check (bound_check.cpp.in: Program::bind checked against plain steps). What
the device checks and what it cannot is in cpp_runtime/ccn/cuda_emulated/README.md."""

from __future__ import annotations

from pathlib import Path

from parafuse.ccn_compiler.frontend import CheckedModule
from parafuse.emitters.ccn.chunk_policy import ChunkVariant
from parafuse.emitters.ccn.cuda import emulated
from parafuse.emitters.names import cpp_name
from parafuse.emitters.toolchain.cmake import cached_build

HERE = Path(__file__).resolve().parent

BOUND_CHECK = """\
add_executable({name}_bound_check src/{name}_bound_check.cpp)
target_include_directories({name}_bound_check BEFORE PRIVATE {emulation})
target_link_libraries({name}_bound_check PRIVATE {target})
set_target_properties({name}_bound_check PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}})
"""


def emulated_files(module: CheckedModule, program: str, schedules: list[str],
                   variants: tuple[ChunkVariant, ...] = (),
                   default_schedule: str | None = None,
                   bound_check: dict[str, int] | None = None) -> dict[str, str | bytes]:
    """The project's files; `bound_check` (sizes) adds P_bound_check (bound_check.cpp.in).
    Without one, and without variants, they are the files `coconetc run FILE --backend
    cuda-emulated` builds (the same command line in their banner), so both share the cache."""
    files = emulated.emulated_files(module, program, schedules, cli_command(module),
                                    variants, default_schedule)
    if bound_check is not None:
        target = cpp_name(program)  # the library's CMake target and C++ namespace
        files["CMakeLists.txt"] += BOUND_CHECK.format(name=program, target=target,
                                                      emulation=emulated.EMULATION)
        sizes = " ".join(f"sizes.{cpp_name(n)} = {v};" for n, v in bound_check.items())
        source = (HERE / "bound_check.cpp.in").read_text()
        files[f"src/{program}_bound_check.cpp"] = source.replace("@FILE@", program).replace(
            "@NAME@", target).replace("@SIZES@", sizes)
    return files


def cli_command(module: CheckedModule) -> str:
    """The command line `coconetc run|build` names in the projects it builds."""
    return f"coconetc build {module.filename} --backend {emulated.BACKEND}"


def build_emulated(module: CheckedModule, program: str, schedules: list[str],
                   variants: tuple[ChunkVariant, ...] = (),
                   bound_check: dict[str, int] | None = None) -> Path:
    """The built project (cached by content), runnable with run_ranks like any other."""
    files = emulated_files(module, program, schedules, variants, bound_check=bound_check)
    return cached_build(f"{program}-cuda-emulated", files, emulated.cmake_arguments())


def build_emulated_python(module: CheckedModule, program: str, schedules: list[str]) -> Path:
    """The project with its Python module (host tensors only), cached by content."""
    files = emulated.emulated_files(module, program, schedules, f"emulated {program} --python",
                                    python=True)
    return cached_build(f"{program}-cuda-emulated-python", files,
                        emulated.cmake_arguments(python=True))


def tuning_builder(module: CheckedModule, program: str, schedules: list[str], command: str,
                   out_dir: Path | None = None, variants: tuple[ChunkVariant, ...] = (),
                   default_schedule: str | None = None) -> Path:
    """The emulated project as the autotuner builds projects (see emitters/autotune.py)."""
    return emulated.build_emulated_project(module, program, schedules, command, out_dir,
                                           variants, default_schedule)
