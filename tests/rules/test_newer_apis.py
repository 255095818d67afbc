"""Issue 20 item 6: newer device-type APIs and "not CPU means CUDA" flags.

Each family: what is reported (positive), what is not (negative, scope included), and what the
fix writes for each target.  Rule fixtures for the new codes are in ``cases/`` (test_rule_cases).
"""

from __future__ import annotations

import textwrap

from ascendify.config import Settings
from ascendify.fix.run import fix_source
from ascendify.scan.engine import analyze_source
from ascendify.scan.source import SourceFile


def _src(text: str) -> SourceFile:
    return SourceFile(path="t.py", text=textwrap.dedent(text).lstrip("\n"))


def scan(text: str, select=None, target: str = "npu", **kw):
    s = Settings(select=list(select or []), target=target, **kw).validate()
    return analyze_source(_src(text), "t.py", s)


def fixed(text: str, select, target: str = "npu", unsafe: bool = False, **kw) -> str:
    s = Settings(select=list(select), target=target, unsafe_fixes=unsafe, **kw).validate()
    src = _src(text)
    findings = analyze_source(src, "t.py", s)
    out, _applied, _rem, _unsafe, error = fix_source(src, findings, s, "t.py")
    assert error is None, error
    return out


def codes(findings) -> list:
    return [(f.code, f.line) for f in findings]


# ---------------------------------------------------------------- `input` is not an NPU flag
def test_input_named_tensor_is_cuda_guard_is_reported():
    """dcgan's ``if input.is_cuda and self.ngpu > 1: nn.parallel.data_parallel(...)``: the parameter
    ``input`` (i-n-p-u-t) was read as a flag naming the NPU, which hid both findings."""
    text = """
    import torch.nn as nn

    class G(nn.Module):
        def forward(self, input):
            if input.is_cuda and self.ngpu > 1:
                output = nn.parallel.data_parallel(self.main, input, range(self.ngpu))
            else:
                output = self.main(input)
            return output
    """
    got = scan(text, ["DEV015", "DST005"])
    assert codes(got) == [("DEV015", 5), ("DST005", 6)]
    dev015 = got[0]
    assert dev015.fix is None  # the guard keeps the NPU on the single-device path: left as written
    assert got[1].fix is None and got[1].severity == "info"  # dead on an Ascend host under the CUDA test


def test_is_cuda_or_is_xpu_choosing_data_parallel_is_left_as_written():
    """pytorch/examples dcgan today: ``(input.is_cuda or input.is_xpu) and self.ngpu > 1``.  ``is_xpu`` is
    another accelerator's test (false on an NPU), so the guard is CUDA-only: turning it into ``is_npu``
    would send an NPU host into the unsupported ``data_parallel``; it stays, and says why."""
    text = """
    import torch.nn as nn

    class G(nn.Module):
        def forward(self, input):
            if (input.is_cuda or input.is_xpu) and self.ngpu > 1:
                output = nn.parallel.data_parallel(self.main, input, range(self.ngpu))
            else:
                output = self.main(input)
            return output
    """
    got = scan(text, ["DEV015", "DST005"])
    assert [(f.code, f.line, f.fix is None, f.severity) for f in got] == [("DEV015", 5, True, "silent"), ("DST005", 6, True, "info")]


def test_input_named_device_type_test_is_reported():
    text = """
    import torch

    def g(input):
        if input.device.type == "cuda":
            input = input.contiguous()
        return input
    """
    assert codes(scan(text, ["DEV023"])) == [("DEV023", 4)]


def test_flag_named_for_the_npu_still_excuses():
    text = """
    import torch

    def g(x, use_npu):
        if x.is_cuda or use_npu:
            x = x.contiguous()
        return x
    """
    assert codes(scan(text, ["DEV015"])) == []


# ---------------------------------------------------------------- DST012 device mesh
MESH = """
import torch
from torch.distributed.device_mesh import init_device_mesh

mesh = init_device_mesh("cuda", (2, 4), mesh_dim_names=("dp", "tp"))
"""


