"""The project checks: findings across modules, from the facts the module summaries make together
(:class:`ascendify.semantic.project.Project`: the imports and calls resolved across the scanned
modules, the CUDA/NCCL work each helper reaches).

* DEV026 at a call of a project helper defined in another module that does CUDA/NCCL work
  (directly or through the helpers it calls), with that work as related locations;
* DST001 at a backend constant (``BACKEND = "nccl"`` in ``settings.py``) that flows into
  ``init_process_group`` in another module, with its fix there;
* DEV006 at ``.to(GPU)`` / ``device=GPU`` where ``GPU`` is an int imported from another module;
* EXT017 at a call of a name another module of the project imports from a summarised library.
"""

from __future__ import annotations

from typing import Optional

from ascendify.diagnostics import Edit, Finding, Fix, severity_rank
from ascendify.rules.registry import project_check
from ascendify.semantic.project import overridden, suppressed
from ascendify.semantic.torch_api import int_device_severity

MAX_CALLING_MODULES = 8
"""A helper called from more modules than this gets no DEV026 at its call sites (a library utility)."""

# the agnostic prelude as rules/checks/agnostic.py writes it (the same text: the fixer adds it once)
_DEVICE_TYPE = ('DEVICE_TYPE = {t}.accelerator.current_accelerator().type if {t}.accelerator.is_available() '
                'and {t}.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"')


def _builds_cuda(rules: dict) -> frozenset:
    """The codes whose findings mark CUDA code the project builds (rule data: ``builds_cuda``)."""
    return frozenset(c for c, r in rules.items() if r.builds_cuda)


@project_check("DEV026")
def helper_in_another_module(ctx) -> list:
    """DEV026 at each call of a project helper in another module that reaches CUDA/NCCL work."""
    p = ctx.project
    settings, findings = ctx.settings, ctx.findings
    ext_codes = _builds_cuda(ctx.rules)
    bound: dict = {}  # rel -> (line, name, build): a file that imports a built CUDA extension unconditionally
    out: list = []
    for r in p.reaches:
        if r.use["kind"] != "call" or r.reexport is not None:
            continue
        rel, s, trel, member = r.rel, r.summary, r.target, r.member
        if trel == rel:
            continue
        # a helper called from many modules is a library utility, not a step of a script: its own
        # findings say what to fix, and a finding at each of hundreds of call sites would be noise
        t = (trel, member)
        if len(p.callers.get(t, ())) > MAX_CALLING_MODULES:
            continue
        sites = r.sites()  # each call of the helper in this file is a place that breaks: one finding per call
        if trel in p.index.builds:  # _C.nms(...): straight into a module a CUDAExtension builds
            brel, item, _name = p.index.builds[trel]
            items = [(brel, item)]
        else:  # (Class.method of an instance is the method's own work: never the class's __init__)
            items = p.work.get(t) or []
        if not items:
            continue
        own = [(trel, w) for w in (p.member(trel, member) or {}).get("work", ())]
        # "cause": the call site's finding is there because of that work, and `ascendify fix` fixes all of
        # it (also what the list leaves out): the finding goes with those fixes (scan's plan counts it so)
        lvl = p.fix_level.get(t, "")
        settles = lvl == "safe" or (lvl == "unsafe" and bool(getattr(settings, "unsafe_fixes", False)))
        for use in sites:
            line, col = use["tok"]
            if not ctx.enabled("DEV026", rel, s, line):
                continue
            # `get_autocast(p, device_type=device.type)`: the helper's `device_type="cuda"` default is not used here
            mine = [x for x in items if not (x in own and overridden(x[1], use.get("passes")))]
            if not mine:
                continue
            sev0 = max((w[3] for _r, w in mine), key=severity_rank)
            first_rel, first = next((r_, w) for r_, w in mine if w[3] == sev0)
            if trel in p.index.builds:
                root, top = use.get("text", "").split(".")[0], s.get("top_imports") or {}
                if root in top and not use.get("where", "").startswith("dead:"):
                    bound.setdefault(rel, (top[root], root, f"{first_rel}:{first[1]}"))
            out.append(_helper_call(ctx, use, rel, trel, member, mine, sev0, first_rel, first, settles, ext_codes))
    for rel, (line, name, at) in bound.items():
        _hold_file(findings, rel, line, name, at)
    return out


