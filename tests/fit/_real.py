"""Independent measurement: the peak of live CPU allocations of one real training step, from
``torch.profiler.profile(profile_memory=True)`` (the CPU allocator's alloc/free events)."""

from __future__ import annotations


def real_peak(factory, spec_text: str, amp=None) -> int:
    import torch
    from torch.profiler import ProfilerActivity, profile
    from ascendify.probe.model import _loss_from
    from ascendify.probe.spec import parse_spec
    model = factory()
    model.train()
    x = parse_spec(spec_text).make("cpu", torch.Generator().manual_seed(0))
    opt = torch.optim.Adam(model.parameters(), foreach=True)
    for p in model.parameters():  # steady state: the optimizer states exist before the step
        p.grad = torch.zeros_like(p)
    opt.step()
    opt.zero_grad(set_to_none=True)
    before = list(model.parameters()) + list(model.buffers()) + [x]
    for st in opt.state.values():
        before += [v for v in st.values() if isinstance(v, torch.Tensor)]
    base = sum({t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in before}.values())
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        ctx = torch.autocast("cpu", dtype=torch.bfloat16) if amp else torch.autocast("cpu", enabled=False)
        with ctx:
            loss = _loss_from(model(x))
        loss.backward()
        del loss
        opt.step()
        opt.zero_grad(set_to_none=True)
    evs = sorted((e.start_ns(), e.nbytes()) for e in prof.profiler.kineto_results.events()
                 if e.name() == "[memory]" and str(e.device_type()).endswith("CPU"))
    live = peak = 0
    for _, d in evs:
        live += d
        peak = max(peak, live)
    return base + peak
