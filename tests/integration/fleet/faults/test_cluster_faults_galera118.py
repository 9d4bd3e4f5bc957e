"""The fleet's MariaDB 11.8 Galera cluster (trixie's mariadbd and galera-4 26.4, from the lab's trixie chroot).

Fleet hosts galera118_1-3, each in its namespace, and galera118_replica (MariaDB 11.8, GTID replica of
galera118_1, in the cluster's inventory group); the module's fixture starts them when they are down and
stops them at the end if it started them. The same steps as the 10.11 cluster's tests (test_cluster_faults.py,
test_galera.py) on the other Galera version the collection supports:

- a desynced node (``SET GLOBAL wsrep_desync=ON``) stops the rolling restart before any change, naming
  the node and its state: the topology component reads 11.8's wsrep status as one cluster;
- fault a: playbooks/rolling_restart.yml on the cluster's group (three nodes and the replica) with a writer
  on the first node and ``restart_cluster_drain: reject_queries`` (2 s): the plan shows the replica in the
  cluster's topology and restarts it first; never below quorum, no node stopped while another was not
  Synced, each gate passed only once its node was Synced again and before the next stop; each node drained
  (wsrep_reject_queries=ALL, a read refused with 1047) only in its own turn, never two at once, all back to
  NONE at the end; every host (the replica too, replicating again) ends with the same rows and checksum.
The figures are printed at the end of the module (docs/topology.md, "On the fleet: fault tests").
"""
import os


from dbfleet_testing.lab import REPO
from dbfleet_testing.clusterfaults import (SCHEMA, Galera, Run, cluster_fixture, drained_one_at_a_time, flat, new_figures,
                                           rolling_restart_under_writes, wsrep_drain)


MEMBERS = ('galera118_1', 'galera118_2', 'galera118_3')
REPLICA = 'galera118_replica'
DRAIN_SECONDS = 2
FIGURES = new_figures(Galera)

galera118 = cluster_fixture('galera118', Galera, MEMBERS, (REPLICA,), 'galera118', 'Galera 11.8', FIGURES)


def test_the_nodes_run_mariadb_118_with_galera_4(galera118):
    for node in MEMBERS:
        version, name = galera118.query(node, 'SELECT @@version, @@wsrep_cluster_name')[0]
        provider = dict(galera118.query(node, "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_provider_name', "
                                              "'wsrep_provider_version')"))
        assert version.startswith('11.8.'), version
        # galera-4 26.4.x reports itself as Galera 4.x
        assert provider['wsrep_provider_name'] == 'Galera' and provider['wsrep_provider_version'].startswith('4.'), provider
        assert name == 'dbfleet_galera118'


def test_a_desynced_node_stops_the_restart_before_any_change(galera118, tmp_path):
    pids = galera118.pids()
    galera118.query('galera118_2', 'SET GLOBAL wsrep_desync = ON')
    try:
        assert galera118.states(['galera118_2'])['galera118_2'][0] == 'Donor/Desynced'
        run = Run(galera118, tmp_path, os.path.join(REPO, 'playbooks', 'rolling_restart.yml'),
                  {'rolling_restart_all': True, 'rolling_restart_hosts': 'galera118'})
        rc, output, _took = run.finish()
    finally:
        galera118.query('galera118_2', 'SET GLOBAL wsrep_desync = OFF')
    output = flat(output)
    assert rc != 0, output
    assert 'stopped before any change' in output, output
    assert 'galera118_2: state Donor/Desynced, not Synced' in output, output
    assert galera118.pids() == pids, 'a node restarted although the run refused'
    galera118.wait_ready()


def test_a_writer_under_load_for_a_whole_drained_rolling_restart(galera118, tmp_path):
    took, samples, seen, writer, summary, output = rolling_restart_under_writes(
        galera118, tmp_path, os.path.join(REPO, 'playbooks', 'rolling_restart.yml'),
        {'rolling_restart_hosts': 'galera118', 'rolling_restart_all': True, 'rolling_restart_timeout': 120,
         'restart_cluster_drain': 'reject_queries', 'restart_cluster_drain_seconds': DRAIN_SECONDS},
        MEMBERS, FIGURES, look=wsrep_drain, replicas_in_play=True)
    # the restart plan: the replica in the 11.8 cluster's topology, first
    assert 'in this order: %s -> ' % REPLICA in output, output
    assert '%s: replica in topology galera dbfleet_galera118' % REPLICA in output, output
    windows = drained_one_at_a_time(galera118, samples, seen, writer)
    print('11.8 a: drained rolling restart under writes %.1f s, %d samples, 0 below quorum, stops %s, drained %s, '
          '%d rows committed, %d writer errors %s, rows/checksum %s (replica %s)'
          % (took, len(samples), [m for _t, m, _o in seen],
             ', '.join('%s %.1f s' % (m, w[1] - w[0]) for m, w in windows.items()), len(writer.committed),
             len(writer.errors), sorted(set(e[2] for e in writer.errors)), summary[MEMBERS[0]], summary[REPLICA]))
    galera118.query(MEMBERS[0], 'DROP DATABASE IF EXISTS %s' % SCHEMA)
