"""A small YAML emitter for the inventories: mappings in block style, keys in insertion order.

Strings are written as JSON strings (a subset of YAML's double-quoted scalars), so passwords and
paths never need thought; plain keys stay readable.
"""
import json
import re

_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


def _scalar(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if value is None:
        return "null"
    return json.dumps(str(value))


def _key(key):
    return key if _PLAIN_KEY.match(key) else json.dumps(key)


def _lines(value, indent):
    pad = "  " * indent
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict) and item:
                yield "%s%s:" % (pad, _key(key))
                yield from _lines(item, indent + 1)
            elif isinstance(item, list) and item:
                yield "%s%s:" % (pad, _key(key))
                yield from _lines(item, indent + 1)
            else:
                yield "%s%s: %s" % (pad, _key(key), "{}" if isinstance(item, dict) else
                                    "[]" if isinstance(item, list) else _scalar(item))
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, (dict, list)):
                raise TypeError("nested collections in lists are not needed by the inventories")
            yield "%s- %s" % (pad, _scalar(item))
    else:
        raise TypeError("only mappings and lists at the top level")


def dump(data, header=""):
    return header + "\n".join(_lines(data, 0)) + "\n"
