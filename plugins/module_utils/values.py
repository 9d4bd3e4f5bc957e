# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Comparing variable values by meaning.

Users write values as YAML gives them (True, 'on', 1, '1G', 512M, enum names in any
case); servers report strings ('ON', '134217728', 'O_DIRECT'). Everything here turns
both sides into one canonical form so a second run sees no difference.
"""

from __future__ import annotations

import re

from ansible.module_utils.six import integer_types, string_types

_TRUE = frozenset(('on', 'true', 'yes', '1'))
_FALSE = frozenset(('off', 'false', 'no', '0'))
_SIZE_RE = re.compile(r'^\s*(\d+)\s*([kmgtpe]?)(?:i?b)?\s*$', re.IGNORECASE)
_SIZE_FACTORS = dict(k=1 << 10, m=1 << 20, g=1 << 30, t=1 << 40, p=1 << 50, e=1 << 60)
_SIZE_FACTORS[''] = 1


class ValueError_(ValueError):
    """A value that cannot mean anything for its kind; the message names what was wrong."""


def parse_bool(value):
    if isinstance(value, bool):
        return value
    if isinstance(value, integer_types) and value in (0, 1):
        return bool(value)
    if isinstance(value, string_types):
        text = value.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    raise ValueError_('%r is not a boolean (use ON/OFF, true/false or 1/0)' % (value,))


def parse_size(value):
    """Bytes from 1073741824, '1G', '512M', '64k', '1GiB'. Raises ValueError_."""
    if isinstance(value, bool):
        raise ValueError_('%r is not a size' % (value,))
    if isinstance(value, integer_types):
        if value < 0:
            raise ValueError_('%r is not a size: negative' % (value,))
        return int(value)
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, string_types):
        m = _SIZE_RE.match(value)
        if m:
            return int(m.group(1)) * _SIZE_FACTORS[m.group(2).lower()]
    raise ValueError_('%r is not a size (use bytes or a number with K, M, G or T)' % (value,))


def parse_int(value):
    if isinstance(value, bool):
        raise ValueError_('%r is not an integer' % (value,))
    if isinstance(value, integer_types):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, string_types) and re.match(r'^\s*-?\d+\s*$', value):
        return int(value)
    raise ValueError_('%r is not an integer' % (value,))


def normalize(value, kind, choices=None):
    """Canonical form of value for kind: bool -> 'ON'/'OFF', int/size -> int,
    enum -> the spelling from choices (case-insensitive), str -> str."""
    if kind == 'bool':
        return 'ON' if parse_bool(value) else 'OFF'
    if kind == 'int':
        return parse_int(value)
    if kind == 'size':
        return parse_size(value)
    if kind == 'enum':
        text = ('ON' if value else 'OFF') if isinstance(value, bool) else str(value).strip()
        if choices:
            for choice in choices:
                if choice.lower() == text.lower():
                    return choice
            raise ValueError_('%r is not one of %s' % (value, ', '.join(choices)))
        return text.upper()
    if value is None:
        return ''
    if isinstance(value, bool):
        return 'ON' if value else 'OFF'
    return str(value)


def guess_kind(server_value):
    """A kind for a variable the knowledge tables do not list, from the value the server reports."""
    text = str(server_value).strip()
    if text.upper() in ('ON', 'OFF'):
        return 'bool'
    if re.match(r'^-?\d+$', text):
        return 'int'
    return 'str'


def equal(desired, actual, kind, choices=None):
    """True when desired and actual mean the same value of kind. Raises ValueError_ for a
    desired value that is not valid for kind."""
    want = normalize(desired, kind, choices)
    if actual is None:
        return False
    try:
        have = normalize(actual, kind, choices)
    except ValueError_:
        return False
    if kind == 'str':
        return want.strip() == have.strip()
    return want == have


def buffer_pool_effective(desired_bytes, chunk_size, instances):
    """The innodb_buffer_pool_size the server runs with for a requested size: rounded up to a
    multiple of chunk_size * instances (MySQL 5.7.5+, MariaDB 10.2.2 to 10.7)."""
    unit = int(chunk_size or 0) * max(int(instances or 1), 1)
    if unit <= 0:
        return desired_bytes
    return ((int(desired_bytes) + unit - 1) // unit) * unit


def sql_value(value, kind, choices=None):
    """The value to bind in SET GLOBAL name = %s."""
    canonical = normalize(value, kind, choices)
    return canonical


def display(value, kind):
    """Human form of a canonical value (sizes keep bytes and add a suffix)."""
    if kind == 'size' and isinstance(value, integer_types):
        for suffix, factor in (('G', 1 << 30), ('M', 1 << 20), ('K', 1 << 10)):
            if value and value % factor == 0:
                return '%d (%d%s)' % (value, value // factor, suffix)
    return value
