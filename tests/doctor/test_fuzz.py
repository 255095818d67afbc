"""Garbage in → check results out, never an exception."""

from __future__ import annotations

import os
import tempfile

from hypothesis import HealthCheck, given, settings, strategies as st

from ascendify.doctor import parsers as P
from ascendify.doctor.core import Options, run_doctor
from ascendify.doctor.model import STATUSES

from . import fakes as F

TABLE_CHARS = st.text(alphabet="|+=- 0123456789ABCDEFabcdefNPUChipBusIdHealthOK/:.\n", max_size=600)


@settings(max_examples=150, deadline=None)
@given(st.one_of(TABLE_CHARS, st.text(max_size=400)))
def test_npu_smi_parser_never_raises(text):
    info = P.parse_npu_smi(text)
    assert info.chips or info.problems


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=300))
def test_kv_parser_never_raises(text):
    kv, bad = P.parse_kv(text)
    assert all(k == k.lower() for k in kv)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(toolkit=st.binary(max_size=200), driver=st.binary(max_size=200), smi=st.text(max_size=300))
def test_doctor_on_garbage_files(toolkit, driver, smi):
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "r")
        home = F.make_cann(root)
        F.make_driver(root)
        F.make_site(root)
        F.write_bytes(root, "/usr/local/Ascend/ascend-toolkit/8.3.RC1/aarch64-linux/ascend_toolkit_install.info",
                      toolkit)
        F.write_bytes(root, "/usr/local/Ascend/driver/version.info", driver)
        smi_path = os.path.join(tmp, "smi.txt")
        with open(smi_path, "w") as fh:
            fh.write(smi)
        rep = run_doctor(Options(root=root, env=F.set_env(home), npu_smi=smi_path))
        assert all(c.status in STATUSES for c in rep.checks)
        assert not any(c.id.endswith("internal_error") for c in rep.checks), \
            [c.found for c in rep.checks if c.id.endswith("internal_error")]