def _helper_call(ctx, use: dict, rel: str, trel: str, member: str, items: list, sev: str, first_rel: str, first: list,
                 settles: bool, ext_codes: frozenset) -> Finding:
    """The DEV026 at one call site ``use`` of a helper whose work is ``items`` (the worst, ``first``, named)."""
    p, rule, where = ctx.project, ctx.rules["DEV026"], use.get("where", "")
    line, col = use["tok"]
    sp = use["span"]
    outcome = "fails there" if sev == "error" else "is silently wrong there"
    if first[0] in ext_codes:  # the project's own CUDA code: nothing to rename, a kernel to replace
        msg = (f"`{use['text']}()` runs CUDA code the project builds ({first[0]} at {first_rel}:{first[1]} — {p.text_of(first_rel, first)})"
               f"; on an Ascend host this step fails: use a pure-PyTorch fallback there, or write an Ascend C / torch_npu replacement")
    else:
        msg = (f"`{use['text']}()` runs CUDA/NCCL code in {first_rel}: {first[0]} at line {first[1]} — {p.text_of(first_rel, first)}"
               f"; on an Ascend host this step {outcome} (fix it in {first_rel})")
    dead = where.startswith("dead:")
    if dead:
        sev = "info"
    f = Finding("DEV026", msg, rel, line, col, sp[2], sp[3], sev, rule.category)
    if dead and all(w[0] in ext_codes for _r, w in items):  # `if x.is_cuda: fused_act(x) else: ref(x)`
        at = f"{first_rel}:{first[1]}"
        f.note(f"CUDA-only by intent: the CUDA-only test at line {where[5:]} picks the other branch on an Ascend host", "intent", int(where[5:]))
        _hold_guard(ctx.findings, rel, int(where[5:]), use["text"], at)
    elif dead:
        f.note(f"dead code on an Ascend host: under the CUDA-only test at line {where[5:]}", "dead", int(where[5:]))
    f.related = [{"path": r_, "line": w[1], "col": w[2], "code": w[0], "message": f"{w[0]}: {p.text_of(r_, w)}", "cause": settles}
                 for r_, w in items]
    f.related.append(p.resolution(use, rel, trel, member))
    return f


def _hold_guard(findings: Optional[list], rel: str, line: int, text: str, at: str) -> None:
    """The fix of the device test at ``line`` of ``rel`` (``if x.is_cuda:`` → ``x.is_npu``) is taken back
    where its branch calls a helper that runs CUDA code the project builds: rewritten, the test would send
    NPU tensors into the CUDA kernel.  The fix run keeps it back in later passes too (fix/run.py)."""
    for pf in findings or ():
        if pf.path == rel and pf.line == line and pf.fix is not None and pf.code.startswith("DEV"):
            pf.fix = None
            if severity_rank(pf.severity) > severity_rank("warning"):
                pf.severity = "warning"  # as the fix policy makes a guard of CUDA-only code by intent
            pf.note(f"CUDA-only by intent: its branch calls `{text}()`, which runs CUDA code the project builds ({at}); "
                    "left as written (an Ascend host takes the other branch); for the fast path there, write an Ascend C / "
                    "torch_npu replacement", "intent", line)


def _hold_file(findings: Optional[list], rel: str, line: int, name: str, at: str) -> None:
    """A module that imports a CUDA extension the project builds at module level and calls it (Swin-
    Transformer's ``kernels/window_process/unit_test.py``: ``import swin_window_process``, the kernels'
    own test) cannot even be imported on an Ascend host: its device code is the extension's, CUDA-only by
    intent.  Its fixes are taken back (rewritten, NPU tensors would go into the CUDA kernel); the fix run
    keeps them back in later passes (the ``intent`` note, fix/run.py)."""
    for pf in findings or ():
        if pf.path == rel and pf.fix is not None:
            pf.fix = None
            pf.note(f"CUDA-only by intent: this module imports `{name}` (line {line}), the CUDA extension the project builds "
                    f"({at}), and calls it; left as written: port the extension (Ascend C / torch_npu) or give the "
                    "module a fallback first", "intent", line)


