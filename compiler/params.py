"""The compiler's constants (each citing its Activity Frames section) and parameters."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

COMPILER_VERSION = "aframes-compiler 1.0.0"
SCHEMA_VERSION = 1

# Segmentation (§4.2). Capture is event-driven, so a row earns the time to the next row of its
# monitor, capped: a row stands for at most ~3 heartbeat periods of attention.
DWELL_CAP_S = 90.0  # §4.2: credit cap per row, ~3 heartbeat periods
SESSION_GAP_S = 300.0  # §4.2: a longer silence closes the frame and earns nothing
FLICKER_MAX_S = 20.0  # §4.2: A→B→A with B at most this long (wall time) is one A frame
COVERAGE_GAP_S = 300.0  # §4.1: a gap is more than 5 minutes with no row on any monitor

# Enrichment (§4.3).
CLICK_TOLERANCE_PX = 40.0  # §4.3: ring around element bounds for the `tolerance` tier
STALE_INPUT_S = 90.0  # §4.3: an input farther than a dwell cap from any snapshot is unattributed

# Documents (§3.4, §5).
MIN_MINUTES_DEFAULT = 0.5  # §3.4: reference default for the frame floor
MAX_WINDOW_TITLES = 3  # §3.4: windows listed per frame
MAX_CONTEXT_PAGES = 4  # §5: page references per context line before falling back to a title
TYPED_CHARS_NOTE_KEYS = 50  # §5: context lines mention typing above this many keys


@dataclass(frozen=True)
class Params:
    """Everything besides the rows that decides a document; hashed into its provenance."""

    min_minutes: float = MIN_MINUTES_DEFAULT
    include_text: bool = False
    layout: str = "identity"
    # An operator's own keyboard map (captured character -> typed character); overrides layout.
    layout_map: tuple[tuple[str, str], ...] = ()
    dwell_cap_s: float = DWELL_CAP_S
    session_gap_s: float = SESSION_GAP_S
    flicker_max_s: float = FLICKER_MAX_S
    extra: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def digest(self) -> str:
        blob = json.dumps(self.as_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]
