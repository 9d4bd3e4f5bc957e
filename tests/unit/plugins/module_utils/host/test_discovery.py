# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""discovery: the socket, drop-in directory and unit of a packaged server, found on the host."""

from __future__ import annotations

import socket

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.login.client_files import resolve_login
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import discovery
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import os_facts

DEBIAN = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n'
ROCKY = 'NAME="Rocky Linux"\nID="rocky"\nID_LIKE="rhel centos fedora"\n'
UBUNTU = 'ID=ubuntu\nID_LIKE=debian\n'
ALPINE = 'ID=alpine\n'
# Debian 12's mariadb-server layout (/etc/mysql/my.cnf -> conf.d/, mariadb.conf.d/).
DEBIAN_MY_CNF = ("[client-server]\nsocket = /run/mysqld/mysqld.sock\n\n"
                 "!includedir /etc/mysql/conf.d/\n!includedir /etc/mysql/mariadb.conf.d/\n")


def listening(path):
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    return server


def test_socket_from_the_system_option_files_last_one_wins(tmp_path):
    sock = tmp_path / 'mysqld.sock'
    server = listening(sock)
    try:
        first = tmp_path / 'my.cnf'
        first.write_text('[client]\nsocket = /nowhere/first.sock\n')
        second = tmp_path / 'mysql-my.cnf'
        second.write_text('[client-server]\nsocket = %s\n' % sock)
        found = discovery.local_socket(DEBIAN, files=(str(first), str(second)))
    finally:
        server.close()
    assert found == dict(path=str(sock), source='socket of the client groups in %s' % second)


def test_socket_of_the_os_family_packages_when_no_file_names_one(tmp_path):
    existing = {'/var/lib/mysql/mysql.sock'}
    found = discovery.local_socket(ROCKY, files=(str(tmp_path / 'absent.cnf'),), check=existing.__contains__)
    assert found['path'] == '/var/lib/mysql/mysql.sock'
    assert 'redhat packages' in found['source']
    # The Debian place is tried first on Debian, but a RHEL-style socket is still found.
    found = discovery.local_socket(DEBIAN, files=(), check=existing.__contains__)
    assert found['path'] == '/var/lib/mysql/mysql.sock'
    assert "other OS families'" in found['source']


def test_no_socket_names_the_variable(tmp_path):
    cnf = tmp_path / 'my.cnf'
    cnf.write_text('[client]\nsocket = /nowhere/x.sock\n')
    found = discovery.local_socket(DEBIAN, files=(str(cnf),), check=lambda path: False)
    assert found['path'] is None
    assert found['source'].startswith('no server socket at /nowhere/x.sock, /run/mysqld/mysqld.sock')
    assert 'set dbfleet_login_unix_socket' in found['source']


def test_a_file_the_client_refuses_is_skipped(tmp_path):
    bad = tmp_path / 'bad.cnf'
    bad.write_text('[client]\n!unknown directive\n')
    assert discovery.client_socket((str(bad),)) == (None, None)


def test_dropin_dir_is_the_last_includedir(tmp_path):
    etc = tmp_path / 'etc' / 'mysql'
    for name in ('conf.d', 'mariadb.conf.d'):
        (etc / name).mkdir(parents=True)
    (etc / 'mariadb.conf.d' / '50-server.cnf').write_text('[mysqld]\nbind-address = 127.0.0.1\n')
    main = etc / 'my.cnf'
    main.write_text(DEBIAN_MY_CNF.replace('/etc/mysql', str(etc)))
    parsed = optionfiles.read_option_files([str(main)], ['mysqld', 'server', 'mariadb'])
    found = discovery.dropin_dir(parsed)
    assert found['path'] == str(etc / 'mariadb.conf.d')
    assert str(main) in found['source']


def test_dropin_dir_unknown_names_the_variable(tmp_path):
    main = tmp_path / 'my.cnf'
    main.write_text('[mysqld]\ndatadir = /var/lib/mysql\n')
    found = discovery.dropin_dir(optionfiles.read_option_files([str(main)], ['mysqld']))
    assert found['path'] is None
    assert 'include no directory' in found['source'] and 'dbfleet_option_dropin_dir' in found['source']


def test_unit_of_process_from_cgroup(tmp_path):
    proc = tmp_path / 'proc'
    (proc / '74').mkdir(parents=True)
    # cgroup v1 hybrid, as systemd-nspawn machines on this lab's machine have it
    (proc / '74' / 'cgroup').write_text('12:memory:/\n1:name=systemd:/system.slice/mariadb.service\n0::/\n')
    (proc / '80').mkdir()
    (proc / '80' / 'cgroup').write_text('0::/system.slice/ci-runner.service\n')
    assert discovery.unit_of_process(74, str(proc)) == dict(name='mariadb', source='%s/74/cgroup' % proc)
    other = discovery.unit_of_process(80, str(proc))
    assert other['name'] is None and 'dbfleet_service_name' in other['source']
    missing = discovery.unit_of_process(99, str(proc))
    assert missing['name'] is None and 'cannot read' in missing['source']


def test_login_without_a_named_server_uses_the_discovered_socket(monkeypatch):
    monkeypatch.setattr(discovery, 'local_socket', lambda: dict(path='/run/mysqld/mysqld.sock', source='found'))
    login = resolve_login({'config_file': None})
    assert login['unix_socket'] == '/run/mysqld/mysqld.sock' and login['socket_source'] == 'found'
    # A named host or port is never replaced by a socket.
    assert resolve_login({'login_host': '10.0.0.5'})['unix_socket'] is None
    assert resolve_login({'login_port': 3307})['unix_socket'] is None


def test_login_falls_back_to_tcp_when_no_socket_is_found(monkeypatch):
    monkeypatch.setattr(discovery, 'local_socket', lambda: dict(path=None, source='none'))
    login = resolve_login({})
    assert login['unix_socket'] is None and (login['host'], login['port']) == ('localhost', 3306)


# ---------------------------------------------------------------- the service a restart uses
@pytest.mark.parametrize('flavor, text, name', [
    ('mysql', DEBIAN, 'mysql'), ('percona', UBUNTU, 'mysql'), ('mariadb', DEBIAN, 'mariadb'),
    ('mysql', ROCKY, 'mysqld'), ('percona', ROCKY, 'mysqld'), ('mariadb', ROCKY, 'mariadb'),
])
def test_service_name_by_os_family_and_flavor(flavor, text, name):
    got = discovery.service_name(flavor, os_facts.family(text))
    assert got['name'] == name and flavor in got['source']


def test_the_running_unit_wins_over_the_os_family():
    cgroup = '0::/system.slice/mysql-replica2.service\n'
    got = discovery.service_name('mysql', 'redhat', cgroup)
    assert got == dict(name='mysql-replica2', source='the systemd unit running the server')


def test_no_unit_and_no_known_family_names_nothing():
    got = discovery.service_name('mysql', os_facts.family(ALPINE), '0::/user.slice/session-3.scope\n')
    assert got['name'] is None and 'not recognised' in got['source']
    assert discovery.service_name('aurora-mysql', 'debian')['name'] is None


def test_a_server_started_under_another_service_does_not_name_that_service():
    got = discovery.service_name('mariadb', 'debian', '0::/system.slice/gitlab-runner.service\n')
    assert got == dict(name='mariadb', source='the debian packages of mariadb')
    assert discovery.unit_of_cgroup('0::/system.slice/system-mariadb.slice/mariadb@db2.service\n') == 'mariadb@db2'
