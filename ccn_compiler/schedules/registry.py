"""Every schedule directive, by name, in the order docs/ccn-language.md section 8 lists them.

Adding a directive means writing its module (argument check, legality check,
rewrite with a before/after docstring, and its `RECORD`) and listing it here.
"""

from __future__ import annotations

from . import fuse, microbatch, overlap, reorder, shard, split, tune
from .record import DirectiveRecord

DIRECTIVES: dict[str, DirectiveRecord] = {
    record.name: record
    for record in (split.RECORD, reorder.RECORD, shard.RECORD, fuse.RECORD, overlap.RECORD,
                   microbatch.RECORD, tune.RECORD)
}
