"""DST010 / DST011 one script at a time.

Anything in a file that may wrap a model or synchronise gradients silences DST010 for the whole
file, so the one-fixture-per-rule harness (test_rule_cases.py) can show only one kind of negative;
here each kind gets its own small script: the same unsynchronised training loop, plus one thing
that synchronises it (or makes it single-process).
"""

from __future__ import annotations

import textwrap

import pytest

from .helpers import findings_for

SCRIPT = """
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
{imports}

{init}
local_rank = int(os.environ.get("LOCAL_RANK", 0))
model = torch.nn.Linear(32, 10).cuda(local_rank)
{wrap}
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
loader = [(torch.randn(8, 32), torch.randint(0, 10, (8,)))] * 10
for x, y in loader:
    loss = F.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
    optimizer.zero_grad()
    loss.backward()
    {sync}
    optimizer.step()
"""
INIT = 'dist.init_process_group("nccl")'


def script(imports="", init=INIT, wrap="", sync="pass"):
    return SCRIPT.format(imports=imports, init=init, wrap=wrap, sync=sync)


def _lines(tmp_path, text, code):
    p = tmp_path / "train.py"
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return [(f.line, f.col) for f in findings_for(str(p), code)]


def _step_line(text, needle="optimizer.step()"):
    lines = textwrap.dedent(text).splitlines()
    return next(i for i, line in enumerate(lines, 1) if needle in line)


def test_dst010_reports_the_unsynchronised_step_at_its_token(tmp_path):
    text = script()
    line = _step_line(text)
    col = textwrap.dedent(text).splitlines()[line - 1].index(".step")
    assert _lines(tmp_path, text, "DST010") == [(line, col)]
    (f,) = findings_for(str(tmp_path / "train.py"), "DST010")
    init = _step_line(text, "init_process_group")
    assert "each rank updates its own weights" in f.message and f"init_process_group` at line {init}" in f.message


@pytest.mark.parametrize("text", [
    script(init="from torch.distributed.device_mesh import init_device_mesh\nmesh = init_device_mesh('cuda', (8,))"),
    script(sync="dist.all_reduce(loss.detach())  # logging only"),
    script(wrap="model = torch.compile(model)"),
    script(imports="from torch.utils.data import DistributedSampler", wrap="sampler = DistributedSampler(loader)"),
    script(imports="from timm.optim import create_optimizer_v2").replace(
        "torch.optim.AdamW(model.parameters(), lr=1e-3)", 'create_optimizer_v2(model, "adamw", lr=1e-3)'),
], ids=["init_device_mesh", "loss-all-reduce", "torch.compile", "distributed-sampler", "optimizer-factory"])
def test_dst010_still_reports(tmp_path, text):
    assert _lines(tmp_path, text, "DST010") == [(_step_line(text), 4 + len("optimizer"))]


