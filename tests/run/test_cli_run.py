"""``ascendify run``: the launcher (command resolution, exit codes, one-line messages, Ctrl-C),
independent of what the emulator reports (that is tests/run/test_cli_emulated.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from ascendify.run.launch import LaunchError, python_entry, resolve_command, torchrun_nproc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def ascendify(*args, cwd=None, timeout=120, **kw):
    env = dict(os.environ)
    env.pop("ASCENDIFY_RUN_CONFIG", None)
    return subprocess.run([sys.executable, "-m", "ascendify", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env, **kw)


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


# ----------------------------------------------------------------------------- resolution
def test_script_and_python_resolve_to_this_interpreter(tmp_path):
    write(tmp_path / "train.py", "print(1)\n")
    assert resolve_command(["train.py", "--steps", "3"], str(tmp_path))[0] == [sys.executable, "train.py", "--steps", "3"]
    argv, _notes = resolve_command(["python", "-m", "pkg.mod", "x"], str(tmp_path))
    assert argv == [sys.executable, "-m", "pkg.mod", "x"]
    assert resolve_command(["python3", "-c", "pass"], str(tmp_path))[0][0] == sys.executable
    assert resolve_command(["torchrun", "--nproc-per-node", "2", "train.py"], str(tmp_path))[0] == \
        [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "train.py"]


def test_entry_script_and_nproc_of_a_torchrun_line():
    tr = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", "tools/train.py", "--lr", "1"]
    assert python_entry(tr) == ("tools/train.py", None)
    assert torchrun_nproc(tr) == 2
    assert torchrun_nproc([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "4", "t.py"]) == 4
    assert python_entry([sys.executable, "-u", "-m", "pkg.train", "--x"]) == (None, "pkg.train")
    assert python_entry([sys.executable, "-W", "ignore", "a.py"]) == ("a.py", None)
    assert torchrun_nproc([sys.executable, "a.py", "--nproc-per-node", "4"]) is None


def test_missing_and_unexecutable_commands_raise_with_the_shell_codes(tmp_path):
    with pytest.raises(LaunchError) as e:
        resolve_command(["no-such-command-xyz"], str(tmp_path))
    assert e.value.code == 127 and "command not found" in str(e.value)
    with pytest.raises(LaunchError) as e:
        resolve_command(["trian.py"], str(tmp_path))
    assert e.value.code == 127 and "trian.py: no such script" in str(e.value)
    write(tmp_path / "job.sh", "echo hi\n")
    with pytest.raises(LaunchError) as e:
        resolve_command(["./job.sh"], str(tmp_path))
    assert e.value.code == 126 and "chmod +x" in str(e.value)
    os.mkdir(tmp_path / "d")
    with pytest.raises(LaunchError) as e:
        resolve_command(["./d"], str(tmp_path))
    assert e.value.code == 126


# ----------------------------------------------------------------------------- the command line
def test_exit_code_and_output_pass_through_unchanged(tmp_path):
    write(tmp_path / "p.py", "import sys\nprint('out line')\nprint('err line', file=sys.stderr)\nsys.exit(7)\n")
    r = ascendify("run", "--mode", "python", "--", "python", "p.py", cwd=str(tmp_path))
    assert r.returncode == 7
    assert r.stdout == "out line\n"  # the program's standard output only: run's summary goes to stderr
    assert r.stderr.startswith("err line\n")
    assert "`python p.py` exited with code 7" in r.stderr


def test_command_not_found_is_one_line_exit_127(tmp_path):
    r = ascendify("run", "--", "no-such-command-xyz", "--flag", cwd=str(tmp_path))
    assert r.returncode == 127 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        f"ascendify: error: no-such-command-xyz: command not found (not on PATH, not a file in {tmp_path})"]


def test_not_executable_is_one_line_exit_126(tmp_path):
    write(tmp_path / "job.sh", "echo hi\n")
    r = ascendify("run", "--", "./job.sh", cwd=str(tmp_path))
    assert r.returncode == 126
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ascendify: error: ./job.sh: not executable")


def test_no_command_is_a_usage_error(tmp_path):
    r = ascendify("run", cwd=str(tmp_path))
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "ascendify: error: no command to run; e.g. ascendify run -- python train.py --steps 3 (see `ascendify run --help`)"]


def test_options_before_the_command_and_program_options_after_it(tmp_path):
    write(tmp_path / "a.py", "import sys\nprint(sys.argv[1:])\n")
    # without `--`, run's options end at the first argument: --format belongs to the program
    r = ascendify("run", "--mode", "python", "a.py", "--format", "json", "-o", "x", cwd=str(tmp_path))
    assert r.returncode == 0 and r.stdout == "['--format', 'json', '-o', 'x']\n"


SLEEPER = """\
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
with open("child.pid", "w") as fh:
    fh.write(str(child.pid))
print("started", flush=True)
time.sleep(60)
"""

STUBBORN = """\
import os, signal, subprocess, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
code = "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
child = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)  # leaves the process group, as torchrun's workers do
with open("child.pid", "w") as fh:
    fh.write(str(child.pid))
