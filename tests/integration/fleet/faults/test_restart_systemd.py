"""dbfleet_restart_method: service on booted hosts: the restart goes through systemd, and a server that refuses
to start is a handled fault (real systemd, real packaged servers, real SSH with become).

The hosts are the booted machines of the SSH fleet, pkg1 -> pkg2 (MariaDB 10.11), pkg3 (MariaDB 11.8), pkg4
(MySQL 9.7) (systemd-nspawn, the distribution's packaged server under systemd) and pkg5 (MySQL 8.0.33's tarball under
a unit written as Oracle's Debian package writes it), read from their inventory: inventories/booted/hosts.yml, or the
file named by DBFLEET_BOOTED_INVENTORY. The runs are playbooks/rolling_restart.yml, as a user would run it; what they
did is read from systemd and the servers (tests/integration/playbooks/systemd_state.yml, one run for all hosts, which
serves as one test's "after" and the next one's "before"):

- a restart through systemd gives every host a new main PID and a new InvocationID, and the gates pass;
- a drop-in the server refuses at start (CASES: a variable its version lacks on each flavor; on MariaDB 10.11 also
  a value in the variable's range that InnoDB refuses, and a drop-in the server's user cannot read) stops the run
  before the next host (of another topology, named as not restarted and still on its main PID), names the refused
  file:line or file and the server's message, is put back (removed: it is new since the last start), and the server
  runs again, with the rows and checksum as they were on the host and its replica, and replication running;
- the same refused start on each packaged flavor while a process of the unit ignores SIGTERM (a helper an
  ExecStartPost of a systemd drop-in leaves running, as MariaDB's debian-start or an operator's helper does): each
  stop of the unit outlives the server (deactivating, stop-sigterm or final-sigterm: for ever under Debian's
  mysql.service, 15 minutes without SIGKILL under MariaDB's), and the restart kills what is left after
  restart_leftover_timeout, names it, and the server runs again.
"""
import collections
import json
import os
import sys

import pytest

from dbfleet_testing.lab import REPO as ROOT
sys.path.insert(0, os.path.join(ROOT, 'lab'))

from dbfleet_testing.lab import BOOTED_HOSTS  # noqa: E402  pylint: disable=wrong-import-position
from dbfleet_testing.runs import ansible, flat, playbook  # noqa: E402  pylint: disable=wrong-import-position

# The booted hosts of the SSH fleet (lab/dbfleet_lab/machines.py), or an inventory of other booted hosts.
HOSTS = BOOTED_HOSTS
INVENTORY = [os.environ.get('DBFLEET_BOOTED_INVENTORY')]
# The hosts' state as the last read left it (one read serves as one test's 'after' and the next one's 'before').
LAST = []
FAULT_DROPIN = '60-dbfleet-fault.cnf'


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


def state(tmp_path, setup=False):
    """host -> what systemd_state.yml read: flavor, version, unit, role, source, channels, dropin_dir, dropins,
    unit_state, table."""
    out = str(tmp_path / ('state-%d.json' % len(os.listdir(str(tmp_path)))))
    rc, text = playbook(INVENTORY[0], os.path.join(ROOT, 'tests', 'integration', 'playbooks', 'systemd_state.yml'),
                        dict(systemd_state_out=out, systemd_state_setup=setup))
    assert rc == 0, text
    with open(out, encoding='utf-8') as handle:
        LAST[:] = [json.load(handle)]
    return LAST[0]


def last_state(tmp_path):
    """The state the previous test read after its run (nothing changes the hosts between tests), or a new one."""
    return LAST[0] if LAST else state(tmp_path)


@pytest.fixture(scope='module')
def booted(request, tmp_path_factory):
    """The booted hosts (conftest.booted_machines: pkg1-pkg5 booted once for the session, left as found) or the
    hosts of DBFLEET_BOOTED_INVENTORY; their first state."""
    if not INVENTORY[0]:
        INVENTORY[0] = request.getfixturevalue('booted_machines').booted_inventory
    tmp = tmp_path_factory.mktemp('systemd')
    first = state(tmp, setup=True)
    assert set(HOSTS) <= set(first), first
    assert all(h['unit_state'].get('ActiveState') == 'active' for h in first.values()), first
    return tmp, first


