"""dbfleet_restart_method: service on booted hosts: the restart goes through systemd, and a server that refuses
to start is a handled fault (real systemd, real packaged servers, real SSH with become).

The hosts are the booted machines of the SSH fleet, pkg1 -> pkg2 (MariaDB 10.11), pkg3 (MariaDB 11.8), pkg4
(MySQL 9.7) (systemd-nspawn, the distribution's packaged server under systemd) and pkg5 (MySQL 8.0.33's tarball under
a unit written as Oracle's Debian package writes it), read from their inventory: inventories/booted/hosts.yml, or the
file named by DBFLEET_BOOTED_INVENTORY. The runs are playbooks/rolling_restart.yml, as a user would run it. What the
collection finds on each host (topology, unit, drop-in directory) is read once, by
tests/integration/playbooks/systemd_state.yml, which also writes the test table; what each run did is read from
systemd and the servers before and after it, over SSH as Ansible reaches the host (sudo), with no Ansible run: the
unit's state, the table's rows and checksum, the replication channels, the drop-ins:

- a restart through systemd gives every host a new main PID and a new InvocationID, and the gates pass;
- a drop-in the server refuses at start (CASES: a variable its version lacks on each flavor; on MariaDB 10.11 also
  a value in the variable's range that InnoDB refuses, and a drop-in the server's user cannot read) stops the run
  before the next host (of another topology, named as not restarted and still on its main PID), names the refused
  file:line or file and the server's message, is put back (removed: it is new since the last start), and the server
  runs again, with the rows and checksum as they were on the host and its replica, and replication running;
- each flavor's refusal (the variable its version lacks) is refused while a process of the unit ignores SIGTERM (a
  helper an ExecStartPost of a systemd drop-in leaves running, as MariaDB's debian-start or an operator's helper does):
  each stop of the unit outlives the server (deactivating, stop-sigterm or final-sigterm: for ever under Debian's
  mysql.service, 15 minutes without SIGKILL under MariaDB's), and the restart kills what is left after
  restart_leftover_timeout, names it, and the run ends as above (one run proves both, for each flavor); the other
  two refusals run without the helper.
"""
import collections
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import time

import pytest

from dbfleet_testing.lab import REPO as ROOT
sys.path.insert(0, os.path.join(ROOT, 'lab'))

from dbfleet_testing.lab import BOOTED_HOSTS  # noqa: E402  pylint: disable=wrong-import-position
from dbfleet_testing.runs import flat, playbook  # noqa: E402  pylint: disable=wrong-import-position

# The booted hosts of the SSH fleet (lab/dbfleet_lab/machines.py), or an inventory of other booted hosts.
HOSTS = BOOTED_HOSTS
INVENTORY = [os.environ.get('DBFLEET_BOOTED_INVENTORY')]
# host -> what systemd_state.yml read once (flavor, version, unit, client, role, source, dropin_dir, ssh).
FACTS = {}
FAULT_DROPIN = '60-dbfleet-fault.cnf'
SCHEMA = 'dbfleet_it_systemd'
# Seconds a replica of a host the run restarted has to replicate again once the run ended (its connect retry is 2 s).
REPLICATING_AGAIN = 30


class Case(collections.namedtuple('Case', 'id host unit version next line mode named')):
    """A drop-in line the server on host refuses at start, the file mode it is written with, and how the
    report names it (%(dropin)s, %(line)s); next: the host after it in the run, of another topology."""


