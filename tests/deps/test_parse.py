"""Dependency declarations in every file shape, with their positions (fixtures written here)."""

from __future__ import annotations

import textwrap

from ascendify.deps.parse import is_dependency_file, read_file


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def reqs(tmp_path, name, text):
    p = write(tmp_path / name, text)
    files = read_file(str(p), name)
    return files, [r for df in files for r in df.requirements]


def test_requirements_lines_options_markers_extras_urls(tmp_path):
    files, rs = reqs(tmp_path, "requirements.txt", """
        # comment line
        --index-url https://pypi.org/simple
        --extra-index-url=https://download.pytorch.org/whl/cu121
        torch==2.1.0+cu121   # CUDA 12.1 build
        accelerate[deepspeed] >= 0.30 ; python_version >= "3.9"
        flash-attn \\
            ==2.5.8
        git+https://github.com/NVIDIA/apex.git#egg=apex
        https://example.org/wheels/xformers-0.0.23-cp310-cp310-linux_x86_64.whl
        pkg @ https://example.org/pkg-1.0.tar.gz
        -e git+https://github.com/org/proj.git@v1#egg=proj
        numpy --hash=sha256:abcdef
    """)
    by = {r.key: r for r in rs}
    t = by["torch"]
    assert (t.line, t.col, t.version, t.local, t.spec) == (4, 0, "2.1.0", "cu121", "==2.1.0+cu121")
    a = by["accelerate"]
    assert a.extras == ("deepspeed",) and a.spec == ">= 0.30" and a.marker == 'python_version >= "3.9"' and a.line == 5
    fa = by["flash-attn"]
    assert (fa.line, fa.version) == (6, "2.5.8")  # a continued line is reported on its first line
    assert by["apex"].url.startswith("git+https://github.com/NVIDIA/apex") and by["apex"].line == 8
    x = by["xformers"]
    assert (x.version, x.line) == ("0.0.23", 9)
    assert by["pkg"].url == "https://example.org/pkg-1.0.tar.gz" and by["pkg"].version == "1.0"
    assert by["proj"].line == 11
    assert by["numpy"].spec == "" and by["numpy"].line == 12
    ix = [(i.option, i.url, i.line) for i in files[0].indexes]
    assert ix == [("--index-url", "https://pypi.org/simple", 2), ("--extra-index-url", "https://download.pytorch.org/whl/cu121", 3)]
    assert files[0].indexes[1].col == len("--extra-index-url=")


def test_includes_relative_to_the_including_file(tmp_path):
    write(tmp_path / "reqs" / "base.txt", "numpy\n-c ../constraints/pins.txt\n")
    write(tmp_path / "constraints" / "pins.txt", "torch==2.4.0\n")
    write(tmp_path / "requirements-dev.txt", "-r reqs/base.txt\n--requirement reqs/missing.txt\npytest\n")
    files = read_file(str(tmp_path / "requirements-dev.txt"), "requirements-dev.txt")
    paths = [df.path for df in files]
    assert paths == ["requirements-dev.txt", "reqs/base.txt", "constraints/pins.txt"]
    pins = files[2].requirements
    assert [(r.key, r.version, r.line, r.origin) for r in pins] == [("torch", "2.4.0", 1, "reqs/base.txt")]
    assert files[0].notes == [(2, len("--requirement "), "--requirement reqs/missing.txt: no such file; its requirements were not audited")]


def test_include_cycle_is_read_once(tmp_path):
    write(tmp_path / "requirements.txt", "-r other.txt\ntorch\n")
    write(tmp_path / "other.txt", "-r requirements.txt\nnumpy\n")
    files = read_file(str(tmp_path / "requirements.txt"), "requirements.txt")
    assert [df.path for df in files] == ["requirements.txt", "other.txt"]


def test_pyproject_pep621_and_optional_groups(tmp_path):
    _, rs = reqs(tmp_path, "pyproject.toml", """
        [project]
        name = "x"
        dependencies = [
            "torch>=2.1",
            'xformers==0.0.26',
        ]

        [project.optional-dependencies]
        gpu = ["flash-attn>=2", "pynvml"]
        docs = ["sphinx"]
    """)
    got = [(r.key, r.line, r.col, r.group, r.kind) for r in rs]
    assert got == [("torch", 4, 5, "", "pep621"), ("xformers", 5, 5, "", "pep621"),
                   ("flash-attn", 9, 8, "gpu", "pep621"), ("pynvml", 9, 25, "gpu", "pep621"), ("sphinx", 10, 9, "docs", "pep621")]


