"""Start the user's command under the emulator and supervise it (``ascendify run``).

* :func:`resolve_command` turns ``COMMAND...`` into an argv: a script path runs with this
  interpreter, ``python``/``python3`` of this environment is this interpreter, ``torchrun`` is
  ``sys.executable -m torch.distributed.run``; anything else runs as it is.  A command that does
  not exist or cannot be executed raises :class:`LaunchError` (exit 127 / 126, as a shell does).
* :func:`child_env` is the environment every process of the run inherits: the emulator's
  ``sitecustomize`` folder first on ``PYTHONPATH`` and ``ASCENDIFY_RUN_CONFIG`` naming the config
  file (the interface in :mod:`ascendify.run`), so every Python child process (torchrun workers,
  ``subprocess.run([sys.executable, ...])``, DataLoader spawn workers) is emulated too.
* :class:`Supervisor` runs the argv in its own session with standard input, output and error
  passed through unchanged (``migrate --verify`` sends the program's output to standard error).  Ctrl-C (SIGINT) and SIGTERM are forwarded to the child's process
  group; after :data:`GRACE_S` seconds every process still alive that descends from the run gets
  SIGTERM, then SIGKILL :data:`KILL_S` seconds later; a second Ctrl-C kills at once.  On Linux the
  supervisor is a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``), so processes that left the
  group (torchrun starts its workers in new sessions) or were orphaned are still found in
  ``/proc`` and stopped.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from typing import Optional, Sequence

GRACE_S = 1.5
"""Seconds between the forwarded Ctrl-C and SIGTERM to every process of the run."""
KILL_S = 0.5
"""Seconds between SIGTERM and SIGKILL."""

EXIT_NOT_FOUND = 127
EXIT_NOT_EXECUTABLE = 126
EXIT_INTERRUPTED = 130

_PYTHON_NAMES = ("python", "python3", f"python{sys.version_info[0]}.{sys.version_info[1]}")
_TORCHRUN_MODULE = "torch.distributed.run"


class LaunchError(Exception):
    """The command could not be started; ``code`` is the exit code (127 not found, 126 not executable)."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


# ----------------------------------------------------------------------------- the command
def _is_python_file(path: str) -> bool:
    if path.endswith((".py", ".pyw")):
        return True
    try:
        with open(path, "rb") as fh:
            first = fh.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


def same_environment(exe: str) -> bool:
    """``exe`` is this interpreter, or a ``python`` of the same environment (same ``bin`` folder
    as ``sys.executable``, or the same file once links are resolved)."""
    try:
        if os.path.realpath(exe) == os.path.realpath(sys.executable):
            return True
        return os.path.dirname(os.path.abspath(exe)) == os.path.dirname(os.path.abspath(sys.executable))
    except OSError:
        return False


