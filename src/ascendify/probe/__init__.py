"""``ascendify probe``: run a model or script on the CPU and classify every aten op against the KB.

Modules: :mod:`.spec` (``--input`` specs), :mod:`.recorder` (TorchDispatchMode
recorder), :mod:`.model` (model mode), :mod:`.script` / :mod:`.emulate`
(script mode with the ``npu`` device mapped onto the CPU), :mod:`.classify`
(findings against the KB), :mod:`.dynamic` (shape variation, data-dependent
ops, ATC mode), :mod:`.report` (text / JSON / verdict).
"""
