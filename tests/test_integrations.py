"""The integrations (docs/ci.md): the pre-commit hook, the GitHub Action and the CI snippets work.

No network: pre-commit's own ``pip install`` of the hook runs against a wheelhouse repacked here from the
test environment's installed core dependencies (``PIP_NO_INDEX=1``); see docs/ci.md, "How the
integrations are tested"."""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

import jsonschema
import pytest
import yaml  # pyyaml, in the test extras (pyproject.toml) with pre-commit and jsonschema

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "cuda_project")
SCHEMAS = os.path.join(ROOT, "tests", "data", "schemas")
SARIF_SCHEMA = os.path.join(ROOT, "tests", "data", "sarif", "sarif-2.1.0-rtm.5.json")
BIN = os.path.dirname(sys.executable)  # the test environment's ascendify / pre-commit scripts
GIT = ["git", "-c", "user.name=ascendify tests", "-c", "user.email=tests@example.invalid",
       "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]
# what pre-commit installs: ascendify's runtime dependencies (pyproject [project] dependencies)
CORE_DEPS = ("click", "rich", "libcst", "jinja2", "markdown-it-py")


def _load_yaml(path_or_text: str):
    text = open(path_or_text, encoding="utf-8").read() if os.path.isfile(path_or_text) else path_or_text
    doc = yaml.safe_load(text)
    if isinstance(doc, dict) and True in doc:  # YAML 1.1 reads the key `on:` as True
        doc["on"] = doc.pop(True)
    return doc


def _schema(name: str) -> "jsonschema.Draft7Validator":
    with open(os.path.join(SCHEMAS, name), encoding="utf-8") as fh:
        s = json.load(fh)
    jsonschema.Draft7Validator.check_schema(s)
    return jsonschema.Draft7Validator(s)


def _errors(validator, doc) -> list:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


def _env(**extra) -> dict:
    env = dict(os.environ)
    env["PATH"] = BIN + os.pathsep + env.get("PATH", "")
    env.update(extra)
    return env


def _git(cwd, *args):
    subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True)


# ------------------------------------------------------------------------------------ pre-commit

def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements_closure(names) -> dict:
    """Installed distributions of ``names`` and everything they require (markers evaluated here)."""
    from packaging.requirements import Requirement

    seen: dict = {}
    todo = list(names)
    while todo:
        d = md.distribution(todo.pop())
        key = _norm(d.metadata["Name"])
        if key in seen:
            continue
        seen[key] = d
        for r in d.requires or []:
            req = Requirement(r)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return seen


def _repack(dist, dest: str) -> str:
    """An installed distribution back into a wheel: its RECORD's files under site-packages plus its
    dist-info (the WHEEL file keeps the original tags); scripts and caches are left out (pip
    regenerates console scripts from entry_points.txt)."""
    files = [f for f in dist.files or [] if not str(f).startswith("..") and "__pycache__" not in f.parts]
    wheel_file = next(f for f in files if f.parts[0].endswith(".dist-info") and f.name == "WHEEL")
    info = wheel_file.parts[0]
    tags = [ln.split(":", 1)[1].strip() for ln in wheel_file.read_text().splitlines() if ln.startswith("Tag:")]
    tag = "-".join(".".join(sorted({t.split("-")[i] for t in tags})) for i in range(3))
    path = os.path.join(dest, f"{re.sub(r'[-_.]+', '_', dist.metadata['Name'])}-{dist.version}-{tag}.whl")
    skip = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        names = []
        for f in files:
            if f.parts[0] == info and f.name in skip:
                continue
            z.write(str(f.locate()), str(f))
            names.append(str(f))
        z.writestr(f"{info}/RECORD", "".join(f"{n},,\n" for n in names + [f"{info}/RECORD"]))
    return path


