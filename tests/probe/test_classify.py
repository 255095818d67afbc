"""classify(): findings for synthetic op records (no model run)."""

from __future__ import annotations

from ascendify.probe.classify import aten_to_cann, classify
from ascendify.probe.dynamic import atc_advice, data_dependent
from ascendify.probe.spec import parse_spec


def rec(op, dtypes, line="m.py:3", api=None, count=1):
    return {"op": op, "count": count, "signatures": [{"dtypes": dtypes, "shapes": [[2, 2]] * len(dtypes)}],
            "lines": {line: count}, "phases": ["forward"], "apis": {api: 1} if api else {}, "inside": []}


def kinds(res):
    return sorted((f["kind"], f["op"], f["severity"]) for f in res["findings"])


def test_fallback_severity_follows_env(monkeypatch):
    r = [rec("mode", ["int64"])]
    monkeypatch.delenv("TORCH_NPU_FALLBACK_CPU_DISABLE", raising=False)
    assert ("cpu_fallback", "mode", "warning") in kinds(classify(r, "2.7.1.post11"))
    monkeypatch.setenv("TORCH_NPU_FALLBACK_CPU_DISABLE", "1")
    res = classify(r, "2.7.1.post11")
    assert ("cpu_fallback", "mode", "error") in kinds(res) and res["fallback_disabled"]


def test_cuda_only_op_fails():
    res = classify([rec("_cudnn_rnn", ["float32"])], "2.7.1.post11", fallback_disabled=False)
    f = [x for x in res["findings"] if x["op"] == "_cudnn_rnn"][0]
    assert f["severity"] == "error" and "no CPU kernel either" in f["message"]


def test_bf16_on_310p_and_aicpu_dtype():
    res = classify([rec("add.Tensor", ["bfloat16", "bfloat16"]), rec("nonzero", ["int64"])], "2.7.1.post11",
                   chip="Ascend310P3", cann="7.0.RC1")
    k = kinds(res)
    assert ("bf16_chip", "add.Tensor", "error") in k
    assert ("ai_cpu", "nonzero", "warning") in k
    # under CANN 7.0.RC1 bf16 is an AI Core dtype for the generic rule → no AI_CPU finding for add
    assert not any(x[0] == "ai_cpu" and x[1] == "add.Tensor" for x in k)
    assert not any(x[0] == "bf16_chip" for x in kinds(classify([rec("add.Tensor", ["bfloat16"])], "2.7.1.post11",
                                                                chip="Ascend910B3")))


def test_float64_view_ops_ignored_and_unknown_ops():
    res = classify([rec("expand", ["float64"]), rec("mul.Tensor", ["float64", "float64"]), rec("my_ns::op", [])],
                   "2.7.1.post11")
    k = kinds(res)
    assert ("float64", "mul.Tensor", "warning") in k and not any(x[:2] == ("float64", "expand") for x in k)
    assert ("unknown_op", "my_ns::op", "info") in k


def test_conditional_fallback_from_libtorch_strings():
    res = classify([rec("logit", ["float32"])], "2.7.1.post11")
    f = [x for x in res["findings"] if x["kind"] == "conditional_fallback"]
    assert f and "aten::logit" in f[0]["message"] and "libtorch_npu.so" in f[0]["source"]


def test_doc_and_hardware_findings_for_apis():
    res = classify([rec("bmm", ["float32", "float32"], api="torch.bmm")], "2.13.0", chip="Ascend950DT")
    assert ("hardware", "bmm", "warning") in kinds(res)


def test_aten_to_cann():
    assert aten_to_cann("nonzero") == "NonZero" and aten_to_cann("index_put_") == "IndexPut"
    assert aten_to_cann("add.Tensor") == "Add" and aten_to_cann("_softmax") == "Softmax"


def test_data_dependent_bool_index_and_atc_modes():
    dd = data_dependent([rec("index.Tensor", ["float32", "bool"]), rec("_local_scalar_dense", ["float32"])])
    assert [d["kind"] for d in dd] == ["data_dependent", "host_sync"]
    a = [parse_spec("x:2,3,224,224")]
    b = [parse_spec("x:2,3,256,256")]
    adv = atc_advice(a, b, [])
    assert adv["mode"] == "dynamic_image_size" and '--dynamic_image_size="224,224;256,256"' in adv["atc"]
    adv = atc_advice(a, a, [])
    assert adv["mode"] == "static"