UNKNOWN = '%(dropin)s:2 (%(line)s): unknown variable'
# Each flavor, each refusal the issue names where cheap: all three on MariaDB 10.11 (pkg1, the primary of pkg2),
# a variable the version lacks on MariaDB 11.8, MySQL 9.7 and MySQL 8.0.33.
CASES = (
    # MySQL's redo log capacity, which MariaDB never had.
    Case('mariadb-10.11-unknown-variable', 'pkg1', 'mariadb', '10.11', 'pkg3', 'innodb_redo_log_capacity = 1G', '0644',
         UNKNOWN),
    # In innodb_buffer_pool_size's range (min 2 MiB), below what InnoDB needs for its 16 KiB pages.
    Case('mariadb-10.11-value-refused', 'pkg1', 'mariadb', '10.11', 'pkg3', 'innodb_buffer_pool_size = 2M', '0644',
         '%(dropin)s:2 (%(line)s): InnoDB: innodb_page_size=16384 requires innodb_buffer_pool_size'),
    # Readable by root (and Ansible) only: the server (user mysql) skips it without a word.
    Case('mariadb-10.11-unreadable', 'pkg1', 'mariadb', '10.11', 'pkg3', 'innodb_adaptive_hash_index = ON', '0600',
         '%(dropin)s is not readable by the server'),
    Case('mariadb-11.8-unknown-variable', 'pkg3', 'mariadb', '11.8', 'pkg4', 'innodb_redo_log_capacity = 1G', '0644',
         UNKNOWN),
    # MariaDB's log file buffering, which MySQL never had.
    Case('mysql-9.7-unknown-variable', 'pkg4', 'mysql', '9.7', 'pkg3', 'innodb_log_file_buffering = ON', '0644',
         UNKNOWN),
    # The same on MySQL 8.0.33 under the vendor-style unit (Type=forking: systemd retries the refused start).
    Case('mysql-8.0-unknown-variable', 'pkg5', 'mysql', '8.0', 'pkg3', 'innodb_log_file_buffering = ON', '0644',
         UNKNOWN),
)
# Every packaged flavor's unit: MariaDB 10.11 and 11.8 (mariadb.service: Type=notify, TimeoutStopSec=900,
# SendSIGKILL=no), MySQL 9.7 (Debian's mysql.service: TimeoutSec=infinity, where the lingering stop was seen) and
# MySQL 8.0 under the vendor-style unit (Type=forking, TimeoutSec=600): each flavor's refusal runs with the helper
# that ignores SIGTERM (one run proves both); the other refusals without it.
LEFTOVER_CASES = [c for c in CASES if c.id.endswith('-unknown-variable')]
PLAIN_CASES = [c for c in CASES if c not in LEFTOVER_CASES]


def on_host(host, script, timeout=180):
    """(rc, stdout, stderr) of a shell script run as root on host, over SSH as Ansible reaches it (the inventory's
    address, port, user, key and SSH arguments; sudo as its become): the test's faults and reads, no Ansible run."""
    ssh = FACTS[host]['ssh']
    argv = ['ssh', '-o', 'BatchMode=yes', '-o', 'LogLevel=ERROR', '-p', str(ssh['port'])]
    argv += (['-i', ssh['key']] if ssh['key'] else []) + shlex.split(ssh['args'])
    argv += ['%s@%s' % (ssh['user'], ssh['host']) if ssh['user'] else ssh['host'],
             'sudo -n sh -c %s' % shlex.quote(script)]
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout,
                          check=False)
    return proc.returncode, proc.stdout, proc.stderr


# What one read prints on a host, section by section: the unit (systemctl show), rows and checksum of the test table
# (the server's own client as root over the socket, as a DBA on the host would), the replication channels (their
# header line, then one line each) and the drop-in directory.
READ = """systemctl show -p ActiveState,MainPID,InvocationID %(unit)s
echo @table
%(client)s -N -B -e 'SELECT COUNT(*) FROM %(schema)s.t; CHECKSUM TABLE %(schema)s.t'
echo @channels
%(client)s -B -e '%(channels)s'
echo @dropins
ls -1 %(dropin_dir)s
"""
CHANNELS = dict(mariadb=('SHOW ALL SLAVES STATUS', 'Slave_IO_Running', 'Slave_SQL_Running'),
                mysql=('SHOW REPLICA STATUS', 'Replica_IO_Running', 'Replica_SQL_Running'))


