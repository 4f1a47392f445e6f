"""Errors that name the parameter a call left out or misspelt.

When no overload of an extension function accepts a call, nanobind lists every signature and the types it was
given; a missing or unknown keyword is then hard to spot. Module functions are wrapped so that such a call says
what Python itself would: "max_pooling() missing required keyword argument: 'window_size'". Any other failure
keeps nanobind's message.
"""

import ast
import functools
import re
from typing import Any, Callable


def _parameters(signature: str) -> tuple[list[str], int, set[str], list[str]]:
    """A signature's positional names, how many of them are required, every keyword-only name, and the required
    keyword-only names."""
    # Defaults are spelt \0, \1, ... in nanobind's signatures: any expression will do for the parser.
    tree = ast.parse(re.sub(r"\\\d+", "None", signature) + ": ...")
    args = tree.body[0].args  # type: ignore[attr-defined]
    positional = [a.arg for a in args.posonlyargs + args.args]
    keywords = {a.arg for a in args.kwonlyargs}
    required_keywords = [a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None]
    return positional, len(positional) - len(args.defaults), keywords, required_keywords


def _explain(name: str, signatures: list[str], args: tuple, kwargs: dict) -> str | None:
    """What a call got wrong by every signature's count, if that is one thing: a missing or unknown argument."""
    problems = set()
    for signature in signatures:
        positional, required, keywords, required_keywords = _parameters(signature)
        unknown = [k for k in kwargs if k not in keywords and k not in positional]
        if unknown:
            problems.add(f"{name}() got an unexpected keyword argument '{unknown[0]}'")
            continue
        given = set(positional[:len(args)]) | set(kwargs)
        missing_positional = [p for p in positional[:required] if p not in given]
        missing_keywords = [k for k in required_keywords if k not in given]
        if missing_positional:
            problems.add(f"{name}() missing required argument: '{missing_positional[0]}'")
        elif missing_keywords:
            problems.add(f"{name}() missing required keyword argument: '{missing_keywords[0]}'")
        elif len(args) > len(positional):
            problems.add(f"{name}() takes {len(positional)} positional arguments but {len(args)} were given")
        else:
            return None  # the arguments fit this signature: their types must be wrong
    return problems.pop() if len(problems) == 1 else None


def naming_missing_arguments(function: Callable[..., Any]) -> Callable[..., Any]:
    signatures = [s[0] for s in getattr(function, "__nb_signature__", ())]

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except TypeError as e:
            if "incompatible function arguments" not in str(e):
                raise
            message = _explain(function.__name__, signatures, args, kwargs)
            if message is None:
                raise
            raise TypeError(message) from None

    return call
