# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one login path: every module of the action group logs in with the dbfleet_login_* host
variables, through the collection's action plugin, in ad-hoc calls and playbooks alike.

Runs the ansible / ansible-playbook commands a user runs, against the lab's real servers.
"""

from __future__ import annotations

import json
import os

import pytest

from dbfleet_testing.runs import adhoc_result, ansible
INVENTORY = os.path.join('inventories', 'lab')
# The ad-hoc call of the README. (ansible's key=value parser splits words at spaces, so the JSON
# value is written without one; -a '{"settings": {"innodb_flush_neighbors": 0}}' works as well.)
VERIFY_ADHOC = ['-m', 'dbfleet.innodb.verify', '-a', 'settings={"innodb_flush_neighbors":0}']


@pytest.fixture(scope='module')
def verify_adhoc(lab):
    """(rc, output) of the README's ad-hoc call at -vvv, read by the login test and the password test."""
    del lab
    return ansible('ansible', 'mysql80', '-i', INVENTORY, *VERIFY_ADHOC, '-vvv')


def test_adhoc_verify_logs_in_with_the_inventory_login(lab, verify_adhoc):
    rc, out = verify_adhoc
    assert rc == 0, out
    result = adhoc_result('mysql80', out)
    assert result['server']['port'] == lab.hosts['mysql80']['port']
    assert result['server']['version_text'] == lab.hosts['mysql80']['version']
    actual = lab.query('mysql80', 'SELECT @@GLOBAL.innodb_flush_neighbors AS v')[0]['v']
    flush = result['variables']['innodb_flush_neighbors']
    assert flush['runtime'] == str(actual)
    assert flush['status'] == ('ok' if actual == 0 else 'drift')


def test_adhoc_login_comes_from_the_host_variables_and_task_arguments_win(lab):
    # A wrong dbfleet_login_password (extra vars beat the inventory) makes the login fail ...
    rc, out = ansible('ansible', 'mysql80', '-i', INVENTORY, *VERIFY_ADHOC,
                      '-e', 'dbfleet_login_password=not-the-password')
    assert rc != 0
    assert "cannot connect to %s@socket %s" % (lab.admin_user, lab.hosts['mysql80']['socket']) in out, out
    assert 'Access denied' in out, out
    assert 'not-the-password' not in out
    # ... and the password passed as a task argument wins over the host variable.
    rc, out = ansible('ansible', 'mysql80', '-i', INVENTORY, '-m', 'dbfleet.innodb.server_facts',
                      '-a', json.dumps({'login_password': lab.admin_password}),
                      '-e', 'dbfleet_login_password=not-the-password')
    assert rc == 0, out
    assert adhoc_result('mysql80', out)['server_facts']['port'] == lab.hosts['mysql80']['port']


def test_password_never_in_output_at_vvv(lab, verify_adhoc):
    rc, out = verify_adhoc
    assert rc == 0, out
    assert 'ESTABLISH LOCAL CONNECTION' in out      # at -vvv
    assert 'innodb_flush_neighbors' in out
    assert lab.admin_password not in out
    # A failing login (a wrong user from the task) shows no password either.
    rc, out = ansible('ansible', 'mysql80', '-i', INVENTORY, '-m', 'dbfleet.innodb.server_facts',
                      '-a', 'login_user=nobody_here', '-vvv')
    assert rc != 0 and 'nobody_here' in out, out
    assert lab.admin_password not in out


PLAYBOOK = """
- name: Each lab server, from one host, through delegate_to
  hosts: mysql80
  gather_facts: false
  tasks:
    - name: Check the login of every lab server, delegated to it
      dbfleet.innodb.login:
      delegate_to: "{{ item }}"
      loop: "{{ groups['lab'] }}"
      register: __delegated

    - name: Check a TCP login with the server verified against the lab's CA
      dbfleet.innodb.login:
        login_host: 127.0.0.1
        login_port: "{{ dbfleet_login_port }}"
        login_ssl_mode: verify_ca
        ca_cert: "{{ dbfleet_lab_tls_ca }}"
      register: __tls

    - name: module_defaults win over the host variables (server_facts, routed to the login action)
      dbfleet.innodb.server_facts:
      module_defaults:
        group/dbfleet.innodb.innodb:
          login_unix_socket: "{{ hostvars['mariadb1011'].dbfleet_login_unix_socket }}"
      register: __defaults

    - name: Keep what each login reached
      ansible.builtin.copy:
        content: >-
          {{ {'delegated': __delegated.results | map(attribute='item') | zip(__delegated.results
               | map(attribute='login')) | list,
              'tls': __tls.login, 'tls_changed': __tls.changed,
              'defaults': __defaults.server_facts.port} | to_json }}
        dest: "{{ out }}"
        mode: "0644"
      delegate_to: localhost
"""


