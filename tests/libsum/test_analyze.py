"""The library analyzer on small libraries written here (no real library involved)."""

from __future__ import annotations

import textwrap

from ascendify.libsum.analyze import analyze

FAKE = {
    "fakelib/__init__.py": """
        from .amp import Scaler, NpuScaler
        from .loader import make_loader as build_loader
    """,
    "fakelib/amp.py": """
        import torch
        from transformers.utils import is_torch_npu_available

        try:
            import apex
            has_apex = True
        except ImportError:
            has_apex = False


        class Scaler:
            def __init__(self):
                self.s = torch.cuda.amp.GradScaler()

            def __call__(self, loss):
                self.s.scale(loss).backward()


        class NpuScaler:
            def __init__(self):
                if is_torch_npu_available():
                    self.s = torch.npu.amp.GradScaler()
                else:
                    self.s = torch.cuda.amp.GradScaler()


        class CompatScaler:
            def __init__(self, device="cuda"):
                try:
                    self.s = torch.amp.GradScaler(device=device)
                except (AttributeError, TypeError):
                    self.s = torch.cuda.amp.GradScaler()


        def fused_step(opt):
            if has_apex:
                apex.amp.master_params(opt)
            return opt


        def sync_if_cuda():
            if torch.cuda.is_available():
                torch.cuda.synchronize()
    """,
    "fakelib/loader.py": """
        from . import helpers


        def make_loader(ds, prefetch=False, **kwargs):
            pin = kwargs.pop("pin_to_gpu", False)
            if prefetch:
                return _prefetch(ds)
            if pin:
                ds.cuda()
            return ds


        def _prefetch(ds):
            return helpers.to_gpu(ds)
    """,
    "fakelib/helpers.py": """
        import torch.distributed as dist


        def to_gpu(x):
            return x.cuda(non_blocking=True)


        def setup():
            dist.init_process_group(backend="nccl")
    """,
    "fakelib/attn.py": """
        import xformers.ops


        class Base:
            def enable_fast_attention(self):
                return xformers.ops.memory_efficient_attention(self, self, self)


        class Pipe(Base):
            def run(self):
                return self.enable_fast_attention()
    """,
}


def _run(files=FAKE, roots=()):
    src = {}
    for path, text in files.items():
        mod = path[:-3].replace("/", ".")
        if mod.endswith(".__init__"):
            mod = mod[: -len(".__init__")]
        src[mod] = (path, textwrap.dedent(text).lstrip("\n"))
    return analyze(src, roots)


def test_direct_work_with_location():
    r = _run()
    e = r["entries"]["fakelib.amp.Scaler"]
    assert e["kind"] == "class" and e["file"] == "fakelib/amp.py"
    assert e["work"] == [["torch.cuda.amp.GradScaler", "fakelib/amp.py", 13, ""]]
    # __call__ does no CUDA work: no entry
    assert "fakelib.amp.Scaler.__call__" not in r["entries"]


def test_reexport_resolved_to_definition():
    r = _run()
    assert r["aliases"]["fakelib.Scaler"] == "fakelib.amp.Scaler"
    assert r["aliases"]["fakelib.build_loader"] == "fakelib.loader.make_loader"


def test_transitive_work_is_conditional_on_the_keyword():
    r = _run()
    work = r["entries"]["fakelib.loader.make_loader"]["work"]
    # two hops (make_loader -> _prefetch -> helpers.to_gpu), under `if prefetch:`
    assert [".cuda()", "fakelib/helpers.py", 5, "prefetch:T:F"] in work
    # a keyword read from **kwargs is a condition too
    assert [".cuda()", "fakelib/loader.py", 9, "pin_to_gpu:T:F"] in work
    assert "fakelib.loader._prefetch" not in r["entries"]  # private: not an entry


def test_npu_aware_path_has_no_work():
    r = _run()
    e = r["entries"]["fakelib.amp.NpuScaler"]
    assert e.get("npu_aware") is True and "work" not in e


def test_compat_fallback_availability_and_cuda_tests_not_counted():
    r = _run()
    # only the parameter default remains: the except-TypeError fallback is not work
    assert r["entries"]["fakelib.amp.CompatScaler"]["work"] == [['default device="cuda"', "fakelib/amp.py", 28, "!device@0"]]
    assert "fakelib.amp.fused_step" not in r["entries"]  # under `if has_apex:`
    assert "fakelib.amp.sync_if_cuda" not in r["entries"]  # under torch.cuda.is_available()


def test_nccl_and_cuda_only_package_calls():
    r = _run()
    assert r["entries"]["fakelib.helpers.setup"]["work"] == [['backend="nccl"', "fakelib/helpers.py", 9, ""]]
    assert r["entries"]["fakelib.attn.Base.enable_fast_attention"]["work"][0][0] == "xformers.ops.memory_efficient_attention"
    # the inherited method is found through self.<name> and the base class
    assert r["entries"]["fakelib.attn.Pipe.run"]["work"][0][0] == "xformers.ops.memory_efficient_attention"
    assert r["bases"]["fakelib.attn.Pipe"] == ["fakelib.attn.Base"]