def test_poetry_tables_groups_and_sources(tmp_path):
    files, rs = reqs(tmp_path, "pyproject.toml", """
        [tool.poetry.dependencies]
        python = "^3.10"
        torch = {version = "2.1.0+cu118", source = "torch-cu118"}
        bitsandbytes = "^0.43"

        [tool.poetry.group.dev.dependencies]
        gputil = "*"

        [[tool.poetry.source]]
        name = "torch-cu118"
        url = "https://download.pytorch.org/whl/cu118"
    """)
    by = {r.key: r for r in rs}
    assert (by["torch"].version, by["torch"].local, by["torch"].line, by["torch"].kind) == ("2.1.0", "cu118", 3, "poetry")
    assert by["bitsandbytes"].version is None and by["bitsandbytes"].spec == "^0.43"
    assert (by["gputil"].group, by["gputil"].line) == ("dev", 7)
    assert "python" not in by
    assert [(i.option, i.url, i.line) for i in files[0].indexes] == [("poetry-source", "https://download.pytorch.org/whl/cu118", 11)]


def test_setup_py_literal_lists_and_non_literal_note(tmp_path):
    _, rs = reqs(tmp_path, "setup.py", """
        from setuptools import setup

        EXTRAS = {"trt": ["tensorrt>=8.6"]}
        setup(
            name="x",
            install_requires=["torch==2.1.0", "cupy-cuda12x"],
            extras_require=EXTRAS,
        )
    """)
    assert [(r.key, r.line, r.col, r.group) for r in rs] == [("torch", 6, 23, ""), ("cupy-cuda12x", 6, 39, ""), ("tensorrt", 3, 19, "trt")]
    files, rs = reqs(tmp_path / "b", "setup.py", """
        import setuptools
        def reqs():
            return open("requirements.txt").read().splitlines()
        setuptools.setup(name="x", install_requires=reqs())
    """)
    assert rs == []
    (line, col, note), = files[0].notes
    assert line == 4 and note.startswith("install_requires=reqs() is not a literal list")


def test_setup_cfg(tmp_path):
    _, rs = reqs(tmp_path, "setup.cfg", """
        [metadata]
        name = x

        [options]
        install_requires =
            torch==2.2.0
            onnxruntime-gpu>=1.17  # inference

        [options.extras_require]
        mon = nvidia-ml-py
    """)
    assert [(r.key, r.line, r.col, r.group) for r in rs] == [("torch", 6, 4, ""), ("onnxruntime-gpu", 7, 4, ""), ("nvidia-ml-py", 10, 6, "mon")]


def test_environment_yml_conda_and_pip_sublist(tmp_path):
    files, rs = reqs(tmp_path, "environment.yml", """
        name: train
        channels:
          - pytorch
          - nvidia
        dependencies:
          - python=3.10
          - pytorch=2.1.0=py3.10_cuda12.1_cudnn8.9.2_0
          - pytorch-cuda=12.1
          - "cudatoolkit=11.8"
          - pip
          - pip:
              - flash-attn==2.5.8
              - torchvision==0.16.0
    """)
    by = {r.key: r for r in rs}
    assert (by["pytorch"].version, by["pytorch"].build, by["pytorch"].kind, by["pytorch"].line) == ("2.1.0", "py3.10_cuda12.1_cudnn8.9.2_0", "conda", 7)
    assert by["pytorch-cuda"].line == 8 and by["cudatoolkit"].col == 5  # inside the quotes
    assert (by["flash-attn"].kind, by["flash-attn"].line, by["flash-attn"].col) == ("conda-pip", 12, 8)
    assert by["torchvision"].version == "0.16.0"
    assert [i.url for i in files[0].indexes] == ["pytorch", "nvidia"]


def test_pipfile(tmp_path):
    _, rs = reqs(tmp_path, "Pipfile", """
        [[source]]
        url = "https://pypi.org/simple"
        name = "pypi"

        [packages]
        torch = "==2.3.1"
        "GPUtil" = "*"

        [dev-packages]
        pytest = "*"
    """)
    assert [(r.key, r.line, r.version, r.group, r.kind) for r in rs] == [("torch", 6, "2.3.1", "", "pipfile"), ("gputil", 7, None, "", "pipfile"),
                                                                         ("pytest", 10, None, "dev", "pipfile")]


def test_bad_files_give_a_problem_not_an_exception(tmp_path):
    files, rs = reqs(tmp_path, "pyproject.toml", "[project\ndependencies = [\n")
    assert rs == [] and "not valid TOML" in files[0].problem
    files, rs = reqs(tmp_path, "setup.py", "def (:\n")
    assert rs == [] and "cannot be parsed" in files[0].problem


def test_which_files_are_dependency_files():
    yes = ["requirements.txt", "requirements-gpu.txt", "requirements/base.txt", "requirements/dev.in", "constraints.txt",
           "pyproject.toml", "setup.py", "setup.cfg", "environment.yml", "environment-cuda.yaml", "conda.yaml", "Pipfile"]
    no = ["train.py", "README.md", "req.txt", "poetry.lock", "docs/requirements.md", "config.yml"]
    assert [p for p in yes if not is_dependency_file(p)] == []
    assert [p for p in no if is_dependency_file(p)] == []
