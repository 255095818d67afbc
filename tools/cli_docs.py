"""Regenerate the per-command option tables in docs/cli.md from the commands themselves.

    python tools/cli_docs.py          # rewrite docs/cli.md between the markers
    python tools/cli_docs.py --check  # exit 1 if docs/cli.md is out of date (tests/test_cli_convention.py)
"""

from __future__ import annotations

import os
import sys

import click

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "cli.md")
BEGIN = "<!-- BEGIN GENERATED: tools/cli_docs.py -->"
END = "<!-- END GENERATED -->"


def _commands():
    from ascendify.cli import cli

    ctx = click.Context(cli)
    for name in cli.list_commands(ctx):
        cmd = cli.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            sub = click.Context(cmd, parent=ctx)
            for sname in cmd.list_commands(sub):
                yield f"{name} {sname}", cmd.get_command(sub, sname)
        else:
            yield name, cmd


def _cell(text: str) -> str:
    return " ".join((text or "").split()).replace("|", "\\|")


def generated() -> str:
    out = [BEGIN, ""]
    for path, cmd in _commands():
        args = " ".join(p.human_readable_name.upper() + ("..." if p.nargs == -1 else "")
                        for p in cmd.params if isinstance(p, click.Argument))
        out.append(f"### `ascendify {path}{' ' + args if args else ''}`")
        out.append("")
        out.append(_cell(cmd.get_short_help_str(200)))
        out.append("")
        out.append("| option | value | meaning |")
        out.append("|---|---|---|")
        for p in cmd.params:
            if not isinstance(p, click.Option) or p.hidden:
                continue
            spell = ", ".join(f"`{o}`" for o in p.opts + p.secondary_opts)
            if p.is_flag:
                value = ""
            elif isinstance(p.type, click.Choice):
                value = "|".join(p.type.choices)
            else:
                value = p.metavar or p.type.name.upper()
            out.append(f"| {spell} | {_cell(value)} | {_cell(p.help or '')} |")
        old = [p for p in cmd.params if isinstance(p, click.Option) and p.hidden]
        if old:
            out.append("")
            out.append("Deprecated spellings (work until 0.3, with a note): " + ", ".join(f"`{'/'.join(p.opts)}`" for p in old) + ".")
        out.append("")
    out.append(END)
    return "\n".join(out)


def render(current: str) -> str:
    if BEGIN not in current or END not in current:
        raise SystemExit(f"{DOC}: the markers {BEGIN!r} … {END!r} are missing")
    head, rest = current.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + generated() + tail


def main(argv: list) -> int:
    with open(DOC, encoding="utf-8") as fh:
        cur = fh.read()
    new = render(cur)
    if "--check" in argv:
        if new != cur:
            print(f"{DOC} is out of date: run python tools/cli_docs.py", file=sys.stderr)
            return 1
        return 0
    with open(DOC, "w", encoding="utf-8") as fh:
        fh.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