@pytest.fixture(scope="module")
def offline_pip(tmp_path_factory):
    """Environment for pre-commit: pip may only install from a wheelhouse of the installed core
    dependencies; build isolation is off so the hook venv's seeded setuptools builds ascendify."""
    try:
        import pre_commit  # noqa: F401
    except ImportError:
        pytest.fail("pre-commit is not installed: pip install -e '.[test]' (it is in the test extras)", pytrace=False)
    wh = tmp_path_factory.mktemp("wheelhouse")
    dists = _requirements_closure(CORE_DEPS)
    for d in dists.values():
        _repack(d, str(wh))
    assert len(os.listdir(wh)) == len(dists) >= 5
    return _env(PRE_COMMIT_HOME=str(tmp_path_factory.mktemp("pre-commit-home")), PIP_NO_INDEX="1",
                PIP_FIND_LINKS=str(wh), PIP_NO_BUILD_ISOLATION="0", PIP_DISABLE_PIP_VERSION_CHECK="1",
                VIRTUALENV_NO_PERIODIC_UPDATE="1", VIRTUALENV_SETUPTOOLS="bundle", PRE_COMMIT_COLOR="never")


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """This repository's hook, as pre-commit sees a repository: the files `pip install .` needs and
    the manifest, committed to a fresh git repo (independent of this checkout's uncommitted state)."""
    d = tmp_path_factory.mktemp("hook-repo")
    for name in ("pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml"):
        shutil.copy(os.path.join(ROOT, name), d / name)
    shutil.copytree(os.path.join(ROOT, "src"), d / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    _git(d, "init", "-q")
    _git(d, "add", "-A")
    _git(d, "commit", "-q", "-m", "hook")
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=d, capture_output=True, text=True, check=True).stdout.strip()
    return str(d), rev


@pytest.fixture()
def project(tmp_path):
    """A user's project: a git repo holding a copy of the bundled CUDA example, files staged."""
    p = tmp_path / "project"
    shutil.copytree(EXAMPLE, p, ignore=shutil.ignore_patterns("__pycache__"))
    (p / "clean.py").write_text("import torch\n\n\ndef add(a, b):\n    return torch.add(a, b)\n")
    _git(p, "init", "-q")
    _git(p, "add", "-A")
    return p


def test_manifest_is_valid_and_fast_to_start():
    subprocess.run([sys.executable, "-m", "pre_commit", "validate-manifest", os.path.join(ROOT, ".pre-commit-hooks.yaml")],
                   check=True, capture_output=True)
    (hook,) = _load_yaml(os.path.join(ROOT, ".pre-commit-hooks.yaml"))
    assert hook["id"] == "ascendify-scan" and hook["language"] == "python"
    assert hook["entry"].split()[:2] == ["ascendify", "scan"] and hook["pass_filenames"] is True
    assert hook["types_or"] == ["python", "jupyter"]
    # scan takes several files at once (pre-commit passes the changed files as arguments)
    files = [os.path.join(EXAMPLE, f) for f in ("train.py", "trainer/engine.py", "notebooks/explore.ipynb")]
    r = subprocess.run([os.path.join(BIN, "ascendify"), "scan", "--no-summary", "--format", "json", *files],
                       capture_output=True, text=True, env=_env())
    assert r.returncode == 1, r.stderr
    paths = {os.path.basename(f["path"]) for f in json.loads(r.stdout)["findings"]}
    assert paths == {"train.py", "engine.py", "explore.ipynb"}


