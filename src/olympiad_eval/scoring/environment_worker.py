"""A check worker in a pinned environment of its own (`environments.Environment`): run by that
environment's interpreter as a script, it imports nothing of the project (whose packages are not
there), only the protocol's module, by its file:

    <environment>/bin/python environment_worker.py FD MODULE_FILE

It talks to the pool over the connection on file descriptor FD (`multiprocessing.connection`):
after the module's `warm_up()` it sends "" (or why it could not start), then for each
(function name, args, CPU seconds) it runs `module.function(*args)` within that much CPU time and
sends back its (correct, reason, answer) (a bool alone is (it, "", "")), or (None, why, "") where the
function raised. The CPU
budget is the kernel's, as in the project's own workers (`pool.limit_cpu`): ITIMER_PROF, whose
SIGPROF ends the process by its default action once the budget is spent.
"""

import importlib.util
import signal
import sys
from multiprocessing.connection import Connection


def load(path: str):
    spec = importlib.util.spec_from_file_location("protocol_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def limit_cpu(cpu_seconds) -> None:
    signal.signal(signal.SIGPROF, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_PROF, cpu_seconds or 0)


def serve(connection, warm_up, check, failed) -> None:
    """A check worker's life, here and in the project's own workers (`pool`): warm up and say so
    ("" when ready, else why not); then, for each job (its arguments, then CPU seconds), send
    `check(*arguments)` run within that much CPU time, or `failed(why)` where it raised (a crash in
    a check is a failed check, not a dead worker)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the pool's to handle: it stops the workers
    try:
        warm_up()
    except Exception as error:  # the pool reports it and stops
        connection.send(f"{type(error).__name__}: {error}")
        return
    connection.send("")
    while True:
        try:
            *arguments, cpu_seconds = connection.recv()
        except EOFError:  # the pool closed
            return
        limit_cpu(cpu_seconds)
        try:
            reply = check(*arguments)
        except Exception as error:
            reply = failed(f"check failed: {type(error).__name__}: {error}")
        limit_cpu(None)
        connection.send(reply)


def main() -> None:
    connection = Connection(int(sys.argv[1]))
    module = None

    def warm_up() -> None:
        nonlocal module
        module = load(sys.argv[2])
        getattr(module, "warm_up", lambda: None)()

    def check(name: str, args: tuple) -> tuple:
        result = getattr(module, name)(*args)
        return tuple(result) if isinstance(result, tuple) else (bool(result), "", "")

    serve(connection, warm_up, check, lambda why: (None, why, ""))


if __name__ == "__main__":
    main()
