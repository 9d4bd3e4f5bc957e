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
    - name: Read every lab server, delegated to it
      dbfleet.innodb.server_facts:
      delegate_to: "{{ item }}"
      loop: "{{ groups['lab'] }}"
      register: __delegated

    - name: module_defaults win over the host variables
      dbfleet.innodb.server_facts:
      module_defaults:
        group/dbfleet.innodb.innodb:
          login_unix_socket: "{{ hostvars['mariadb1011'].dbfleet_login_unix_socket }}"
      register: __defaults

    - name: Keep what each login reached
      ansible.builtin.copy:
        content: >-
          {{ {'delegated': __delegated.results | map(attribute='item') | zip(__delegated.results
               | map(attribute='server_facts') | map(attribute='port')) | list,
              'defaults': __defaults.server_facts.port} | to_json }}
        dest: "{{ out }}"
        mode: "0644"
      delegate_to: localhost
"""


def test_delegate_to_logs_in_to_the_delegated_host_and_module_defaults_win(lab, tmp_path):
    book = tmp_path / 'play.yml'
    book.write_text(PLAYBOOK)
    out_file = tmp_path / 'out.json'
    rc, out = ansible('ansible-playbook', '-i', INVENTORY, str(book), '-e', 'out=%s' % out_file, '-vvv')
    assert rc == 0, out
    assert lab.admin_password not in out
    seen = json.loads(out_file.read_text())
    lab_hosts = sorted(name for name in lab.up_hosts())
    assert sorted(host for host, _port in seen['delegated']) == lab_hosts
    for host, port in seen['delegated']:
        assert port == lab.hosts[host]['port'], (host, port)
    assert seen['defaults'] == lab.hosts['mariadb1011']['port']
