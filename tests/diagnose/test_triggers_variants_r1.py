"""Triggers worded differently and one code read by its other lines (issue 21, families 5 and 7), on logs written
here in our own words: an MoE kernel's out-of-range address that is HCCL's buffer, the serving API's HTTP port,
'connection refused' at the rendezvous, pip's torchvision pair, EI0006 from a rank table, dcmi -8005 with a process
listing, a fork after the NPU was initialised."""

from __future__ import annotations

from tests.diagnose.diag_util import diagnose_text, top_finding

MOE_MTE = """\
(Worker_TP3 pid=4410) EZ9999: [PID: 4410] 2025-11-03-04:22:19.101.223 The DDR address of the MTE instruction is out of range.[FUNC:PrintCoreErrorInfo][FILE:device_error_proc.cc][LINE:902]
(Worker_TP3 pid=4410)         Kernel task happen error, retCode=0x31, [vector core exception].[FUNC:PreCheckTaskErr][FILE:davinci_kernel_task.cc][LINE:1502]
(Worker_TP3 pid=4410) RuntimeError: The Inner error is reported as above. The process exits for this inner error, and the current working operator name is {op}.
(Worker_TP3 pid=4410) RuntimeError: ACL stream synchronize failed, error code:507035
"""


def test_mte_out_of_range_in_moe_combine_reads_as_hccl_buffsize(tmp_path):
    f = top_finding(tmp_path, MOE_MTE.format(op="MoeDistributeCombineV2"))
    assert f.id == "mte-address-out-of-range"
    assert f.variant == "MoeDistributeCombine"
    assert "HCCL_BUFFSIZE" in f.title and "HCCL_BUFFSIZE" in f.fix
    # another kernel keeps the out-of-bounds reading
    g = top_finding(tmp_path, MOE_MTE.format(op="MyTritonKernel"), "other.log")
    assert g.id == "mte-address-out-of-range" and not g.variant
    assert "HCCL_BUFFSIZE" not in g.title


def test_serving_http_port_in_use_is_not_the_rendezvous_port(tmp_path):
    log = ("INFO:     Started server process [771]\nINFO:     Waiting for application startup.\n"
           "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8011): address already in use\n")
    f = top_finding(tmp_path, log)
    assert f.id == "serving-http-port-in-use" and f.key == "8011"
    assert "--port" in f.fix and "HCCL_IF_BASE_PORT" not in f.fix and "MASTER_PORT" not in f.fix
    # torch's store keeps its reading
    g = top_finding(tmp_path, "torch.distributed.DistNetworkError: The server socket has failed to listen on any local "
                    "network address. port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use\n",
                    "store.log")
    assert g.id == "dist-port-in-use"


def test_connection_refused_at_the_rendezvous(tmp_path):
    log = ("[rank4]:     return TCPStore(\n[rank4]: torch.distributed.DistNetworkError: The client socket has failed to "
           "connect to [trainer-0.svc]:23456 (errno: 111 - Connection refused).\n")
    f = top_finding(tmp_path, log)
    assert f.id == "dist-store-connection-refused" and f.key == "[trainer-0.svc]:23456"
    assert "MASTER_ADDR" in f.fix and "rank 0" in f.fix
    assert f.known_issue is None or "rpc_port" not in f.fix.split("Otherwise:")[0]
    # a refused HTTP request to a server is not the rendezvous
    rep = diagnose_text(tmp_path, "curl: (7) Failed to connect to localhost port 8000: Connection refused\n", "curl.log")
    assert not any(x.id == "dist-store-connection-refused" for x in rep.findings)


PIP = """\
ERROR: Cannot install -r requirements.txt (line 1), -r requirements.txt (line 3) and torch==2.5.1 because these package versions have conflicting dependencies.

The conflict is caused by:
    The user requested torch==2.5.1
    {line}

To fix this you could try to:
1. loosen the range of package versions you've specified
2. remove package versions to allow pip to attempt to solve the dependency conflict

ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/#dealing-with-dependency-conflicts
"""


def test_pip_conflict_names_the_torchvision_pair(tmp_path):
    rep = diagnose_text(tmp_path, PIP.format(line="torchvision 0.21.0 depends on torch==2.6.0"))
    f = rep.findings[0]
    assert f.id == "pip-resolution-impossible" and f.variant == "torchvision 0."
    assert "2.5 - 0.20" in f.fix
    assert f.known_issue is None  # pip's own frame words name no thread
    pair = next(x for x in rep.findings if x.id == "pip-conflict-torchvision-torch")
    assert pair.key == "torchvision 0.21.0"
    g = top_finding(tmp_path, PIP.format(line="accelerate 1.2.0 depends on numpy<2"), "other.log")
    assert g.id == "pip-resolution-impossible" and not g.variant
    assert "torchvision" not in g.fix.split(".")[0]


def test_ei0006_with_a_rank_table_reads_as_wrong_device_ips(tmp_path):
    ei = ("EI0006: [PID: 4410] 2025-06-07-19:30:01.201.442 Getting socket times out. Reason: 3. The communication link "
          "is disconnected. (For example, the IP addresses are not on the same network segment.)\n")
    f = top_finding(tmp_path, "[ERROR] HCCL(4410,python):2025-06-07-19:30:01.201.011 [Connect] rank[8] could not reach "
                    "rank[0] at the device ip 192.168.10.1 taken from the ranktable /home/job/rt_2s_16p.json\n" + ei)
    assert f.id == "hccl-connect-timeout" and f.variant
    assert "hccn_tool" in f.fix and "rank table" in f.fix
    g = top_finding(tmp_path, "[rank0] loading checkpoint shard 7/8\n" + ei, "slow.log")
    assert g.id == "hccl-connect-timeout" and not g.variant
    assert "HCCL_CONNECT_TIMEOUT" in g.fix


def test_dcmi_8005_with_a_process_listing_is_a_held_device(tmp_path):
    log = ("root@host:~# npu-smi info\ndcmi module initialize failed. ret is -8005\n"
           "root@host:~# fuser -v /dev/davinci3\n                     USER        PID ACCESS COMMAND\n"
           "/dev/davinci3:       root      88231 F.... python3\n")
    f = top_finding(tmp_path, log)
    assert f.id == "npu-smi-dcmi-init" and "held by another process" in f.title


def test_fork_before_npu_init_is_a_catalogue_entry(tmp_path):
    log = ("(VllmWorker rank=1 pid=1202) ERROR 04-02 08:11:21 [multiproc_executor.py:470] RuntimeError: Cannot re-initialize "
           "NPU in forked subprocess. To use NPU with multiprocessing, you must use the 'spawn' start method\n")
    f = top_finding(tmp_path, log)
    assert f.id == "npu-init-in-forked-subprocess"
    assert "VLLM_WORKER_MULTIPROC_METHOD=spawn" in f.fix
    assert "inductor" not in f.title.lower()
