"""Faults during rolling restarts of the SSH fleet's Group Replication group (real servers, real SSH).

Fleet hosts gr1-gr3 (MySQL 8.0.33 with group_replication.so, single primary, each in its namespace,
XCom over the namespaces' addresses) and gr_replica (GTID replica of gr1); the module's fixture starts
them when they are down and stops them at the end if it started them. A writer inserts through the
member that takes writes (it moves on when its member refuses or fails: a secondary is read-only), a
monitor samples every member's own state and how many ONLINE members it sees.

- a: playbooks/rolling_restart.yml, every member, with restart_cluster_switchover: the group keeps a
  majority in every sample (in_majority), no member stops while another is not ONLINE, the primary restarts
  last after handing its role over, and every host ends with the same rows and content checksum;
- b: SIGKILL of a member's server after the first member's gate passed: the run stops before the
  next member, the two others stay ONLINE, nothing is lost;
- c: a member left RECOVERING by a distributed recovery that makes no progress (nftables in every
  member's namespace drops what it sends to the other members' SQL port, where the recovery channel
  connects to its donor): the gate waits, shuts past its timeout, the next member never restarts;
  once the rules are gone the member finishes its recovery and every host agrees;
- d: a network partition of a secondary (its veth down) after the first member's gate passed: the run
  stops, the two others keep their majority, the partitioned member (expelled meanwhile)
  rejoins ONLINE by itself once healed (group_replication_autorejoin_tries), every host agrees.
Each test starts from the group whole (Group.primary). The figures are printed at the end of the module (docs/topology.md, "On the fleet: fault tests").
"""
import os


from dbfleet_testing.lab import REPO
from dbfleet_testing.clusterfaults import (SCHEMA, FleetCluster, cluster_fixture, drop_ports, member_killed_mid_run, member_left_joining,
                                           member_partitioned_mid_run, new_figures, rolling_restart_under_writes, undrop)


MEMBERS = ('gr1', 'gr2', 'gr3')
REPLICA = 'gr_replica'
SQL_PORT = 3306
GATE_TIMEOUT = 8


def gr_state(conn):
    """(own state, own role, ONLINE members it sees, members it sees, reachable members it sees: ONLINE or
    RECOVERING)."""
    with conn.cursor() as cur:
        cur.execute("SELECT MEMBER_ID = @@server_uuid, MEMBER_STATE, MEMBER_ROLE"
                    " FROM performance_schema.replication_group_members")
        rows = cur.fetchall()
    own = next(((r[1], r[2]) for r in rows if r[0]), ('OFFLINE', ''))
    return own + (sum(1 for r in rows if r[1] == 'ONLINE'), len(rows),
                  sum(1 for r in rows if r[1] in ('ONLINE', 'RECOVERING')))


def online(state):
    return state != 'down' and state[0] == 'ONLINE' and state[2] >= 2


def in_majority(state):
    """ONLINE in a group where it reaches a majority of the three members: Group Replication's own quorum, where a
    RECOVERING member counts (replication/clusters.py). A member's view of another's state can lag on a loaded machine (another
    member still RECOVERING in it long after that member said ONLINE): the quorum does not depend on that."""
    return state != 'down' and state[0] == 'ONLINE' and state[4] >= 2


class Group(FleetCluster):
    """The Group Replication group of the fleet: a member serves when ONLINE in a group where it sees two ONLINE
    members or more, and counts toward the majority when ONLINE in a group where it reaches two members or more."""

    what = 'group'
    serving_word = 'online'
    majority_word = 'majority'
    position_sql = 'SELECT @@GLOBAL.gtid_executed'
    wait_sql = 'SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, 60)'
    look = staticmethod(gr_state)
    serving = staticmethod(online)
    in_majority = staticmethod(in_majority)

    @staticmethod
    def counted(state):
        return state[2]

    def primary(self):
        """The primary of the group once every member is ONLINE in every member's view (a test starts from the
        group whole)."""
        try:
            seen = self.wait_ready(timeout=60)
        except AssertionError:
            seen = self.rejoin()
        return next(m for m, s in seen.items() if s[1] == 'PRIMARY')

    def rejoin(self):
        """A member the test before left out of the group (ERROR, OFFLINE) or whose view of the others stays behind:
        STOP and START GROUP_REPLICATION on it, as a DBA would, one member at a time (the primary last), each
        printed; every member's state once the group is whole."""
        seen = self.states()
        behind = [m for m, s in seen.items() if s != 'down' and not (self.serving(s) and s[2] == len(self.members))]
        for member in sorted(behind, key=lambda m: (seen[m][0] == 'ONLINE', seen[m][1] == 'PRIMARY')):
            print('the group is not whole before the test (%s): STOP and START GROUP_REPLICATION on %s' % (seen, member))
            conn = self.connect(member, read_timeout=180)
            try:
                with conn.cursor() as cur:
                    cur.execute('STOP GROUP_REPLICATION')
                    cur.execute('START GROUP_REPLICATION')
            finally:
                conn.close()
            try:
                return self.wait_ready(timeout=90)
            except AssertionError:
                seen = self.states()
        return self.wait_ready()


