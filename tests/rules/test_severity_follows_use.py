"""Severity follows what the value does (issue 22): a device string that moves the model is an error;
a script's single process-group start needs no is_initialized() guard."""

from __future__ import annotations

import textwrap

from .helpers import findings_for


def _write(tmp_path, code: str) -> str:
    p = tmp_path / "train.py"
    p.write_text(textwrap.dedent(code).lstrip("\n"), encoding="utf-8")
    return str(p)


def test_a_device_string_that_moves_the_model_is_an_error(tmp_path):
    path = _write(tmp_path, """
        import torch


        def main():
            device = 'cuda'
            model = torch.nn.Linear(2, 2)
            model.to(device)
            label = 'cuda'
            print(label)
        """)
    assert [(f.line, f.severity) for f in findings_for(path, "DEV024")] == [(5, "error"), (8, "warning")]


def test_a_scripts_single_init_needs_no_is_initialized_guard(tmp_path):
    script = """
        import torch.distributed as dist


        def main():
            dist.init_process_group("hccl")


        if __name__ == "__main__":
            main()
        """
    assert findings_for(_write(tmp_path, script), "DST004") == []
    library = script.split("if __name__")[0]
    assert [f.line for f in findings_for(_write(tmp_path, library), "DST004")] == [5]


def test_a_module_level_init_runs_once_per_process_and_needs_no_guard(tmp_path):
    # nanoGPT's train.py shape: no __main__ block, the call in the module's body under `if ddp:`
    script = """
        import os
        import torch.distributed as dist

        ddp = int(os.environ.get("RANK", -1)) != -1
        if ddp:
            dist.init_process_group(backend="hccl")
        """
    assert findings_for(_write(tmp_path, script), "DST004") == []
    in_a_function = script.replace("if ddp:", "def setup():")
    assert [f.line for f in findings_for(_write(tmp_path, in_a_function), "DST004")] == [6]


def test_adam_is_not_said_to_fall_back_where_its_kernels_are_npu_kernels(tmp_path):
    path = _write(tmp_path, """
        import torch

        opt = torch.optim.Adam(torch.nn.Linear(2, 2).parameters(), lr=1e-3)
        """)
    assert findings_for(path, "OPS002") == []  # torch_npu 2.12: _fused_adam_ and the _foreach_ ops are NPU kernels
    old = findings_for(path, "OPS002", torch_npu="2.1.0")  # not all of them then: the list's word stands
    assert [f.line for f in old] == [3] and "may fall back" in old[0].message