def unit_file(unit):
    return unit if unit.endswith('.service') else unit + '.service'


def test_restart_through_systemd_gives_a_new_process_and_invocation(booted):
    tmp, dummy = booted
    before = last_state(tmp)
    del LAST[:]
    rc, out = playbook(INVENTORY[0], os.path.join(ROOT, 'playbooks', 'rolling_restart.yml'), dict(rolling_restart_all=True))
    assert rc == 0, out
    after = state(tmp)
    for host, was in before.items():
        now = after[host]
        assert now['unit_state']['ActiveState'] == 'active', (host, now)
        assert now['unit_state']['MainPID'] != was['unit_state']['MainPID'], (host, was, now)
        assert now['unit_state']['InvocationID'] != was['unit_state']['InvocationID'], (host, was, now)
        assert '%s restarted: main PID %s -> %s' % (unit_file(was['unit']), was['unit_state']['MainPID'],
                                                    now['unit_state']['MainPID']) in flat(out), out
        assert now['channels'] == was['channels'] and all(c == [True, True] for c in now['channels']), (host, now)


@pytest.mark.parametrize('case', CASES, ids=[c.id for c in CASES])
def test_a_refused_start_is_put_back_and_the_run_stops_naming_it(booted, case):
    tmp, dummy = booted
    before = last_state(tmp)
    host, dropin = case.host, '%s/%s' % (before[case.host]['dropin_dir'], FAULT_DROPIN)
    assert before[host]['unit'] == case.unit and before[host]['version'].startswith(case.version), before[host]
    rc, out = ansible('ansible', host, '-i', INVENTORY[0], '-m', 'ansible.builtin.copy', '-a',
                      json.dumps(dict(dest=dropin, mode=case.mode, owner='root', group='root',
                                      content='[mysqld]\n%s\n' % case.line)), timeout=600)
    assert rc == 0, out
    del LAST[:]
    # The next host of the run is another topology's, after this one: the run must stop before it.
    rc, out = playbook(INVENTORY[0], os.path.join(ROOT, 'playbooks', 'rolling_restart.yml'),
                       dict(rolling_restart_all=True, rolling_restart_hosts='%s:%s' % (host, case.next)))
    text = flat(out)
    assert rc != 0, out
    assert 'in this order: %s -> %s' % (host, case.next) in text, out
    assert (case.named % dict(dropin=dropin, line=case.line)) in text, out
    assert 'Put back: removed %s. Started again: yes, main PID' % dropin in text, out
    assert 'The run stopped at %s; not restarted: %s.' % (host, case.next) in text, out
    after = state(tmp)
    was, now = before[host], after[host]
    assert FAULT_DROPIN not in now['dropins'], (host, now)
    assert now['unit_state']['ActiveState'] == 'active', (host, now)
    assert now['unit_state']['MainPID'] not in ('0', was['unit_state']['MainPID']), (host, was, now)
    # Nothing lost: rows and checksum as before, on the host and on its replicas; replication running.
    for name in [host] + [h for h, f in before.items() if f['source'] == host]:
        assert after[name]['table'] == before[name]['table'] and len(after[name]['table']) == 2, (name, before, after)
        assert after[name]['channels'] == before[name]['channels'], (name, before[name], after[name])
        assert all(c == [True, True] for c in after[name]['channels']), (name, after[name])
    # The next host was not restarted.
    assert after[case.next]['unit_state']['MainPID'] == before[case.next]['unit_state']['MainPID'], (before, after)


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
# Every packaged flavor's unit: MariaDB 10.11 and 11.8 (mariadb.service: Type=notify, TimeoutStopSec=900,
# SendSIGKILL=no), MySQL 9.7 (Debian's mysql.service: TimeoutSec=infinity, where the lingering stop was seen) and
# MySQL 8.0 under the vendor-style unit (Type=forking, TimeoutSec=600).
LEFTOVER_CASES = [c for c in CASES if c.id.endswith('-unknown-variable')]


def on_host(host, module, args):
    """One ad-hoc module run on a booted host, as root."""
    return ansible('ansible', host, '-i', INVENTORY[0], '--become', '-m', module, '-a', json.dumps(args), timeout=600)