FIGURES = new_figures(Group)


group = cluster_fixture('group', Group, MEMBERS, (REPLICA,), 'group_replication', 'Group Replication', FIGURES)


def rolling_restart():
    return os.path.join(REPO, 'playbooks', 'rolling_restart.yml'), {
        'rolling_restart_hosts': ':'.join(MEMBERS), 'rolling_restart_all': True, 'rolling_restart_timeout': GATE_TIMEOUT,
        'restart_cluster_switchover': True}


def writer_order(primary):
    """The primary first: a secondary refuses writes (super_read_only)."""
    return [primary] + [m for m in MEMBERS if m != primary]


def test_a_writer_under_load_for_a_whole_rolling_restart(group, tmp_path):
    primary = group.primary()
    playbook, extra = rolling_restart()
    took, samples, seen, writer, summary, _output = rolling_restart_under_writes(group, tmp_path, playbook, extra,
                                                                                 writer_order(primary), FIGURES)
    assert seen[-1][1] == primary, 'the primary %s did not restart last: %s' % (primary, [m for _t, m, _o in seen])
    # It handed its role over before it stopped: seen ONLINE as a secondary before its stop.
    assert any(s[primary] != 'down' and s[primary][:2] == ('ONLINE', 'SECONDARY') for t, s in samples if t < seen[-1][0]), \
        'the primary %s was never seen a secondary before its stop' % primary
    print('GR a: rolling restart under writes %.1f s, %d samples, 0 below a majority, stops %s (primary %s last), '
          '%d rows committed, %d writer errors %s, rows/checksum %s'
          % (took, len(samples), [m for _t, m, _o in seen], primary, len(writer.committed), len(writer.errors),
             sorted(set(e[2] for e in writer.errors)), summary['gr1']))


def secondary_faulted_mid_run(group, tmp_path, fault):
    """fault (member_killed_mid_run, member_partitioned_mid_run) on a secondary other than the first member
    restarted, in a rolling restart with writes through the primary; its (victim, seconds, writer, summary)."""
    primary = group.primary()
    playbook, extra = rolling_restart()
    return fault(group, tmp_path, playbook, extra, writer_order(primary), FIGURES,
                 lambda first: next(m for m in MEMBERS if m not in (first, primary)))


def test_b_a_member_killed_mid_run_stops_the_run(group, tmp_path):
    victim, took, writer, summary = secondary_faulted_mid_run(group, tmp_path, member_killed_mid_run)
    print('GR b: killed %s (pid %d) after the gate of %s; run stopped in %.1f s, %s untouched; %d rows committed, '
          '%d writer errors, rows/checksum %s'
          % (victim['host'], victim['pid'], victim['first'], took, victim['untouched'], len(writer.committed),
             len(writer.errors), summary['gr1']))


def test_c_a_member_left_recovering_stops_the_run_past_the_gate_timeout(group, tmp_path):
    primary = group.primary()

    def block():
        for member in MEMBERS:
            drop_ports(member, [SQL_PORT], to=[group.address(m) for m in MEMBERS if m != member])
        return lambda: [undrop(m) for m in MEMBERS]

    playbook, extra = rolling_restart()
    # While its recovery channel connects to a donor that drops the packets, the member's replication status
    # cannot be read (SHOW REPLICA STATUS blocks up to the connect timeout): the gate says so, at its timeout.
    stuck, recovering, took, writer, summary, back, waited = member_left_joining(
        group, tmp_path, playbook, extra, writer_order(primary), FIGURES, block, lambda s: s[0] == 'RECOVERING',
        ('RECOVERING, not ONLINE', 'SHOW REPLICA STATUS failed: (2013) Lost connection to MySQL server during query '
                                   '(timed out)'), GATE_TIMEOUT)
    assert stuck != primary, 'the primary %s restarted first' % primary
    print('GR c: %s RECOVERING for %.1f s (its recovery connections dropped); gate shut after %d s; run stopped in '
          '%.1f s, %s untouched; ONLINE %.1f s after the rules went; %d rows committed, %d writer errors, rows/checksum %s'
          % (stuck, recovering, waited, took, [m for m in MEMBERS if m != stuck], back, len(writer.committed),
             len(writer.errors), summary['gr1']))


def test_d_a_network_partition_mid_run_stops_the_run(group, tmp_path):
    victim, took, writer, summary = secondary_faulted_mid_run(group, tmp_path, member_partitioned_mid_run)
    print('GR d: partitioned %s after the gate of %s; run stopped in %.1f s, nothing restarted after; ONLINE again '
          '%.1f s after healing; %d rows committed, %d writer errors, rows/checksum %s'
          % (victim['host'], victim['first'], took, victim['rejoined_in'], len(writer.committed), len(writer.errors),
             summary['gr1']))
    group.query(group.primary(), 'DROP DATABASE IF EXISTS %s' % SCHEMA)
