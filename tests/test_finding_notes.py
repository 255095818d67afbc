"""Policy notes are structured ``Finding.notes`` (issue 19): the policy adds notes and never edits the
message; JSON carries them (and old JSON without them still loads); text, CSV, SARIF and the HTML
report show the message and its notes as the one line users read."""

from __future__ import annotations

import csv
import io
import json

from ascendify.config import Settings
from ascendify.diagnostics import Finding, Fix, Edit, Note
from ascendify.output.formats import render_csv, render_json, render_sarif, text_line
from ascendify.rules.registry import get_rule, load_rules
from ascendify.scan.engine import analyze_source
from ascendify.scan.source import read_source

DEAD = """import torch
x = torch.zeros(2)
if torch.cuda.is_available():
    torch.cuda.synchronize()
"""


def _finding(**kw) -> Finding:
    base = dict(code="DEV008", message="`torch.cuda.synchronize` raises without CUDA", path="m.py", line=4, col=4,
                end_line=4, end_col=28, severity="info", category="device")
    base.update(kw)
    return Finding(**base)


def test_notes_round_trip_and_old_json_loads():
    f = _finding(fix=Fix((Edit("replace", "torch.npu.synchronize", (4, 4), (4, 25)),), True, "rename"))
    f.note("dead code on an Ascend host: under the CUDA-only test at line 3", "dead", 3)
    d = f.to_dict()
    assert d["message"] == "`torch.cuda.synchronize` raises without CUDA"
    assert d["notes"] == [{"text": "dead code on an Ascend host: under the CUDA-only test at line 3", "kind": "dead", "line": 3}]
    back = Finding.from_dict(json.loads(json.dumps(d)))
    assert back == f and back.notes == [Note("dead code on an Ascend host: under the CUDA-only test at line 3", "dead", 3)]
    old = dict(d)
    del old["notes"]  # a cache entry or a JSON file written before notes existed
    assert Finding.from_dict(old).notes == []


def test_every_format_shows_message_and_notes():
    f = _finding()
    f.note("a device-keyed table: add an \"npu\" entry", "table")
    f.note("second", "held", 9)
    whole = "`torch.cuda.synchronize` raises without CUDA — a device-keyed table: add an \"npu\" entry — second"
    assert f.full_message == whole
    assert text_line(f).endswith("DEV008 " + whole)
    row = list(csv.reader(io.StringIO(render_csv([f]))))[1]
    assert row[-1] == whole
    res = json.loads(render_sarif([f], rules=load_rules()))["runs"][0]["results"][0]
    assert res["message"]["text"] == whole
    assert res["properties"]["notes"] == [{"text": "a device-keyed table: add an \"npu\" entry", "kind": "table"},
                                          {"text": "second", "kind": "held"}]
    doc = json.loads(render_json([f], {}))
    assert doc["findings"][0]["message"] == f.message and [n["kind"] for n in doc["findings"][0]["notes"]] == ["table", "held"]
    plain = _finding()
    assert plain.full_message == plain.message and "notes" not in json.loads(render_sarif([plain], rules=load_rules()))["runs"][0]["results"][0]["properties"]


def test_policy_adds_a_note_and_keeps_the_rules_message(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(DEAD, encoding="utf-8")
    found = analyze_source(read_source(str(p)), "m.py", Settings().validate())
    body = [f for f in found if f.line == 4]
    assert len(body) == 1
    f = body[0]
    assert f.severity == "info" and [(n.kind, n.line) for n in f.notes] == [("dead", 3)]
    assert " — " not in f.message and "dead code" not in f.message
    rule = get_rule(f.code)
    assert rule is not None and f.message.split("`")[0] == rule.message.split("`")[0]
    assert f.full_message.endswith("under the CUDA-only test at line 3 (fixed together with that test)")
