# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The password rules with the distribution's PyMySQL: a module run on pkg1 (Debian 12, python3-pymysql 1.0.2),
through its inventory login, against the fake servers of test_tls.py on the lab's network.

PyMySQL 1.0.2 uses no TLS at all unless given TLS options (docs/security.md): the ways that need TLS from the
client still reach the fake servers in plain text, and none of them may learn the password.
Runs with the SSH fleet's booted hosts (fixture booted_machines boots them when they are down).
"""
from __future__ import annotations

import json

import pytest
import yaml
from dbfleet_testing.lab import default_lab_dir, lab_py
from dbfleet_testing.runs import ansible
from dbfleet_testing.tls import MARKER, WAYS, AuthServer, adhoc_results, assert_refused, lab_network_address, self_signed


def booted_pkg1():
    """(inventory vars of pkg1, the booted inventory's top-level vars) or fail saying how to start it."""
    status = json.loads(lab_py('--mode', 'ssh', '--lab-dir', default_lab_dir(), 'status', '--json').stdout)
    rows = dict((r['host'], r) for r in status['hosts'])
    if rows.get('pkg1', {}).get('state') != 'up':
        pytest.fail('pkg1 is not up: start it with `DBFLEET_FLEET_NET=<N> python lab/lab.py --mode ssh up pkg1`',
                    pytrace=False)
    with open(status['booted_inventory'], encoding='utf-8') as handle:
        inventory = yaml.safe_load(handle)['all']
    return inventory['children']['mariadb']['hosts']['pkg1'], inventory['vars']


def test_no_way_of_asking_gets_the_password_from_the_distributions_pymysql(booted_machines, tmp_path):  # pylint: disable=unused-argument
    pkg1, top = booted_pkg1()
    address = lab_network_address()
    servers = dict((way, AuthServer(way, address, self_signed(str(tmp_path)))) for way in WAYS)
    try:
        hosts = {}
        for way, server in servers.items():
            for chosen in ('default', 'preferred'):
                entry = dict(ansible_host=pkg1['ansible_host'], dbfleet_login_host=server.address,
                             dbfleet_login_port=server.port, dbfleet_login_user='dbfleet',
                             dbfleet_login_password=MARKER, dbfleet_config_file='')
                if chosen == 'preferred':
                    entry['dbfleet_login_ssl_mode'] = 'preferred'
                hosts['%s_%s' % (way, chosen)] = entry
        inventory = tmp_path / 'pkg1-fake.yml'
        inventory.write_text(json.dumps({'all': {'vars': top, 'hosts': hosts}}))
        _rc, version = ansible('ansible', 'sha256_greeting_default', '-i', str(inventory), '-m', 'ansible.builtin.command',
                               '-a', '/usr/bin/python3 -c "import pymysql; print(pymysql.__version__)"', timeout=600)
        assert '1.0.2' in version, version
        _rc, out = ansible('ansible', 'all', '-i', str(inventory), '-m', 'dbfleet.innodb.server_facts', timeout=600)
        assert MARKER not in out
        results = adhoc_results(out, hosts)
        for host in hosts:
            assert '%s | FAILED' % host in out, (host, results.get(host), out[-3000:])
            assert_refused(servers[host.rsplit('_', 1)[0]], results[host]['msg'], host)
    finally:
        for server in servers.values():
            server.close()
