"""The SSH fleet's replication pairs db1 -> db2 (MySQL 8.0, GTID auto-position) and db3 -> db4 (MariaDB 10.11, GTID
slave_pos): rows written on a primary, replication waited for, and the "nothing lost" check (replication runs, GTID sets
equal, CHECKSUM TABLE and row counts equal), whose counts add up in FIGURES for the fault tests' figures."""
import time

SCHEMA = 'dbfleet_it_restart'
PAIRS = (('db1', 'db2'), ('db3', 'db4'))
FIGURES = dict(faults_injected=0, runs_stopped_safely=0, runs_completed=0, rows_lost=0, gtid_sets_compared=0,
               tables_compared=0, sysbench_transactions=0)


def pid_of(fleet, host):
    """The server's PID as this machine sees it (a booted host's mysqld too)."""
    return fleet.server_pid(host)


def pids(fleet):
    return dict((h, pid_of(fleet, h)) for a, b in PAIRS for h in (a, b))


def one(fleet, host, statement, args=None):
    rows = fleet.query(host, statement, args, tries=30)
    return list(rows[0].values())[0] if rows else None


def replica_state(fleet, host):
    statement = 'SHOW REPLICA STATUS' if host in ('db1', 'db2') else 'SHOW ALL SLAVES STATUS'
    rows = fleet.query(host, statement, tries=30)
    row = rows[0]
    io = row.get('Replica_IO_Running', row.get('Slave_IO_Running'))
    sql = row.get('Replica_SQL_Running', row.get('Slave_SQL_Running'))
    return io, sql


def wait_replicating(fleet, host, timeout=90):
    deadline = time.monotonic() + timeout
    while True:
        state = replica_state(fleet, host)
        if state == ('Yes', 'Yes'):
            return
        assert time.monotonic() < deadline, '%s does not replicate after %d s: IO/SQL %s' % (host, timeout, state)
        time.sleep(1)


def write_rows(fleet, primary, count, tag):
    conn = fleet.connect(primary)
    try:
        with conn.cursor() as cur:
            cur.executemany('INSERT INTO %s.t (tag, v) VALUES (%%s, %%s)' % SCHEMA,
                            [(tag, i) for i in range(count)])
    finally:
        conn.close()


def assert_nothing_lost(fleet, tables=('t',)):
    """Both pairs replicate, the replica applied all its source has, GTID sets equal, checksums equal."""
    for primary, replica in PAIRS:
        wait_replicating(fleet, replica)
        if primary == 'db1':
            source = one(fleet, primary, 'SELECT @@GLOBAL.gtid_executed')
            assert one(fleet, replica, 'SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, 60)', (source,)) == 0
            assert (one(fleet, primary, 'SELECT @@GLOBAL.gtid_executed').replace('\n', '')
                    == one(fleet, replica, 'SELECT @@GLOBAL.gtid_executed').replace('\n', ''))
        else:
            source = one(fleet, primary, 'SELECT @@GLOBAL.gtid_binlog_pos')
            assert one(fleet, replica, 'SELECT MASTER_GTID_WAIT(%s, 60)', (source,)) == 0
            assert one(fleet, primary, 'SELECT @@GLOBAL.gtid_binlog_pos') == one(
                fleet, replica, 'SELECT @@GLOBAL.gtid_slave_pos')
        FIGURES['gtid_sets_compared'] += 1
        for table in tables:
            name = '%s.%s' % (SCHEMA, table)
            if primary != 'db1' and table.startswith('sbtest'):
                continue
            a = fleet.query(primary, 'CHECKSUM TABLE %s' % name, tries=30)[0]['Checksum']
            b = fleet.query(replica, 'CHECKSUM TABLE %s' % name, tries=30)[0]['Checksum']
            assert a == b, '%s: CHECKSUM TABLE %s on %s, %s on %s' % (name, a, primary, b, replica)
            rows_a = one(fleet, primary, 'SELECT COUNT(*) FROM %s' % name)
            rows_b = one(fleet, replica, 'SELECT COUNT(*) FROM %s' % name)
            FIGURES['rows_lost'] += max(0, rows_a - rows_b)
            FIGURES['tables_compared'] += 1
            assert rows_a == rows_b
