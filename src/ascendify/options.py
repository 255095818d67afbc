"""Options every ``ascendify`` command shares, declared once (the convention: docs/cli.md).

- ``--format text|json`` (plus ``sarif``/``csv``/``markdown`` where a command has them) and
  ``-o/--output-file FILE`` on every command that reports: :func:`report_options`.  Without
  ``--format``, an output file named ``*.json`` / ``*.sarif`` / ``*.csv`` / ``*.md`` picks that
  format; otherwise it is ``text``.
- Artefacts a command produces have named options (``--out-dir``, ``--onnx``, ``--npz``,
  ``--plot``, ``--changelog``).
- ``--chip``, ``--torch-npu``, ``-j/--jobs``, ``--select``/``--ignore``/``--exclude`` and
  ``--fail-on`` mean the same everywhere they apply.
- Old spellings keep working for one release and print a deprecation note
  (:func:`deprecated_option`).

Exit codes everywhere: 0 clean, 1 findings at or above ``--fail-on`` (or a failed check), 2 usage
or internal error.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Callable, Optional, Sequence

import click

from ascendify.errors import AscendifyError

REMOVED_IN = "0.3"
"""The release that drops the deprecated spellings."""

FORMAT_BY_SUFFIX = {".json": "json", ".sarif": "sarif", ".csv": "csv", ".md": "markdown"}
REPORT_SUFFIXES = (".json", ".txt", ".sarif", ".csv", ".md", ".log")
"""Suffixes that make ``-o VALUE`` a report file where ``-o`` once named a folder or artefact."""


def warn(message: str) -> None:
    click.echo(f"ascendify: warning: {message}", err=True)


def deprecation(old: str, new: str) -> None:
    """Print the one deprecation note for an old spelling."""
    warn(f"{old} is deprecated and will be removed in ascendify {REMOVED_IN}; use {new}")


# ----------------------------------------------------------------------------- report output
def resolve_format(fmt: Optional[str], output_file: Optional[str], choices: Sequence[str]) -> str:
    """``--format`` as given, else the one the output file's suffix names (when the command has
    it), else ``text``."""
    if fmt:
        return fmt
    if output_file:
        guess = FORMAT_BY_SUFFIX.get(os.path.splitext(output_file)[1].lower())
        if guess in choices:
            return guess
    return "text"


def report_options(*extra_formats: str, output_help: str = "Write the report to this file instead of standard output.") -> Callable:
    """``--format text|json|EXTRA…`` and ``-o/--output-file FILE``; the command receives the
    resolved ``fmt`` (never None) and ``output_file``."""
    choices = ["text", "json", *extra_formats]

    def deco(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            kwargs["fmt"] = resolve_format(kwargs.get("fmt"), kwargs.get("output_file"), choices)
            return fn(*args, **kwargs)

        wrapper = click.option("-o", "--output-file", type=click.Path(dir_okay=False), default=None, metavar="FILE",
                               help=output_help)(wrapper)
        wrapper = click.option("--format", "fmt", type=click.Choice(choices), default=None,
                               help=f"Output format: {', '.join(choices)} (default: text, or what the -o file's suffix names).")(wrapper)
        return wrapper

    return deco


def emit(text: str, output_file: Optional[str]) -> None:
    """Write a report to ``output_file`` (atomically, keeping the file's mode) or standard output."""
    if output_file:
        from ascendify.fsutil import atomic_write

        try:
            atomic_write(output_file, text.encode("utf-8"))
        except OSError as exc:
            raise AscendifyError(f"{output_file}: cannot write ({exc.strerror}); choose another --output-file")
    else:
        click.echo(text, nl=False)


def emit_json(data, output_file: Optional[str]) -> None:
    import json

    emit(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", output_file)


# ----------------------------------------------------------------------------- deprecated spellings
def deprecated_option(*decls: str, dest: str, new: str, **kwargs) -> Callable:
    """A hidden old spelling that still works for one release: the value lands in ``dest``
    (a parameter the command also has) and a note says what to use instead."""

    def callback(ctx: click.Context, param: click.Parameter, value):
        if value is None or value is False or value == ():
            return None
        deprecation("/".join(decls), new)
        ctx.meta.setdefault("ascendify.deprecated", {})[dest] = value
        return value

    return click.option(*decls, f"_deprecated_{dest}", hidden=True, expose_value=False, callback=callback, **kwargs)


def deprecated_value(dest: str, current):
    """The value an old spelling gave for ``dest``, when the new one was not used."""
    ctx = click.get_current_context(silent=True)
    if current not in (None, False, ()) or ctx is None:
        return current
    return ctx.meta.get("ascendify.deprecated", {}).get(dest, current)


def split_output_dir(output_file: Optional[str], out_dir: Optional[str], new: str = "--out-dir DIR") -> "tuple[Optional[str], Optional[str]]":
    """Where ``-o`` once named a folder: a value without a report suffix is still taken as
    the folder (with a deprecation note) when ``--out-dir`` is not given."""
    if output_file and not out_dir and not output_file.lower().endswith(REPORT_SUFFIXES):
        deprecation("-o/--output DIR (the output folder)", f"{new} (-o now names the report file)")
        return None, output_file
    return output_file, out_dir


# ----------------------------------------------------------------------------- shared options
def chip_option(help: str = "Target soc_version, e.g. Ascend910B3, Ascend310P3 (enables chip checks such as bf16).") -> Callable:
    return click.option("--chip", metavar="SOC", default=None, help=help)


def torch_npu_option(help: str = "Target torch_npu release, e.g. 2.7.1 (default: [tool.ascendify] torch-npu, "
                                 "else from the project's pinned torch, else the recommended release).") -> Callable:
    return click.option("--torch-npu", "torch_npu", metavar="VERSION", default=None, help=help)


def jobs_option(help: str = "Parallel processes (default: CPU count).", default: Optional[int] = None) -> Callable:
    return click.option("-j", "--jobs", type=click.IntRange(1, 256), default=default, metavar="N", help=help)


def fail_on_option(choices: Sequence[str], default: Optional[str], help: Optional[str] = None) -> Callable:
    return click.option("--fail-on", type=click.Choice(list(choices)), default=default, show_default=default is not None,
                        help=help or "Exit 1 when a finding at or above this severity is found (never: always 0).")


def plot_option(help: str = "Also write a chart here (.svg or .png).") -> Callable:
    return click.option("--plot", type=click.Path(dir_okay=False), default=None, metavar="FILE", help=help)


def out_dir_option(help: str) -> Callable:
    return click.option("--out-dir", "out_dir", type=click.Path(file_okay=False), default=None, metavar="DIR", help=help)


def input_option(help: str = "Model input NAME:SHAPE:DTYPE, e.g. x:2,3,224,224:float32 (repeatable).", required: bool = False) -> Callable:
    return click.option("--input", "inputs", multiple=True, required=required, metavar="SPEC", help=help)


def target_option() -> Callable:
    return click.option("--target", type=click.Choice(["npu", "agnostic"]), default=None,
                        help="Fix target: explicit torch_npu (npu, default) or device-agnostic torch.accelerator code.")


def config_options(fn: Callable) -> Callable:
    fn = click.option("--no-config", is_flag=True, help="Ignore any pyproject.toml.")(fn)
    return click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None, metavar="FILE",
                        help="pyproject.toml to read [tool.ascendify] from (default: nearest one).")(fn)


def selection_options(fn: Callable) -> Callable:
    """``--select/--extend-select/--ignore/--extend-ignore/--exclude`` (rule codes and paths)."""
    opts = [
        click.option("--select", multiple=True, metavar="CODES", help="Only these rule codes or prefixes (comma-separated; e.g. DEV,DST001)."),
        click.option("--extend-select", "select_extend", multiple=True, metavar="CODES", help="Add to the configured select."),
        click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rule codes or prefixes."),
        click.option("--extend-ignore", "ignore_extend", multiple=True, metavar="CODES", help="Add to the configured ignore."),
        click.option("--exclude", multiple=True, metavar="GLOB", help="Extra file/folder patterns to skip (added to the defaults)."),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


def project_options(fn: Callable) -> Callable:
    """What ``scan``, ``fix``, ``migrate`` share: rule selection, target, release, chip, config,
    cache, jobs and ``--fail-on``."""
    from ascendify.diagnostics import SEVERITIES

    opts = [
        selection_options,
        target_option(),
        torch_npu_option(),
        chip_option(),
        config_options,
        click.option("--cache-dir", type=click.Path(file_okay=False), default=None, metavar="DIR", help="Cache folder (default: ~/.cache/ascendify)."),
        click.option("--no-cache", is_flag=True, help="Do not read or write the cache."),
        jobs_option(),
        fail_on_option(list(SEVERITIES) + ["never"], None, "Exit 1 if a finding at or above this severity remains (default: error)."),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


def split_codes(values: tuple) -> list:
    out = []
    for v in values:
        out.extend(c.strip().upper() for c in v.split(",") if c.strip())
    return out


# ----------------------------------------------------------------------------- settings
_VERSION_RE = re.compile(r"^\d+\.\d+(\.\d+)?((\.post|rc|\.rc)\d+)?$")


def project_settings(paths, select=(), select_extend=(), ignore=(), ignore_extend=(), exclude=(), target=None, torch_npu=None,
                     chip=None, config_file=None, no_config=False, fail_on=None, unsafe_fixes=None):
    """Settings for a command over ``paths``: ``[tool.ascendify]`` (nearest, or ``--config``)
    overridden by the options; the target release decided by :func:`ascendify.target.resolve`
    (the reason kept in ``settings.torch_npu_reason``).  Raises :class:`AscendifyError` on a bad
    config file, version or rule code."""
    from ascendify.config import find_config, load_settings
    from ascendify.rules.registry import load_rules
    from ascendify.target import resolve

    if config_file and not os.path.isfile(config_file):
        raise AscendifyError(f"{config_file}: no such config file; check the --config path")
    cfg = None if no_config else (config_file or find_config(paths[0] if paths else "."))
    overrides = {
        "select": split_codes(select),
        "select_extend": split_codes(select_extend),
        "ignore": split_codes(ignore),
        "ignore_extend": split_codes(ignore_extend),
        "extend_exclude": list(exclude),
        "target": target,
        "torch_npu": torch_npu,
        "chip": chip,
        "fail_on": fail_on,
        "unsafe_fixes": unsafe_fixes or None,
    }
    s = load_settings(cfg, overrides)
    if not s.torch_npu_reason:
        t = resolve(project=paths[0] if paths else ".")
        s.torch_npu, s.torch_npu_reason = t.torch_npu, t.reason
    if not _VERSION_RE.match(str(s.torch_npu)):
        raise AscendifyError(f"torch_npu version {s.torch_npu!r} is not a version (e.g. 2.7.1 or 2.7.1.post11); "
                             f"check --torch-npu or torch-npu in {s.config_file or 'the command line'}")
    _warn_unknown_release(s.torch_npu, s.torch_npu_reason)
    _use_known_release(s)
    if s.chip:
        from ascendify.kb.chips import chip_info

        if chip_info(s.chip) is None:
            warn(f"chip {s.chip!r} is not in the chip table (e.g. Ascend910B3, Ascend310P3, Ascend910_9392); "
                 "chip-dependent checks treat it as unknown")
    known = set(load_rules())
    for code in s.select + s.ignore:
        if code != "ALL" and not any(k.startswith(code) for k in known):
            raise AscendifyError(f"unknown rule code or prefix {code!r} (see `ascendify rules`)")
    return s


def _warn_unknown_release(torch_npu: str, reason: str) -> None:
    """A release the op KB does not know is judged with a neighbour's data: say so, once."""
    from ascendify.kb.ops import resolve_release

    try:
        _rel, note = resolve_release(torch_npu)
    except ValueError:
        return
    if note and "not in the KB" in note and "same torch" not in note:
        warn(f"{note} ({reason})")


def _use_known_release(s) -> None:
    """A requested release the KB has no line of (``9.9.9``, a series ``2.7``): every report and rule judges
    against the known release whose data is used (``resolve_release``), the request kept in
    ``torch_npu_requested`` and named in the reason ("nearest known to --torch-npu 9.9.9")."""
    from ascendify.kb.ops import _vkey, resolve_release

    try:
        used, note = resolve_release(s.torch_npu)
    except ValueError:
        return
    req = str(s.torch_npu)
    if _vkey(used)[:3] == _vkey(req)[:3]:  # a release of a known line ("2.7.1", "2.7.1.post99"): judged as asked
        return
    src = f"--torch-npu {req}" if s.torch_npu_reason == "from --torch-npu" else s.torch_npu_reason.replace("from ", "", 1)
    if note:
        s.torch_npu_reason = f"nearest known to {src}"
    else:  # a series: its newest known release
        s.torch_npu_reason = f"the newest known release of the {req} series, from {src}"
    s.torch_npu, s.torch_npu_requested = used, req


def release_for(torch_npu: Optional[str], start: str = ".") -> "tuple[str, str]":
    """For commands that take only ``--torch-npu`` (ops, probe, diagnose, fit): the release and
    why — the option, else ``[tool.ascendify]`` above ``start``, else the project's pinned torch,
    else the recommended release."""
    from ascendify.config import find_config, load_settings
    from ascendify.target import resolve

    if torch_npu:
        return str(torch_npu), "from --torch-npu"
    cfg = find_config(start)
    if cfg:
        try:
            s = load_settings(cfg, {})
            if s.torch_npu_reason:
                return s.torch_npu, s.torch_npu_reason
        except AscendifyError:
            pass
    t = resolve(project=start)
    return t.torch_npu, t.reason


def captured(render: Callable, *args, **kwargs) -> str:
    """What ``render`` prints to standard output (rich or click), as text without colour: for
    ``-o FILE`` with the text format of commands that print as they go."""
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        render(*args, **kwargs)
    return buf.getvalue()


def emit_rendered(render: Callable, output_file: Optional[str], *args, **kwargs) -> None:
    """Run a printing renderer straight to the terminal, or into ``output_file``."""
    if output_file:
        emit(captured(render, *args, **kwargs), output_file)
    else:
        render(*args, **kwargs)


def envelope(command: str, doc):
    """Every JSON report starts with the same three keys: ``tool`` ("ascendify"), ``version``
    and ``command`` (e.g. "scan", "profile analyze"); the command's own keys follow.  A list
    is returned as it is (no command gives one: ``rules`` puts its list under "rules")."""
    if not isinstance(doc, dict):
        return doc
    from ascendify import __version__

    head = {"tool": "ascendify", "version": __version__, "command": command}
    return {**head, **{k: v for k, v in doc.items() if k not in head}}


def check_writable(path: str, option: str) -> None:
    """Fail early, in one line, when the artefact ``path`` (``option``: ``--onnx``, ``--npz``,
    ``--plot`` …) cannot be written: its folder is missing, is not a folder, or refuses a new file
    (read-only mount, permissions, an immutable folder).  A probe file is created there with
    ``tempfile`` and removed at once.  Raises :class:`AscendifyError`."""
    import tempfile

    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise AscendifyError(f"{option} {path}: the folder {folder} does not exist; create it or choose another path")
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".ascendify-", suffix=".tmp")
    except OSError as exc:
        raise AscendifyError(f"{option} {path}: cannot write into {folder} ({exc.strerror or exc}); "
                             "choose another folder") from None
    os.close(fd)
    try:
        os.unlink(probe)
    except OSError:
        pass


def pyplot_for(path: str, hint: str = "") -> tuple:
    """``(pyplot, "png" | "svg")`` — matplotlib's pyplot (Agg backend) and the savefig format for
    the ``--plot`` chart ``path``: the one
    suffix check (.png / .svg) and the one message when matplotlib is missing, for every
    command that draws.  Raises :class:`AscendifyError` (one line naming the file)."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".png", ".svg"):
        raise AscendifyError(f"--plot {path}: expected a .png or .svg file name")
    check_writable(path, "--plot")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise AscendifyError(f"--plot {path}: matplotlib is not installed (pip install matplotlib){hint}") from None
    return plt, ext[1:]
