"""One CLI convention (docs/cli.md): walk every command's options, run every command with
``--format json`` on bundled inputs, and keep the old spellings working with a note."""

from __future__ import annotations

import json
import os
import shutil

import click
import pytest

from ascendify.cli import LAZY_COMMANDS, cli
from tests.cli_util import run_cli

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(REPO, "examples", "cuda_project")

SHARED = {
    # option name -> (all its spellings, metavar); the same everywhere it appears
    "chip": (("--chip",), "SOC"),
    "torch_npu": (("--torch-npu",), "VERSION"),
    "jobs": (("-j", "--jobs"), "N"),
    "output_file": (("-o", "--output-file"), "FILE"),
    "fmt": (("--format",), None),
    "select": (("--select",), "CODES"),
    "ignore": (("--ignore",), "CODES"),
    "exclude": (("--exclude",), "GLOB"),
    "out_dir": (("--out-dir",), "DIR"),
    "plot": (("--plot",), "FILE"),
    "inputs": (("--input",), "SPEC"),
}
OLD_SPELLINGS = {"--output", "--json", "--chart", "--soc-version"}


def _commands():
    """(path, click.Command) for every command and subcommand."""
    ctx = click.Context(cli)
    out = []
    for name in cli.list_commands(ctx):
        cmd = cli.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            sub = click.Context(cmd, parent=ctx)
            for sname in cmd.list_commands(sub):
                out.append((f"{name} {sname}", cmd.get_command(sub, sname)))
        else:
            out.append((name, cmd))
    return out


COMMANDS = _commands()


def test_every_lazy_command_loads():
    names = {p.split()[0] for p, _ in COMMANDS}
    assert names == set(LAZY_COMMANDS)
    for path, cmd in COMMANDS:
        # a command whose module failed to import is replaced by a stub named `unavailable`
        assert cmd.callback is not None and cmd.callback.__name__ != "unavailable", path


@pytest.mark.parametrize("path,cmd", COMMANDS, ids=[p for p, _ in COMMANDS])
def test_shared_options_mean_the_same_everywhere(path, cmd):
    opts = {p.name: p for p in cmd.params if isinstance(p, click.Option)}
    # every command reports: --format with text and json, and -o/--output-file
    assert "fmt" in opts, f"{path}: no --format"
    fmt = opts["fmt"]
    assert isinstance(fmt.type, click.Choice) and {"text", "json"} <= set(fmt.type.choices), path
    assert fmt.default is None, f"{path}: --format defaults from the -o suffix, then text"
    assert "output_file" in opts, f"{path}: no -o/--output-file"
    for name, (decls, metavar) in SHARED.items():
        if name not in opts:
            continue
        o = opts[name]
        assert tuple(o.opts) == decls, f"{path}: {name} spelled {o.opts}, the convention is {decls}"
        if metavar:
            assert o.metavar == metavar, f"{path}: {decls[-1]} metavar {o.metavar!r}, the convention is {metavar!r}"
    if "jobs" in opts:
        assert isinstance(opts["jobs"].type, click.IntRange) and opts["jobs"].type.min == 1, path
    if "fail_on" in opts:
        assert "never" in opts["fail_on"].type.choices and "error" in opts["fail_on"].type.choices, path
    visible = {d for p in cmd.params if isinstance(p, click.Option) and not p.hidden for d in p.opts}
    assert not visible & OLD_SPELLINGS, f"{path}: old spelling(s) {visible & OLD_SPELLINGS} still shown in --help"
    # -o is only ever the report file
    for p in cmd.params:
        if isinstance(p, click.Option) and "-o" in p.opts:
            assert p.name == "output_file", path


def test_no_two_commands_spell_one_long_option_differently():
    seen: dict = {}
    for path, cmd in COMMANDS:
        for p in cmd.params:
            if not isinstance(p, click.Option) or p.hidden:
                continue
            longs = [o for o in p.opts if o.startswith("--")]
            key = longs[0] if longs else p.opts[0]
            shape = (tuple(sorted(p.opts)), p.is_flag, p.multiple)
            seen.setdefault(key, {}).setdefault(shape, []).append(path)
    clashes = {k: v for k, v in seen.items() if len(v) > 1}
    assert not clashes, clashes


