"""Schedules: checked by name (`check`), then applied directive by directive (`apply`).

One module per directive (`split`, `reorder`, `shard`, `fuse`, `overlap`, `tune`),
each with its `RECORD`; `registry.DIRECTIVES` lists them.
"""
