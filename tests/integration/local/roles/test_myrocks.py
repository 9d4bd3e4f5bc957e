# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Role dbfleet.innodb.myrocks end to end on the lab's MariaDB 11.8 (mariadb118, Debian's
mariadb-plugin-rocksdb in its chroot): check mode predicts, the run loads MyRocks through a restart
and applies its settings, a second run changes nothing, a dynamic setting changes without a restart,
a MyRocks table is an upgrade blocker for MySQL 8.4 and stops myrocks_enabled=false; the role refuses
on MySQL. The test leaves mariadb118 without MyRocks, as it found it."""

from __future__ import annotations

import json
import os
import re

import pytest

from dbfleet_testing.runs import ansible, host_failure, recap
from dbfleet_testing.servers import alias_inventory, engines, host_vars, sql

HOST = 'mariadb118'
DROPIN = '60-dbfleet-myrocks.cnf'
SCHEMA = 'dbfleet_myrocks_test'
PLAY = """
- name: MyRocks
  hosts: "{{ target }}"
  gather_facts: false
  roles:
    - role: dbfleet.innodb.myrocks
"""


def dropin(host=HOST):
    return os.path.join(host_vars(host)['dbfleet_option_dropin_dir'], DROPIN)


def loaded(host=HOST):
    rows = sql(host, "SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'ROCKSDB'")
    return bool(rows) and rows[0]['SUPPORT'] in ('YES', 'DEFAULT')


def play(tmp_path, extra, *flags, host=HOST):
    path = tmp_path / 'myrocks.yml'
    path.write_text(PLAY)
    rc, out = ansible('ansible-playbook', '-i', 'inventories/lab', str(path), '-e',
                      json.dumps(dict(extra, target=host)), *flags)
    recap = re.search(r'%s\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)' % host, out)
    assert recap, out
    return rc, int(recap.group(2)), out


@pytest.fixture()
def without_myrocks(lab, tmp_path):
    """mariadb118 without MyRocks before and after the test."""
    def clean():
        sql(HOST, 'DROP DATABASE IF EXISTS %s' % SCHEMA)
        if os.path.exists(dropin()):
            os.remove(dropin())
        if loaded():
            lab.run('restart', HOST)
        assert not loaded()
    clean()
    yield
    clean()


def test_role_enables_myrocks_end_to_end(without_myrocks, tmp_path):
    wanted = dict(myrocks_enabled=True, myrocks_flush_log_at_trx_commit=2, myrocks_max_background_jobs=4,
                  myrocks_restart='allowed')
    # check mode says what a real run would do, and does nothing
    rc, changed, out = play(tmp_path, wanted, '--check')
    assert rc == 0, out
    assert changed >= 2, out                                     # the drop-in and the restart
    assert 'would restart one server at a time, in this order: %s' % HOST in out
    assert 'for load MyRocks (ha_rocksdb)' in out
    assert not os.path.exists(dropin()) and not loaded()

    rc, changed, out = play(tmp_path, wanted)
    assert rc == 0, out
    assert changed >= 2, out
    assert loaded()
    text = open(dropin()).read()
    assert 'plugin_load_add = ha_rocksdb' in text
    assert 'loose-rocksdb_flush_log_at_trx_commit = 2' in text
    assert sql(HOST, 'SELECT @@rocksdb_flush_log_at_trx_commit AS v, @@rocksdb_max_background_jobs AS j')[0] == \
        dict(v=2, j=4)

    # idempotent
    rc, changed, out = play(tmp_path, wanted)
    assert (rc, changed) == (0, 0), out

    # a dynamic setting changes at runtime, without a restart
    uptime_before = int(sql(HOST, "SHOW GLOBAL STATUS LIKE 'Uptime'")[0]['Value'])
    rc, changed, out = play(tmp_path, dict(wanted, myrocks_flush_log_at_trx_commit=1))
    assert rc == 0 and changed == 2, out                         # the drop-in and the runtime value
    assert 'restart one server at a time' not in out
    assert sql(HOST, 'SELECT @@rocksdb_flush_log_at_trx_commit AS v')[0]['v'] == 1
    assert int(sql(HOST, "SHOW GLOBAL STATUS LIKE 'Uptime'")[0]['Value']) >= uptime_before

    # a MyRocks table: an upgrade blocker for MySQL 8.4, and it stops myrocks_enabled=false
    sql(HOST, 'CREATE DATABASE %s' % SCHEMA)
    sql(HOST, 'CREATE TABLE %s.events (id BIGINT PRIMARY KEY, v VARCHAR(20)) ENGINE=ROCKSDB' % SCHEMA)
    sql(HOST, "INSERT INTO %s.events VALUES (1, 'a'), (2, 'b')" % SCHEMA)
    report = engines(HOST, target_flavor='mysql', target_version='8.4.0', schemas=[SCHEMA])
    assert [(b['table'], b['engine'], b['status']) for b in report['blockers']] == [('events', 'ROCKSDB', 'never')]
    assert 'ENGINE=InnoDB' in report['blockers'][0]['reason']
    rc, changed, out = play(tmp_path, dict(myrocks_enabled=False, myrocks_restart='allowed'))
    assert rc != 0 and 'still has 1 MyRocks table(s)' in out, out
    assert os.path.exists(dropin()) and loaded()

    # without tables it is taken out again by a restart
    sql(HOST, 'DROP DATABASE %s' % SCHEMA)
    rc, changed, out = play(tmp_path, dict(myrocks_enabled=False, myrocks_restart='allowed'))
    assert rc == 0 and changed >= 2, out
    assert not os.path.exists(dropin()) and not loaded()


# issue 23: a value with a line break must not add `init_file=` (SQL run as the server at its next start) to the
# drop-in.
INJECTION = dict(myrocks_enabled=True, myrocks_restart='allowed',
                 myrocks_default_cf_options='compression=kLZ4Compression\ninit_file=/tmp/p.sql')


def refused_injection(rc, changed, out):
    """The one option-file writer refused INJECTION before any task changed anything."""
    assert rc != 0 and changed == 0, out
    assert 'myrocks: invalid input, nothing changed: myrocks_default_cf_options must be on one line' in out, out
    assert not re.search(r'^[+ ]?\s*(loose-)?init_file\s*=', out, re.M), out
    assert not os.path.exists(dropin()) and not loaded()


def test_an_option_file_injection_is_refused_before_anything_is_written(without_myrocks, tmp_path):
    """INJECTION in check mode with --diff (the real run: cases_run's host injection)."""
    refused_injection(*play(tmp_path, INJECTION, '--check', '--diff'))


@pytest.fixture(scope='module')
def cases_run(lab, tmp_path_factory):
    """The cases that need no MyRocks on the server, in one run, each host under a name of its own with the case's
    variables (host variables: servers.alias_inventory): mysql97 asked to enable MyRocks, and mariadb118 as
    bad_method (dbfleet_restart_method reboot, nothing else asked), as misspelt (myrocks_enable) and as injection
    (INJECTION). The recap ({host: counts}) and the output."""
    tmp = tmp_path_factory.mktemp('myrocks-cases')
    path = tmp / 'myrocks.yml'
    path.write_text(PLAY)
    mysql = alias_inventory(tmp / 'mysql.yml', 'mysql97',
                            {'mysql97': dict(myrocks_enabled=True, myrocks_restart='allowed')})
    mariadb = alias_inventory(tmp / 'mariadb.yml', HOST, {'bad_method': dict(dbfleet_restart_method='reboot'),
                                                          'misspelt': dict(myrocks_enable=True),
                                                          'injection': INJECTION})
    _rc, out = ansible('ansible-playbook', '-i', 'inventories/lab', '-i', mysql, '-i', mariadb, str(path), '-e',
                       json.dumps(dict(target='mysql97:bad_method:misspelt:injection')))
    return recap(out), out


def test_role_refuses_on_mysql_before_any_change(cases_run):
    rc, out = cases_run
    assert rc['mysql97']['failed'] == 1 and rc['mysql97']['changed'] == 0, out
    assert ('MyRocks cannot be enabled on mysql97: mysql never shipped the ROCKSDB (MyRocks) engine'
            in host_failure(out, 'mysql97')), out
    assert not os.path.exists(dropin('mysql97'))


def test_a_bad_restart_method_is_refused_even_with_nothing_to_restart(cases_run):
    rc, out = cases_run
    assert rc['bad_method']['failed'] == 1 and rc['bad_method']['changed'] == 0, out
    assert ("dbfleet_restart_method must be one of service, command; got 'reboot'"
            in host_failure(out, 'bad_method')), out


def test_a_misspelt_variable_warns_when_the_role_has_nothing_else_to_do(cases_run):
    rc, out = cases_run
    assert (rc['misspelt']['failed'], rc['misspelt']['changed']) == (0, 0), out
    assert 'myrocks_enable is not a variable of the myrocks role (misspelt?)' in out, out
    assert not os.path.exists(dropin())


def test_an_option_file_injection_is_refused_in_a_real_run(cases_run):
    rc, out = cases_run
    refused_injection(1 if rc['injection']['failed'] else 0, rc['injection']['changed'], host_failure(out, 'injection'))
    assert not re.search(r'^[+ ]?\s*(loose-)?init_file\s*=', out, re.M), out
