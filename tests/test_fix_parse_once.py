"""fix parses each text it writes once: the check that the rewrite parses gives the re-scan its tree."""

from __future__ import annotations

import ast

from ascendify.config import Settings
from ascendify.fix.run import fix_source
from ascendify.scan.engine import analyze_source
from ascendify.scan.source import read_source

CODE = 'import torch\n\nx = torch.zeros(3).cuda()\ntorch.cuda.synchronize()\nprint(x.to("cuda:0"))\n'


def test_each_fixed_text_is_parsed_once(tmp_path, monkeypatch):
    p = tmp_path / "train.py"
    p.write_text(CODE, encoding="utf-8")
    s = Settings().validate()
    src = read_source(str(p))
    findings = analyze_source(src, "train.py", s)
    parsed: list = []
    real_parse = ast.parse

    def counting_parse(source, *a, **kw):
        parsed.append(source)
        return real_parse(source, *a, **kw)

    monkeypatch.setattr(ast, "parse", counting_parse)
    text, applied, remaining, _unsafe, error = fix_source(src, findings, s, "train.py")
    assert error is None and applied and text != CODE
    assert "torch.npu.synchronize()" in text and '"npu:0"' in text
    assert parsed.count(text) == 1  # the rewrite's check; the re-scan of the fixed text reuses that tree
    monkeypatch.undo()
    (tmp_path / "fixed.py").write_text(text, encoding="utf-8")
    fresh = analyze_source(read_source(str(tmp_path / "fixed.py")), "train.py", s)
    assert [f.to_dict() for f in remaining] == [f.to_dict() for f in fresh]  # the reused tree gives a scan's findings