def resolve_command(argv: Sequence[str], cwd: Optional[str] = None, path: Optional[str] = None) -> "tuple[list[str], list[str]]":
    """``(argv to execute, notes)`` for ``COMMAND...``.

    - ``train.py args`` (a file ending in ``.py`` or with a python shebang) → ``[sys.executable, train.py, args]``;
    - ``python ...`` / ``python3 ...`` → ``[sys.executable, ...]``: the emulator lives in this
      environment (a note says so when PATH's ``python`` is another one; an interpreter named by
      its path runs as named);
    - ``torchrun ...`` → ``[sys.executable, -m, torch.distributed.run, ...]``;
    - anything else → itself (found on PATH, or a path).

    Raises :class:`LaunchError` when the command does not exist (127) or is not executable (126).
    """
    if not argv:
        raise LaunchError("no command given: ascendify run [OPTIONS] -- COMMAND [ARGS]... (e.g. -- python train.py)", 2)
    cwd = cwd or os.getcwd()
    first, rest = argv[0], list(argv[1:])
    notes: list[str] = []
    has_sep = os.sep in first or (os.altsep and os.altsep in first)
    full = first if os.path.isabs(first) else os.path.join(cwd, first)
    if has_sep or first.endswith((".py", ".pyw")):
        if os.path.isdir(full):
            raise LaunchError(f"{first}: is a folder, not a command or script", EXIT_NOT_EXECUTABLE)
        if not os.path.exists(full):
            what = "script" if first.endswith((".py", ".pyw")) else "command"
            raise LaunchError(f"{first}: no such {what} (looked in {cwd})", EXIT_NOT_FOUND)
        if _is_python_file(full):
            return [sys.executable, first, *rest], notes
        if not os.access(full, os.X_OK):
            raise LaunchError(f"{first}: not executable (chmod +x {shlex.quote(first)}, or name its interpreter: "
                              f"ascendify run -- bash {shlex.quote(first)})", EXIT_NOT_EXECUTABLE)
        return [first, *rest], notes
    name = first
    if name == "torchrun":
        return [sys.executable, "-m", _TORCHRUN_MODULE, *rest], notes
    found = shutil.which(name, path=path)
    if name in _PYTHON_NAMES or (name.startswith("python") and found and same_environment(found)):
        # the emulator lives in this environment: a bare `python` is this interpreter
        if found is not None and not same_environment(found):
            notes.append(f"ran `{name}` as {sys.executable} (ascendify's interpreter, where the emulator is), "
                         f"not {found} from PATH")
        return [sys.executable, *rest], notes
    if found is None:
        raise LaunchError(f"{name}: command not found (not on PATH, not a file in {cwd})", EXIT_NOT_FOUND)
    return [found, *rest], notes


def python_entry(argv: Sequence[str]) -> "tuple[Optional[str], Optional[str]]":
    """``(script, module)`` the resolved argv runs with this interpreter (either may be None):
    ``[python, train.py, ...]`` → ``("train.py", None)``, ``[python, -m, pkg.mod, ...]`` → ``(None, "pkg.mod")``.
    For torchrun, the training script it starts."""
    if not argv or not same_environment(argv[0]):
        return None, None
    args = list(argv[1:])
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-m" and i + 1 < len(args):
            mod = args[i + 1]
            if mod in (_TORCHRUN_MODULE, "torch.distributed.launch"):
                return _torchrun_script(args[i + 2:])
            return None, mod
        if a.startswith("-m") and len(a) > 2:
            return None, a[2:]
        if a in ("-c",):
            return None, None
        if a in ("-W", "-X"):
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        return a, None
    return None, None


_TORCHRUN_VALUED = {"--nnodes", "--nproc-per-node", "--nproc_per_node", "--rdzv-backend", "--rdzv_backend", "--rdzv-endpoint",
                    "--rdzv_endpoint", "--rdzv-id", "--rdzv_id", "--rdzv-conf", "--rdzv_conf", "--max-restarts",
                    "--max_restarts", "--monitor-interval", "--monitor_interval", "--start-method", "--start_method",
                    "--role", "--log-dir", "--log_dir", "-r", "--redirects", "-t", "--tee", "--local-ranks-filter",
                    "--local_ranks_filter", "--node-rank", "--node_rank", "--master-addr", "--master_addr",
                    "--master-port", "--master_port", "--local-addr", "--local_addr", "--logs-specs", "--logs_specs",
                    "--numa-binding", "--numa_binding", "--event-log-handler", "--event_log_handler",
                    "--signals-to-handle", "--signals_to_handle", "--duplicate-stdout-filters",
                    "--duplicate-stderr-filters", "--duplicate_stdout_filters", "--duplicate_stderr_filters"}


def _torchrun_script(args: Sequence[str]) -> "tuple[Optional[str], Optional[str]]":
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-m", "--module"):
            return (None, args[i + 1]) if i + 1 < len(args) else (None, None)
        if a.startswith("-"):
            i += 1 if "=" in a or a not in _TORCHRUN_VALUED else 2
            continue
        return a, None
    return None, None