def test_device_mesh_fix_npu_and_agnostic():
    assert codes(scan(MESH, ["DST012"])) == [("DST012", 4)]
    assert 'init_device_mesh("npu", (2, 4), mesh_dim_names=("dp", "tp"))' in fixed(MESH, ["DST012"])
    agn = fixed(MESH, ["DST012"], target="agnostic")
    assert 'mesh = init_device_mesh(DEVICE_TYPE, (2, 4), mesh_dim_names=("dp", "tp"))' in agn
    assert "DEVICE_TYPE = torch.accelerator.current_accelerator().type" in agn


def test_device_mesh_cuda_literal_not_reported_twice():
    """The literal is DST012's alone: DEV024/DEV004 leave calls of the distributed domain to it."""
    got = scan(MESH + 'm = torch.distributed.device_mesh.DeviceMesh(device_type="cuda", mesh=[0, 1])\n')
    assert [(c, ln) for c, ln in codes(got) if ln in (4, 5)] == [("DST012", 4), ("DST012", 5)]


def test_device_mesh_local_function_is_not_torch():
    text = """
    def init_device_mesh(kind, shape):
        return (kind, shape)

    mesh = init_device_mesh("cuda", (8,))
    """
    assert codes(scan(text, ["DST012"])) == []


# ---------------------------------------------------------------- DEV010 memory history
HISTORY = """
import torch

torch.cuda.memory._record_memory_history(max_entries=100000)
snap = torch.cuda.memory._snapshot()
torch.cuda.memory._dump_snapshot("mem.pickle")
torch.cuda.memory._record_memory_history(enabled=None)
"""


def test_memory_history_reported_and_fixed_for_npu():
    got = scan(HISTORY, ["DEV010"])
    assert codes(got) == [("DEV010", 3), ("DEV010", 4), ("DEV010", 5), ("DEV010", 6)]
    assert all(f.severity == "error" and f.fix is not None and f.fix.safe for f in got)
    assert "`torch.npu.memory._snapshot`" in got[1].message
    out = fixed(HISTORY, ["DEV010"], torch_npu="2.7.1")
    assert out == textwrap.dedent(HISTORY).lstrip("\n").replace("torch.cuda.memory.", "torch.npu.memory.")


def test_memory_history_agnostic_has_no_fix():
    got = scan(HISTORY, ["DEV010"], target="agnostic")
    assert len(got) == 4 and all(f.fix is None for f in got)
    assert "torch.get_device_module(DEVICE_TYPE).memory._record_memory_history" in got[0].message


def test_memory_history_arguments_torch_npu_does_not_take_get_no_fix():
    text = """
    import torch

    torch.cuda.memory._record_memory_history(True, trace_alloc_max_entries=10)
    torch.cuda.memory._record_memory_history(max_entries=10, clear_history=True)
    torch.cuda.memory._snapshot(augment_with_fx_traces=True)
    torch.cuda.memory._record_memory_history(enabled="all", stacks="python")
    """
    got = scan(text, ["DEV010"])
    assert [(f.line, f.fix is not None) for f in got] == [(3, False), (4, False), (5, False), (6, True)]


def test_memory_history_by_release():
    """torch_npu has them from 2.1.0.post4 (6.0.rc1), 2.2.0.post2 and 2.3.1 (6.0.rc2) on."""
    from ascendify.rules.checks.newer_apis import memory_history_on_npu

    assert [memory_history_on_npu(v) for v in ("2.1.0", "2.1.0.post3", "2.1.0.post4", "2.2.0", "2.2.0.post2", "2.3.1",
                                                "2.5.1", "2.12.0", "2.0.1")] == [False, False, True, False, True, True, True, True, False]
    got = scan(HISTORY, ["DEV010"], torch_npu="2.1.0")
    assert len(got) == 4 and all(f.fix is None for f in got)
    assert "torch_npu 2.1.0 has no NPU version" in got[0].message


def test_memory_history_scope_and_imports():
    text = """
    import torch
    from torch.cuda.memory import _record_memory_history as rec

    rec(max_entries=10)

    def f(rec):
        rec()  # a parameter: not the import

    class Mem:
        def _snapshot(self):
            return {}

    Mem()._snapshot()
    torch.npu.memory._snapshot()
    """
    got = scan(text, ["DEV010"])
    assert [(f.line, f.fix is None) for f in got] == [(4, True)]  # the imported name: reported, no rename of it alone


