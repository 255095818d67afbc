"""An exception line behind a log header (Python logging's ``asctime - levelname -``, loguru, glog, a bracketed
timestamp and level, a Ray/vLLM worker tag) is still the exception it names; prose before an exception name is not."""

from __future__ import annotations

import pytest

from ascendify.diagnose.structure import bare_exception, strip_header
from tests.diagnose.diag_util import top_finding

HEADERS = [
    "2026-03-01 10:00:01,123 - ERROR - ",
    "2026-03-01 10:00:01.123 | ERROR    | train:main:12 - ",
    "[2026-03-01 10:00:01] [ERROR] ",
    "E0501 10:00:00.123456  4242 train.py:12] ",
    "(VllmWorker rank=1 pid=881) ",
    "[ERROR] 2026-03-01-10:00:01 ",
    "2026-03-01T10:00:01Z ERROR ",
]


@pytest.mark.parametrize("header", HEADERS)
def test_an_exception_behind_a_log_header_is_read(header):
    e = bare_exception(header + "AttributeError: 'AscendMetadata' object has no attribute 'num_actual_tokens'")
    assert e is not None and e.type == "AttributeError"
    assert e.message == "'AscendMetadata' object has no attribute 'num_actual_tokens'"


@pytest.mark.parametrize("line", [
    "we got ValueError: a thing here",
    "Fix ZeroDivisionError when prefill_tp_size > num_kv_head",
    "2026-03-01 10:00:01,123 - INFO - loading the model",
])
def test_prose_is_not_an_exception_line(line):
    assert bare_exception(line) is None


def test_strip_header_keeps_the_message():
    assert strip_header("2026-03-01 10:00:01,123 - ERROR - ValueError: x") == "ValueError: x"
    assert strip_header("we got ValueError: x") == "we got ValueError: x"


def test_the_finding_is_the_exception_not_the_header(tmp_path):
    f = top_finding(tmp_path, "2026-03-01 10:00:01,123 - ERROR - KeyError: 'model.layers.0.mlp.experts.w13_weight'\n")
    assert f.exception == {"type": "KeyError", "message": "'model.layers.0.mlp.experts.w13_weight'"}
