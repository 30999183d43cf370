"""The workshop's modules computed once per test process and replayed to the tests that only
read what they compute: a full compute (Modules 0-6, MiniLM and SmolLM2 included) is ~10 s of
CPU, and `quiz`, `run` and `check-lesson` compute again at every call.

    from shared_run import Shared
    once = Shared.compute()          # conftest.py's session fixture shared_modules does this
    once.results[module4.Result]     # what compute(Log(), real=True) returns
    once.lines                       # its log: results.log's lines as `run` writes them
    with once.replaying():           # modules.run_module hands back what was computed
        cli.main(["quiz", "--reveal"])

    from shared_run import alone
    result, log = alone(module6)     # module6.run(Log(), {}), computed at the first call only

Replaying: modules.run_module(module, log, results) asked to run a module from exactly the
state the shared computation ran it from (the same module and the same run function, a Log
holding the same lines and section starts, the same earlier Results, the very objects, in the
same order) writes that module's lines into `log` and returns its Result without running it.
Any other call (a module a test inserted or patched, another start) runs the module. Held:
the chain `run` computes (Modules 0-6) and the one `run --no-real` computes (0-2, 6). Every
test is handed the same Result objects, so their arrays are made read-only: code that writes
into one fails there instead of changing what later tests read. `alone`'s Result and Log are
shared as the files' module fixtures shared them before, between tests that do not change
them (their arrays stay writable: torch.from_numpy warns on a read-only one).
"""

import contextlib
import dataclasses
import functools
from dataclasses import dataclass

import numpy as np
import pytest

from attention_workshop import modules as registry
from attention_workshop.errors import WorkshopError
from attention_workshop.report import Log

_run_module = registry.run_module  # the real one, before any test patches it


@dataclass(frozen=True)
class Step:  # one module's run: the state it started from, and what it added
    module: object
    run: object  # module.run when it ran: a test that patches it gets no replay
    lines_before: tuple
    starts_before: tuple  # sorted (section, line) pairs
    earlier: tuple  # ((Result class, result), ...) in the order they were added
    lines: tuple
    starts: tuple
    result: object

    def fits(self, module, log, results):
        return (module is self.module and module.run is self.run and type(log) is Log
                and len(log.lines) == len(self.lines_before) and len(results) == len(self.earlier)
                and tuple(sorted(log.starts.items())) == self.starts_before
                and all(kind is k and value is v for (kind, value), (k, v)
                        in zip(results.items(), self.earlier, strict=True))
                and tuple(log.lines) == self.lines_before)


class Shared:
    def __init__(self):
        self.steps = []
        self.results, self.lines = {}, []

    @classmethod
    def compute(cls):
        """The two chains, each module run once: the full one (real=True), then --no-real's,
        which replays Modules 0-2 from the first. A module whose model is missing ends its
        chain there: what follows it is not shared, and runs (and fails) as it would."""
        shared = cls()
        for real in (True, False):
            log, results = Log(), {}
            for module in registry.load():
                if registry.needs_real(module) and not real:
                    continue
                try:
                    shared._replay_or_record(module, log, results)
                except WorkshopError:
                    break
            if real:
                shared.results, shared.lines = results, list(log.lines)
        for step in shared.steps:
            read_only(step.result)
        return shared

    def _step(self, module, log, results):
        return next((step for step in self.steps if step.fits(module, log, results)), None)

    def _replay_or_record(self, module, log, results):
        if self._step(module, log, results) is not None:
            return self.run_module(module, log, results)
        lines_before, starts_before = tuple(log.lines), tuple(sorted(log.starts.items()))
        earlier = tuple(results.items())
        result = _run_module(module, log, results)
        self.steps.append(Step(module, module.run, lines_before, starts_before, earlier,
                               tuple(log.lines[len(lines_before):]),
                               tuple((n, at) for n, at in log.starts.items()
                                     if n not in dict(starts_before)), result))
        return result

    def run_module(self, module, log, results):  # modules.run_module's signature
        step = self._step(module, log, results)
        if step is None:
            return _run_module(module, log, results)
        log.extend(step.lines)
        log.starts.update(step.starts)
        results[module.Result] = step.result
        return step.result

    @contextlib.contextmanager
    def replaying(self):  # modules.run_module replays the shared steps while inside
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(registry, "run_module", self.run_module)
            yield self

    def lines_of(self, module):  # the log lines `module` wrote in the full chain
        [step] = [s for s in self.steps if s.module is module and s.result is
                  self.results.get(module.Result)]
        return list(step.lines)


@functools.cache
def alone(module):  # -> (module.run(Log(), {}), that Log): a module on its own, run once
    log = Log()
    return module.run(log, {}), log


def read_only(value, seen=None):  # every numpy array in a Result's fields made read-only
    """Follows dataclass fields, lists, tuples and dicts; other objects (a model) are left
    as they are."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            read_only(getattr(value, field.name), seen)
    elif isinstance(value, list | tuple):
        for item in value:
            read_only(item, seen)
    elif isinstance(value, dict):
        for item in value.values():
            read_only(item, seen)
