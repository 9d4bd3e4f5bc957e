# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one login path: every module of the action group runs through the login action plugin."""

from __future__ import annotations

import importlib
import os

import pytest
import yaml

from ansible.errors import AnsibleActionFail

from ansible_collections.dbfleet.innodb.plugins.action import replication_switchover as switchover_action
from ansible_collections.dbfleet.innodb.plugins.plugin_utils import login

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))


def runtime():
    with open(os.path.join(ROOT, 'meta', 'runtime.yml'), encoding='utf-8') as handle:
        return yaml.safe_load(handle)


def action_group():
    return runtime()['action_groups']['innodb']


# Actions that run on the controller only and log in nowhere (they are not in the action group).
CONTROLLER_ACTIONS = ('topology_plan', 'verify_fleet')
# The one login action, the action of module login (plugins/action/login.py); modules with nothing more route to it.
LOGIN_ACTION = 'login'


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
    def __init__(self, args, delegate_to=None, action='dbfleet.innodb.server_facts'):
        super().__init__(delegate_to)
        self.args = args
        self.action = self.resolved_action = action


class IdentityTemplar(FakeTemplar):
    def template(self, value):
        return value


def run_login_action(monkeypatch, task_args, host_vars, action='dbfleet.innodb.server_facts', result=False,
                     plugin_class=login.LoginActionModule, templar_class=IdentityTemplar):
    """The arguments the module gets from the login action plugin (plugin_class) for task_args on a host with host_vars
    (with result: what the action returns)."""
    seen = {}

    def fake_run(self, tmp=None, task_vars=None):
        seen.update(self._task.args)
        return {}

    monkeypatch.setattr(login._NormalActionModule, 'run', fake_run)
    plugin = object.__new__(plugin_class)
    plugin._task = FakeArgsTask(dict(task_args), action=action)
    plugin._templar = templar_class(host_vars)
    returned = plugin.run(task_vars=dict(host_vars))
    return returned if result else seen


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


# ---------------------------------------------------------------- dbfleet_option_file, filled in one place
def test_the_option_file_modules_are_the_modules_that_take_fallback_option_files():
    takes = sorted(name[:-3] for name in os.listdir(os.path.join(ROOT, 'plugins', 'modules')) if name.endswith('.py')
                   and 'fallback_option_files=dict(' in open(os.path.join(ROOT, 'plugins', 'modules', name),
                                                             encoding='utf-8').read())
    assert sorted(login.OPTION_FILE_MODULES) == takes


def test_option_file_rule_one_spelling_for_unset():
    """'' , null and no variable at all are one thing: unset, nothing added (the YAML spellings this replaces
    disagreed on '': `| default('')` gave [], `is defined` gave [''])."""
    for host_vars in ({}, dict(dbfleet_option_file=''), dict(dbfleet_option_file=None)):
        assert login.option_file_args('verify', {}, host_vars) == {}, host_vars
    assert login.option_file_args('verify', {}, dict(dbfleet_option_file='/etc/my.cnf')) == dict(
        fallback_option_files=['/etc/my.cnf'])
    # templated first: a variable that templates to '' is unset too
    template = {'{{ cnf }}': '/srv/db1/my.cnf', '{{ none }}': ''}.get
    assert login.option_file_args('server_facts', {}, dict(dbfleet_option_file='{{ cnf }}'), template) == dict(
        fallback_option_files=['/srv/db1/my.cnf'])
    assert login.option_file_args('server_facts', {}, dict(dbfleet_option_file='{{ none }}'), template) == {}


def test_option_file_the_task_wins_and_other_modules_get_nothing():
    host_vars = dict(dbfleet_option_file='/etc/my.cnf')
    assert login.option_file_args('verify', dict(fallback_option_files=[]), host_vars) == {}
    assert login.option_file_args('verify', dict(fallback_option_files=['/x.cnf']), host_vars) == {}
    assert login.option_file_args('global_variables', {}, host_vars) == {}
    with pytest.raises(ValueError, match='dbfleet_option_file must be the path of one option file'):
        login.option_file_args('verify', {}, dict(dbfleet_option_file=['/a.cnf', '/b.cnf']))


