"""Generate ``src/ascendify/rules/data/chips_bf16.json`` (soc_version → family, bf16 support).

STOPGAP: the DTY rules need to know whether the configured chip has bf16.
The chip table will live in ``ascendify.kb.chips``; until it exists this
script derives a small table from the research notes' hand-assembled
``reference/data/derived/soc_versions.json`` (sources listed inside that file:
torch_npu ``NpuVariables.cpp`` ``IsBF16Supported`` = SoC ≥ Ascend910B1, CANN
ATC ``--soc_version`` docs).  Delete this script and the JSON once
``ascendify.kb.chips`` ships, and switch ``rules/checks/dtype.py`` to it.

Usage: python tools/gen_chips_bf16.py [path/to/reference]   (default ../shared/reference)
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Families whose bf16 answer in soc_versions.json is contradicted by torch_npu's source:
# NpuVariables.cpp `IsBF16Supported()` is `GetSocVersion() >= SocVersion::Ascend910B1` (220), and
# NpuVariables.h numbers Ascend310B1..B4 as 240..243, so torch_npu reports bf16 *supported* on 310B
# while the JSON says false.  Whether the 310B hardware runs bf16 is not confirmed: mark it unknown.
UNKNOWN_BF16 = {
    "ascend310b": "soc_versions.json says no bf16, but torch_npu IsBF16Supported() (SocVersion >= Ascend910B1) "
    "returns true for Ascend310B1-B4 (enum 240-243; Ascend/pytorch master 9e73e708); unverified",
}
OUT = os.path.join(HERE, "..", "src", "ascendify", "rules", "data", "chips_bf16.json")


def main(argv: list) -> int:
    ref = argv[1] if len(argv) > 1 else os.path.join(HERE, "..", "..", "shared", "reference")
    src = os.path.join(ref, "data", "derived", "soc_versions.json")
    with open(src, encoding="utf-8") as fh:
        data = json.load(fh)
    chips, prefixes, lacking = {}, {}, []
    for fam_key, fam in sorted(data["families"].items()):
        bf16 = fam.get("bf16")  # absent = unknown (e.g. legacy Ascend310, not in torch_npu)
        entry = {"family": fam_key, "name": fam["chip"], "bf16": bf16}
        if fam_key in UNKNOWN_BF16:
            bf16 = entry["bf16"] = None
            entry["note"] = UNKNOWN_BF16[fam_key]
        for soc in fam["soc_versions"]:
            chips[soc] = entry
        if fam_key == "ascend950":  # torch_npu maps any "Ascend950*" name to this family
            prefixes["Ascend950"] = entry
        if bf16 is False:
            lacking.append(fam["chip"])
    out = {
        "_generated_by": "tools/gen_chips_bf16.py — STOPGAP until ascendify.kb.chips exists; do not edit by hand",
        "_derived_from": "reference/data/derived/soc_versions.json",
        "_sources": data.get("_source", []),
        "chips": chips,
        "prefixes": prefixes,
        "families_without_bf16": lacking,
    }
    tmp = OUT + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1, ensure_ascii=False, sort_keys=False)
        fh.write("\n")
    os.replace(tmp, OUT)
    print(f"wrote {os.path.relpath(OUT)}: {len(chips)} soc_versions")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
