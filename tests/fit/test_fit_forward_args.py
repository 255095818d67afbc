"""fit and forward()'s optional arguments (issue 22): a nanoGPT-style forward(idx, targets=None)
computes last-token logits only when targets is left out, so fit must map --input NAME to the
parameter NAME, take the loss from the user (--loss), and warn when optional parameters stayed
at their defaults and the output is not a scalar loss."""

from __future__ import annotations

import json

import pytest

from tests.cli_util import run_cli

pytest.importorskip("torch")

TOY_GPT = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.proj = nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.proj(F.gelu(self.fc(self.ln(x))))


class ToyGPT(nn.Module):
    """forward(idx, targets=None) as nanoGPT: without targets only the last position's logits."""

    def __init__(self, vocab=512, d=64, n=2, block=64):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(block, d)
        self.blocks = nn.ModuleList(Block(d) for _ in range(n))
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx, targets=None):
        t = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(t, device=idx.device))
        for b in self.blocks:
            x = b(x)
        if targets is not None:
            logits = self.head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        else:
            logits = self.head(x[:, [-1], :])
            loss = None
        return logits, loss


def factory():
    return ToyGPT()


def loss_of(output, inputs):
    logits, _ = output
    return logits.float().pow(2).mean()
'''

IDX = "idx:8,64:int64:0..511"
TARGETS = "targets:8,64:int64:0..511"


@pytest.fixture
def gpt(tmp_path):
    p = tmp_path / "toygpt.py"
    p.write_text(TOY_GPT)
    return str(p)


def _fit(*args, cwd=None):
    r = run_cli("fit", *args, "--format", "json", cwd=cwd)
    assert r.code in (0, 1), r.err
    return json.loads(r.out), r.err


def test_optional_argument_left_at_default_warns(gpt):
    doc, err = _fit(gpt + ":factory", "--input", IDX)
    w = [x for x in doc["warnings"] if "targets" in x]
    assert len(w) == 1 and "--input targets:" in w[0] and "--loss" in w[0], doc["warnings"]
    assert "ascendify: warning:" in err and "targets" in err


def test_input_name_maps_to_the_parameter_and_the_step_is_bigger(gpt):
    small, _ = _fit(gpt + ":factory", "--input", IDX)
    full, err = _fit(gpt + ":factory", "--input", IDX, "--input", TARGETS)
    assert full["warnings"] == [] and "warning" not in err
    assert full["input_map"] == {"idx": "idx", "targets": "targets"}
    # full logits over 64 positions and the loss, vs one position without targets
    assert full["peak_bytes"] > 1.5 * small["peak_bytes"], (full["peak_bytes"], small["peak_bytes"])


def test_targets_alone_goes_to_targets_not_to_idx(gpt):
    r = run_cli("fit", gpt + ":factory", "--input", TARGETS)
    assert r.code == 2 and "idx" in r.err and "no default" in r.err, r.err


def test_unknown_input_name_is_an_error_naming_the_parameters(gpt):
    r = run_cli("fit", gpt + ":factory", "--input", IDX, "--input", "labels:8,64:int64:0..511")
    assert r.code == 2
    assert "labels" in r.err and "forward(idx, targets=None)" in r.err, r.err


def test_loss_option_gives_the_loss_and_silences_the_warning(gpt):
    doc, err = _fit(gpt + ":factory", "--input", IDX, "--loss", gpt + ":loss_of")
    assert doc["warnings"] == [] and doc["loss"] == gpt + ":loss_of"


def test_help_says_how_inputs_map():
    text = " ".join(run_cli("fit", "--help").out.split())
    assert "parameter of that name" in text and "--loss" in text


def test_text_report_says_the_warning_once(gpt, tmp_path):
    # the text report on the terminal carries the warning: not a second copy on stderr
    r = run_cli("fit", gpt + ":factory", "--input", IDX)
    assert r.code in (0, 1), r.err
    assert (r.out + r.err).count("targets left at its default") == 1, (r.out, r.err)
    assert "warning: forward(idx, targets=None)" in r.out and "warning" not in r.err
    # a report written to a file (or JSON) keeps it there and says it once on stderr too
    out = tmp_path / "fit.txt"
    r = run_cli("fit", gpt + ":factory", "--input", IDX, "-o", str(out))
    assert r.err.count("targets left at its default") == 1 and out.read_text().count("targets left at its default") == 1
