"""The blob's header slots have one source (emitters/fsm/blob_slots.py): the checked-in
C++ header is what Python generates now, and the writer puts each value in its slot."""

from __future__ import annotations

import numpy as np

from parafuse.emitters.fsm.blob import MAGIC, machine_blob
from parafuse.emitters.fsm.blob_slots import HEADER_SLOTS, BlobSection, BlobSlot, cpp_header
from parafuse.emitters.toolchain.runtime import CPP_RUNTIME
from parafuse.fsm_compiler.analysis.project_analysis import untrained_analysis
from tests.unit.test_fsm_cpp_emit import sample_machine


def test_checked_in_header_is_generated_from_python() -> None:
    checked_in = (CPP_RUNTIME / "fsm" / "core" / "blob_slots.hpp").read_text()
    assert checked_in == cpp_header(), (
        "cpp_runtime/fsm/core/blob_slots.hpp is stale: run "
        "`python -m parafuse.emitters.fsm.blob_slots > cpp_runtime/fsm/core/blob_slots.hpp`")


def test_every_slot_and_section_is_named_in_cpp() -> None:
    header = cpp_header()
    for member in [*BlobSlot, *BlobSection]:
        assert f"  {member.name.lower()} = {int(member)}," in header
    assert max(BlobSlot) + 2 * len(BlobSection) <= HEADER_SLOTS


def test_writer_fills_the_named_slots() -> None:
    machine = sample_machine("div7")
    blob = machine_blob(machine, untrained_analysis(machine))
    slots = np.frombuffer(blob[:HEADER_SLOTS * 8], dtype=np.uint64)
    assert slots[BlobSlot.MAGIC] == MAGIC
    assert slots[BlobSlot.STATES] == machine.state_count
    assert slots[BlobSlot.CLASSES] == machine.class_count
    assert slots[BlobSlot.TAG_COUNT] == len(machine.tag_names)
    assert slots[BlobSlot.LOOKBACK] == machine.options.lookback
    first = BlobSlot.SECTIONS + 2 * BlobSection.BYTE_CLASS
    assert slots[first] == HEADER_SLOTS * 8 and slots[first + 1] == 256
