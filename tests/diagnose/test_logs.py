"""Reading logs as they come: Python tracebacks (user frame, chained exceptions, the cause in the middle),
CANN [ERROR] blocks, plog prefixes, rank prefixes and timestamps.  The logs are written for these tests in
the shape of real torch / torch_npu / CANN output."""

from __future__ import annotations

from datetime import datetime

import pytest

from ascendify.diagnose.engine import diagnose
from ascendify.diagnose.structure import TracebackReader, is_user_frame, parse_time, split_rank


def _run(tmp_path, text: str, name: str = "train.log"):
    p = tmp_path / name
    p.write_text(text)
    return diagnose((str(p),))


# ------------------------------------------------------------------ tracebacks

def test_unknown_exception_reports_type_message_and_user_frame(tmp_path):
    rep = _run(tmp_path, (
        "Traceback (most recent call last):\n"
        '  File "/home/me/llm/finetune.py", line 302, in <module>\n'
        "    trainer.train()\n"
        '  File "/home/me/llm/finetune.py", line 188, in train\n'
        "    batch = collate(samples)\n"
        '  File "/home/me/.local/lib/python3.9/site-packages/datasets/arrow_dataset.py", line 2810, in __getitem__\n'
        "    return self._getitem(key)\n"
        '  File "<frozen importlib._bootstrap>", line 1007, in _find_and_load\n'
        "KeyError: 'input_ids'\n"))
    [f] = rep.findings
    assert f.id == "python-exception" and f.role == "cause" and f.generic
    assert f.exception == {"type": "KeyError", "message": "'input_ids'"}
    assert f.frame == {"path": "/home/me/llm/finetune.py", "line": 188, "function": "train"}
    assert f.title == "KeyError: 'input_ids'" and f.evidence[0].line == 9
    assert 0 < f.confidence < 0.6  # no catalogue entry explains it


def test_known_exception_gets_the_traceback_frame(tmp_path):
    rep = _run(tmp_path, (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/infer.py", line 12, in <module>\n'
        "    x = torch.ones(3).to('npu')\n"
        "RuntimeError: Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, "
        "lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: npu\n"))
    f = rep.findings[0]
    assert not f.generic and f.role == "cause"
    assert f.exception["type"] == "RuntimeError"
    assert f.frame == {"path": "/srv/app/infer.py", "line": 12, "function": "<module>"}
    assert not any(x.id == "python-exception" for x in rep.findings)


CHAIN_MIDDLE = """\
Traceback (most recent call last):
  File "/opt/job/loader.py", line 40, in load_cache
    return CACHE[key]
KeyError: 'layer0.npu'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/opt/job/loader.py", line 44, in load_cache
    t = build(key)
  File "/opt/job/loader.py", line 71, in build
    return torch.empty(n, device="npu")
RuntimeError: NPU out of memory. Tried to allocate 20.00 GiB (NPU 0; 30.00 GiB total capacity; 12.00 GiB already allocated; 12.00 GiB current active; 3.00 GiB free; 12.50 GiB reserved in total by PyTorch)

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/opt/job/main.py", line 9, in <module>
    run()
  File "/opt/venv/lib/python3.11/site-packages/accelerate/launchers.py", line 20, in run
    raise RuntimeError("worker failed") from e
RuntimeError: worker failed
"""


def test_chain_cause_in_the_middle(tmp_path):
    rep = _run(tmp_path, CHAIN_MIDDLE)
    ids = [f.id for f in rep.findings]
    assert ids[0] == "npu-oom", ids
    oom = rep.findings[0]
    assert oom.frame == {"path": "/opt/job/loader.py", "line": 71, "function": "build"}
    wrapped = next(f for f in rep.findings if f.title == "RuntimeError: worker failed")
    assert wrapped.role == "consequence" and wrapped.consequence_of == "npu-oom"
    assert wrapped.details["chain"] == "raised from npu-oom"
    assert wrapped.frame == {"path": "/opt/job/main.py", "line": 9, "function": "<module>"}
    context = next(f for f in rep.findings if f.title.startswith("KeyError"))
    assert context.role == "wrapper" and "raised while handling" in context.details["chain"]


