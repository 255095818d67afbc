"""``ascendify doctor``: check an Ascend environment end to end (torch, torch_npu,
CANN, driver/firmware, chip, environment variables, devices) and say what is wrong.

Entry points: :func:`ascendify.doctor.core.run_doctor` (returns a
:class:`~ascendify.doctor.model.Report`) and the click command in ``doctor.cli``.
"""
