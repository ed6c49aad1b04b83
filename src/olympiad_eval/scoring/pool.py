"""Warm worker processes that run rule checks (`checks.Check`) under a hard per-check CPU budget.

sympy can hang on hostile input (`9^{9^9}`), so every check runs in a worker process, and a worker
that overruns its budget is replaced while the others go on (see `CheckPool`). The budget is CPU
time, never wall time: a check's verdict must not depend on how busy the machine is.

The budget is the kernel's: before each check the worker arms `ITIMER_PROF`, a timer of the CPU
time the process spends, whose signal (SIGPROF) ends the process by its default action once the
budget is spent, even inside a call into C that Python could not interrupt. So a check that needs
more CPU than the budget ends the same way on an idle machine and on a busy one, and no handler of
the check's own code (an `except Exception` in a parser) can swallow it.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import time
from multiprocessing.connection import Connection, wait

from olympiad_eval.scoring import environment_worker
from olympiad_eval.scoring.checks import Check, Equivalence, Options, Verdict
from olympiad_eval.scoring.environments import Environment
from olympiad_eval.scoring.verdicts import Verdicts, verdict_key

START_TIMEOUT = 600.0  # seconds for the check workers to start: generous, a loaded machine is slow
# A worker that has not answered after this much wall time (seconds, and per second of its CPU
# budget) is stuck without using the CPU, which no check does: stopped, so that no stage waits for
# ever. Generous, so that a check starved of the CPU on a busy machine still ends by its CPU budget.
STUCK_AFTER, STUCK_PER_CPU_SECOND = 600.0, 60.0

# ---------------------------------------------------------------- worker pool


def _yield_cpu(pid: int) -> None:
    """Checks are batch work; where the caller sends requests meanwhile (an LLM judge's cell), a
    request delayed behind a check costs the whole cell's wall time, so the workers give way to it.
    Only then: a reniced worker gives way to every other process of the machine too, and on a busy
    one a rules-only cell, which sends nothing, would wait on work that is not its own."""
    if hasattr(os, "setpriority"):
        os.setpriority(os.PRIO_PROCESS, pid, max(10, os.getpriority(os.PRIO_PROCESS, pid)))


def run_check(check: Check, options: Options = Options()) -> Verdict:
    """A check's verdict, as a worker gives it (in this process): `options` are the cell's rules."""
    return check.run(options)


def over_budget(cpu_seconds: float) -> str:
    """Why a check has no verdict when it needed more CPU time than its budget."""
    return f"check exceeded its CPU budget of {cpu_seconds:g} s"


def limit_cpu(cpu_seconds: float | None) -> None:
    """From now on, this process ends (SIGPROF) once it has spent `cpu_seconds` more of CPU time;
    None lifts the limit. Used by the workers around each check, and by a check's own child
    process (HiPhO's evalscope protocol runs Math-Verify in one) for its own budget."""
    signal.signal(signal.SIGPROF, signal.SIG_DFL)  # the default action: end the process
    signal.setitimer(signal.ITIMER_PROF, cpu_seconds or 0)


def ended_by_cpu_limit(exitcode: int | None) -> bool:
    return exitcode == -signal.SIGPROF


# A check that loads everything a check needs (sympy, the LaTeX parser) and runs each rule once.
_WARM_UP = Equivalence(r"\frac{x^2}{2}", r"x \cdot \frac{x}{2}")


def _serve(connection) -> None:
    """A worker: warm up, say so ("" when ready, else why not), then check each job it is sent."""
    environment_worker.serve(connection, lambda: run_check(_WARM_UP), run_check, lambda why: Verdict(None, why))


# What a worker imports before its first check: about a second of CPU in every spawned process.
# Math-Verify (evalscope's protocols) where it is installed: the fork server skips what is missing.
_PRELOADED = ["olympiad_eval.scoring.mathcheck", "sympy", "latex2sympy2_extended.latex2sympy2", "math_verify"]


@functools.cache
def _start_method():
    """Workers fork from Python's fork server, which has imported sympy and the LaTeX parser once:
    a worker (the first ones, and each that replaces one that overran) then starts in milliseconds
    instead of importing them again. Forking from the server, not from the stage, is safe while
    the stage runs threads (its event loop). Where there is no fork server, each worker is spawned.
    Each worker still runs the warm-up itself: its first writes to the memory it shares with the
    server (copied page by page) are then its start's CPU time, not its first check's."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_PRELOADED)
    return context


@contextlib.contextmanager
def _script_hidden():
    """While a worker starts, the caller's main script is not named to it. multiprocessing runs the
    script that started the caller again in each new worker (as `__mp_main__`), for targets defined
    there; a worker's target is `_serve`, here, and a stage script's imports (Hydra, the stage's
    modules) would cost each worker about half a second of CPU before its first check."""
    main = sys.modules["__main__"]
    script = main.__dict__.pop("__file__", None)
    try:
        yield
    finally:
        if script is not None:
            main.__file__ = script


def start_fork_server() -> None:
    """Start the workers' fork server now, ahead of the first pool: its imports and warm-up (about a
    second of CPU) then run beside the rest of the caller's start (Hydra, reading the cell's files)
    instead of before its first check. The judge stage (`stages/judge.py`) calls it first thing."""
    context = _start_method()
    if context.get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


class _Worker:
    """One worker process and the connection to it: forked from the fork server, in this
    interpreter; or, for the checks of a pinned environment of their own (`environment`), started by
    that environment's interpreter (`environment_worker`)."""

    def __init__(self, environment: Environment | None = None, give_way: bool = False):
        self.environment = environment
        if environment is None:
            context = _start_method()
            self.connection, theirs = context.Pipe()
            self.process = context.Process(target=_serve, args=(theirs,), daemon=True)
            with _script_hidden():
                self.process.start()
            theirs.close()
        else:
            ours, theirs = socket.socketpair()
            command = [
                str(environment.python()),
                environment_worker.__file__,
                str(theirs.fileno()),
                str(environment.module),
            ]
            self.process = subprocess.Popen(command, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL)
            theirs.close()
            self.connection = Connection(ours.detach())
        if give_way:
            _yield_cpu(self.process.pid)  # now: a worker's start (Python, sympy) is CPU work too

    def send(self, check: Check, options: Options, cpu_seconds: float) -> None:
        if self.environment is None:
            self.connection.send((check, options, cpu_seconds))
        else:  # the environment knows the protocol's module, not the project: the function by its name
            self.connection.send((check.function.__name__, check.args, cpu_seconds))

    def verdict(self) -> Verdict:
        reply = self.connection.recv()
        return reply if isinstance(reply, Verdict) else Verdict(*reply)

    @property
    def exitcode(self) -> int | None:
        return self.process.exitcode if self.environment is None else self.process.poll()

    def join(self) -> None:
        self.process.join() if self.environment is None else self.process.wait()

    def stop(self) -> None:
        self.process.kill()
        self.join()
        self.connection.close()