def read_host(host):
    """What READ says of host: unit_state (ActiveState, MainPID, InvocationID), table ([rows, checksum]), channels
    ([IO running, SQL running] per channel), dropins (the role drop-ins, 60-dbfleet-*), beside FACTS[host]."""
    facts = FACTS[host]
    statement, io_column, sql_column = CHANNELS[facts['flavor']]
    rc, out, err = on_host(host, READ % dict(facts, schema=SCHEMA, channels=statement))
    assert rc == 0, (host, out, err)
    sections = dict(unit=[])
    lines = sections['unit']
    for line in out.splitlines():
        if line.startswith('@'):
            lines = sections.setdefault(line[1:], [])
        else:
            lines.append(line)
    header = sections['channels'][0].split('\t') if sections['channels'] else []
    channels = [dict(zip(header, line.split('\t'))) for line in sections['channels'][1:]]
    return dict(facts, unit_state=dict(line.split('=', 1) for line in sections['unit'] if '=' in line),
                table=[line.split()[-1] for line in sections['table'] if line.strip()],
                channels=[[c[io_column] == 'Yes', c[sql_column] == 'Yes'] for c in channels],
                dropins=sorted(name for name in sections['dropins'] if name.startswith('60-dbfleet-')))


def state(before=None):
    """host -> read_host(host), every host (at once); with before (a run in between), read again until every host that
    replicated before replicates again, for REPLICATING_AGAIN seconds at most (then as read)."""
    deadline = time.monotonic() + REPLICATING_AGAIN
    while True:
        with concurrent.futures.ThreadPoolExecutor(len(FACTS)) as pool:
            now = dict(zip(sorted(FACTS), pool.map(read_host, sorted(FACTS))))
        waiting = [h for h in now if before and before[h]['channels'] and
                   all(c == [True, True] for c in before[h]['channels']) and
                   not all(c == [True, True] for c in now[h]['channels'])]
        if not waiting or time.monotonic() > deadline:
            return now
        time.sleep(1)


@pytest.fixture(scope='module')
def booted(request, tmp_path_factory):
    """The booted hosts (conftest.booted_machines: pkg1-pkg5 booted once for the session, left as found) or the
    hosts of DBFLEET_BOOTED_INVENTORY, as the collection finds them (FACTS), with the test table on each primary and
    replicated, every unit active."""
    if not INVENTORY[0]:
        INVENTORY[0] = request.getfixturevalue('booted_machines').booted_inventory
    out = str(tmp_path_factory.mktemp('systemd') / 'facts.json')
    rc, text = playbook(INVENTORY[0], os.path.join(ROOT, 'tests', 'integration', 'playbooks', 'systemd_state.yml'),
                        dict(systemd_state_out=out))
    assert rc == 0, text
    with open(out, encoding='utf-8') as handle:
        FACTS.update(json.load(handle))
    assert set(HOSTS) <= set(FACTS), FACTS
    deadline = time.monotonic() + REPLICATING_AGAIN
    while True:     # the replicas have the primaries' rows
        first = state()
        behind = [h for h, f in first.items() if f['source'] and f['table'] != first[f['source']]['table']]
        if not behind or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert not behind, first
    assert all(h['unit_state'].get('ActiveState') == 'active' for h in first.values()), first


def unit_file(unit):
    return unit if unit.endswith('.service') else unit + '.service'


def test_restart_through_systemd_gives_a_new_process_and_invocation(booted):  # pylint: disable=unused-argument
    before = state()
    rc, out = playbook(INVENTORY[0], os.path.join(ROOT, 'playbooks', 'rolling_restart.yml'), dict(rolling_restart_all=True))
    assert rc == 0, out
    after = state(before)
    for host, was in before.items():
        now = after[host]
        assert now['unit_state']['ActiveState'] == 'active', (host, now)
        assert now['unit_state']['MainPID'] != was['unit_state']['MainPID'], (host, was, now)
        assert now['unit_state']['InvocationID'] != was['unit_state']['InvocationID'], (host, was, now)
        assert '%s restarted: main PID %s -> %s' % (unit_file(was['unit']), was['unit_state']['MainPID'],
                                                    now['unit_state']['MainPID']) in flat(out), out
        assert now['channels'] == was['channels'] and all(c == [True, True] for c in now['channels']), (host, now)


