"""The E-model's codec presets, in a module of their own so that the closing summary of
`jitterlab sweep`/`simulate` (jitterlab.summary) reads them without importing pandas
(jitterlab.metrics, which re-exports them as `CODECS`, does)."""
from __future__ import annotations

#: Codec presets: (Ie, Bpl) from ITU-T G.113 Appendix I; delay = packetisation + look-ahead (ms).
CODECS: dict[str, dict[str, float]] = {
    "g711": {"ie": 0.0, "bpl": 4.3, "delay_ms": 20.0},
    "g711_plc": {"ie": 0.0, "bpl": 25.1, "delay_ms": 20.0},
    "g729a": {"ie": 11.0, "bpl": 19.0, "delay_ms": 25.0},
}
