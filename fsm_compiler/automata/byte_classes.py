"""Byte classes: the partition of the 256 byte values into the classes a machine
distinguishes. Classes are numbered by their smallest byte, so class 0 holds byte 0
and visiting classes in order visits bytes in ascending order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class BytePartition:
    byte_class: np.ndarray  # (256,) uint8
    representatives: tuple[int, ...]  # smallest byte of each class

    @property
    def class_count(self) -> int:
        return len(self.representatives)

    def classes_in(self, byte_mask: int) -> list[int]:
        """The classes inside `byte_mask` (a 256-bit set; it must be a union of classes)."""
        return [index for index, byte in enumerate(self.representatives)
                if (byte_mask >> byte) & 1]


def _from_signatures(signatures: list) -> BytePartition:
    """Number classes in order of first byte: bytes with equal signatures share a class."""
    class_of_signature: dict = {}
    byte_class = np.zeros(256, dtype=np.uint8)
    representatives: list[int] = []
    for byte, signature in enumerate(signatures):
        if signature not in class_of_signature:
            class_of_signature[signature] = len(representatives)
            representatives.append(byte)
        byte_class[byte] = class_of_signature[signature]
    return BytePartition(byte_class, tuple(representatives))


def partition_by_masks(byte_masks: Iterable[int]) -> BytePartition:
    """The coarsest partition in which every mask is a union of classes."""
    distinct = list(dict.fromkeys(byte_masks))
    signatures = [0] * 256
    for index, mask in enumerate(distinct):
        for byte in range(256):
            if (mask >> byte) & 1:
                signatures[byte] |= 1 << index
    return _from_signatures(signatures)


def partition_by_columns(byte_table: np.ndarray) -> tuple[BytePartition, np.ndarray]:
    """Merge bytes whose columns in a (states, 256) table are equal.

    Returns the partition and the (states, classes) table it compresses to.
    """
    columns = np.ascontiguousarray(byte_table.T)
    signatures = [columns[byte].tobytes() for byte in range(256)]
    partition = _from_signatures(signatures)
    return partition, np.ascontiguousarray(byte_table[:, list(partition.representatives)])
