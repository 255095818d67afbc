"""``SemanticModel.calls_of`` asked by a check in the middle of the engine's walk.

The engine collects every call as it walks (``ctx.all_calls``) so the model needs no second walk;
but the walk visits the file's last statements first, so a check at a node of ``run`` (below)
asks before ``main``'s call of ``run`` has been seen.  The model must not cache that partial list:
asked mid-walk it answers from the whole tree, after the walk from the engine's list.
"""

import ast

from ascendify.config import Settings
from ascendify.rules.registry import load_rules
from ascendify.scan.engine import RuleContext, _walk
from ascendify.scan.source import SourceFile

SOURCE = '''\
import torch

def main():
    run("cuda")
    run("cpu")

def run(dev):
    x = torch.zeros(2)
    return x.to(dev)
'''


def _context():
    tree = ast.parse(SOURCE)
    src = SourceFile(path="a.py", text=SOURCE)
    return tree, RuleContext(tree, src, "a.py", Settings(), load_rules())


def _seen_mid_walk(ctx, tree):
    seen = []

    def at_return(node, c):  # a check at a node of run(), visited before main()'s calls
        seen.append(len(c.model.calls_of("run")))

    _walk(tree, {ast.Return: [("TEST", at_return)]}, ctx)
    return seen


def test_calls_of_mid_walk_sees_every_call_of_the_file():
    tree, ctx = _context()
    assert _seen_mid_walk(ctx, tree) == [2]
    assert len(ctx.model.calls_of("run")) == 2  # and after the walk, the same answer


def test_calls_of_after_the_walk_reads_the_engines_list():
    tree, ctx = _context()
    _walk(tree, {}, ctx)
    assert ctx.walk_done
    assert sorted(c.args[0].value for c in ctx.model.calls_of("run")) == ["cpu", "cuda"]