def test_native_roots_and_unparsable_files():
    files = {"nat/__init__.py": "from .cext import lib\n\ndef adam8(p):\n    lib.cadam(p)\n",
             "nat/cext.py": "lib = None\n", "nat/broken.py": "def (:\n"}
    r = _run(files, roots=("nat.cext.lib",))
    assert r["entries"]["nat.adam8"]["work"] == [["nat.cext.lib.cadam", "nat/__init__.py", 4, ""]]
    assert _run(files)["entries"] == {}  # without the root nothing is CUDA work


def test_cuda_default_reached_when_the_library_leaves_it_out():
    files = {"mix/__init__.py": """
        import torch


        def one_hot(x, n, device="cuda"):
            return torch.full((x.size(0), n), 0.0, device=device)


        class Mix:
            def __call__(self, x, target):
                return one_hot(target, 10)


        class SafeMix:
            def __call__(self, x, target):
                return one_hot(target, 10, device=x.device)


        class PositionalMix:
            def __call__(self, x, target):
                return one_hot(target, 10, x.device)
    """}
    r = _run(files)
    assert r["entries"]["mix.one_hot"]["work"] == [['default device="cuda"', "mix/__init__.py", 4, "!device@2"]]
    # the library's own call leaves the default: the caller's call does CUDA work unconditionally
    assert r["entries"]["mix.Mix.__call__"]["work"] == [['default device="cuda"', "mix/__init__.py", 4, ""]]
    assert "mix.SafeMix.__call__" not in r["entries"] and "mix.PositionalMix.__call__" not in r["entries"]


def test_flag_conditions_record_default_and_polarity():
    from ascendify.libsum.analyze import flag_runs

    files = {"fl/__init__.py": """
        def fast_load(ds, fast=True):
            if fast:
                ds.cuda()


        def careful_load(ds, slow=False):
            if not slow:
                ds.cuda()
            else:
                ds.cpu()


        def wrapper(ds):
            return fast_load(ds, fast=False)


        def wrapper_default(ds):
            return careful_load(ds)
    """}
    e = _run(files)["entries"]
    assert e["fl.fast_load"]["work"] == [[".cuda()", "fl/__init__.py", 3, "fast:T:T"]]
    assert e["fl.careful_load"]["work"] == [[".cuda()", "fl/__init__.py", 8, "slow:F:F"]]
    assert "fl.wrapper" not in e  # the library's own call turns the flag off
    assert e["fl.wrapper_default"]["work"] == [[".cuda()", "fl/__init__.py", 8, ""]]
    # at a user's call: default on, passed off / on / unknown
    assert flag_runs("fast:T:T", {}, False) is True
    assert flag_runs("fast:T:T", {"fast": False}, False) is False
    assert flag_runs("slow:F:F", {"slow": True}, False) is False
    assert flag_runs("slow:F:F", {"slow": None}, False) is True
    assert flag_runs("prefetch:T:F", {}, False) is False and flag_runs("prefetch:T:F", {}, True) is True


def test_broad_fallback_version_fallback_and_self_flag():
    files = {"g/__init__.py": """
        import torch

        NEW_TORCH = torch_version_greater_or_equal("2.7")


        def capturing():
            try:
                return torch.cuda.is_current_stream_capturing()
            except Exception:
                return False


        def strict():
            try:
                return torch.cuda.current_device()
            except Exception:
                raise


        class Cache:
            def __init__(self, offloading=False):
                self.offloading = offloading
                if self.offloading:
                    self.stream = torch.Stream() if NEW_TORCH_greater_or_equal else torch.cuda.Stream()
                    self.buf = torch.empty(1).cuda()
    """}
    e = _run(files)["entries"]
    assert "g.capturing" not in e  # guarded by a fallback
    assert e["g.strict"]["work"] == [["torch.cuda.current_device", "g/__init__.py", 15, ""]]
    # the CUDA stream is only the fallback for older torch; .cuda() runs when offloading=True
    assert e["g.Cache"]["work"] == [[".cuda()", "g/__init__.py", 25, "offloading:T:F"]]


def test_work_under_state_tests_is_not_reported():
    files = {"st/__init__.py": """
        import torch
        import apex


        class Trainer:
            def __init__(self, args, opt="sgd", resume=None):
                if args.sharded:
                    self.scaler = torch.cuda.amp.GradScaler()
                name = opt.lower()
                if name == "fusedadam":
                    self.opt = apex.optimizers.FusedAdam()
                if resume is None:
                    self.buf = torch.zeros(1).cuda()
    """}
    e = _run(files)["entries"]
    # args.sharded and the optimizer name are state the caller's call does not show: not reported;
    # `resume is None` is a flag test with its polarity (runs when resume is left out)
    assert e["st.Trainer"]["work"] == [[".cuda()", "st/__init__.py", 13, "resume:F:F"]]


def test_attribute_of_a_none_default_parameter_is_state():
    files = {"tr/__init__.py": """
        import torch


        class Trainer:
            def __init__(self, model=None, args=None, fp16=False):
                if args.fp16:
                    self.scaler = torch.cuda.amp.GradScaler()
                if fp16 and model is not None:
                    self.scaler2 = torch.cuda.amp.GradScaler()
    """}
    e = _run(files)["entries"]
    assert e["tr.Trainer"]["work"] == [["torch.cuda.amp.GradScaler", "tr/__init__.py", 9, "fp16:T:F"]]