def test_help_never_suggests_the_default_as_an_option():
    r = run_cli("--help")
    assert r.code == 0 and "fix PATH --diff" not in r.out and "--out-dir" in r.out


def _json(r):
    assert r.code in (0, 1), (r.code, r.err[-2000:])
    return json.loads(r.out)


@pytest.fixture(scope="module")
def bundled(tmp_path_factory):
    """Inputs for every command, from the repository (examples/) where it ships them."""
    t = tmp_path_factory.mktemp("convention")
    proj = t / "proj"
    shutil.copytree(EXAMPLE, proj)
    return {"tmp": t, "proj": str(proj)}


def _runs(b):
    t, proj = b["tmp"], b["proj"]
    logs = os.path.join(REPO, "examples", "logs")
    prof = os.path.join(REPO, "examples", "profile_sample")
    return {
        "scan": ["scan", proj, "--no-cache"],
        "fix": ["fix", proj, "--no-cache"],
        "rules": ["rules"],
        "rule": ["rule", "DEV001"],
        "ops": ["ops", "aten::add.Tensor"],
        "doctor": ["doctor", "--root", str(t)],
        "diagnose": ["diagnose", logs],
        "profile analyze": ["profile", "analyze", prof],
        "migrate": ["migrate", proj, "--out-dir", str(t / "mig"), "--no-doctor", "--no-cache"],
        "report": ["report", proj, "--out-dir", str(t / "rep")],
    }


ML_COMMANDS = {"probe", "export", "baseline", "compare", "profile compare", "fit",
               "run"}  # run: the program's arguments come last, so --format goes before `--` (tests/run/test_cli_run.py)


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS if p not in ML_COMMANDS])
def test_format_json_is_valid_json(bundled, path):
    args = _runs(bundled)[path]
    doc = _json(run_cli(*args, "--format", "json", cwd=str(bundled["tmp"])))
    assert isinstance(doc, (dict, list)) and doc
    _envelope(doc, path)


def _envelope(doc, path):
    """Every JSON report starts with tool, version and command (`rules` too: its list under "rules")."""
    from ascendify import __version__

    if path == "rules":
        assert {"code", "name", "severity"} <= set(doc["rules"][0]) and doc["count"] == len(doc["rules"])
    assert list(doc)[:3] == ["tool", "version", "command"], (path, list(doc)[:5])
    assert (doc["tool"], doc["version"], doc["command"]) == ("ascendify", __version__, path)


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS if p not in ML_COMMANDS])
def test_output_file_writes_the_report_and_its_suffix_picks_json(bundled, path):
    out = bundled["tmp"] / f"{path.replace(' ', '_')}.json"
    args = _runs(bundled)[path]
    r = run_cli(*args, "-o", str(out), cwd=str(bundled["tmp"]))
    assert r.code in (0, 1), r.err[-2000:]
    assert isinstance(json.loads(out.read_text(encoding="utf-8")), (dict, list))
    assert r.out == ""  # -o replaces standard output


def test_ml_commands_format_json(tmp_path):
    pytest.importorskip("onnx")
    onnx = tmp_path / "m.onnx"
    doc = _json(run_cli("export", "tests.export.toy_models:cnn", "--input", "x:1,3,16,16:float32", "--onnx", str(onnx),
                        "--format", "json", cwd=REPO))
    assert onnx.is_file() and doc["onnx"].endswith("m.onnx")
    _envelope(doc, "export")
    doc = _json(run_cli("probe", "tests.export.toy_models:cnn", "--input", "x:1,3,16,16:float32", "--format", "json", cwd=REPO))
    assert "classification" in doc
    _envelope(doc, "probe")
    import numpy as np

    data = tmp_path / "data"
    data.mkdir()
    np.save(data / "a.npy", np.random.RandomState(0).rand(1, 3, 16, 16).astype("float32"))
    npz = tmp_path / "b.npz"
    doc = _json(run_cli("baseline", "tests.export.toy_models:cnn", "--data", str(data), "--npz", str(npz), "--format", "json", cwd=REPO))
    assert npz.is_file() and doc["samples"] == 1
    _envelope(doc, "baseline")
    doc = _json(run_cli("compare", str(npz), str(npz), "--format", "json", cwd=REPO))
    assert doc["verdict"] == "PASS"
    _envelope(doc, "compare")
    doc = _json(run_cli("fit", "tests.export.toy_models:cnn", "--input", "x:2,3,16,16:float32", "--chip", "Ascend910B3",
                        "--format", "json", cwd=REPO))
    assert doc["peak_bytes"] > 0 and doc["fits"] is True
    _envelope(doc, "fit")


