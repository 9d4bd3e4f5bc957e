"""playbooks/drop_tables.yml on the SSH fleet (db1 -> db2): a replicated drop reaches the replica and puts AHI back as it
was (the local lab's tests are local/playbooks/test_drop_tables.py)."""
import time

import pytest

from dbfleet_testing.runs import YAML_RESULTS, playbook_proc
from dbfleet_testing.windows import window_around_now


# ------------------------------------------------------------------ the SSH fleet (the `fleet` fixture brings it up)
@pytest.mark.fleet
def test_fleet_replicated_drop_reaches_the_replica_and_restores_ahi(fleet):
    assert all(row['state'] == 'up' for row in fleet.refresh().values()), fleet.hosts
    primary, replica = fleet.connect('db1', via='socket'), fleet.connect('db2', via='socket')
    cur_p, cur_r = primary.cursor(), replica.cursor()
    cur_r.execute('SELECT @@GLOBAL.innodb_adaptive_hash_index')
    ahi_before = cur_r.fetchone()[0]
    schema = 'dbfleet_test_drop_fleet_it'
    cur_p.execute('DROP DATABASE IF EXISTS %s' % schema)
    cur_p.execute('CREATE DATABASE %s' % schema)
    cur_p.execute('CREATE TABLE %s.t1 (id INT PRIMARY KEY) ENGINE=InnoDB' % schema)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        cur_r.execute("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s", (schema,))
        if cur_r.fetchone()[0] == 1:
            break
        time.sleep(0.5)
    proc = playbook_proc(fleet.inventory, 'drop_tables.yml', dict(
        drop_tables_tables=['%s.t1' % schema], drop_tables_window=window_around_now(True), drop_tables_confirm=True, drop_tables_hosts='db1:db2',
        drop_tables_ahi_strategy='toggle'), env_extra=YAML_RESULTS)
    try:
        assert proc.returncode == 0, proc.stdout[-3000:]
        cur_r.execute("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = 't1'",
                      (schema,))
        assert cur_r.fetchone()[0] == 0
        cur_r.execute('SELECT @@GLOBAL.innodb_adaptive_hash_index')
        assert cur_r.fetchone()[0] == ahi_before
        assert 'outcome: applied' in proc.stdout or "outcome: 'applied'" in proc.stdout
    finally:
        cur_p.execute('DROP DATABASE IF EXISTS %s' % schema)