def refused_run(case, extra=None):
    """(output unwrapped, output) of rolling_restart.yml over case.host then case.next (another topology's, after it:
    the run must stop before it), the drop-in the server refuses in place (written by the caller); the run failed."""
    rc, out = playbook(INVENTORY[0], os.path.join(ROOT, 'playbooks', 'rolling_restart.yml'),
                       dict(rolling_restart_all=True, rolling_restart_hosts='%s:%s' % (case.host, case.next),
                            **(extra or {})))
    assert rc != 0, out
    return flat(out), out


def assert_refused_and_put_back(case, dropin, before, text, out, after):
    """The run named the refused drop-in and the server's message, put it back (removed) and started the server
    again, then stopped before case.next; nothing lost: rows and checksum as before on the host and its replicas,
    replication running as before; case.next not restarted."""
    host = case.host
    assert 'in this order: %s -> %s' % (host, case.next) in text, out
    assert (case.named % dict(dropin=dropin, line=case.line)) in text, out
    assert 'Put back: removed %s. Started again: yes, main PID' % dropin in text, out
    assert 'The run stopped at %s; not restarted: %s.' % (host, case.next) in text, out
    was, now = before[host], after[host]
    assert FAULT_DROPIN not in now['dropins'], (host, now)
    assert now['unit_state']['ActiveState'] == 'active', (host, now)
    assert now['unit_state']['MainPID'] not in ('0', was['unit_state']['MainPID']), (host, was, now)
    for name in [host] + [h for h, f in before.items() if f['source'] == host]:
        assert after[name]['table'] == before[name]['table'] and len(after[name]['table']) == 2, (name, before, after)
        assert after[name]['channels'] == before[name]['channels'], (name, before[name], after[name])
        assert all(c == [True, True] for c in after[name]['channels']), (name, after[name])
    assert after[case.next]['unit_state']['MainPID'] == before[case.next]['unit_state']['MainPID'], (before, after)


@pytest.mark.parametrize('case', PLAIN_CASES, ids=[c.id for c in PLAIN_CASES])
def test_a_refused_start_is_put_back_and_the_run_stops_naming_it(booted, case):  # pylint: disable=unused-argument
    before = state()
    host, dropin = case.host, '%s/%s' % (before[case.host]['dropin_dir'], FAULT_DROPIN)
    assert before[host]['unit'] == case.unit and before[host]['version'].startswith(case.version), before[host]
    rc, out, err = on_host(host, "printf '[mysqld]\\n%%s\\n' %s > %s && chown root:root %s && chmod %s %s" % (
        shlex.quote(case.line), dropin, dropin, case.mode, dropin))
    assert rc == 0, (out, err)
    text, out = refused_run(case)
    assert_refused_and_put_back(case, dropin, before, text, out, state(before))


# A helper of the unit that ignores SIGTERM: started by an ExecStartPost of a runtime drop-in (gone at the next boot), it
# stays in the unit's cgroup after the server ends, so every stop of the unit waits for it (docs/hosts.md, "A stop that
# outlives the server"). ExecStartPost, not ExecStartPre: MariaDB's unit has SendSIGKILL=no, and systemd then refuses
# to run ExecStart while any process is in the unit's cgroup ("Will not start SendSIGKILL=no service ... while
# processes exist": the start fails with "Device or resource busy"), so a helper an ExecStartPre leaves running makes
# the start itself fail; after the server is up, as MariaDB's own ExecStartPost=!/etc/mysql/debian-start leaves its
# table check, it is what the issue saw: a stop that outlives the server. The PID of each one started is added to
# LEFTOVER_PIDFILE: the test kills them all afterwards (and first, any an interrupted run left).
LEFTOVER_DROPIN = 'zz-dbfleet-fault-leftover.conf'
LEFTOVER_PIDFILE = '/run/dbfleet-fault-leftover.pid'
# "+": as root whatever the unit's User= (MariaDB's and Debian's MySQL run their commands as mysql).
LEFTOVER_UNIT_TEXT = ("[Service]\nExecStartPost=+/bin/sh -c 'trap \"\" TERM; sleep 600 </dev/null >/dev/null 2>&1 & "
                      "echo $! >> %s'\n" % LEFTOVER_PIDFILE)