def test_chain_of_unknown_exceptions_the_first_is_the_cause(tmp_path):
    rep = _run(tmp_path, (
        "Traceback (most recent call last):\n"
        '  File "/a/cfg.py", line 3, in read\n'
        "    v = int(s)\n"
        "ValueError: invalid literal for int() with base 10: 'auto'\n"
        "\n"
        "During handling of the above exception, another exception occurred:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "/a/cfg.py", line 6, in read\n'
        "    raise ConfigError(s)\n"
        "cfg.ConfigError: auto\n"))
    assert [f.title for f in rep.findings] == ["ValueError: invalid literal for int() with base 10: 'auto'", "cfg.ConfigError: auto"]
    assert rep.findings[1].role == "consequence" and rep.findings[1].details["chain"].startswith("raised while handling")


def test_traceback_reader_skips_noise_and_311_markers():
    r = TracebackReader()
    lines = [
        "Traceback (most recent call last):",
        '  File "/u/x.py", line 5, in f',
        "    return g(a)",
        "           ^^^^",
        "some other process printed this line",
        '  File "/usr/lib/python3.12/json/decoder.py", line 355, in raw_decode',
        "    raise JSONDecodeError(\"Expecting value\", s, err.value) from None",
        "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
    ]
    got = [r.feed(None, x) for x in lines]
    exc = got[-1]
    assert all(g is None for g in got[:-1])
    assert exc.type == "json.decoder.JSONDecodeError" and exc.message == "Expecting value: line 1 column 1 (char 0)"
    assert (exc.frame.path, exc.frame.line) == ("/u/x.py", 5) and exc.last_frame.path.endswith("decoder.py")
    assert exc.pos == 0 and exc.frames == 2


def test_user_frame_rule():
    assert is_user_frame("/home/u/proj/train.py")
    for p in ("/usr/lib/python3.10/threading.py", "/opt/conda/lib/python3.9/site-packages/torch/nn/functional.py",
              "/src/pytorch/torch/utils/data/dataloader.py", "/build/torch_npu/utils/_error.py", "<frozen runpy>",
              "/usr/local/lib/python3.8/dist-packages/transformers/trainer.py"):
        assert not is_user_frame(p), p


# ------------------------------------------------------------------ CANN blocks

def test_cann_block_is_one_finding_with_the_specific_code(tmp_path):
    rep = _run(tmp_path, (
        "Traceback (most recent call last):\n"
        '  File "/w/model.py", line 77, in forward\n'
        "    y = torch.matmul(a, b)\n"
        "RuntimeError: The Inner error is reported as above. The process exits for this inner error, and the current "
        "working operator name is MatMulV2.\n"
        "[ERROR] 2026-05-01-09:12:00 (PID:777, Device:0, RankID:-1) ERR00100 PTA call acl api failed\n"
        "[PID: 777] 2026-05-01-09:12:00.100.200 EZ9999: Inner Error!\n"
        "EZ9999: [PID: 777] 2026-05-01-09:12:00.100.201 The error from device(chipId:0, dieId:0), serial number is 9, "
        "there is an exception of aicore error, core id is 12, error code = 0x800000, dump info: pc start: 0x1240, "
        "current: 0x1300, vec error info: 0x1f, mte error info: 0x3, ifu error info: 0x0, ccu error info: 0x0.\n"
        "        TraceBack (most recent call last):\n"
        "        The extend info: errcode:(0x800000, 0, 0) errorStr: The DDR address of the MTE instruction is out of range. "
        "fixp_error0 info: 0x0\n"
        "        Aicore kernel execute failed, device_id=0, stream_id=2, report_stream_id=2, task_id=51, flip_num=0, "
        "fault kernel_name=MatMulV2_3c1f_mix_aic, fault kernel info ext=none, program id=11, hash=123\n"))
    # the specific cause of the block (the AI Core exception) is the finding; EZ9999 / ERR00100 are folded into it
    causes = [f for f in rep.findings if f.role == "cause"]
    assert causes and causes[0] is rep.findings[0]
    root = rep.findings[0]
    wrapped = " ".join(root.details.get("wrapped_codes", []))
    assert "EZ9999" in wrapped and "ERR00100" in wrapped, root.details
    assert not any(f.id in ("cann-EZ9999", "torch-npu-ERR00100") for f in rep.findings)
    assert len(rep.findings) <= 2, [f.id for f in rep.findings]