def torchrun_nproc(argv: Sequence[str]) -> Optional[int]:
    """``--nproc-per-node N`` of a torchrun command line (resolved argv), or None."""
    args = list(argv)
    if _TORCHRUN_MODULE not in args and "torch.distributed.launch" not in args:
        return None
    for i, a in enumerate(args):
        for opt in ("--nproc-per-node", "--nproc_per_node"):
            val = None
            if a == opt and i + 1 < len(args):
                val = args[i + 1]
            elif a.startswith(opt + "="):
                val = a.split("=", 1)[1]
            if val is not None:
                try:
                    return int(val)
                except ValueError:
                    return None
    return None


# ----------------------------------------------------------------------------- the environment
WATCH_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_watch")
"""The sitecustomize that notes writes outside the project folder; the emulator's sitecustomize
runs it as the one it shadows (``_watch/sitecustomize.py``)."""


def child_env(config_path: str, base: Optional[dict] = None) -> dict:
    """The environment of the run: ``ASCENDIFY_RUN_CONFIG``, the emulator's site folder first on
    ``PYTHONPATH`` and the write watcher's second (every Python process started under it inherits
    them)."""
    from ascendify.run import CONFIG_ENV, SITE_DIR

    env = dict(os.environ if base is None else base)
    ours = (SITE_DIR, WATCH_DIR)
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and os.path.abspath(p) not in ours]
    env["PYTHONPATH"] = os.pathsep.join([SITE_DIR, WATCH_DIR, *parts])
    env[CONFIG_ENV] = config_path
    return env


def write_config(path: str, config: dict) -> None:
    from ascendify.fsutil import atomic_write

    atomic_write(path, (json.dumps(config, indent=1, sort_keys=True) + "\n").encode("utf-8"))


