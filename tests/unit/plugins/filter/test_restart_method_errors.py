# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The restart method is checked in one place (restart_method.restart_method_errors): the filter the restart role
runs on every play host is that function, and no YAML of the collection checks the method by itself."""

from __future__ import annotations

import os
import re

import pytest
import yaml

from ansible_collections.dbfleet.innodb.plugins.filter.restart_method_errors import FilterModule
from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import method as restart_method

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
check = FilterModule().filters()['restart_method_errors']


@pytest.mark.parametrize('method, command, service, message', [
    ('reboot', None, None, "dbfleet_restart_method must be one of service, command; got 'reboot'"),
    ('command', None, None, 'needs dbfleet_restart_command'),
    ('service', None, 'mariadb;reboot', 'dbfleet_service_name must be a systemd unit name'),
    ('service', None, 'mariadb.socket', 'names a socket unit, not a service'),
    (None, None, '', 'dbfleet_service_name must be a systemd unit name'),
])
def test_bad_methods_are_named(method, command, service, message):
    problems = check(method, command, service)
    assert len(problems) == 1 and message in problems[0]
    assert problems == restart_method.restart_method_errors(method, command, service)


@pytest.mark.parametrize('method, command, service', [
    (None, None, None), ('service', None, 'mariadb'), ('service', None, 'mysqld.service'),
    ('command', ['systemctl', 'restart', 'mysql'], None), ('command', ['/usr/local/bin/restart-db'], 'ignored here')])
def test_good_methods(method, command, service):
    assert check(method, command, service) == []


def _tasks(path):
    with open(os.path.join(ROOT, path), encoding='utf-8') as handle:
        return yaml.safe_load(handle)


def test_the_restart_role_checks_the_method_on_every_host_not_only_pending_ones():
    # The first task works the inputs out (filter restart_inputs: restart_method_errors and the role's own inputs) on
    # every host, the second stops the run on any host's problem.
    tasks = _tasks('roles/restart/tasks/main.yml')
    works_out = [t for t in tasks if 'dbfleet.innodb.restart_inputs' in str(t)]
    checks = [t for t in tasks if '__restart_inputs.problems' in str(t.get('ansible.builtin.assert'))]
    assert len(works_out) == 1 and len(checks) == 1
    assert tasks.index(works_out[0]) == 0 and tasks.index(checks[0]) == 1
    assert all('when' not in t for t in works_out + checks) and checks[0].get('any_errors_fatal') is True


def test_no_yaml_checks_the_restart_method_by_itself():
    own_checks = []
    for base in ('roles', 'playbooks'):
        for folder, dummy, files in os.walk(os.path.join(ROOT, base)):
            for name in files:
                if name.endswith(('.yml', '.yaml')):
                    with open(os.path.join(folder, name), encoding='utf-8') as handle:
                        text = handle.read()
                    if re.search(r"in \[\s*'service',\s*'command'\s*\]", text):
                        own_checks.append(os.path.relpath(os.path.join(folder, name), ROOT))
    assert own_checks == []