def test_wrapper_alone_stays_a_wrapper(tmp_path):
    rep = _run(tmp_path, "EZ9999: Inner Error!\n\n\n\n\n\n[ERROR] 2026-05-01-10:00:00 (PID:1, Device:0, RankID:0) ERR01100 OPS call acl api failed\n")
    assert {f.role for f in rep.findings} == {"wrapper"}
    assert all(f.confidence < 0.5 for f in rep.findings)


def test_plog_lines_give_time_and_module(tmp_path):
    rep = _run(tmp_path, (
        "[INFO] RUNTIME(2200,python3):2026-03-02-08:00:00.000.001 [runtime.cc:10]2201 Init: start\n"
        "[ERROR] RUNTIME(2200,python3):2026-03-02-08:00:07.004.321 [device.cc:88]2201 Open: EE1001: The argument is "
        "invalid.Reason: rtGetDevMsg execute failed, reason=[device id invalid]\n"), name="plog-2200_20260302080000.log")
    f = rep.findings[0]
    assert "EE1001" in f.title
    assert datetime.fromtimestamp(f.first_time) == datetime(2026, 3, 2, 8, 0, 7, 4321)


# ------------------------------------------------------------------ prefixes and timestamps

@pytest.mark.parametrize("line,rank,body", [
    ("[rank3]:Traceback (most recent call last):", 3, "Traceback (most recent call last):"),
    ("[rank3]:[W501 10:00:00.123456789 ProcessGroupHCCL.cpp:9] x", 3, "[W501 10:00:00.123456789 ProcessGroupHCCL.cpp:9] x"),
    ("[default3]:  File \"/a.py\", line 1, in f", 3, '  File "/a.py", line 1, in f'),
    ("rank 3: step 10 loss 2.0", 3, "step 10 loss 2.0"),
    ("RANK 3 | hello", 3, "hello"),
    ("[Rank 3] Watchdog caught collective operation timeout", 3, "Watchdog caught collective operation timeout"),
])
def test_rank_prefixes(line, rank, body):
    r, b, prefixed = split_rank(line)
    assert (r, b.strip(), prefixed) == (rank, body.strip(), True)


def test_rank_in_text():
    assert split_rank("[ERROR] 2026-05-01-10:00:00 (PID:1, Device:3, RankID:5) ERR00100 PTA")[:1] == (5,)
    assert split_rank("timeout waiting for rank 7")[0] == 7
    assert split_rank("local_rank 3 started")[0] is None
    assert split_rank("2026-05-01 10:00:00 ranking done")[0] is None


@pytest.mark.parametrize("text,expected", [
    ("2026-05-01 10:00:00,250 INFO x", datetime(2026, 5, 1, 10, 0, 0, 250000)),
    ("2026-05-01T10:00:00.5+08:00 x", datetime(2026, 5, 1, 10, 0, 0, 500000)),
    ("[ERROR] GE(1,atc):2026-05-01-10:00:00.123.456 [a.cc:1]", datetime(2026, 5, 1, 10, 0, 0, 123456)),
    ("[2026/05/01 10:00:00] x", datetime(2026, 5, 1, 10, 0, 0)),
    ("[W501 10:00:00.250000000 ProcessGroupHCCL.cpp:1]", datetime(2026, 5, 1, 10, 0, 0, 250000)),
    ("E0501 10:00:00.000001 123 x.cc:1] y", datetime(2026, 5, 1, 10, 0, 0, 1)),
    ("INFO 05-01 10:00:00 [llm_engine.py:1] x", datetime(2026, 5, 1, 10, 0, 0)),
])
def test_timestamps(text, expected):
    t, _ = parse_time(text, 2026)
    assert datetime.fromtimestamp(t) == expected


