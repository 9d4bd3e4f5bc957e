"""Faults during rolling restarts of the SSH fleet's Galera cluster (real servers, real SSH, real network).

Fleet hosts galera1-3 (MariaDB 10.11 + Debian galera-4, each in its namespace, gcomm over the namespaces'
addresses) and galera_replica (GTID replica of galera1); the module's fixture starts them when they are
down and stops them at the end if it started them. Each test runs a writer through a surviving member
(one INSERT at a time, moving to the next member on an error) and a monitor that samples every member's
wsrep state; it injects one fault, asserts how the run ended, that the cluster never went below quorum,
and after healing, that every host has the same row count and content checksum with every committed row.

- a: the adaptive_hash role on the members with a new adaptive_hash_parts (restart allowed): no member stopped while
  another was not Synced, each gate passed only after its member was Synced again;
- b: SIGKILL of a member's server after the first member's gate passed: the run stops before the next;
- c: a member left Joining by a state transfer that makes no progress (its IST port dropped by
  nftables in its namespace): the gate waits, shuts past its timeout, the next member never restarts;
- d: a network partition of a member (its veth down) after the first member's gate passed.
The figures are printed at the end of the module (docs/topology.md, "On the fleet: fault tests").
"""
import os


from dbfleet_testing.lab import REPO
from dbfleet_testing.clusterfaults import (SCHEMA, adaptive_hash_parts_under_writes, cluster_fixture, drop_ports, member_killed_mid_run,
                                           member_left_joining, member_partitioned_mid_run, new_figures, undrop, Galera)


MEMBERS = ('galera1', 'galera2', 'galera3')
REPLICA = 'galera_replica'
IST_PORT = 4568
GATE_TIMEOUT = 8


FIGURES = new_figures(Galera)


galera = cluster_fixture('galera', Galera, MEMBERS, (REPLICA,), 'galera', 'Galera', FIGURES)


def rolling_restart(timeout=GATE_TIMEOUT, members=MEMBERS):
    return os.path.join(REPO, 'playbooks', 'rolling_restart.yml'), {
        'rolling_restart_hosts': ':'.join(members), 'rolling_restart_all': True, 'rolling_restart_timeout': timeout}


def test_a_writer_under_load_for_a_whole_rolling_restart(galera, tmp_path):
    adaptive_hash_parts_under_writes(galera, tmp_path, FIGURES, 'a')


def faulted_mid_run(galera, tmp_path, fault, candidates):
    """fault (member_killed_mid_run, member_partitioned_mid_run) on the first of candidates that is not the first
    member restarted, in a rolling restart with writes; its (victim, seconds, writer, summary)."""
    playbook, extra = rolling_restart()
    return fault(galera, tmp_path, playbook, extra, MEMBERS, FIGURES,
                 lambda first: next(m for m in candidates if m != first))


def test_b_a_member_killed_mid_run_stops_the_run(galera, tmp_path):
    victim, took, writer, summary = faulted_mid_run(galera, tmp_path, member_killed_mid_run, ('galera1', 'galera2'))
    print('b: killed %s (pid %d) after the gate of %s; run stopped in %.1f s, %s untouched; %d rows committed, '
          '%d writer errors, rows/checksum %s'
          % (victim['host'], victim['pid'], victim['first'], took, victim['untouched'], len(writer.committed),
             len(writer.errors), summary['galera1']))


def test_c_a_member_left_joining_stops_the_run_past_the_gate_timeout(galera, tmp_path):
    def block():
        for member in MEMBERS:
            drop_ports(member, [IST_PORT])
        return lambda: [undrop(m) for m in MEMBERS]

    playbook, extra = rolling_restart()
    stuck, joining, took, writer, summary, back, waited = member_left_joining(
        galera, tmp_path, playbook, extra, MEMBERS, FIGURES, block, lambda s: s[0].startswith('Joining'), 'not Synced',
        GATE_TIMEOUT)
    print('c: %s Joining for %.1f s (IST port dropped); gate shut after %d s; run stopped in %.1f s, %s untouched; Synced '
          '%.1f s after the rules went; %d rows committed, %d writer errors, rows/checksum %s'
          % (stuck, joining, waited, took, [m for m in MEMBERS if m != stuck], back, len(writer.committed),
             len(writer.errors), summary['galera1']))


def test_d_a_network_partition_mid_run_stops_the_run(galera, tmp_path):
    victim, took, writer, summary = faulted_mid_run(galera, tmp_path, member_partitioned_mid_run, ('galera3', 'galera2'))
    print('d: partitioned %s after the gate of %s; run stopped in %.1f s, nothing restarted after; rejoined in %.1f s; '
          '%d rows committed, %d writer errors, rows/checksum %s'
          % (victim['host'], victim['first'], took, victim['rejoined_in'], len(writer.committed), len(writer.errors),
             summary['galera1']))
    galera.query('galera1', 'DROP DATABASE IF EXISTS %s' % SCHEMA)
