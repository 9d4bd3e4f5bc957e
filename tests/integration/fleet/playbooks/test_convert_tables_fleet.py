"""playbooks/convert_tables.yml on the SSH fleet: a whole topology converted on its primaries, the replicas verified
(the local lab's tests are local/playbooks/test_convert_tables.py)."""
from __future__ import annotations

import re
import time

import yaml

from dbfleet_testing.conversions import SCHEMA, content, engine, playbook


# ------------------------------------------------------------------ SSH fleet: whole topologies
def _wait(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, 'gave up waiting for: %s' % what
        time.sleep(0.3)


def _gtid(fleet, host):
    row = fleet.query(host, 'SELECT @@GLOBAL.version AS v', tries=20)[0]
    if 'MariaDB' in row['v']:
        var = 'gtid_slave_pos' if host in ('db2', 'db4') else 'gtid_binlog_pos'
    else:
        var = 'gtid_executed'
    return ''.join(str(fleet.query(host, 'SELECT @@GLOBAL.%s AS g' % var, tries=20)[0]['g']).split())


def test_fleet_whole_topology_converted_on_primaries_replicas_verified(fleet, tmp_path):
    assert all(row['state'] == 'up' for row in fleet.refresh().values()), fleet.hosts
    pairs = (('db1', 'db2'), ('db3', 'db4'))
    for primary, replica in pairs:
        fleet.query(primary, 'DROP DATABASE IF EXISTS %s' % SCHEMA)
        fleet.query(primary, 'CREATE DATABASE %s' % SCHEMA)
        fleet.query(primary, 'CREATE TABLE %s.m (id INT PRIMARY KEY, v VARCHAR(40), n INT NULL) ENGINE=MyISAM' % SCHEMA)
        fleet.query(primary, 'INSERT INTO %s.m VALUES %s' % (SCHEMA, ', '.join(
            "(%d, 'v%d', %s)" % (i, i, 'NULL' if i % 5 == 0 else i) for i in range(1, 801))))
        _wait(lambda r=replica: engine(fleet, r, 'm') == 'MyISAM', 30, 'the table on %s' % replica)
    tables = ['%s.m' % SCHEMA]
    hosts = 'db1:db2:db3:db4'
    try:
        rc, out = playbook(fleet.inventory, convert_tables_hosts=hosts, convert_tables_tables=tables)
        assert rc != 0 and 'db2 is a replica of db1' in out and 'db4 is a replica of db3' in out, out[-3000:]
        assert 'convert_tables_whole_topology=true' in out
        # an inventory that calls the replica db2 a primary: the servers say otherwise, nothing changes
        data = yaml.safe_load(open(fleet.inventory, encoding='utf-8'))
        data['all']['children']['mysql']['hosts']['db2']['dbfleet_replication_role'] = 'primary'
        wrong = tmp_path / 'wrong.yml'
        wrong.write_text(yaml.safe_dump(data, sort_keys=False))
        rc, out = playbook(str(wrong), convert_tables_hosts=hosts, convert_tables_tables=tables,
                           convert_tables_whole_topology=True)
        assert rc != 0 and 'stopped before any change' in out, out[-3000:]
        assert 'db2: the inventory says primary (dbfleet_replication_role), replica: the server replicates from db1' in out
        assert all(engine(fleet, h, 'm') == 'MyISAM' for h in ('db1', 'db2', 'db3', 'db4'))

        rc, out = playbook(fleet.inventory, convert_tables_hosts=hosts, convert_tables_tables=tables,
                           convert_tables_whole_topology=True)
        assert rc == 0, out[-4000:]
        assert out.count('result: converted') == 2
        assert 'verified_here: - %s.m' % SCHEMA in out
        for primary, replica in pairs:
            assert engine(fleet, primary, 'm') == 'InnoDB' and engine(fleet, replica, 'm') == 'InnoDB'
            want = content(fleet, primary, 'm', ['id', 'v', 'n'])
            assert want['rows'] == 800 and content(fleet, replica, 'm', ['id', 'v', 'n']) == want
            _wait(lambda p=primary, r=replica: _gtid(fleet, p) == _gtid(fleet, r), 30,
                  'GTID position of %s equal to %s' % (replica, primary))
            status = fleet.query(replica, 'SHOW ALL SLAVES STATUS' if replica == 'db4' else 'SHOW REPLICA STATUS')[0]
            running = [status.get(k) for k in ('Slave_IO_Running', 'Slave_SQL_Running', 'Replica_IO_Running',
                                               'Replica_SQL_Running') if k in status]
            assert running == ['Yes', 'Yes'], status
        assert re.search(r'db1\s*: ok=\d+\s+changed=[1-9]', out) and re.search(r'db2\s*: ok=\d+\s+changed=0', out)
    finally:
        for primary, _replica in pairs:
            fleet.query(primary, 'DROP DATABASE IF EXISTS %s' % SCHEMA)
