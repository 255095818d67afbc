"""A symptom without a code: a served model whose output is only '!' (token id 0 over and over) has broken logits;
quoted or labelled runs of '!' are read, banners made of '!' are not."""

from __future__ import annotations

import pytest

from tests.diagnose.diag_util import diagnose_text


@pytest.mark.parametrize("line", [
    "Prompt: 'Hello, my name is', Generated text: '!!!!!!!!!!!!!!!!!!!!!!!!'",
    'curl answer: {"choices":[{"text":"!!!!!!!!!!!!"}]}',
    "部署后模型回复全是“!!!!!!!!”，没有别的内容",
    "response: !!!!!!!!!!!!!!!!!!!!",
])
def test_only_exclamation_marks_is_broken_logits(tmp_path, line):
    f = diagnose_text(tmp_path, "INFO 01-01 00:00:00 engine started\n" + line + "\n").findings[0]
    assert f.id == "output-only-exclamation-marks"
    assert "token id 0" in f.cause and "NaN" in f.cause
    assert "weights" in f.fix and "bfloat16" in f.fix
    assert f.verified is False


@pytest.mark.parametrize("line", [
    "!!!!!!!!!! WARNING: this build is experimental !!!!!!!!!!",
    "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
    "Great, it works!!!!!!!",
])
def test_banners_and_excitement_are_not_that_symptom(tmp_path, line):
    rep = diagnose_text(tmp_path, line + "\n")
    assert not any(f.id == "output-only-exclamation-marks" for f in rep.findings)