class CheckPool:
    """Warm worker processes that run checks, each within `cpu_seconds` of CPU time; `options` are
    the rules the cell's protocol switches on, applied to every check. Checks of a pinned
    environment of their own (`checks.ProtocolCheck.environment`) get workers of that environment's
    interpreter, as many, started when a batch first holds such a check.

    A check's budget counts the CPU time of the check alone: a worker is sent checks only once it
    has imported sympy and the LaTeX parser and run a check of its own (`_serve`), and waiting for
    a core on a busy machine or for a free worker costs no CPU time. A
    check that overruns costs only its own worker, which is replaced while the others go on; its
    verdict is undecided, with the same reason on every machine state (`over_budget`). Where the
    caller sends requests while checks run (`give_way`), the workers are reniced (`_yield_cpu`)."""

    def __init__(
        self,
        workers: int = 2,
        cpu_seconds: float = 10.0,
        options: Options = Options(),
        start_timeout: float = START_TIMEOUT,
        give_way: bool = False,
        verdicts: Verdicts | None = None,
    ):
        self.workers, self.cpu_seconds, self.options = max(1, workers), cpu_seconds, options
        self.give_way = give_way
        # the verdicts decided before, looked up first (`scoring.verdicts`); closed with the pool
        self.verdicts = verdicts
        self.stuck_after = max(STUCK_AFTER, STUCK_PER_CPU_SECOND * cpu_seconds)
        self.start_timeout = start_timeout
        self._warm: dict[Environment | None, list[_Worker]] = {}  # idle and ready for a check, by environment
        self._starting: dict[_Worker, float] = {}  # started, not yet warm: each by its deadline

    def __enter__(self) -> CheckPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for worker in [*(w for idle in self._warm.values() for w in idle), *self._starting]:
            worker.stop()
        self._warm, self._starting = {}, {}
        if self.verdicts is not None:
            self.verdicts.close()
            self.verdicts = None

    def _start_one(self, environment: Environment | None) -> None:
        self._starting[_Worker(environment, self.give_way)] = time.monotonic() + self.start_timeout

    def _warmed(self, worker: _Worker) -> None:
        """A starting worker has said whether it is warm."""
        del self._starting[worker]
        try:
            failure = worker.connection.recv()
        except EOFError:
            failure = f"its process ended (exit code {worker.exitcode})"
        if failure:
            worker.stop()
            self.close()
            raise RuntimeError(f"a check worker could not start: {failure}")
        self._warm.setdefault(worker.environment, []).append(worker)

    def _late_starts(self) -> None:
        if any(deadline < time.monotonic() for deadline in self._starting.values()):
            self.close()
            raise RuntimeError(f"the check workers did not start within {self.start_timeout:g} s")

    def start(self, environment: Environment | None = None) -> None:
        """Start the workers (of an environment) and wait until every one is warm."""
        have = len(self._warm.get(environment, [])) + sum(w.environment == environment for w in self._starting)
        for _ in range(self.workers - have):
            self._start_one(environment)
        while self._starting:
            wait([worker.connection for worker in self._starting], timeout=_until(min(self._starting.values())))
            for worker in list(self._starting):
                if worker.connection.poll():
                    self._warmed(worker)
            self._late_starts()

    def check_many(self, jobs: list[Check], progress=None) -> list[Verdict]:
        """Verdicts in the order of `jobs`: those decided before (`verdicts`) as they were, the rest
        decided now (`decide`), and kept. No worker starts for a batch decided before."""
        if self.verdicts is None:
            return self.decide(jobs, progress)
        keys = [verdict_key(job, self.options, self.cpu_seconds) for job in jobs]
        found = [self.verdicts.get(key) for key in keys]
        missing = [index for index, verdict in enumerate(found) if verdict is None]
        if progress is not None:
            progress.update(len(jobs) - len(missing))
        for index, verdict in zip(missing, self.decide([jobs[index] for index in missing], progress)):
            found[index] = verdict
            self.verdicts.put(keys[index], verdict)
        return found

    def decide(self, jobs: list[Check], progress=None) -> list[Verdict]:
        """Verdicts in the order of `jobs`; an overrunning check is recorded, never awaited.
        Submit many jobs at once: the workers then never wait for the caller. `progress` (a tqdm
        bar) counts the checks as they finish."""
        verdicts: list[Verdict | None] = [None] * len(jobs)
        waiting: dict[Environment | None, collections.deque] = {}
        for index, job in enumerate(jobs):
            waiting.setdefault(getattr(job, "environment", None), collections.deque()).append(index)
        busy: dict[_Worker, tuple[int, float]] = {}  # each busy worker's check and its deadline
        for environment in waiting:
            self.start(environment)

        def settle(index: int, verdict: Verdict) -> None:
            verdicts[index] = verdict
            if progress is not None:
                progress.update(1)

        try:
            while any(waiting.values()) or busy:
                for environment, queue in waiting.items():
                    idle = self._warm.setdefault(environment, [])
                    while queue and idle:
                        worker, index = idle.pop(), queue.popleft()
                        try:
                            worker.send(jobs[index], self.options, self.cpu_seconds)
                        except OSError:  # the worker died while idle: its replacement takes the check
                            queue.appendleft(index)
                            self._replace(worker)
                            continue
                        busy[worker] = (index, time.monotonic() + self.stuck_after)
                deadlines = [deadline for _, deadline in busy.values()] + list(self._starting.values())
                wait([worker.connection for worker in [*busy, *self._starting]], timeout=_until(min(deadlines)))
                for worker in list(self._starting):
                    if worker.connection.poll():
                        self._warmed(worker)
                self._late_starts()
                for worker, (index, deadline) in list(busy.items()):
                    if worker.connection.poll():
                        del busy[worker]
                        try:
                            settle(index, worker.verdict())
                            self._warm[worker.environment].append(worker)
                        except EOFError:  # the process ended in the check: its CPU budget, or a crash in C
                            settle(index, self._ended(worker))
                            self._replace(worker)
                    elif time.monotonic() >= deadline:
                        del busy[worker]
                        stuck = f"check worker stuck: no answer after {self.stuck_after:g} s, its CPU budget unspent"
                        settle(index, Verdict(None, stuck))
                        self._replace(worker)
        except BaseException:
            for worker in busy:  # mid-check: their replies would answer the next batch's checks
                worker.stop()
            raise
        return [v for v in verdicts if v is not None]

    def _ended(self, worker: _Worker) -> Verdict:
        worker.join()
        if ended_by_cpu_limit(worker.exitcode):
            return Verdict(None, over_budget(self.cpu_seconds))
        return Verdict(None, f"check failed: its worker ended (exit code {worker.exitcode})")

    def _replace(self, worker: _Worker) -> None:
        worker.stop()
        self._start_one(worker.environment)


def _until(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())
