# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The memcached role's desired state (module_utils/roles/memcached.py): the daemon option and the drop-in, what it
refuses, bad input named, and each step on its own."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import inputs as role_input
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import memcached as mcr

from test_desired import CONTAINER, error_of, facts, mc


def test_memcached_daemon_option_and_option_file():
    out = mcr.memcached(mc(memcached_port=33211, memcached_daemon_extra_options=' -c 512 ',
                           memcached_r_batch_size=5, memcached_api_enable_binlog=True,
                           memcached_api_trx_level=1), facts(runs_as_root=True))
    assert out['daemon_option'] == '-p33211 -l 127.0.0.1 -u root -c 512'
    assert out['static_settings'] == {'daemon_memcached_option': out['daemon_option'],
                                      'daemon_memcached_r_batch_size': 5, 'innodb_api_enable_binlog': True}
    assert out['settings'] == dict(out['static_settings'], innodb_api_trx_level=1)
    assert out['runtime'] == {'innodb_api_trx_level': 1}
    assert out['option_file'] == [
        dict(name='loose-daemon_memcached_option', value='"-p33211 -l 127.0.0.1 -u root -c 512"'),
        dict(name='loose-daemon_memcached_r_batch_size', value='5'),
        dict(name='loose-innodb_api_enable_binlog', value='ON'),
        dict(name='loose-innodb_api_trx_level', value='1')]


def test_memcached_unknown_root_adds_user_root_and_unsupported_has_no_settings():
    assert '-u root' in mcr.memcached(mc(), facts(runs_as_root=None))['daemon_option']
    assert '-u root' not in mcr.memcached(mc(), facts(runs_as_root=False))['daemon_option']
    out = mcr.memcached(mc(), facts('mariadb', (10, 11, 6)))
    assert out['supported'] is False and out['settings'] == {} and 'MariaDB' in out['reason']


@pytest.mark.parametrize('variables,message', [
    (mc(memcached_daemon_extra_options='-c 10\ninnodb_buffer_pool_size = 1'),
     'memcached_daemon_extra_options must be on one line'),
    (mc(memcached_daemon_extra_options='-c "10'), 'memcached_daemon_extra_options has an unbalanced " quote'),
    (mc(memcached_daemon_extra_options="-o 'x"), "memcached_daemon_extra_options has an unbalanced ' quote"),
    (mc(memcached_daemon_extra_options='-c 10 # x'), 'memcached_daemon_extra_options may hold only'),
    (mc(memcached_daemon_extra_options='-p 1'), 'must not set -p, -l or -u'),
    # The plugin's own parser: a clustered or attached -l is still -l (the old check looked at the first letter).
    (mc(memcached_daemon_extra_options='-vl 0.0.0.0'), 'must not set -p, -l or -u'),
    (mc(memcached_daemon_extra_options='-c 512 -l0.0.0.0'), 'must not set -p, -l or -u'),
    (mc(memcached_daemon_extra_options='-Mu mysql'), 'found -u'),
    (mc(memcached_daemon_extra_options='-vh'), '-h prints the help and calls exit()'),
    (mc(memcached_daemon_extra_options='-X /tmp/x.so'), '-X loads an extension library'),
    (mc(memcached_port=0), 'memcached_port must be 1-65535; got 0'),
    (mc(memcached_port='ten'), "memcached_port must be a whole number; got 'ten'"),
    (mc(memcached_bind_address='0.0.0.0'), 'memcached_bind_address 0.0.0.0 is beyond loopback'),
    (mc(memcached_bind_address='127.0.0.1\n[mysqld]'), 'memcached_bind_address must be one address without spaces'),
    (mc(memcached_r_batch_size=0), 'memcached_r_batch_size must be 1-1073741824 on MySQL 8.0; got 0'),
    (mc(memcached_w_batch_size=2000000), 'memcached_w_batch_size must be 1-1048576 on MySQL 8.0; got 2000000'),
    (mc(memcached_api_trx_level=4), 'memcached_api_trx_level must be 0-3 on MySQL 8.0; got 4'),
    (mc(memcached_probe_timeout=-1), 'memcached_probe_timeout must be 1 or more; got -1'),
    (mc(memcached_probe_expected='k=v'), "memcached_probe_expected must be a map; got 'k=v'"),
    (mc(memcached_write_policy='sometimes'), 'memcached_write_policy must be one of'),
    (mc(memcached_containers=[CONTAINER, CONTAINER]), 'duplicate container names: token'),
    (mc(memcached_containers='token'), "memcached_containers must be a list of maps; got 'token'"),
])
def test_memcached_bad_input(variables, message):
    assert message in error_of(mcr.memcached, variables, facts())


