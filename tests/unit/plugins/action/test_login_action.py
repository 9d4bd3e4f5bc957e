# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one login path: every module of the action group runs through the login action plugin."""

from __future__ import annotations

import importlib
import os

import yaml

from ansible_collections.dbfleet.innodb.plugins.plugin_utils import login

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))


def runtime():
    with open(os.path.join(ROOT, 'meta', 'runtime.yml'), encoding='utf-8') as handle:
        return yaml.safe_load(handle)


def action_group():
    return runtime()['action_groups']['innodb']


# Actions that run on the controller only and log in nowhere (they are not in the action group).
CONTROLLER_ACTIONS = ('topology_plan', 'verify_fleet')
# The one login action: the plain one (server_facts needs nothing else); modules with nothing more route to it.
LOGIN_ACTION = 'server_facts'


def action_of(name):
    """The action plugin a module runs through: its own file, else where meta/runtime.yml routes it."""
    routing = runtime().get('plugin_routing', {}).get('modules', {})
    if name in routing:
        name = routing[name]['action_plugin'].split('.')[-1]
    return importlib.import_module('ansible_collections.dbfleet.innodb.plugins.action.%s' % name)


def test_every_module_of_the_action_group_runs_through_the_login_action():
    modules = sorted(name[:-3] for name in os.listdir(os.path.join(ROOT, 'plugins', 'modules'))
                     if name.endswith('.py') and name[:-3] not in CONTROLLER_ACTIONS)
    assert sorted(action_group()) == modules
    for name in modules:
        assert issubclass(action_of(name).ActionModule, login.LoginActionModule), name
        with open(os.path.join(ROOT, 'plugins', 'modules', name + '.py'), encoding='utf-8') as handle:
            assert 'login_argument_spec()' in handle.read(), name


def test_an_action_plugin_file_is_one_that_does_more_than_the_login():
    """One login action, the action plugin of every module that needs nothing else (meta/runtime.yml
    plugin_routing.modules.<module>.action_plugin); a module keeps a file of its own only when its action does more."""
    routing = runtime()['plugin_routing']['modules']
    files = sorted(name[:-3] for name in os.listdir(os.path.join(ROOT, 'plugins', 'action')) if name.endswith('.py'))
    for name, route in routing.items():
        assert route == {'action_plugin': 'dbfleet.innodb.%s' % LOGIN_ACTION}, name
        assert name not in files, name
    for name in files:
        action = importlib.import_module('ansible_collections.dbfleet.innodb.plugins.action.%s' % name)
        if name != LOGIN_ACTION:
            assert action.ActionModule is not login.LoginActionModule, name
    assert sorted(set(action_group()) - set(routing)) == sorted(set(files) - set(CONTROLLER_ACTIONS))


class FakeTask(object):
    def __init__(self, delegate_to=None):
        self.delegate_to = delegate_to


class FakeTemplar(object):
    def __init__(self, variables):
        self.variables = variables

    def copy_with_new_env(self, available_variables):
        return FakeTemplar(available_variables)


def test_login_variables_are_the_delegated_hosts():
    delegated = dict(dbfleet_login_port=3307)
    task_vars = dict(dbfleet_login_port=3306, ansible_delegated_vars={'db2': delegated})
    variables, templar = login.login_variables(FakeTask('db2'), task_vars, FakeTemplar(task_vars))
    assert variables is delegated and templar.variables is delegated


def test_login_variables_without_delegation_are_the_hosts_own():
    task_vars = dict(dbfleet_login_port=3306)
    templar = FakeTemplar(task_vars)
    assert login.login_variables(FakeTask(), task_vars, templar) == (task_vars, templar)


def test_controller_actions_log_in_nowhere():
    for name in CONTROLLER_ACTIONS:
        assert name not in action_group()
        assert action_of(name).ActionModule is not login.LoginActionModule
        with open(os.path.join(ROOT, 'plugins', 'modules', name + '.py'), encoding='utf-8') as handle:
            assert 'login_argument_spec()' not in handle.read(), name


def test_desired_settings_takes_the_roles_variables_from_the_play():
    from ansible_collections.dbfleet.innodb.plugins.action.desired_settings import role_variables
    task_vars = {'adaptive_hash_parts': '{{ 8 * 2 }}', 'adaptive_hash_part': '{{ undefined_thing }}',
                 'adaptive_hash_report': {'old': 1}, 'memcached_port': 1, 'other': 2}
    seen = []

    def template(value):
        seen.append(value)
        return 16 if value == '{{ 8 * 2 }}' else value
    assert role_variables('adaptive_hash', task_vars, template) == {'adaptive_hash_parts': 16,
                                                                    'adaptive_hash_part': None}
    assert seen == ['{{ 8 * 2 }}'], 'only known inputs are templated'


class FakeArgsTask(FakeTask):
    def __init__(self, args, delegate_to=None):
        super().__init__(delegate_to)
        self.args = args


class IdentityTemplar(FakeTemplar):
    def template(self, value):
        return value


def run_login_action(monkeypatch, task_args, host_vars):
    """The arguments the module gets from the login action plugin for task_args on a host with host_vars."""
    seen = {}

    def fake_run(self, tmp=None, task_vars=None):
        seen.update(self._task.args)
        return {}

    monkeypatch.setattr(login._NormalActionModule, 'run', fake_run)
    action = object.__new__(login.LoginActionModule)
    action._task = FakeArgsTask(dict(task_args))
    action._templar = IdentityTemplar(host_vars)
    action.run(task_vars=dict(host_vars))
    return seen


INVENTORY_LOGIN = dict(dbfleet_login_unix_socket='/run/this.sock', dbfleet_login_host='127.0.0.1',
                       dbfleet_login_port=3306, dbfleet_login_user='admin', dbfleet_login_password='pw',
                       dbfleet_login_ssl_mode='verify_ca')


def test_a_task_naming_another_server_gets_no_connection_option_of_this_host(monkeypatch):
    args = run_login_action(monkeypatch, dict(login_host='db2.example', login_port=3307), INVENTORY_LOGIN)
    assert args == dict(login_host='db2.example', login_port=3307, login_user='admin', login_password='pw',
                        login_ssl_mode='verify_ca')
    args = run_login_action(monkeypatch, dict(login_unix_socket='/run/other.sock'), INVENTORY_LOGIN)
    assert args == dict(login_unix_socket='/run/other.sock', login_user='admin', login_password='pw',
                        login_ssl_mode='verify_ca')


def test_a_task_naming_no_server_gets_this_hosts_login(monkeypatch):
    args = run_login_action(monkeypatch, dict(settings={}), INVENTORY_LOGIN)
    assert args['login_unix_socket'] == '/run/this.sock' and args['login_port'] == 3306