NEGATIVES = {
    "ddp": script(imports="from torch.nn.parallel import DistributedDataParallel as DDP",
                  wrap="model = DDP(model, device_ids=[local_rank])"),
    "ddp-alias": script(imports="from torch.nn.parallel import DistributedDataParallel as NativeDDP",
                        wrap="model = NativeDDP(model)"),
    "ddp-attribute": script(wrap="model = torch.nn.parallel.DistributedDataParallel(model)"),
    "ddp-under-odd-alias": script(imports="from torch.nn.parallel import DistributedDataParallel as Wrapper",
                                  wrap="model = Wrapper(model)"),
    "fsdp": script(imports="from torch.distributed.fsdp import FullyShardedDataParallel as FSDP",
                   wrap="model = FSDP(model)"),
    "fully_shard": script(init="from torch.distributed.device_mesh import init_device_mesh\nmesh = init_device_mesh('cuda', (8,))",
                          imports="from torch.distributed.fsdp import fully_shard",
                          wrap="fully_shard(model, mesh=mesh)"),
    "deepspeed": script(imports="import deepspeed",
                        wrap="model, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters())"),
    "accelerate": script(imports="from accelerate import Accelerator",
                         wrap="accelerator = Accelerator()\nmodel = accelerator.prepare(model)"),
    "lightning-fabric": script(imports="import lightning as L", wrap="fabric = L.Fabric()\nmodel = fabric.setup(model)"),
    "horovod": script(imports="import horovod.torch as hvd", wrap="hvd.init()"),
    "manual-all-reduce": script(sync="for p in model.parameters():\n        dist.all_reduce(p.grad)\n        p.grad /= dist.get_world_size()"),
    "flat-buffer": script(sync="buf = torch.cat([p.grad.flatten() for p in model.parameters()])\n    dist.all_reduce(buf)"),
    "all-reduce-coalesced-helper-var": script(sync="grads = [p.grad for p in model.parameters()]\n    dist.all_reduce_coalesced(grads)"),
    "average-gradients-helper": script(imports="from utils import average_gradients", sync="average_gradients(model)"),
    "sync-gradients-method": script(imports="import comm", sync="comm.sync_gradients(model.parameters())"),
    "param-averaging": script(sync="for p in model.parameters():\n        dist.all_reduce(p.data)"),
    "create_ddp_model": script(imports="from detectron2.engine.defaults import create_ddp_model",
                               wrap="model = create_ddp_model(model, broadcast_buffers=False)"),
    "smart_DDP": script(imports="from utils.torch_utils import smart_DDP", wrap="model = smart_DDP(model)"),
    "wrap-helper": script(imports="from myproject.dist import wrap_model", wrap="net = wrap_model(model)"),
    "helper-elsewhere-reassigns": script(imports="from myproject import prepare", wrap="model = prepare(model, local_rank)"),
    "factory-with-rank": script(imports="from myproject import get_model", wrap="model = get_model('resnet50', local_rank)"),
    "model.module": script(wrap="print(model.module)"),
    "require_backward_grad_sync": script(wrap="model.require_backward_grad_sync = True"),
    "pipeline-p2p": script(sync="dist.send(x, dst=1)"),
    "sub-groups": script(wrap="group = dist.new_group([0, 1])"),
    "comm-hook": script(sync="pass", wrap="model.register_comm_hook(None, hook)"),
    "grad-hook": script(wrap="for p in model.parameters():\n    p.register_hook(lambda g: dist.all_reduce(g))"),
    "single-process": script(init=""),
    "one-rank-group": script(init='dist.init_process_group("gloo", rank=0, world_size=1)'),
    "torchrun-env-only": script(init='world_size = int(os.environ["WORLD_SIZE"])\nrank = int(os.environ["RANK"])'),
}


@pytest.mark.parametrize("name", sorted(NEGATIVES))
def test_dst010_silent_when_synchronised_or_single_process(tmp_path, name):
    assert _lines(tmp_path, NEGATIVES[name], "DST010") == []


def test_dst010_follows_the_model_into_the_training_function(tmp_path):
    text = """
    import torch
    import torch.distributed as dist

    def train(model, optimizer, loader):
        for x in loader:
            model(x).sum().backward()
            optimizer.step()

    def main(loader):
        dist.init_process_group("nccl")
        model = torch.nn.Linear(4, 4).cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        train(model, optimizer, loader)
    """
    assert _lines(tmp_path, text, "DST010") == [(8, 17)]
    # the same function called with a model from a helper this file cannot see: silent
    hidden = text.replace("model = torch.nn.Linear(4, 4).cuda()", "model = load_model()")
    assert _lines(tmp_path, hidden, "DST010") == []
    # and never called here at all (a library function): silent
    library = text.replace("        train(model, optimizer, loader)\n", "")
    assert _lines(tmp_path, library, "DST010") == []


def test_dst010_silent_in_tests(tmp_path):
    """Distributed tests often give every rank the same batch on purpose (their gradients agree)."""
    text = """
    import torch
    import torch.distributed as dist

    def test_checkpoint_roundtrip(tmp_path):
        dist.init_process_group("gloo")
        model = torch.nn.Linear(4, 4)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            model(torch.ones(2, 4)).sum().backward()
            optimizer.step()
    """
    assert _lines(tmp_path, text, "DST010") == []


DST011_BASE = """
import torch
import torch.distributed as dist


def train(model, loader, optimizer, accum):
    for i, (x, y) in enumerate(loader):
        with model.no_sync():
            torch.nn.functional.mse_loss(model(x), y).backward()
        if (i + 1) % accum == 0:
            {extra}
            optimizer.step()
            optimizer.zero_grad()
"""


def test_dst011_reports_at_no_sync(tmp_path):
    assert _lines(tmp_path, DST011_BASE.format(extra="pass"), "DST011") == [(8, 18)]


@pytest.mark.parametrize("extra", [
    "for p in model.parameters():\n                dist.all_reduce(p.grad)",
    "average_gradients(model)",
    "model.require_backward_grad_sync = True",
], ids=["manual-all-reduce", "sync-helper", "require_backward_grad_sync"])
def test_dst011_silent_when_gradients_are_reduced_by_hand(tmp_path, extra):
    assert _lines(tmp_path, DST011_BASE.format(extra=extra), "DST011") == []
