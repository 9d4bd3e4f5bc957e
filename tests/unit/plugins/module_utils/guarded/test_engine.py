# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guarded-change engine (guarded/engine.py): signals, its clients, the report, the login."""

from __future__ import annotations

import os
import signal

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import engine as g
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.convert_tables import Conversion
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.drop_tables import Drop
from ansible_collections.dbfleet.innodb.plugins.module_utils.signals import Interrupted


# ---------------------------------------------------------------- signals
def test_signal_handler_raises_interrupted_and_handlers_come_back():
    change = g.GuardedChange(dict(tables=['a.b']))
    before = signal.getsignal(signal.SIGTERM)
    change.install_signal_handlers()
    try:
        with pytest.raises(Interrupted) as e:
            os.kill(os.getpid(), signal.SIGTERM)
        assert 'SIGTERM' in str(e.value)
    finally:
        change.restore_signal_handlers()
    assert signal.getsignal(signal.SIGTERM) == before


def test_drop_and_conversion_are_clients_of_the_engine_not_of_each_other():
    assert issubclass(Drop, g.GuardedChange) and issubclass(Conversion, g.GuardedChange)
    assert not issubclass(Conversion, Drop)
    assert Drop.marker_prefix != Conversion.marker_prefix


def test_drop_reports_a_size_for_every_table_even_when_nothing_was_dropped():
    # the playbook's report reads sizes from the module: a table that is not there has none (issue 24's crash)
    drop = Drop(dict(tables=['a.b', 'a.c']))
    drop.tables = [dict(name='a.b', schema='a', table='b', exists=False, result='absent'),
                   dict(name='a.c', schema='a', table='c', exists=True, size='16.0 KiB', result='pending')]
    assert drop.report()['sizes'] == {'a.b': None, 'a.c': '16.0 KiB'}


# ---------------------------------------------------------------- the login
def test_an_unverified_remote_login_is_warned_about_before_connecting():
    def refused(params):
        raise g.ConnectError('cannot connect to %s' % params['login_host'])

    for host, warned in (('10.20.30.40', True), ('127.0.0.1', False)):
        warnings = []
        change = g.GuardedChange(dict(login_host=host, login_port=3306, config_file=''), warn=warnings.append,
                                 connect=refused)
        with pytest.raises(g.GuardedError):
            change.open()
        assert bool(warnings) == warned, (host, warnings)
        assert all('10.20.30.40:3306 is reached over TCP without verifying its identity' in w for w in warnings)