@pytest.fixture(scope="module")
def login_play(lab, tmp_path_factory):
    """One -vvv run of PLAYBOOK: (its output, what each login reached)."""
    book = tmp_path_factory.mktemp("login") / 'play.yml'
    book.write_text(PLAYBOOK)
    out_file = book.parent / 'out.json'
    rc, out = ansible('ansible-playbook', '-i', INVENTORY, str(book), '-e', 'out=%s' % out_file, '-vvv')
    assert rc == 0, out
    return out, json.loads(out_file.read_text())


def test_delegate_to_logs_in_to_the_delegated_host_and_module_defaults_win(lab, login_play):
    _out, seen = login_play
    lab_hosts = sorted(name for name in lab.up_hosts())
    assert sorted(host for host, _login in seen['delegated']) == lab_hosts
    for host, login in seen['delegated']:
        assert (login['transport'], login['socket']) == ('socket', lab.hosts[host]['socket']), (host, login)
    assert seen['defaults'] == lab.hosts['mariadb1011']['port']


def test_login_reports_the_server_and_the_account_it_reached(lab, login_play):
    """Every lab server, over its socket from the inventory: the server, the account the server matched and its
    plugin (from mysql.user, read here over the lab's own connection), no TLS on a socket."""
    for host, login in login_play[1]['delegated']:
        row = lab.hosts[host]
        assert (login['flavor'], login['version_string']) == (row['expected_flavor'], row['version']), host
        assert login['current_user'] == login['user'] == '%s@localhost' % lab.admin_user, (host, login)
        plugin = lab.query(host, "SELECT plugin FROM mysql.user WHERE user = %s AND host = 'localhost'",
                           (lab.admin_user,))[0]['plugin']
        # The handshake ended with the account's plugin (on MySQL 8.0 after the switch from the greeting's).
        assert login['account_plugin'] == login['auth_plugin'] == plugin, (host, login)
        assert login['tls'] == dict(in_use=False, version=None, cipher=None, mode='socket', verified=False), host
        assert login['peer']['trusted'] is True and login['notes'] == [], (host, login)


def test_login_over_tcp_reports_the_tls_session_and_the_verified_server(lab, login_play):
    tls = login_play[1]['tls']
    assert login_play[1]['tls_changed'] is False
    reached = (tls['transport'], tls['host'], tls['port'], tls['socket'])
    assert reached == ('tcp', '127.0.0.1', lab.hosts['mysql80']['port'], None), tls
    assert tls['current_user'] == '%s@127.0.0.1' % lab.admin_user
    assert tls['tls']['version'] in ('TLSv1.2', 'TLSv1.3') and tls['tls']['cipher'], tls
    assert (tls['tls']['in_use'], tls['tls']['mode'], tls['tls']['verified']) == (True, 'verify_ca', True), tls


def test_no_credential_in_the_output_at_vvv(lab, login_play):
    """Neither the password nor the account's stored hash (what SHOW CREATE USER would carry) is in the -vvv output."""
    out = login_play[0]
    assert 'account_plugin' in out and 'current_user' in out, 'the -vvv output shows the results'
    assert lab.admin_password not in out
    hashes = [r['authentication_string'] for host in lab.up_hosts() for r in lab.query(
        host, "SELECT authentication_string FROM mysql.user WHERE user = %s AND plugin = 'mysql_native_password'",
        (lab.admin_user,))]
    printable = [h for h in hashes if isinstance(h, str) and h.isprintable() and len(h) > 8]
    assert printable, hashes
    for stored in printable:
        assert stored not in out