# ----------------------------------------------------------------------------- supervision
def _set_subreaper() -> bool:
    """Become a child subreaper (Linux), so orphaned descendants are reparented to us."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _children_map(zombies: bool = False) -> dict:
    """pid -> parent pid of every process (from /proc; exited ones not yet reaped only with
    ``zombies``); empty where there is no /proc."""
    out = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # pid (comm) state ppid ...; comm may contain spaces and parentheses
        try:
            after = stat[stat.rindex(b")") + 2:].split()
            if after[0] == b"Z" and not zombies:
                continue  # a zombie is dead already
            out[int(name)] = int(after[1])
        except (ValueError, IndexError):
            continue
    return out


def descendants(root: int) -> list:
    """Live processes below ``root`` (children, their children, …), from /proc."""
    pmap = _children_map()
    kids: dict = {}
    for pid, ppid in pmap.items():
        kids.setdefault(ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        for c in kids.get(todo.pop(), ()):
            out.append(c)
            todo.append(c)
    return out


class Supervisor:
    """Run one argv and stop everything it started on Ctrl-C.

    ``run()`` returns the exit code: the child's, ``128 + N`` when a signal N killed it, or
    :data:`EXIT_INTERRUPTED` (130) after Ctrl-C (``interrupted`` is then True and ``stopped``
    counts the processes that had to be stopped).
    """

    def __init__(self, argv: Sequence[str], env: dict, cwd: Optional[str] = None, stdout=None):
        self.argv = list(argv)
        self.stdout = stdout
        self.env = env
        self.cwd = cwd
        self.proc: Optional[subprocess.Popen] = None
        self.interrupted = False
        self.signal_name = ""
        self._exit_on_signal = EXIT_INTERRUPTED
        self.stopped = 0
        self._signals = 0
        self._deadline_term: Optional[float] = None
        self._deadline_kill: Optional[float] = None
        self._deadline_final: Optional[float] = None
        self._subreaper = False

    # -- signals
    def _on_signal(self, signum, frame) -> None:  # noqa: ARG002 - signal handler signature
        self._signals += 1
        self.interrupted = True
        if not self.signal_name:
            self.signal_name = signal.Signals(signum).name
            self._exit_on_signal = EXIT_INTERRUPTED if signum == signal.SIGINT else 128 + int(signum)
        now = time.monotonic()
        if self._signals == 1:
            self._signal_group(signal.SIGINT if signum == signal.SIGINT else signal.SIGTERM)
            self._deadline_term = now + GRACE_S
            self._deadline_kill = now + GRACE_S + KILL_S
        else:  # a second Ctrl-C: no more waiting
            self._kill_all(signal.SIGKILL)
            self._deadline_term = None
            self._deadline_kill = now

    def _signal_group(self, sig) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError, OSError):
            pass

    def _kill_all(self, sig) -> int:
        """Send ``sig`` to the child's group and to every live descendant; how many got it."""
        n = 0
        self._signal_group(sig)
        targets = descendants(os.getpid()) if self._subreaper else ([self.proc.pid] if self.proc else [])
        for pid in targets:
            try:
                os.kill(pid, sig)
                n += 1
            except (ProcessLookupError, PermissionError, OSError):
                pass
        return n

    # -- run
    def run(self) -> int:
        self._subreaper = _set_subreaper()
        handlers = {}
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                handlers[sig] = signal.signal(sig, self._on_signal)
            except (ValueError, OSError):  # not the main thread
                pass
        try:
            try:
                self.proc = subprocess.Popen(self.argv, env=self.env, cwd=self.cwd, stdout=self.stdout,
                                             start_new_session=True)
            except FileNotFoundError:
                raise LaunchError(f"{self.argv[0]}: command not found", EXIT_NOT_FOUND) from None
            except PermissionError:
                raise LaunchError(f"{self.argv[0]}: not executable (permission denied)", EXIT_NOT_EXECUTABLE) from None
            except OSError as exc:
                raise LaunchError(f"{self.argv[0]}: cannot start ({exc.strerror})", EXIT_NOT_EXECUTABLE) from None
            code = self._wait()
        finally:
            for sig, h in handlers.items():
                try:
                    signal.signal(sig, h)
                except (ValueError, OSError, TypeError):
                    pass
        return code

    def _wait(self) -> int:
        assert self.proc is not None
        rc: Optional[int] = None
        while True:
            if rc is None:
                try:
                    rc = self.proc.wait(timeout=0.05)
                except subprocess.TimeoutExpired:
                    rc = None
            if not self.interrupted:
                if rc is not None:
                    break
                continue
            # interrupted: wait for the whole run to end, escalating on the deadlines
            now = time.monotonic()
            left = self._live()
            if rc is not None and not left:
                break
            if self._deadline_term is not None and now >= self._deadline_term:
                self.stopped = max(self.stopped, self._kill_all(signal.SIGTERM))
                self._deadline_term = None
            if self._deadline_kill is not None and now >= self._deadline_kill:
                self._kill_all(signal.SIGKILL)
                self._deadline_kill = None
                self._deadline_final = now + 1.0
            if self._deadline_final is not None and now >= self._deadline_final:
                break  # SIGKILL was sent a second ago; nothing more can be done
            time.sleep(0.02)
            if self._subreaper:
                self._reap_orphans()
        if self._subreaper:
            self._reap_orphans()
        if self.interrupted:
            return self._exit_on_signal
        return rc if rc >= 0 else 128 - rc

    def _live(self) -> list:
        if self._subreaper:
            return descendants(os.getpid())
        if self.proc is not None and self.proc.poll() is None:
            return [self.proc.pid]
        return []

    def _reap_orphans(self) -> None:
        """Collect exited orphans that were reparented to us (subreaper), so none stays a zombie;
        never the Popen child, whose exit status Popen collects."""
        me = os.getpid()
        for pid, ppid in _children_map(zombies=True).items():
            if ppid != me or (self.proc is not None and pid == self.proc.pid):
                continue
            try:
                os.waitpid(pid, os.WNOHANG)
            except (ChildProcessError, OSError):
                pass

    def leftovers(self) -> list:
        """Processes of the run still alive (after a normal exit: what the program left running)."""
        return [p for p in self._live() if self.proc is None or p != self.proc.pid]
