"""The pure parts of lab/dbfleet_lab/serverload.py, the benchmarks' connection and server-CPU helper."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'lab'))

from dbfleet_lab import serverload  # noqa: E402  pylint: disable=wrong-import-position


def test_login_from_host_vars_prefers_the_socket():
    hv = dict(dbfleet_login_user='dbfleet', dbfleet_login_password='pw', dbfleet_login_unix_socket='/s.sock',
              dbfleet_login_host='127.0.0.1', dbfleet_login_port=39780)
    assert serverload.login_kwargs(hv) == dict(user='dbfleet', password='pw', unix_socket='/s.sock')


def test_login_from_module_params_over_tcp():
    params = dict(login_user='root', login_password=None, login_unix_socket=None, login_host='10.0.0.5',
                  login_port='3307', config_file='')
    assert serverload.login_kwargs(params) == dict(user='root', password='', host='10.0.0.5', port=3307)


def test_login_without_socket_or_host_names_the_input():
    with pytest.raises(ValueError, match='dbfleet_login_unix_socket'):
        serverload.login_kwargs(dict(dbfleet_login_user='u'))
    with pytest.raises(ValueError, match='dbfleet_login_user'):
        serverload.login_kwargs(dict(dbfleet_login_host='h'))


def test_stat_ticks_count_fields_after_the_last_parenthesis():
    # A command name with a space and a ')' must not shift the fields: utime=1234, stime=56.
    line = '4242 (my sqld) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 56 0 0 20 0 37 0 100 0 0'
    assert serverload.stat_cpu_split(line) == (1234, 56)
    assert serverload.stat_cpu_ticks(line) == 1290


def test_pid_file_relative_to_the_datadir():
    assert serverload.pid_file_path('mysqld.pid', '/data/') == '/data/mysqld.pid'
    assert serverload.pid_file_path('/run/mysqld.pid', '/data/') == '/run/mysqld.pid'


def test_cpu_meter_reads_this_process():
    meter = serverload.CpuMeter(os.getpid())
    with meter:
        sum(i * i for i in range(200000))
    assert meter.seconds >= 0
    user, system = serverload.cpu_times(os.getpid())
    assert user > 0 and system >= 0
    assert serverload.cpu_seconds(os.getpid()) >= user


def test_sysbench_options_over_tcp_or_socket(tmp_path):
    hv = dict(dbfleet_login_user='dbfleet', dbfleet_login_password='pw', dbfleet_login_unix_socket='/s.sock',
              dbfleet_login_host='127.0.0.1', dbfleet_login_port=39780)
    assert serverload.sysbench_login_options(hv, 'db') == [
        'db-driver=mysql', 'mysql-user=dbfleet', 'mysql-password=pw', 'mysql-db=db', 'mysql-socket=/s.sock']
    path = serverload.write_sysbench_config(str(tmp_path / 'sb.cfg'), hv, 'db', tcp=True)
    assert open(path).read().splitlines()[-2:] == ['mysql-host=127.0.0.1', 'mysql-port=39780']
    assert os.stat(path).st_mode & 0o077 == 0


def test_alternating_cpu_reverses_the_order_every_other_round():
    ran = []
    cpu = serverload.alternating_cpu(3, dict(a=lambda: ran.append('a'), b=lambda: ran.append('b')))
    assert ran == ['a', 'b', 'b', 'a', 'a', 'b']
    assert set(cpu) == {'a', 'b'} and all(seconds >= 0 for seconds in cpu.values())


def test_tcp_logins_from_the_lab_inventory(tmp_path):
    inventory = tmp_path / 'hosts.yml'
    inventory.write_text('all:\n  hosts:\n    mysql80: {dbfleet_login_user: dbfleet, dbfleet_login_password: pw, '
                         'dbfleet_login_port: 34680, dbfleet_login_unix_socket: /x.sock}\n'
                         '    other: {ansible_host: 10.0.0.1}\n')
    assert serverload.tcp_logins(str(inventory)) == dict(mysql80=dict(
        login_user='dbfleet', login_password='pw', login_host='127.0.0.1', login_port=34680, config_file=None))
    with pytest.raises(SystemExit, match='make lab-up'):
        serverload.tcp_logins(str(inventory), names=('mariadb1011',))
    with pytest.raises(SystemExit, match='make lab-up'):
        serverload.tcp_logins(str(tmp_path / 'none.yml'))