def test_no_timestamp():
    assert parse_time("step 100 loss 2.0 lr 1e-4", 2026) == (None, 2026)


def test_yearless_timestamps_are_shown_without_a_year(tmp_path):
    rep = _run(tmp_path, "[rank1]:[E324 13:00:25.428029 ProcessGroupHCCL.cpp:574] [Rank 1] Watchdog caught collective "
                         "operation timeout: WorkHCCL(SeqNum=196, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800047 "
                         "milliseconds before timing out.\n")
    assert rep.findings[0].evidence[0].to_dict()["time"] == "03-24T13:00:25.428029"
    rep = _run(tmp_path, "2026-03-24 12:00:00,000 INFO start\n" + "x\n" * 3 + "[rank1]:[E324 13:00:25.5 ProcessGroupHCCL.cpp:574] "
               "[Rank 1] Watchdog caught collective operation timeout: WorkHCCL(SeqNum=1, OpType=ALLREDUCE, Timeout(ms)=1) ran "
               "for 2 milliseconds before timing out.\n", name="b.log")
    assert rep.findings[0].evidence[0].to_dict()["time"] == "2026-03-24T13:00:25.500000"  # the year of the log's full dates


def test_vllm_and_ray_prefixed_tracebacks(tmp_path):
    # vLLM prints its logger prefix, Ray its worker prefix, before every traceback line; two workers interleave
    w1, w2 = "(EngineCore_DP0 pid=1228) ERROR 03-30 03:00:55 [core.py:68] ", "(EngineCore_DP1 pid=1301) ERROR 03-30 03:00:55 [core.py:68] "
    text = "".join([
        w1 + "Traceback (most recent call last):\n",
        w2 + "Traceback (most recent call last):\n",
        w1 + '  File "/srv/serve/app.py", line 40, in start\n',
        w2 + '  File "/srv/serve/app.py", line 52, in warmup\n',
        w1 + "    engine.load()\n",
        w2 + "    engine.run()\n",
        w1 + '  File "/usr/local/lib64/python3.11/site-packages/vllm/engine.py", line 9, in load\n',
        w1 + "    raise ValueError('bad shard')\n",
        w1 + "ValueError: bad shard\n",
        w2 + "TypeError: run() missing 1 required positional argument: 'cfg'\n",
        "ERROR 03-05 07:15:39 engine.py:387] Traceback (most recent call last):\n",
        'ERROR 03-05 07:15:39 engine.py:387]   File "/srv/serve/main.py", line 7, in <module>\n',
        "ERROR 03-05 07:15:39 engine.py:387]     main()\n",
        "ERROR 03-05 07:15:39 engine.py:387] OSError: [Errno 28] No space left on device\n",
    ])
    rep = _run(tmp_path, text)
    got = {f.exception["type"]: f.frame for f in rep.findings if f.exception}
    assert got["ValueError"] == {"path": "/srv/serve/app.py", "line": 40, "function": "start"}
    assert got["TypeError"] == {"path": "/srv/serve/app.py", "line": 52, "function": "warmup"}
    assert got["OSError"] == {"path": "/srv/serve/main.py", "line": 7, "function": "<module>"}