# ---------------------------------------------------------------- DEV007 is_built
def test_is_built_reported_with_unsafe_fix():
    text = """
    import torch

    if torch.backends.cuda.is_built():
        print("CUDA build")
    """
    got = scan(text, ["DEV007"])
    assert codes(got) == [("DEV007", 3)]
    assert got[0].severity == "silent" and got[0].fix is not None and not got[0].fix.safe
    assert fixed(text, ["DEV007"]) == fixed(text, ["DEV007"], unsafe=False)  # not applied without --unsafe-fixes
    assert "if torch.npu.is_available():" in fixed(text, ["DEV007"], unsafe=True)
    agn = scan(text, ["DEV007"], target="agnostic")
    assert agn[0].fix is None and "torch.accelerator.is_available()" in agn[0].message


def test_is_built_other_backends_and_shadowing_not_reported():
    text = """
    import torch

    torch.backends.mps.is_built()
    torch.backends.cudnn.is_available()

    def f(torch):
        return torch.backends.cuda.is_built()  # a parameter named torch
    """
    assert codes(scan(text, ["DEV007"])) == []


# ---------------------------------------------------------------- DEV027 "not the CPU" flags
FLAG = """
import torch

def step(device):
    cuda = device.type != "cpu"
    if cuda:
        torch.cuda.synchronize()
"""


def test_not_cpu_flag_related_location_is_the_definition():
    got = scan(FLAG, ["DEV027"])
    assert codes(got) == [("DEV027", 5)]
    f = got[0]
    assert f.fix is None and f.severity == "warning"
    assert f.related == [{"path": "t.py", "line": 4, "col": 11,
                          "message": '`cuda` is defined here as `device.type != "cpu"`: true for any device that is not the CPU'}]


def test_not_cpu_flag_with_the_cuda_work_fixed_is_quiet():
    assert codes(scan(fixed(FLAG, ["DEV008"]), ["DEV027"])) == []


def test_not_cpu_flag_redefined_in_another_scope():
    """Another function's ``cuda`` is its own: only the one bound to the "not CPU" test counts."""
    text = """
    import torch

    def a(device):
        cuda = device.type != "cpu"
        return cuda

    def b(args):
        cuda = args.cuda
        if cuda:
            torch.cuda.synchronize()
    """
    assert codes(scan(text, ["DEV027"])) == []


# ---------------------------------------------------------------- DST013 DDP in a process that never sets its device
DDP_SCRIPT = """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group("nccl")
model = torch.nn.Linear(8, 8).to(f"cuda:{local_rank}")
model = DDP(model)
"""


def test_ddp_without_device_ids_and_no_set_device():
    got = scan(DDP_SCRIPT, ["DST013"])
    assert codes(got) == [("DST013", 9)]
    assert got[0].fix is None and got[0].severity == "warning"
    assert got[0].related[0]["line"] == 7


def test_ddp_device_set_or_given_or_not_per_process_is_quiet():
    sets = DDP_SCRIPT.replace('dist.init_process_group("nccl")', 'torch.npu.set_device(local_rank)\ndist.init_process_group("hccl")')
    accel = DDP_SCRIPT.replace('dist.init_process_group("nccl")', 'torch.accelerator.set_device_index(local_rank)\ndist.init_process_group()')
    dev_id = DDP_SCRIPT.replace('dist.init_process_group("nccl")', 'dist.init_process_group(device_id=torch.device("npu", local_rank))')
    given = DDP_SCRIPT.replace("DDP(model)", "DDP(model, device_ids=[local_rank])")
    positional = DDP_SCRIPT.replace("DDP(model)", "DDP(model, [local_rank])")
    no_rank = DDP_SCRIPT.replace('local_rank = int(os.environ["LOCAL_RANK"])', "rank = 0").replace("{local_rank}", "{rank}")
    no_group = DDP_SCRIPT.replace('dist.init_process_group("nccl")\n', "")  # set up elsewhere (a helper may set the device)
    for text in (sets, accel, dev_id, given, positional, no_rank, no_group):
        assert codes(scan(text, ["DST013"])) == [], text


def test_ddp_local_class_named_like_torchs_is_not_reported():
    text = DDP_SCRIPT.replace("from torch.nn.parallel import DistributedDataParallel as DDP",
                              "class DDP:\n    def __init__(self, m):\n        self.m = m")
    assert codes(scan(text, ["DST013"])) == []
