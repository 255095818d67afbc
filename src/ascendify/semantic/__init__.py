"""The semantic model of a file: where its code runs on an Ascend host.

Computed once per file (a statement pre-pass plus memoised queries made during
the one ``ast`` walk); rules only query it:

* :mod:`.bindings` — scopes (module, class, function), bindings (imports,
  assignments, parameters, ``global``/``nonlocal``), attribute stores on
  ``self`` and on objects such as ``args``, call sites of local functions;
* :mod:`.devices` — the abstract device value of an expression (CUDA, NPU,
  CPU, another accelerator, the current accelerator, an ordinal with its
  origin, or unknown);
* :mod:`.branches` — the guards a statement sits under and what each means on
  an Ascend host (CUDA-only, NPU-aware, another accelerator, CPU fallback,
  CUDA-only by intent);
* :mod:`.project` — per-module summaries (constants, helpers doing CUDA/NCCL
  work, functions returning devices) and the facts they make together (imports
  and calls resolved across modules), which the project checks in
  ``rules/checks/project.py`` turn into findings.

Design anchors: ruff's ``ruff_python_semantic`` (scopes, bindings, context
flags queried by rules), pyright's narrowing on ``if`` conditions, CodeQL's
data flow (sources, sinks, barrier guards).
"""

from ascendify.semantic.model import SemanticModel

__all__ = ["SemanticModel"]