@project_check("EXT019")
def import_runs_cuda_build(ctx) -> list:
    """EXT019 at each module-level import of a module whose import runs a CUDA build (stylegan2's
    ``from op import upfirdn2d``: ``op/upfirdn2d.py`` calls ``cpp_extension.load`` of ``.cu`` sources in
    its body), in the modules that import it (a package's ``__init__`` passing it on is left out: its
    importers get the finding)."""
    p, rule = ctx.project, ctx.rules["EXT019"]
    out: list = []
    for rel, s in p.summaries.items():
        top = s.get("top_imports") or {}
        if not top or rel.replace("\\", "/").rsplit("/", 1)[-1] == "__init__.py":
            continue
        imports = s.get("imports") or {}
        done: set = set()
        for local, line in sorted(top.items(), key=lambda x: x[1]):
            imp = imports.get(local)
            if imp is None or line in done or not ctx.enabled("EXT019", rel, s, line):
                continue
            got = next((p.import_builds[m] for m in p.imported_modules(rel, imp) if m in p.import_builds), None)
            if got is None:
                continue
            done.add(line)
            brel, item = got
            mod = ("." * imp[2]) + (imp[0] or imp[1])
            where = f"{brel}:{item[1]}" + ("" if brel in p.imported_modules(rel, imp) else ", through the modules it imports")
            f = Finding("EXT019", rule.message.format(module=mod, code=item[0], where=where), rel, line, 0, line, 0,
                        rule.severity, rule.category)
            f.related = [{"path": brel, "line": item[1], "col": item[2], "code": item[0], "message": f"{item[0]}: {p.text_of(brel, item)}"}]
            out.append(f)
    return out


@project_check("DST001")
def backend_constant(ctx) -> list:
    """DST001 at a module's ``"nccl"`` constant passed as the backend of a process group in another module."""
    rule = ctx.rules["DST001"]
    out: list = []
    for r in ctx.project.reaches:
        use = r.use
        if use["kind"] != "backend":
            continue
        rel, trel, member, tsum = r.rel, r.target, r.member, r.target_summary
        sp = use["span"]
        const = (tsum.get("constants") or {}).get(member)
        if not const or "str" not in const or const["str"].strip().lower() != "nccl":
            continue
        if not ctx.enabled("DST001", trel, tsum, const["span"][0]):
            continue
        cs = const["span"]
        msg = rule.message.format(what="backend", value=repr(const["str"]),
                                  where=f" (flows into the process group at {rel}:{sp[0]})")
        fx = None
        if ctx.settings.target == "npu":
            fx = Fix((Edit("string", "hccl", (cs[0], cs[1]), (cs[2], cs[3])),), True, "use the HCCL backend")
        f = Finding("DST001", msg, trel, cs[0], cs[1], cs[2], cs[3], rule.severity, rule.category, fx)
        f.related = [{"path": rel, "line": sp[0], "col": sp[1], "message": f"`{use['text']}` passed as the backend"}]
        out.append(f)
    return out


@project_check("DEV006")
def int_device_constant(ctx) -> list:
    """DEV006 at ``.to(GPU)`` / ``device=GPU`` where ``GPU`` is an int constant of another module."""
    rule = ctx.rules["DEV006"]
    out: list = []
    for r in ctx.project.reaches:
        use = r.use
        if use["kind"] != "device":
            continue
        rel, s, trel, member, tsum = r.rel, r.summary, r.target, r.member, r.target_summary
        line, col = use["tok"]
        sp = use["span"]
        const = (tsum.get("constants") or {}).get(member)
        if not const or "int" not in const or not ctx.enabled("DEV006", rel, s, line):
            continue
        sev = int_device_severity(ctx.settings)
        msg = rule.message.format(form=use["text"]) + f" (`{member}` = {const['int']} in {trel})"
        f = Finding("DEV006", msg, rel, line, col, sp[2], sp[3], sev, rule.category)
        f.related = [{"path": trel, "line": const["span"][0], "col": const["span"][1], "message": f"`{member} = {const['int']}`"}]
        out.append(f)
    return out


