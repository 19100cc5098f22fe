"""The RWND-moderation study (Wibra slides): filled in by the RWND moderation issue. The preset
mechanism is in place (`jitterlab reproduce rwnd` finds this module); running it says what is
missing instead of producing a half report."""
from __future__ import annotations

from pathlib import Path

DESCRIPTION = "RWND moderation at the receiving host vs no moderation (not built yet)"


def run(out: str | Path, reps: int | None = None, jobs: int | None = None, executor: str = "local",
        scheduler: str | None = None, progress: bool = True) -> Path:
    from jitterlab.cli import UserError

    raise UserError("the rwnd preset needs the receiver-window moderation of issue 6, which is not built yet")
