"""``ascendify fit``: will this model, at this batch, fit the NPU (see docs/fit.md)."""

from __future__ import annotations

import os
from typing import Optional

import click

from ascendify.fit.engine import OPTIMIZERS
from ascendify.fit.levers import SHARDS
from ascendify.options import chip_option, envelope, input_option, plot_option, report_options


@click.command("fit")
@click.argument("factory")
@input_option("Model input name:d0,d1,...[:dtype[:lo..hi]] as in probe; axis 0 is the batch (repeatable). Each is passed "
              "to forward() as the parameter of that name (--input targets:8,64:int64:0..511 is forward's targets); "
              "one input whose name is no parameter goes first, positionally.")
@click.option("--loss", "loss", metavar="MODULE:FUNCTION", default=None,
              help="The loss: FUNCTION(output, inputs) returning a scalar tensor (inputs: the --input tensors by name), "
                   "from pkg.module or file.py. Default: the mean of the float outputs (a warning says when forward's "
                   "optional parameters were left out and the output holds no loss).")
@chip_option("soc_version to fit into, e.g. Ascend910B3 (default: [tool.ascendify] chip).")
@click.option("--optimizer", type=click.Choice(OPTIMIZERS), default="adam", show_default=True,
              help="torch.optim class with its defaults (sgd: momentum 0.9); none: no optimizer step.")
@click.option("--foreach/--no-foreach", default=True, show_default=True,
              help="Optimizer foreach kernels (torch's default on the NPU, not on the CPU).")
@click.option("--amp", type=click.Choice(["fp16", "bf16"]), help="Forward and loss under torch.autocast in this dtype.")
@click.option("--checkpointing", metavar="PATTERN",
              help="Activation-checkpoint the modules this name pattern matches (blocks.*, layer?.*; comma-separated), "
                   "or 'auto' for each block of the biggest repeated block class.")
@click.option("--cards", type=click.IntRange(1, 65536), default=1, show_default=True, metavar="N",
              help="Cards to shard across (with --shard; data-parallel replicas otherwise change nothing per card).")
@click.option("--shard", type=click.Choice(SHARDS), help="zero1: optimizer states / N; zero2: + gradients; zero3, fsdp: + parameters.")
@click.option("--batch", "batch", metavar="auto", help="auto: find the largest batch that fits --chip.")
@click.option("--no-suggest", is_flag=True, help="Do not add the amp/checkpointing rows when the baseline does not fit.")
@click.option("--alloc-conf", metavar="CONF", default=None,
              help="PYTORCH_NPU_ALLOC_CONF for the allocator model (default: that variable here), e.g. expandable_segments:True.")
@click.option("--runtime-reserve", type=float, metavar="MIB", default=None,
              help="MiB per device held outside the caching allocator (default: the allocator model's unverified 3.5 GiB).")
@plot_option("Also write the memory-over-step chart here (.png or .svg; needs matplotlib).")
@report_options()
def fit(factory: str, inputs: tuple, loss: Optional[str], chip: Optional[str], optimizer: str, foreach: bool, amp: Optional[str],
        checkpointing: Optional[str], cards: int, shard: Optional[str], batch: Optional[str], no_suggest: bool,
        alloc_conf: Optional[str], runtime_reserve: Optional[float], plot: Optional[str], fmt: Optional[str], output_file: Optional[str]) -> int:
    """Predict the memory of one training step of FACTORY (pkg.module:factory or file.py:factory)
    on fake tensors — no memory is used — and check it against --chip: peak, split, top modules,
    timeline, and the levers (--amp, --checkpointing, --shard, --batch auto) as measured rows.
    Exit 1 if the configured step does not fit the chip.
    """
    from ascendify.errors import AscendifyError
    from ascendify.fit.render import plot as write_plot, render_text
    from ascendify.fit.run import fit as run_fit
    if batch is not None and batch != "auto":
        raise AscendifyError(f"--batch '{batch}': only 'auto' is accepted; set the batch in the --input shapes")
    if not chip:
        chip = _config_chip()
    result = run_fit(factory, list(inputs), chip=chip, optimizer=optimizer, amp=amp, checkpointing=checkpointing,
                     cards=cards, shard=shard, batch_auto=batch == "auto", foreach=foreach, suggest=not no_suggest,
                     alloc_conf=alloc_conf if alloc_conf is not None else os.environ.get("PYTORCH_NPU_ALLOC_CONF") or None,
                     runtime_reserve=int(runtime_reserve * (1 << 20)) if runtime_reserve is not None else None,
                     loss=loss)
    if fmt == "json" or output_file:  # the text report on standard output carries them: said once
        for w in result.get("warnings", []):
            click.echo(f"ascendify: warning: {w}", err=True)
    if plot:
        write_plot(result, plot)
        click.echo(f"plot: {plot}", err=True)  # stderr, as compare and profile: standard output stays the report
    from ascendify.options import emit, emit_json
    if fmt == "json":
        emit_json(envelope("fit", result), output_file)
    else:
        emit(render_text(result), output_file)
    return 1 if result["fits"] is False else 0


def _config_chip() -> Optional[str]:
    try:
        from ascendify.config import find_config, load_settings
        cfg = find_config(os.getcwd())
        return load_settings(cfg, {}).chip if cfg else None
    except Exception:  # noqa: BLE001 - a broken config is scan's to report; fit just has no default chip
        return None