@project_check("EXT017")
def library_helper_through_module(ctx) -> list:
    """EXT017 at each call (up to the summary's sites) of a library helper another module of the
    project imports (yolov5's ``from utils.torch_utils import smart_amp_autocast``)."""
    out: list = []
    for r in ctx.project.reaches:
        if r.reexport is None:
            continue
        for site in r.sites():
            f = _reexport_call(site, r.rel, r.target, r.reexport, ctx.settings, ctx.rules, r.summary)
            if f is not None:
                out.append(f)
    return out


def _reexport_call(use: dict, rel: str, trel: str, rx: dict, settings, rules: dict, summary: dict) -> Optional[Finding]:
    """EXT017 at ``use`` (a call in ``rel``) of a name ``trel`` imports from a summarised library (``rx``): the
    work the call reaches, given what it passes.  Where all of it is a CUDA device default the call leaves out
    and the helper takes its own NPU path for that value (the summary's ``npu_when``), a safe fix passes it:
    ``device="npu"`` (npu), ``device="npu" if DEVICE_TYPE == "npu" else "cuda"`` (agnostic: CUDA and
    CPU-only hosts keep the default, so CPU autocast is not switched on)."""
    rule = rules.get("EXT017")
    line, col = use["tok"]
    if rule is None or not settings.enabled("EXT017", rel) or suppressed(summary, line, "EXT017"):
        return None
    npos, kws, star = use.get("args") or [0, {}, True]
    from ascendify import libsum
    from ascendify.libsum.analyze import flag_runs

    noop = libsum.noop_without_cuda()
    work = []
    for w in rx["work"]:
        cond = w[3]
        if w[0] in noop:
            continue
        if cond.startswith("!"):
            name, _, pos = cond[1:].partition("@")
            if star or name in kws or (pos and int(pos) >= 0 and npos > int(pos)):
                continue
        elif cond.count(":") == 2 and not flag_runs(cond, kws, star):
            continue
        work.append(w)
    if not work:
        return None
    sp = use["span"]
    first = work[0]
    msg = rule.message.format(call=use["text"][:60], what=", ".join(dict.fromkeys(w[0] for w in work)), lib=rx["lib"],
                              where=f"{first[1]}:{first[2]}", defined=rx["defined"], how=rx["how"], advice=rx["advice"],
                              source=rx["source"])
    msg += f" (imported through {trel})"
    fx = None
    params = [w[3][1:].partition("@")[0] for w in work if w[3].startswith("!") and w[0].startswith("default ")]
    if (len(params) == len(work) and len(set(params)) == 1 and not star
            and params[0] in rx.get("npu_when", ())):  # the helper has its own path for "npu" there
        p = params[0]
        default = next(w[0] for w in work).partition("=")[2]  # '"cuda"'
        if settings.target == "npu":
            fx = Fix((Edit("add_arg", f'{p}="npu"', (sp[0], sp[1]), (sp[2], sp[3])),), True, f'pass {p}="npu" (the helper\'s NPU path)')
        elif summary.get("torch"):  # agnostic: "npu" on an Ascend host only; CUDA and CPU hosts keep the default
            fx = Fix((Edit("add_arg", f'{p}="npu" if DEVICE_TYPE == "npu" else {default}', (sp[0], sp[1]), (sp[2], sp[3])),
                      Edit("add_prelude", _DEVICE_TYPE.format(t=summary["torch"]))), True,
                     f"pass {p}=\"npu\" on an Ascend host (the helper's NPU path)")
    sev = rule.severity
    where = use.get("where", "")
    if where.startswith("dead:"):
        sev = "info"
        msg += f" — dead code on an Ascend host: under the CUDA-only test at line {where[5:]}"
    f = Finding("EXT017", msg, rel, line, col, sp[2], sp[3], sev, rule.category, fx)
    f.related = [{"path": trel, "line": rx.get("line", 0), "col": 0, "message": f"`{use['text'][:60]}` is {rx['defined']} ({rx['lib']})"}]
    return f