print("started", flush=True)
time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def _run_started(tmp_path, script):
    """``ascendify run -- python s.py`` of ``script``, once it printed "started": (the run, its child's pid)."""
    write(tmp_path / "s.py", script)
    env = dict(os.environ)
    env.pop("ASCENDIFY_RUN_CONFIG", None)
    p = subprocess.Popen([sys.executable, "-m", "ascendify", "run", "--mode", "python", "--", "python", "s.py"],
                         cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert p.stdout.readline() == "started\n"
        return p, int((tmp_path / "child.pid").read_text())
    except BaseException:
        p.kill()
        raise


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("script,within", [(SLEEPER, 2.0), (STUBBORN, 3.0)], ids=["sleeper", "ignores-sigint"])  # the issue: within 2 s of SIGINT
def test_ctrl_c_stops_every_child_and_exits_130(tmp_path, script, within):
    p, child = _run_started(tmp_path, script)
    try:
        assert _alive(child)
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        rc = p.wait(timeout=10)
        took = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
    err = p.stderr.read()
    assert rc == 130 and took < within, (rc, took, err)
    assert not _alive(child), "a child of the program was left running"
    mine = [ln for ln in err.splitlines() if ln.startswith("ascendify")]
    assert len(mine) == 1 and mine[0].startswith("ascendify: run: interrupted; stopped `python s.py`"), err
    assert "Traceback" not in err.split(mine[0])[1]


def test_json_format_has_the_envelope_and_the_exit_code(tmp_path):
    from ascendify import __version__

    write(tmp_path / "p.py", "raise SystemExit(4)\n")
    r = ascendify("run", "--mode", "python", "--format", "json", "--", "python", "p.py", cwd=str(tmp_path))
    assert r.returncode == 4
    doc = json.loads(r.stdout)
    assert list(doc)[:3] == ["tool", "version", "command"]
    assert (doc["tool"], doc["version"], doc["command"]) == ("ascendify", __version__, "run")
    assert doc["exit_code"] == 4 and doc["command_line"] == [sys.executable, "p.py"]
    # the keys docs/run.md lists for the JSON report
    documented = {"exit_code", "first_failure", "fallbacks", "dtype_findings", "ops_by_class", "top_ops", "autocast",
                  "gradscaler", "host_syncs", "parameters", "writes_outside", "emulated", "ranks"}
    assert documented <= set(doc), documented - set(doc)
    rep = tmp_path / "r.json"
    r = ascendify("run", "--mode", "python", "--report", str(rep), "-o", str(tmp_path / "s.txt"), "--", "python", "p.py",
                  cwd=str(tmp_path))
    assert r.returncode == 4 and r.stdout == ""
    assert json.loads(rep.read_text())["exit_code"] == 4
    assert "exited with code 4" in (tmp_path / "s.txt").read_text()


def test_an_unsupported_torch_is_one_line_naming_the_range(tmp_path, monkeypatch):
    from ascendify.run import boot
    from tests.cli_util import run_cli

    monkeypatch.setattr(boot, "SUPPORTED_TORCH", ("2.1", "2.4"))
    monkeypatch.delenv("ASCENDIFY_RUN_ANY_TORCH", raising=False)
    write(tmp_path / "p.py", "print('never runs')\n")
    r = run_cli("run", "--", "python", str(tmp_path / "p.py"))
    assert r.code == 2 and r.out == ""
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    assert lines[0].startswith("ascendify: error: torch ") and "(supported: torch 2.1 to 2.4)" in lines[0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_is_forwarded_and_exits_143(tmp_path):
    p, child = _run_started(tmp_path, SLEEPER)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=10) == 143
    assert not _alive(child)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_second_ctrl_c_kills_at_once(tmp_path):
    p, child = _run_started(tmp_path, STUBBORN)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    time.sleep(0.2)
    p.send_signal(signal.SIGINT)
    assert p.wait(timeout=10) == 130
    assert time.monotonic() - t0 < 1.2  # not the 2 s escalation
    assert not _alive(child)


def test_files_written_outside_the_program_folder_are_named(tmp_path):
    proj, outside, tmpdir = tmp_path / "proj", tmp_path / "outside", tmp_path / "tmp"
    for d in (proj, outside, tmpdir):
        d.mkdir()
    write(proj / "w.py", "import os, tempfile\n"
                         "open('inside.txt', 'w').write('x')\n"
                         f"open({str(outside / 'ckpt.pt')!r}, 'wb').write(b'x')\n"
                         f"os.close(os.open({str(outside / 'log.txt')!r}, os.O_CREAT | os.O_WRONLY))\n"
                         f"open({str(outside / 'read.txt')!r}, 'w').close()\n"
                         f"open({str(outside / 'read.txt')!r}).read()\n"
                         "tempfile.NamedTemporaryFile(delete=False).close()\n")
    env = dict(os.environ, TMPDIR=str(tmpdir))
    env.pop("ASCENDIFY_RUN_CONFIG", None)
    r = subprocess.run([sys.executable, "-m", "ascendify", "run", "--mode", "python", "--format", "json", "--", "python", "w.py"],
                       cwd=str(proj), capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    real = os.path.realpath(str(outside))
    assert doc["writes_outside"] == sorted(os.path.join(real, n) for n in ("ckpt.pt", "log.txt", "read.txt"))
    r = subprocess.run([sys.executable, "-m", "ascendify", "run", "--mode", "python", "--", "python", "w.py"],
                       cwd=str(proj), capture_output=True, text=True, env=env, timeout=120)
    assert f"wrote outside its folder ({proj}): {os.path.join(real, 'ckpt.pt')}" in r.stderr


def test_an_unwritable_report_fails_before_the_program_runs(tmp_path):
    """The program ran to the end and only then 'cannot write the report', its summary and exit code lost
    (new-user trial): the paths are checked first, in one line, exit 2, and the program never starts."""
    write(tmp_path / "p.py", "open('ran', 'w').write('1')\n")
    for opt in ("--report", "-o"):
        r = ascendify("run", "--mode", "python", opt, str(tmp_path / "missing" / "r.json"), "--", "python", "p.py", cwd=str(tmp_path))
        assert r.returncode == 2 and "does not exist" in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert not (tmp_path / "ran").exists()