def test_aclnn_error_in_the_exception_with_its_suffix_after_the_continuation(tmp_path):
    rep = _run(tmp_path, (
        "Traceback (most recent call last):\n"
        '  File "/x/attn.py", line 61, in forward\n'
        "    s = torch.matmul(q, k.transpose(-1, -2))\n"
        "RuntimeError: call aclnnMatmul failed, detail:EZ1001: [PID: 310] 2026-05-01-10:00:00.000.001 The dim size of self "
        "and mat2 must match, but self is [8, 64] and mat2 is [32, 8].\n"
        "        TraceBack (most recent call last):\n"
        "        Check shape failed.\n"
        "        matmul infershape failed.\n"
        "\n"
        "[ERROR] 2026-05-01-10:00:00 (PID:310, Device:0, RankID:-1) ERR01100 OPS call acl api failed\n"))
    f = rep.findings[0]
    assert any("EZ1001" in e.text for e in f.evidence) and f.role == "cause"
    assert f.frame == {"path": "/x/attn.py", "line": 61, "function": "forward"}
    assert "ERR01100" in " ".join(f.details["wrapped_codes"]) and len(rep.findings) == 1


def test_error_body_with_literal_newline_escapes(tmp_path):
    # an HTTP / JSON error reply: the whole CANN report on one physical line with \n escapes
    line = ('{"object":"error","message":"RuntimeError: npuSynchronizeDevice:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:467 '
            'NPU function error: c10_npu::SetDevice(device_id_), error code is 507033\\n[ERROR] 2026-05-01-10:00:00 (PID:77, '
            'Device:0, RankID:-1) ERR00100 PTA call acl api failed\\nEZ1001: [PID: 77] 2026-05-01-10:00:00.000.001 The input '
            'tensor self is invalid.\\n        TraceBack (most recent call last):\\n","type":"BadRequestError","code":400}')
    rep = _run(tmp_path, line + "\n")
    ids = [f.id for f in rep.findings]
    root = rep.findings[0]
    assert root.role == "cause", ids
    assert root.evidence[0].line == 1
    codes = " ".join([f.id for f in rep.findings] + [c for f in rep.findings for c in f.details.get("wrapped_codes", [])])
    assert "EZ1001" in codes and "ERR00100" in codes and "507033" in codes


def test_wrapper_after_a_consequence_is_linked_to_it(tmp_path):
    rep = _run(tmp_path, (
        "[ERROR] HCCL(900,python3):2026-05-01-10:30:00.000.001 [notify.cc:12]901 EI0002: The wait execution of the Notify "
        "register times out.\n" + "step\n" * 10 +
        "[ERROR] 2026-05-01-10:30:05 (PID:900, Device:0, RankID:0) ERR02200 DIST call hccl api failed.\n"))
    hccl = rep.findings[0]
    assert hccl.role == "consequence"
    wrapper = next(f for f in rep.findings if f.role == "wrapper")
    assert wrapper.consequence_of == hccl.label()


def test_traceback_across_a_block_boundary(tmp_path):
    import gzip

    from ascendify.diagnose.scanner import BLOCK

    p = tmp_path / "r.log.gz"
    filler = b"x" * 100 + b"\n"
    n = (BLOCK - 60) // len(filler)  # the traceback starts a few bytes before the first 1 MiB block ends
    with gzip.open(p, "wb") as fh:
        fh.write(filler * n)
        fh.write(b"Traceback (most recent call last):\n")
        fh.write(b'  File "/u/a.py", line 3, in <module>\n' + b"    f()\n" * 20)
        fh.write(b"ZeroDivisionError: division by zero\n")
    f = diagnose((str(p),)).findings[0]
    assert f.title == "ZeroDivisionError: division by zero"
    assert f.frame == {"path": "/u/a.py", "line": 3, "function": "<module>"} and f.evidence[0].line == n + 23


def test_a_pasted_exception_line_alone_is_reported(tmp_path):
    rep = _run(tmp_path, "deploying on 8 cards, then:\nAssertionError: Invalid device id\n")
    [f] = rep.findings
    assert f.id == "python-exception" and f.title == "AssertionError: Invalid device id" and f.confidence <= 0.35
    # ... but only when nothing else explains the log
    rep = _run(tmp_path, "ValueError: retrying with a smaller batch\nEI0006: Getting socket times out.\n", name="b.log")
    assert [f.id for f in rep.findings] == ["hccl-connect-timeout"]
    rep = _run(tmp_path, "INFO all good\nsome Error: words in prose\n", name="c.log")
    assert rep.findings == []
