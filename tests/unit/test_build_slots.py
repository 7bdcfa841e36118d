"""Builds share the machine through PARAFUSE_BUILD_SLOTS slot locks (emitters/toolchain/
cmake.py build_slot): that many builds run at once, the next one waits for a free slot."""

from __future__ import annotations

import threading
import time

from parafuse.emitters.toolchain.cmake import build_slot


def _holders_at_once(slots: int, builders: int, monkeypatch, tmp_path) -> int:
    """The most builders that held a slot at the same time."""
    monkeypatch.setenv("PARAFUSE_CACHE", str(tmp_path))
    monkeypatch.setenv("PARAFUSE_BUILD_SLOTS", str(slots))
    holding, most, lock = 0, 0, threading.Lock()

    def build() -> None:
        nonlocal holding, most
        with build_slot():
            with lock:
                holding += 1
                most = max(most, holding)
            time.sleep(0.5)
            with lock:
                holding -= 1

    threads = [threading.Thread(target=build) for _ in range(builders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert holding == 0 and not any(thread.is_alive() for thread in threads)
    return most


def test_one_slot_runs_builds_one_at_a_time(monkeypatch, tmp_path) -> None:
    assert _holders_at_once(1, 3, monkeypatch, tmp_path) == 1


def test_two_slots_run_two_builds_at_once_and_no_more(monkeypatch, tmp_path) -> None:
    assert _holders_at_once(2, 4, monkeypatch, tmp_path) == 2
