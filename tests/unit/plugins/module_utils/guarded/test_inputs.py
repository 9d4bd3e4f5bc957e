# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pure rules of a guarded change (guarded/inputs.py): quoting, ranges, the window gate, the plan's size."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import inputs as g


# ---------------------------------------------------------------- input rules
@pytest.mark.parametrize('name, quoted', [
    ('id', '`id`'),
    ('first name', '`first name`'),
    ('order-items', '`order-items`'),
    ('we`ird', '`we``ird`'),
    ('``', '``````'),
    ('prénom', '`prénom`'),
    ('列名', '`列名`'),
    ('a;DROP TABLE x', '`a;DROP TABLE x`'),
    ('x' * 64, '`%s`' % ('x' * 64)),
])
def test_quote_name_quotes_every_legal_identifier(name, quoted):
    assert g.quote_name(name) == quoted


@pytest.mark.parametrize('name, words', [
    ('', 'non-empty'),
    (None, 'non-empty'),
    ('x' * 65, 'longer than 64'),
    ('a\x00b', 'NUL'),
    ('smile\U0001F600', 'Basic Multilingual Plane'),
])
def test_quote_name_refuses_what_no_server_accepts(name, words):
    with pytest.raises(g.GuardedError) as e:
        g.quote_name(name)
    assert words in str(e.value)


def test_qualified_name():
    assert g.qualified_name('shop', 'my table') == '`shop`.`my table`'


def test_window_gate_one_function_for_every_module():
    inside, outside = '2024-01-01T03:00:00+00:00', '2024-01-01T12:00:00+00:00'
    assert g.window_gate(None, 'UTC') == (None, None, None)
    st, refusal, warning = g.window_gate('02:00-05:00', 'UTC', now=inside)
    assert st['inside'] and refusal is None and warning is None
    st, refusal, warning = g.window_gate('02:00-05:00', 'UTC', now=outside)
    assert not st['inside'] and refusal.startswith('refusing: outside the window 02:00-05:00')
    assert refusal.endswith('(set force_window to run anyway)') and warning is None
    st, refusal, warning = g.window_gate('02:00-05:00', 'UTC', force=True, now=outside)
    assert refusal is None and warning.startswith('forced outside the window')
    st, refusal, warning = g.window_gate('02:00-05:00', 'UTC', applies=False, now=outside)
    assert (refusal, warning) == (None, None) and not st['inside']
    st, refusal, warning = g.window_gate('25:00-26:00', 'UTC')
    assert st is None and '25:00-26:00' in refusal
    st, refusal, warning = g.window_gate('02:00-05:00', 'Mars/Olympus')
    assert st is None and 'Mars/Olympus' in refusal


# ---------------------------------------------------------------- the plan's size
def test_plan_size_takes_the_tablespace_file_over_stale_statistics():
    # issue 24: a 200k-row table sized 32-64 KiB from stale statistics while its .ibd is 48 MiB
    size = g.plan_size(49152, 48 * 1024 * 1024)
    assert size == dict(size_bytes=48 * 1024 * 1024, size='48.0 MiB', size_source='tablespace file')
    assert g.plan_size(65536, None) == dict(size_bytes=65536, size='64.0 KiB', size_source='table statistics')
    # a shared tablespace: statistics larger than any per-table file the server names
    assert g.plan_size(10 * 1024 * 1024, 0)['size_source'] == 'table statistics'