def test_profile_compare_format_json(tmp_path):
    from tests.profile.test_compare import gpu_trace, npu_dir

    gpu_trace(tmp_path / "gpu.json")
    doc = _json(run_cli("profile", "compare", str(tmp_path / "gpu.json"), npu_dir(tmp_path / "npu"), "--format", "json"))
    _envelope(doc, "profile compare")


# ----------------------------------------------------------------------------- old spellings
def test_old_spellings_still_work_with_a_note(tmp_path):
    proj = tmp_path / "proj"
    shutil.copytree(EXAMPLE, proj)
    r = run_cli("fix", str(proj), "--output", str(tmp_path / "copy"), "--no-cache", "--fail-on", "never")
    assert r.code == 0 and (tmp_path / "copy" / "train.py").is_file()
    assert "--output is deprecated and will be removed in ascendify 0.3; use --out-dir DIR" in r.err
    r = run_cli("migrate", str(proj), "-o", str(tmp_path / "mig"), "--no-doctor", "--no-cache", "--fail-on", "never")
    assert r.code == 0 and (tmp_path / "mig" / "report" / "index.html").is_file()
    assert "use --out-dir DIR (-o now names the report file)" in r.err


def test_old_export_and_compare_spellings(tmp_path):
    pytest.importorskip("onnx")
    onnx = tmp_path / "m.onnx"
    r = run_cli("export", "tests.export.toy_models:cnn", "--input", "x:1,3,16,16:float32", "-o", str(onnx),
                "--soc-version", "Ascend910B3", "--json", cwd=REPO)
    assert r.code == 0, r.err
    assert onnx.is_file() and "--soc_version=Ascend910B3" in json.loads(r.out)["atc_command"]
    for old in ("-o/--output FILE.onnx", "--soc-version", "--json"):
        assert f"{old} is deprecated" in r.err


def test_new_convention_writes_the_report_file_not_the_artefact(tmp_path):
    proj = tmp_path / "proj"
    shutil.copytree(EXAMPLE, proj)
    r = run_cli("migrate", str(proj), "--out-dir", str(tmp_path / "mig"), "-o", str(tmp_path / "summary.json"),
                "--no-doctor", "--no-cache", "--fail-on", "never")
    assert r.code == 0 and r.err.count("deprecated") == 0
    doc = json.loads((tmp_path / "summary.json").read_text())
    assert doc["command"] == "migrate" and doc["paths"]["report"].endswith("index.html")
    assert doc["torch_npu"] == "2.7.1" and "pyproject.toml" in doc["torch_npu_reason"]


def test_docs_cli_md_lists_every_command_as_it_is():
    import subprocess
    import sys

    r = subprocess.run([sys.executable, os.path.join(REPO, "tools", "cli_docs.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    text = open(os.path.join(REPO, "docs", "cli.md"), encoding="utf-8").read()
    for path, _ in COMMANDS:
        assert f"### `ascendify {path}" in text


@pytest.mark.parametrize("args,needle", [  # (a missing path is not a usage error: tests/test_cli_trial22.py)
    (("ops",), "Missing argument 'QUERY'"),
    (("scan", "--bogus"), "No such option '--bogus'"),
    (("nosuchcmd",), "No such command 'nosuchcmd'"),
    (("profile", "analyze", "--bogus", "x"), "No such option '--bogus'"),
    (("fit", "--format", "xml", "m:f"), "Invalid value for '--format'"),
])
def test_usage_errors_are_one_line(args, needle):
    r = run_cli(*args)
    assert r.code == 2 and r.out == ""
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ascendify: error: ") and needle in lines[0], r.err
    assert "--help`)" in lines[0]
