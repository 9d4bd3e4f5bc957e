# -*- coding: utf-8 -*-
"""restart/method.py: the one check of dbfleet_restart_method / _command / dbfleet_service_name."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import method as restart_method


@pytest.mark.parametrize('method,command,message', [
    ('reboot', None, "dbfleet_restart_method must be one of service, command; got 'reboot'"),
    ('command', None, 'needs dbfleet_restart_command, a non-empty list of arguments; got null'),
    ('command', 'systemctl restart mysql', "got 'systemctl restart mysql'"),
    ('command', [], 'got []'),
    ('command', ['systemctl', 'restart\nmysql'], 'needs dbfleet_restart_command'),
    ('service', None, None),
])
def test_restart_method_is_checked(method, command, message):
    errors = restart_method.restart_method_errors(method, command)
    assert (message in errors[0]) if message else errors == []


def test_restart_method_fine():
    assert restart_method.restart_method_errors(None, None) == []
    assert restart_method.restart_method_errors('command', ['systemctl', 'restart', 'mysql']) == []


def test_the_service_name_is_checked_with_the_service_method_only():
    assert 'dbfleet_service_name must be a systemd unit name' in restart_method.restart_method_errors(
        'service', None, 'my sql')[0]
    assert restart_method.restart_method_errors('command', ['true'], 'my sql') == []
