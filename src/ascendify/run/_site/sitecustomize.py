"""ascendify run: makes every Python process started under `ascendify run` an emulated Ascend host.

On PYTHONPATH only while `ascendify run` runs (ascendify/run/launch.py).  It first runs the sitecustomize
it shadows (the user's or the distribution's), then activates the emulator from ASCENDIFY_RUN_CONFIG."""
import os
import sys


def _chain_shadowed():
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or os.getcwd()) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None or not spec.origin:
        return
    if os.path.abspath(spec.origin) == os.path.abspath(__file__):
        return
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)


def _activate():
    cfg_path = os.environ.get("ASCENDIFY_RUN_CONFIG")
    if not cfg_path:
        return
    try:
        import ascendify  # noqa: F401
    except ImportError:
        sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
    from ascendify.errors import AscendifyError
    from ascendify.run import boot

    try:
        boot.activate(_read(cfg_path))
    except AscendifyError as e:
        sys.stderr.write(f"{e}\n")
        sys.stderr.flush()
        os._exit(2)


def _read(path):
    import json

    from ascendify.errors import AscendifyError

    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError) as e:
        raise AscendifyError(f"ascendify run: cannot read the emulator config {path}: {e}") from None


_chain_shadowed()
_activate()