def test_pre_commit_try_repo_on_the_example(hook_repo, project, offline_pip):
    repo, rev = hook_repo
    files = ["train.py", "trainer/engine.py", "notebooks/explore.ipynb", "README.md", "clean.py"]
    r = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", repo, "ascendify-scan", "--files", *files],
                       cwd=project, capture_output=True, text=True, env=offline_pip, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "ascendify scan (CUDA -> Ascend NPU)" in out and "Failed" in out
    assert re.search(r"^trainer/engine\.py:\d+:\d+: DEV003 ", out, re.M), out
    assert re.search(r"^notebooks/explore\.ipynb:cell \d+:\d+:\d+: DEV001 ", out, re.M), out
    assert "README.md" not in out and "clean.py" not in out  # not Python (types); no findings
    # the same hook from a project's .pre-commit-config.yaml: the docs/ci.md snippet, pinned locally
    cfg = _load_yaml(_snippets()["pre-commit-config"])
    cfg["repos"][0].update(repo=repo, rev=rev)
    cfg["repos"][0]["hooks"][0]["args"] = ["--fail-on", "never"]
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(cfg))
    r = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--files", *files],
                       cwd=project, capture_output=True, text=True, env=offline_pip, timeout=600)
    assert r.returncode == 0 and "Passed" in r.stdout, r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--files", "README.md"],
                       cwd=project, capture_output=True, text=True, env=offline_pip, timeout=600)
    assert r.returncode == 0 and "(no files to check)Skipped" in r.stdout, r.stdout


# ---------------------------------------------------------------------------------------- action

def _action() -> dict:
    return _load_yaml(os.path.join(ROOT, "action.yml"))


def test_action_validates_against_the_github_action_schema():
    v = _schema("github-action.json")
    doc = _action()
    assert _errors(v, doc) == []
    # the schema is strict enough to catch a broken action
    assert _errors(v, {**doc, "runs": {"using": "composite"}})
    assert _errors(v, {**doc, "inputs": {"path": {"default": "."}}})  # an input needs a description


def test_action_inputs_and_steps():
    doc = _action()
    assert set(doc["inputs"]) >= {"path", "target", "torch-npu", "chip", "fail-on", "args"}
    text = open(os.path.join(ROOT, "action.yml"), encoding="utf-8").read()
    used = set(re.findall(r"\$\{\{\s*inputs\.([\w-]+)", text))
    assert used == set(doc["inputs"]), used ^ set(doc["inputs"])
    steps = doc["runs"]["steps"]
    assert doc["runs"]["using"] == "composite"
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@"))
    assert upload["with"]["sarif_file"] == "${{ steps.scan.outputs.sarif-file }}"
    scan = next(s for s in steps if s.get("id") == "scan")
    assert "${{" not in scan["run"]  # inputs reach the script through env only (no script injection)
    assert steps.index(upload) < steps.index(next(s for s in steps if s.get("name") == "Fail on findings"))


def _run_scan_step(tmp_path, cwd, **inputs) -> tuple[int, dict, str]:
    """The action's scan step, run here as the runner would (bash -eo pipefail, inputs in env)."""
    doc = _action()
    values = {k: v.get("default", "") for k, v in doc["inputs"].items()}
    values.update(inputs)
    scan = next(s for s in doc["runs"]["steps"] if s.get("id") == "scan")
    env = {}
    for k, expr in scan["env"].items():
        m = re.fullmatch(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", expr)
        env[k] = values[m.group(1)]
    out = tmp_path / "github_output"
    out.write_text("")
    r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", scan["run"]], cwd=cwd,
                       env=_env(GITHUB_OUTPUT=str(out), **env), capture_output=True, text=True)
    outputs = dict(ln.split("=", 1) for ln in out.read_text().splitlines() if "=" in ln)
    return r.returncode, outputs, r.stdout + r.stderr


def test_action_scan_step_writes_valid_sarif(tmp_path):
    proj = tmp_path / "ws"
    shutil.copytree(EXAMPLE, proj, ignore=shutil.ignore_patterns("__pycache__"))
    rc, outputs, log = _run_scan_step(tmp_path, proj, path="train.py trainer", chip="Ascend910B3",
                                      args="--select DEV,AMP --exclude trainer/models")
    assert rc == 0, log  # the step itself succeeds; the later step fails the job on exit code 1
    assert outputs == {"exit-code": "1", "sarif-file": "ascendify.sarif"}
    with open(SARIF_SCHEMA, encoding="utf-8") as fh:
        schema = json.load(fh)
    sarif = json.loads((proj / "ascendify.sarif").read_text())
    assert list(jsonschema.Draft4Validator(schema).iter_errors(sarif)) == []
    results = sarif["runs"][0]["results"]
    assert results and {r["ruleId"][:3] for r in results} <= {"DEV", "AMP"}
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert "trainer/engine.py" in uris and not any(u.startswith(("/", "trainer/models")) for u in uris)
    # fail-on never: exit code 0; a path that does not exist: the step fails with 2
    rc, outputs, log = _run_scan_step(tmp_path, proj, **{"fail-on": "never"})
    assert rc == 0 and outputs["exit-code"] == "0", log
    rc, outputs, log = _run_scan_step(tmp_path, proj, path="no/such/dir", **{"sarif-file": "other.sarif"})
    assert rc == 2 and outputs["exit-code"] == "2" and "wrote no SARIF report" in log, log


