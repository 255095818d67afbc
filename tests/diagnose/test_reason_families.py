"""Message-family phrase rules (data/reasons.toml): each rule reads a whole family of messages, so logs written
here in other words, with other ops, names and values than any collected log, still get the plain-words cause
and the change to make.  A near miss of each family must not fire."""

from __future__ import annotations

import pytest

from ascendify.diagnose.engine import diagnose
from tests.diagnose.diag_util import top_finding




def _words(f):
    return (f.title + " " + f.cause + " " + f.fix).lower()


CASES = [
    # (rule id, log, words the cause/fix must carry)
    ("reason-stride-must-be-one",
     "RuntimeError: ({'errCode': 'E80000', 'op_name': 'strided_slice_d', 'param_name': 'strides[1]', "
     "'excepted_value': '1', 'real_value': '3'}, 'In op[strided_slice_d], the parameter[strides[1]] should be , "
     "but actually is [3].')\n",
     ("stride 1", "(3)", "index_select")),
    ("reason-shapes-must-match",
     "RuntimeError: ({'errCode': 'E80029', 'op_name': 'assign_add', 'param_name1': 'x', 'param_name2': 'y', "
     "'error_detail': 'Shape of x and y should be same'}, 'In op[assign_add], the shape of inputs[x][y] are invalid.')\n",
     ("shape mismatch", "same shape")),
    ("reason-concat-rank-differs",
     "RuntimeError: call aclnnCat failed, detail:EZ1001: [PID: 91] dimnum of tensor 2 is [3], should be equal to "
     "tensor 0 [4].\n",
     ("fewer dimensions", "squeeze", "unsqueeze")),
    ("reason-concat-rank-differs",
     "Traceback (most recent call last):\n  File \"/srv/m.py\", line 9, in <module>\n    y = torch.cat([a, b])\n"
     "RuntimeError: Tensors must have same number of dimensions: got 2 and 3\n",
     ("fewer dimensions", "unsqueeze")),
    ("reason-path-charset",
     "EK0001: Path [/data/实验/run 1/prof] for [outputPath] is invalid or does not exist. The Path name can only "
     "contain A-Za-z0-9-_.\n",
     ("non-ascii", "ascii letters")),
    ("reason-soft-link-rejected",
     "[INFO] checking the system\n[ERROR] /usr/lib/os-release is soft link\n[ERROR] install failed\n",
     ("symbolic link", "regular file")),
    ("reason-input-shape-name",
     "[ERROR] LITE(1,7f,converter_lite):2024-01-02-03:04:05.000.001 [acl_pass_impl.cc:1] SetGraphInputShape] "
     "Failed to find input images in input_shape data:1,3,640,640\n",
     ("does not match", "actual input names", "netron")),
    ("reason-hccl-byte-bool-reduce",
     "Traceback (most recent call last):\n  File \"/srv/t.py\", line 3, in <module>\n    dist.all_reduce(flag)\n"
     "RuntimeError: HCCL AllReduce & Reduce: Unsupported data type at::kByte/at::kBool\n",
     ("uint8", "int32")),
    ("reason-npu-op-cpu-tensor",
     "NotImplementedError: Could not run 'npu::npu_transpose' with arguments from the 'CPU' backend. This could be "
     "because the operator doesn't exist for this backend.\n",
     ("npu::npu_transpose", "still on the cpu", ".npu()")),
    ("reason-bool-tensor-differentiable",
     "RuntimeError: isDifferentiableType(variable.scalar_type()) INTERNAL ASSERT FAILED at \"/x/utils.h\":75, "
     "please report a bug to PyTorch.\n",
     ("bool mask", "no_grad")),
    ("reason-jit-graph-fuser",
     "NotImplementedError: Unknown device for graph fuser\n",
     ("torchscript", "@torch.jit.script", "pytorch_jit=0")),
    ("reason-aicpu-executor-start",
     "TsdOpen failed, devId=3, tdt error=7[FUNC:startAicpuExecutor][FILE:runtime.cc][LINE:10]\n",
     ("ascend_aicpu_path", "unset", "driver")),
]


@pytest.mark.parametrize("rule,text,words", CASES, ids=[c[0] + str(i) for i, c in enumerate(CASES)])
def test_family_rule_reads_the_message(tmp_path, rule, text, words):
    f = top_finding(tmp_path, text)
    assert rule in (f.settings or []), (rule, f.title, f.settings)
    got = _words(f)
    for w in words:
        assert w in got, (w, got)


NEAR_MISSES = [
    ("reason-stride-must-be-one", "RuntimeError: ({'errCode': 'E80000', 'op_name': 'pad', 'param_name': 'paddings[0]', "
     "'excepted_value': '1', 'real_value': '2'}, 'In op[pad] the parameter should be 1.')\n"),
    ("reason-path-charset", "EK0001: Path [/data/prof] for [outputPath] is invalid or does not exist.\n"),
    ("reason-soft-link-rejected", "[ERROR] /etc/os-release is invalid\n"),
    ("reason-npu-op-cpu-tensor", "NotImplementedError: Could not run 'aten::empty' with arguments from the 'NPU' backend.\n"),
    ("reason-hccl-byte-bool-reduce", "RuntimeError: HCCL AllReduce & Reduce: Unsupported data type at::kComplexFloat\n"),
]


@pytest.mark.parametrize("rule,text", NEAR_MISSES, ids=[c[0] for c in NEAR_MISSES])
def test_family_rule_does_not_fire_on_a_near_miss(tmp_path, rule, text):
    p = tmp_path / "x.log"
    p.write_text(text, encoding="utf-8")
    rep = diagnose((str(p),))
    for f in rep.findings:
        assert rule not in (f.settings or [])


