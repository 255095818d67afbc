"""`ascendify profile` text: one time unit per line, list and table (issue 22's new-user trial:
"compute 4.01 ms (20.4%), communication not overlapped 608.5 µs" in one line, "> 10000 µs (max 14200 µs)"
in a suggestion under "max 14.20 ms, 3 above 10.00 ms").  Torch-free."""

from __future__ import annotations

import re

from ascendify.profile.analyze import analyze, time_unit, times
from ascendify.profile.cli import render_text
from tests.profile.test_profile import run_dir

SAMPLE = "examples/profile_sample"
KD_HEAD = ("Step Id,Device_id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Num,"
           "Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats\n")


def _units(line: str) -> set:
    return set(re.findall(r"\d (µs|ms|s)\b", line))


def test_times_share_one_unit_from_the_largest():
    assert times(14200, 10000) == ["14.20 ms", "10.00 ms"]
    assert times(4010, 608.5, None) == ["4.01 ms", "0.61 ms", "-"]
    assert times(440.6, 89.9, 20) == ["440.6 µs", "89.9 µs", "20.0 µs"]
    assert times(2.5e6, 300) == ["2.50 s", "0.00 s"]
    assert time_unit([]) == ("µs", 1.0, 1)


def test_no_line_of_the_sample_mixes_ms_and_us():
    text = render_text(analyze(SAMPLE))
    mixed = [ln for ln in text.splitlines() if len(_units(ln)) > 1]
    assert not mixed, mixed
    flat = " ".join(text.split())
    assert "compute 4.01 ms (20.4%), communication not overlapped 0.61 ms (3.1%), overlapped 0.31 ms (1.6%)" in flat
    assert "[dataloader] 3 of 5 data-loader calls > 10.00 ms (max 14.20 ms)" in flat  # as "Data loader: ... 10.00 ms" says
    assert "[cpu-fallback] aten::unique2: 5 call(s), 2.45 ms host time" in flat and "host 2.45 ms" in flat
    assert "×5, 440.6 µs, max 89.9 µs (above the advisor's 20.0 µs task threshold)" in flat  # small times stay µs


def test_the_ai_cpu_list_takes_one_unit_for_all_its_ops(tmp_path):
    kd = KD_HEAD + "".join(f"1,0,{n}_{i},{n},AI_CPU,{100 * i},{us},0,1,N/A,{dt},ND,N/A,{dt},ND\n"
                           for i, (n, us, dt) in enumerate([("IndexPutV2", 2500, "DOUBLE"), ("Cast", 40, "INT64")]))
    text = render_text(analyze(run_dir(tmp_path, kernel_details__csv=kd)))
    rows = [ln.strip() for ln in text.splitlines() if ln.startswith("  ") and ": ×1, " in ln]
    assert rows == ["IndexPutV2 DOUBLE → DOUBLE: ×1, 2.50 ms, max 2.50 ms (above the advisor's 0.02 ms task threshold)",
                    "Cast INT64 → INT64: ×1, 0.04 ms, max 0.04 ms (above the advisor's 0.02 ms task threshold)"], rows
    suggestions = [ln for ln in text.splitlines() if "[aicpu]" in ln]
    assert suggestions and all(len(_units(ln)) == 1 for ln in suggestions), suggestions