@pytest.mark.parametrize('named', [dict(login_host='db9.example.com'), dict(login_unix_socket='/run/other.sock'),
                                   dict(login_port=3307)])
def test_a_task_naming_another_server_gets_no_option_file_of_this_host(named):
    """The host's option file is its own server's, as its socket is: a task that names the server to log in to
    gets neither."""
    host_vars = dict(dbfleet_option_file='/etc/my.cnf')
    assert login.option_file_args('verify', named, host_vars) == {}
    assert login.option_file_args('verify', dict(login_host=''), host_vars) == dict(fallback_option_files=['/etc/my.cnf'])


def test_the_login_action_fills_the_option_file_for_the_modules_that_take_it(monkeypatch):
    host_vars = dict(INVENTORY_LOGIN, dbfleet_option_file='/srv/db1/my.cnf')
    for action, want in (('dbfleet.innodb.verify', ['/srv/db1/my.cnf']), ('memcached_plugin', ['/srv/db1/my.cnf']),
                         ('dbfleet.innodb.global_variables', None)):
        args = run_login_action(monkeypatch, {}, host_vars, action=action)
        assert args.get('fallback_option_files') == want, action
        assert args['login_user'] == 'admin'
    args = run_login_action(monkeypatch, dict(fallback_option_files=[]), host_vars, action='dbfleet.innodb.verify')
    assert args['fallback_option_files'] == []
    args = run_login_action(monkeypatch, {}, dict(INVENTORY_LOGIN, dbfleet_option_file=''), action='verify')
    assert 'fallback_option_files' not in args


def test_the_login_action_refuses_an_option_file_that_is_not_one_path(monkeypatch):
    result = run_login_action(monkeypatch, {}, dict(INVENTORY_LOGIN, dbfleet_option_file=['/a', '/b']),
                              action='verify', result=True)
    assert result['failed'] is True and 'dbfleet_option_file' in result['msg']


# ---------------------------------------------------------------- replication_switchover step switch: two servers
HOSTVARS = dict(
    db1=dict(ansible_host='10.0.0.11', dbfleet_login_unix_socket='/run/mysqld.sock', dbfleet_login_host='127.0.0.1',
             dbfleet_login_user='admin', dbfleet_login_password='pw1', dbfleet_login_ssl_mode='required'),
    db2=dict(ansible_host='10.0.0.12', dbfleet_login_user='admin', dbfleet_login_password='pw2'))


class CopyingTemplar(IdentityTemplar):
    def copy_with_new_env(self, available_variables):
        return CopyingTemplar(available_variables)


class HostVars(dict):
    def raw_get(self, name):
        return self[name]


def run_switch(monkeypatch, task_args):
    return run_login_action(monkeypatch, task_args, dict(hostvars=HostVars(HOSTVARS)),
                            action='dbfleet.innodb.replication_switchover',
                            plugin_class=switchover_action.ActionModule, templar_class=CopyingTemplar)


def test_switch_reaches_each_server_at_its_address_with_its_own_login(monkeypatch):
    args = run_switch(monkeypatch, dict(step='switch', primary_host='db1', candidate_host='db2'))
    assert args['primary_login'] == dict(login_host='10.0.0.11', login_user='admin', login_password='pw1',
                                         login_ssl_mode='required', config_file=None)
    assert args['candidate_login'] == dict(login_host='10.0.0.12', login_user='admin', login_password='pw2',
                                           config_file=None)


def test_a_login_given_is_kept_and_other_steps_get_none(monkeypatch):
    mine = dict(login_host='10.9.9.9', login_user='x')
    args = run_switch(monkeypatch, dict(step='switch', primary_host='db1', candidate_host='db2', primary_login=mine))
    assert args['primary_login'] == mine and args['candidate_login']['login_host'] == '10.0.0.12'
    args = run_switch(monkeypatch, dict(step='demote'))
    assert 'primary_login' not in args and 'candidate_login' not in args


def test_a_switch_without_an_inventory_host_is_refused(monkeypatch):
    with pytest.raises(AnsibleActionFail, match='switch needs candidate_host, an inventory host \\(got db9\\)'):
        run_switch(monkeypatch, dict(step='switch', primary_host='db1', candidate_host='db9'))