def test_first_error_line_of_a_chain_states_the_reason(tmp_path):
    # a tool prints its reason on the first [ERROR] line and generic follow-ups after it: the first one leads
    f = top_finding(tmp_path, "[INFO] starting the check\n[ERROR] the config file /opt/tool/run.cfg is a symbolic link\n"
                       "[ERROR] the config file is invalid\n[ERROR] setup failed\n")
    assert "symbolic link" in f.title
    assert f.evidence[0].line == 2
    assert "reason-soft-link-rejected" in (f.settings or [])


RANKTABLE = ('RuntimeError: Ascend collective communication initialization failed.\n'
             'EI0004: The ranktable is invalid,Reason:[The ranktable config devId is inconsistent with the local devId.]. '
             'Please check the configured ranktable. [{"server_count":"2","server_list":[{"device":['
             '{"device_id":"0","device_ip":"10.0.0.1","rank_id":"0"},{"device_id":"3","device_ip":"10.0.0.2","rank_id":"1"},'
             '{"device_id":"3","device_ip":"10.0.0.3","rank_id":"2"}],"server_id":"a"},{"device":['
             '{"device_id":"0","device_ip":"10.0.1.1","rank_id":"3"}],"server_id":"b"}],"status":"completed"}]\n')


def test_ranktable_with_a_device_listed_twice(tmp_path):
    f = top_finding(tmp_path, RANKTABLE)
    assert "reason-ranktable-duplicate-device" in f.settings
    assert "device_id 3 twice" in f.cause
    # the ranktable / rank wording is not a tensor-shape rule
    assert "reason-shape-rule" not in f.settings


def test_ranktable_whose_servers_reuse_ids_is_not_a_duplicate(tmp_path):
    # device 0 on two different servers is normal
    text = RANKTABLE.replace('{"device_id":"3","device_ip":"10.0.0.3","rank_id":"2"}',
                             '{"device_id":"5","device_ip":"10.0.0.3","rank_id":"2"}')
    f = top_finding(tmp_path, text)
    assert "reason-ranktable-duplicate-device" not in (f.settings or [])


class _Match:
    def __init__(self, confidence):
        self.confidence = confidence
        self.close = confidence >= 0.7  # known_issues.CLOSE_CONFIDENCE: below it the thread is the closest known issue
        self.record = {"id": "demo#1", "url": "https://github.com/example/demo/issues/1", "cause": "Wrong network card.",
                       "fix": "Set HCCL_SOCKET_IFNAME.", "fixed_in": None}

    def to_dict(self):
        return {"id": "demo#1", "confidence": self.confidence}


def _finding(settings):
    from ascendify.diagnose.engine import Aggregator, Finding

    f = Finding(id="python-exception", family="python", title="RuntimeError: x", severity="error", role="cause",
                cause="Phrase cause.", fix="Phrase fix.", next_step="", source="")
    f.settings = settings
    return Aggregator, f


@pytest.mark.parametrize("confidence,settings,leads", [
    (0.6, ["reason-hccl-byte-bool-reduce"], False),  # a family rule read the message: the loose thread follows
    (0.6, [], True),  # nothing read it: the thread leads, as before
    (0.9, ["reason-hccl-byte-bool-reduce"], False),  # a close thread follows too: the reason read in plain words leads
])
def test_loose_known_issue_follows_a_family_rule(confidence, settings, leads):
    agg, f = _finding(settings)
    agg._attach(agg.__new__(agg), f, _Match(confidence), {})
    assert f.known_issue["id"] == "demo#1"
    # a loose match that leads is offered as the closest known issue ("Perhaps: ...", "If it is that issue: ...")
    assert f.cause.startswith(("Wrong network card.", "Perhaps: Wrong network card.")) is leads
    assert f.fix.startswith(("Set HCCL_SOCKET_IFNAME", "If it is that issue: Set HCCL_SOCKET_IFNAME")) is leads
    assert ("closest known issue" in f.cause) is (leads and confidence < 0.7)
    assert "HCCL_SOCKET_IFNAME" in f.fix


def test_device_oom_names_the_batch_size(tmp_path):
    f = top_finding(tmp_path, "EL0004: [PID: 77] 2026-01-01-00:00:00.000.001 Failed to allocate memory.\n")
    assert f.id == "cann-oom"
    assert "ran out of memory" in f.cause and "batch size" in f.fix


def test_server_json_error_reply_is_a_finding_and_its_size_limit_is_read(tmp_path):
    f = top_finding(tmp_path, '{"error": "Input len not in (0, 1048576], but got 2200000", "error_type": "Bad Request"}\n')
    assert "reason-request-too-large" in f.settings
    assert "1048576 bytes" in f.cause and "base64" in f.cause.lower()
    assert "url" in f.fix.lower()


def test_http_413_reply_is_read_as_too_large(tmp_path):
    f = top_finding(tmp_path, "[ERROR] upload failed: HTTP 413 Payload Too Large\n")
    assert "reason-request-too-large" in f.settings


def test_a_json_line_without_an_error_key_is_not_a_finding(tmp_path):
    p = tmp_path / "x.log"
    p.write_text('{"status": "ok", "message_count": 3}\n', encoding="utf-8")
    assert not diagnose((str(p),)).findings


def test_mindspore_log_prefix_with_function_bracket_is_not_the_reason():
    from ascendify.diagnose import reason

    line = ("[ERROR] ME(4242,7f00aa,python):2024-05-06-07:08:09.010.011 [mindspore/ccsrc/a/b/graph_runner.cc:88] "
            "RunGraph] Failed to find tensor foo in the feed list")
    assert reason.extract(line) == "Failed to find tensor foo in the feed list"