# -------------------------------------------------------------------------------- docs/ci.md snippets

def _snippets() -> dict:
    text = open(os.path.join(ROOT, "docs", "ci.md"), encoding="utf-8").read()
    return dict(re.findall(r"<!-- ci-snippet: ([\w-]+) -->\n```yaml\n(.*?)```", text, re.S))


def test_docs_snippets_are_valid(tmp_path):
    sn = _snippets()
    assert set(sn) == {"pre-commit-config", "pre-commit-local", "github-action", "github-workflow", "gitlab-ci"}
    wf = _schema("github-workflow.json")
    for name in ("github-action", "github-workflow"):
        assert _errors(wf, _load_yaml(sn[name])) == [], name
    # the action snippet uses only inputs the action declares
    step = next(s for s in _load_yaml(sn["github-action"])["jobs"]["scan"]["steps"]
                if s.get("uses", "").startswith("ascendify/ascendify@"))
    assert set(step["with"]) <= set(_action()["inputs"])
    for name in ("pre-commit-config", "pre-commit-local"):
        p = tmp_path / f"{name}.yaml"
        p.write_text(sn[name])
        r = subprocess.run([sys.executable, "-m", "pre_commit", "validate-config", str(p)], capture_output=True, text=True)
        assert r.returncode == 0, (name, r.stdout + r.stderr)
    (hook,) = _load_yaml(sn["pre-commit-local"])["repos"][0]["hooks"]
    (manifest,) = _load_yaml(os.path.join(ROOT, ".pre-commit-hooks.yaml"))
    assert hook["entry"] == manifest["entry"] and hook["types_or"] == manifest["types_or"]


def test_gitlab_job_script_runs_and_writes_code_quality(tmp_path):
    job = _load_yaml(_snippets()["gitlab-ci"])["ascendify"]
    assert job["artifacts"]["reports"]["codequality"] == "gl-code-quality-report.json"
    proj = tmp_path / "proj"
    shutil.copytree(EXAMPLE, proj, ignore=shutil.ignore_patterns("__pycache__"))
    codes = []
    for line in job["script"]:
        if "pip install" in line:
            continue  # installed already; no network here
        r = subprocess.run(["bash", "-c", line], cwd=proj, env=_env(), capture_output=True, text=True)
        codes.append(r.returncode)
        if r.returncode and line is not job["script"][-1]:
            pytest.fail(f"{line!r} exited {r.returncode}: {r.stdout}{r.stderr}")
    assert codes[-1] == 1  # the gate: the example has error findings
    findings = json.loads((proj / "ascendify.json").read_text())["findings"]
    issues = json.loads((proj / "gl-code-quality-report.json").read_text())
    assert len(issues) == len(findings) > 20
    for i in issues:
        assert set(i) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert i["severity"] in {"info", "minor", "major", "critical", "blocker"}
        assert not os.path.isabs(i["location"]["path"]) and i["location"]["lines"]["begin"] >= 1
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    f0 = findings[0]
    want = hashlib.sha256(f"{f0['path']}:{f0['line']}:{f0['col']}:{f0['code']}".encode()).hexdigest()
    assert issues[0]["fingerprint"] == want
    assert (proj / "ascendify.sarif").is_file()
    for p in job["artifacts"]["paths"]:
        assert (proj / p).is_file(), p