def test_memcached_without_containers_is_audited_but_not_installed():
    out = mcr.memcached({}, facts())
    assert out['settings']['daemon_memcached_option'] == '-p11211 -l 127.0.0.1'
    assert 'at least one container is needed' in out['refusals'][0]
    assert mcr.memcached(dict(memcached_state='absent'), facts())['refusals'] == []


def test_memcached_remote_bind_with_opt_in():
    out = mcr.memcached(mc(memcached_bind_address='10.0.0.5', memcached_allow_remote=True), facts())
    assert '-l 10.0.0.5' in out['daemon_option']
    assert mcr.memcached(dict(memcached_state='absent'), facts())['settings'] == {}


# ---------------------------------------------------------------- the steps of memcached(), each on its own
def checker(**variables):
    return role_input.Checker(variables, desired.INPUTS['memcached'], facts())


def test_extra_options_are_one_line_of_plain_options_the_role_does_not_set():
    assert mcr.extra_options(checker()) == ''
    assert mcr.extra_options(checker(memcached_daemon_extra_options=' -c 512 ')) == '-c 512'
    check = checker(memcached_daemon_extra_options='-c 64 -vl 0.0.0.0')
    assert mcr.extra_options(check) is None and 'must not set -p, -l or -u' in check.errors[0]


def test_read_inputs_keeps_the_bind_address_on_loopback_and_the_ranges_of_this_server():
    check = checker(memcached_port=33211, memcached_r_batch_size=7, memcached_api_trx_level=1)
    inputs = mcr.read_inputs(check, facts())
    assert check.errors == []
    assert (inputs['state'], inputs['port'], inputs['bind'], inputs['extra']) == ('present', 33211, '127.0.0.1', '')
    assert inputs['batch'] == dict(daemon_memcached_r_batch_size=7, daemon_memcached_w_batch_size=None)
    assert (inputs['binlog'], inputs['mdl'], inputs['trx_level']) == (None, None, 1)
    check = checker(memcached_bind_address='10.0.0.5')
    mcr.read_inputs(check, facts())
    assert any('memcached_bind_address 10.0.0.5 is beyond loopback' in e for e in check.errors), check.errors


def test_container_refusals_need_one_container_to_install_and_no_name_twice():
    assert mcr.container_refusals(checker(), 'present') == [
        'memcached_containers: at least one container is needed (the plugin serves nothing without one)']
    assert mcr.container_refusals(checker(), 'absent') == []
    check = checker(memcached_containers=[CONTAINER, CONTAINER])
    assert mcr.container_refusals(check, 'present') == [] and check.errors == ['duplicate container names: token']


def test_server_settings_and_dropin_lines_say_only_what_is_given():
    inputs = dict(batch=dict(daemon_memcached_r_batch_size=7, daemon_memcached_w_batch_size=None), binlog=True,
                  mdl=None, trx_level=1)
    static, dynamic = mcr.server_settings(inputs, '-p11211 -l 127.0.0.1')
    assert static == dict(daemon_memcached_option='-p11211 -l 127.0.0.1', daemon_memcached_r_batch_size=7,
                          innodb_api_enable_binlog=True)
    assert dynamic == dict(innodb_api_trx_level=1)
    assert mcr.dropin_lines(inputs, '-p11211 -l 127.0.0.1') == [
        ('loose-daemon_memcached_option', '-p11211 -l 127.0.0.1', 'text'),
        ('loose-daemon_memcached_r_batch_size', 7, 'int'), ('loose-innodb_api_enable_binlog', True, 'bool'),
        ('loose-innodb_api_trx_level', 1, 'int')]
