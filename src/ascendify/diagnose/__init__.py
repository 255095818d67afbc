"""``ascendify diagnose``: from NPU error logs (torch_npu, CANN plog, HCCL, ATC) to cause and fix.

Entry points: :func:`ascendify.diagnose.engine.diagnose` (paths → :class:`Report`),
the signature data in ``data/signatures.toml``, and the click command in :mod:`.cli`.
"""
