"""The workshop's modules: one file each, one interface, run in the order of MODULES.

A module file `modules/moduleN.py` holds:

    TITLE = "Module N: ..."        # printed at the head of its quiz
    NEEDS_REAL = True              # optional (default False): it loads a pretrained model, so
                                   # `run --no-real` skips it and `quiz` may skip its quiz

    @dataclass(frozen=True)
    class Result:                  # what it measured, named and typed, shapes in comments
        weights: np.ndarray        # [T, T]

    def run(log, earlier) -> Result:
        '''Compute, write its lines to `log` (a report.Log), return the Result.'''

`earlier` is a read-only mapping from each earlier module's Result class to its result,
so Module 2 reads Module 1's weights as `earlier[module1.Result].weights_river`. Every
field of a Result is read by a figure (figures/), a quiz (quiz/moduleN.py) or a later
module: what nothing reads is not kept.

Example: results = workshop.compute(Log()); results[module1.Result].outputs_river[2]
-> bank's output [0.435, 0.149, 0.543, 0.185].

This file imports nothing heavy: the command line reads MODULES for its help.
"""

import importlib
from types import MappingProxyType

# The modules in the order they run (and write results.log): file names under modules/.
# A module's number on the command line is its name without "module": "module1" -> "1".
MODULES = ("module0", "module1", "module2", "module3", "module4", "module5", "module6")


def key(name):
    """Example: key("module1") -> "1"."""
    return name.removeprefix("module")


def name_of(module):
    """Example: name_of(attention_workshop.modules.module1) -> "module1"."""
    return module.__name__.rpartition(".")[2]


def load(names=None):  # [str] | None -> [module]
    """Import the modules named (default: MODULES, read when called), in order."""
    return [importlib.import_module(f"{__name__}.{name}") for name in names or MODULES]


def needs_real(module):
    return getattr(module, "NEEDS_REAL", False)


def run_module(module, log, results):  # module, Log, {Result class: Result} -> Result
    """Run one module on the results before it (read-only) and add its Result to `results`."""
    result = module.run(log, MappingProxyType(dict(results)))
    if not isinstance(result, module.Result):
        raise TypeError(f"{name_of(module)}.run returned {type(result).__name__}, not its Result")
    results[module.Result] = result
    return result
