# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The next_window filter and in_window test as Jinja2 sees them."""

from __future__ import annotations


import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.dbfleet.innodb.plugins.filter.next_window import FilterModule
from ansible_collections.dbfleet.innodb.plugins.test.in_window import TestModule as WindowTests


def test_registered_names():
    assert set(FilterModule().filters()) == {'next_window'}
    assert set(WindowTests().tests()) == {'in_window'}


def test_filter_returns_status():
    f = FilterModule().filters()['next_window']
    st = f('22:00-02:00', 'Europe/Berlin', '2024-06-01T12:00:00+00:00')
    assert st['inside'] is False
    assert st['opens_at'] == '2024-06-01T22:00:00+02:00'


def test_test_plugin():
    t = WindowTests().tests()['in_window']
    assert t('22:00-02:00', 'Europe/Berlin', '2024-06-01T21:00:00+00:00') is True  # 23:00 CEST
    assert t('22:00-02:00', 'Europe/Berlin', '2024-06-01T12:00:00+00:00') is False


@pytest.mark.parametrize('window, zone', [('25:00-03:00', 'UTC'), ('02:00', 'UTC'),
                                          ('02:00-03:00', 'Nowhere/Atlantis')])
def test_errors_are_filter_errors(window, zone):
    with pytest.raises(AnsibleFilterError):
        FilterModule().filters()['next_window'](window, zone)
    with pytest.raises(AnsibleFilterError):
        WindowTests().tests()['in_window'](window, zone)
