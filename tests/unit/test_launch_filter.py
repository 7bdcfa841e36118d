"""run_ranks drops what Open MPI's launcher prints about its own races (PMIx, libevent)
and Open MPI's boxed messages, and keeps every line of ours."""

from __future__ import annotations

from parafuse.emitters.toolchain.mpirun import LAUNCHER_BLOCK, LAUNCHER_LINE

OURS = "sgd_run: error: in/g.rank2.npy: missing file\n"


def _filtered(stderr: str) -> str:
    return LAUNCHER_LINE.sub("", LAUNCHER_BLOCK.sub("", stderr))


def test_launcher_races_are_dropped() -> None:
    stderr = (OURS + "[warn] Epoll MOD(1) on fd 27 failed. Old events were 6; read change was"
              " 2 (del); write change was 0 (none); close change was 0 (none): Bad file "
              "descriptor\n[node:01234] PMIX ERROR: PMIX_ERR_UNREACH in file server.c\n"
              + "-" * 70 + "\nprterun detected that one or more processes exited\n"
              + "-" * 70 + "\n")
    assert _filtered(stderr) == OURS


def test_our_lines_stay() -> None:
    stderr = OURS + "rank 1: [warn] not a launcher line\nEpoll is a word we may print\n"
    assert _filtered(stderr) == stderr