# Seconds the restart waits for it (the role's restart_leftover_timeout): small, so that each case stays short.
LEFTOVER_TIMEOUT = 3


@pytest.mark.parametrize('case', LEFTOVER_CASES, ids=[c.id for c in LEFTOVER_CASES])
def test_a_process_of_the_unit_that_ignores_sigterm_is_killed_after_the_bound_and_the_server_runs_again(booted, case):
    """The refused start of case (its flavor's unknown variable) while a helper of the unit ignores SIGTERM: the
    stop's leftover is killed after the bound and named, and the refusal is handled as without it
    (assert_refused_and_put_back)."""
    before = state()
    host, unit = case.host, unit_file(before[case.host]['unit'])
    assert before[host]['unit'] == case.unit and before[host]['version'].startswith(case.version), before[host]
    unit_dropin = '/run/systemd/system/%s.d/%s' % (unit, LEFTOVER_DROPIN)
    dropin = '%s/%s' % (before[host]['dropin_dir'], FAULT_DROPIN)
    try:
        # In one command on the host: the unit's drop-in, a restart whose ExecStartPost starts the helper (nothing
        # lingers yet), the helper seen in the unit's cgroup, then the option-file drop-in the server will refuse.
        rc, out, err = on_host(host, (
            "{ [ ! -f %(pidfile)s ] || xargs -r kill -KILL < %(pidfile)s; rm -f %(pidfile)s; } 2>/dev/null; "
            "mkdir -p %(dir)s && cat > %(unit_dropin)s <<'EOF'\n%(text)sEOF\n"
            "systemctl daemon-reload && timeout 120 systemctl restart %(unit)s && pid=$(tail -n 1 %(pidfile)s) && "
            "echo \"helper=$pid\" && "
            "grep -c '/system.slice/%(unit)s' /proc/$pid/cgroup && grep SigIgn /proc/$pid/status && "
            "printf '[mysqld]\\n%%s\\n' '%(line)s' > %(dropin)s && chmod 0644 %(dropin)s")
            % dict(dir=os.path.dirname(unit_dropin), unit_dropin=unit_dropin, text=LEFTOVER_UNIT_TEXT, unit=unit,
                   pidfile=LEFTOVER_PIDFILE, line=case.line, dropin=dropin))
        assert rc == 0, (out, err)
        helper = int(out.split('helper=')[1].split()[0])
        ignored = int(out.split('SigIgn:')[1].split()[0], 16)
        assert ignored & (1 << 14), out     # SIGTERM (15) ignored
        text, out = refused_run(case, dict(restart_leftover_timeout=LEFTOVER_TIMEOUT))
        # The first stop waited for the helper started above, LEFTOVER_TIMEOUT seconds (a little more when the
        # machine is loaded: the unit's state is read once a second), then killed it, naming it.
        killed = re.search(r'killed the processes left in %s after (\d+) s in deactivating \(' % re.escape(unit), text)
        assert killed and int(killed.group(1)) >= LEFTOVER_TIMEOUT, out
        assert 'PID %d (sleep 600)' % helper in text, out
        assert 'systemctl kill --signal=SIGKILL %s' % unit in text, out
    finally:
        # The drop-in gone, the helper of the last start killed by its PID: the unit as the package wrote it.
        rc, cleaned, err = on_host(host, 'rm -f %s %s; systemctl daemon-reload; [ ! -f %s ] || '
                                         'xargs -r kill -KILL < %s; rm -f %s; true'
                                   % (unit_dropin, dropin, LEFTOVER_PIDFILE, LEFTOVER_PIDFILE, LEFTOVER_PIDFILE))
        assert rc == 0, (cleaned, err)
    assert_refused_and_put_back(case, dropin, before, text, out, state(before))