@pytest.mark.parametrize('case', LEFTOVER_CASES, ids=[c.id for c in LEFTOVER_CASES])
def test_a_process_of_the_unit_that_ignores_sigterm_is_killed_after_the_bound_and_the_server_runs_again(booted, case):
    tmp, dummy = booted
    before = last_state(tmp)
    host, unit = case.host, unit_file(before[case.host]['unit'])
    unit_dropin = '/run/systemd/system/%s.d/%s' % (unit, LEFTOVER_DROPIN)
    dropin = '%s/%s' % (before[host]['dropin_dir'], FAULT_DROPIN)
    del LAST[:]
    try:
        # In one run on the host: the unit's drop-in, a restart whose ExecStartPost starts the helper (nothing lingers
        # yet), the helper seen in the unit's cgroup, then the option-file drop-in the server will refuse.
        rc, out = on_host(host, 'ansible.builtin.shell', dict(cmd=(
            "{ [ ! -f %(pidfile)s ] || xargs -r kill -KILL < %(pidfile)s; rm -f %(pidfile)s; } 2>/dev/null; "
            "mkdir -p %(dir)s && cat > %(unit_dropin)s <<'EOF'\n%(text)sEOF\n"
            "systemctl daemon-reload && timeout 120 systemctl restart %(unit)s && pid=$(tail -n 1 %(pidfile)s) && "
            "echo \"helper=$pid\" && "
            "grep -c '/system.slice/%(unit)s' /proc/$pid/cgroup && grep SigIgn /proc/$pid/status && "
            "printf '[mysqld]\\n%%s\\n' '%(line)s' > %(dropin)s && chmod 0644 %(dropin)s")
            % dict(dir=os.path.dirname(unit_dropin), unit_dropin=unit_dropin, text=LEFTOVER_UNIT_TEXT, unit=unit,
                   pidfile=LEFTOVER_PIDFILE, line=case.line, dropin=dropin)))
        assert rc == 0, out
        helper = int(out.split('helper=')[1].split()[0])
        ignored = int(out.split('SigIgn:')[1].split()[0], 16)
        assert ignored & (1 << 14), out     # SIGTERM (15) ignored
        rc, out = playbook(INVENTORY[0], os.path.join(ROOT, 'playbooks', 'rolling_restart.yml'),
                           dict(rolling_restart_all=True, rolling_restart_hosts='%s:%s' % (host, case.next),
                                restart_leftover_timeout=LEFTOVER_TIMEOUT))
        text = flat(out)
        assert rc != 0, out
        assert (case.named % dict(dropin=dropin, line=case.line)) in text, out
        assert 'Put back: removed %s. Started again: yes, main PID' % dropin in text, out
        # The first stop waited for the helper started above, LEFTOVER_TIMEOUT seconds, then killed it, naming it.
        assert ('killed the processes left in %s after %d s in deactivating (' % (unit, LEFTOVER_TIMEOUT)) in text, out
        assert 'PID %d (sleep 600)' % helper in text, out
        assert 'systemctl kill --signal=SIGKILL %s' % unit in text, out
        assert 'The run stopped at %s; not restarted: %s.' % (host, case.next) in text, out
    finally:
        # The drop-in gone, the helper of the last start killed by its PID: the unit as the package wrote it.
        rc, out = on_host(host, 'ansible.builtin.shell',
                          dict(cmd='rm -f %s %s; systemctl daemon-reload; [ ! -f %s ] || xargs -r kill -KILL < %s; '
                                   'rm -f %s; true' % (unit_dropin, dropin, LEFTOVER_PIDFILE, LEFTOVER_PIDFILE,
                                                       LEFTOVER_PIDFILE)))
        assert rc == 0, out
    after = state(tmp)
    was, now = before[host], after[host]
    assert now['unit_state']['ActiveState'] == 'active', (host, now)
    assert now['unit_state']['MainPID'] not in ('0', was['unit_state']['MainPID']), (host, was, now)
    for name in [host] + [h for h, f in before.items() if f['source'] == host]:
        assert after[name]['table'] == before[name]['table'] and len(after[name]['table']) == 2, (name, before, after)
        assert all(c == [True, True] for c in after[name]['channels']), (name, after[name])
    assert after[case.next]['unit_state']['MainPID'] == before[case.next]['unit_state']['MainPID'], (before, after)
