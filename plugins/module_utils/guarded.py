# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guarded-change engine: what every change that must not hurt a busy server shares.

Its clients are the guarded drop (drop_tables.py) and the guarded conversion (convert_tables.py); each
says what it changes, the engine says how a change is guarded:

- **input rules**: table names as plain identifiers outside the system schemas (parse_table_name),
  the numeric ranges (range_problems) and the off-peak window gate of the modules' pure checks
  (window_gate), all before any connection;
- **the window again** before each table and each retry (GuardedChange.window_closed);
- **metadata locks**: who holds one on a table, from the source the flavor offers (find_blockers);
- **bounded lock waits**: each statement with a short session lock_wait_timeout and a bounded number of
  retries on a lock wait timeout or deadlock (run_statement);
- **signals**: SIGTERM/SIGINT/SIGHUP raise Interrupted (not an Exception), so finally blocks run;
  while restoring, a second signal is ignored;
- **settings put back**: AHI and super_read_only back to what the run found, from a fresh connection
  when the run's own is gone, killing the interrupted session first (restore);
- **the per-server marker** (Marker): a file in a private state directory on the host that records a
  guarded part under way, with the server's identity (server_uuid, start time) and the session's
  (connection id, user, client address, start). The next run on that server checks before it acts
  (session_verdict, super_read_only_verdict, ahi_verdict): it KILLs only a session that is still the
  same, puts super_read_only back only on a server that is still a replica, and AHI only when nobody
  changed it since; otherwise it reports what it found and leaves it;
- **followers**: a replica-side run of another controller's change is cancelled through its cancel file;
- **scope**: where global settings are switched (ServerScope). A cluster rule (Galera total order
  isolation: the statement reaches every member; AHI off on every member before, back on all after) is a
  scope of its own, chosen in scope_for(): the one place to add it.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import time
import traceback

from ansible_collections.dbfleet.innodb.plugins.module_utils import clusters as cluster_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils import topology
from ansible_collections.dbfleet.innodb.plugins.module_utils.connection import (
    ConnectError, error_text, execute, global_variables, is_plain_identifier, open_connection, query, query_one)
from ansible_collections.dbfleet.innodb.plugins.module_utils.offpeak import WindowError
from ansible_collections.dbfleet.innodb.plugins.module_utils.private_paths import (  # noqa: F401 (guarded's API)
    NOFOLLOW, open_private_file, private_dir_problem)
from ansible_collections.dbfleet.innodb.plugins.module_utils.offpeak import status as window_status
from ansible_collections.dbfleet.innodb.plugins.module_utils.signals import Interrupted, Interruptible

try:
    import pymysql
except ImportError:  # pragma: no cover - reported by the module
    pymysql = None

AHI = 'innodb_adaptive_hash_index'
SUPER_READ_ONLY = 'super_read_only'
# Schemas nothing here ever changes: the server's own and the memcached plugin's config.
PROTECTED_SCHEMAS = frozenset(('mysql', 'sys', 'information_schema', 'performance_schema', 'innodb_memcache'))
# Errors worth another attempt: the lock wait ran out (MDL or row lock) or a deadlock.
RETRYABLE_ERRORS = frozenset((1205, 1213))
SIGNALS = ('SIGTERM', 'SIGINT', 'SIGHUP')
DEFAULT_STATE_DIR = '~/.dbfleet/drop_tables'
MARKER_VERSION = 2
# Seconds two readings of a server's start time (NOW() - Uptime) may differ and still be one start (both are whole
# seconds; a restart moves it by the server's whole previous uptime).
START_TOLERANCE = 10
# Where metadata locks are listed (flavors.py metadata_lock_sources names them per flavor/version):
# source -> (probe that says whether it is enabled, its column, the enabled value, the listing, its first argument).
MDL_SOURCES = {
    'performance_schema': (
        "SELECT ENABLED FROM performance_schema.setup_instruments WHERE NAME = 'wait/lock/metadata/sql/mdl'",
        'ENABLED', 'YES',
        'SELECT ml.OBJECT_SCHEMA AS db, ml.OBJECT_NAME AS tbl, ml.LOCK_TYPE AS lock_type, '
        'ml.LOCK_STATUS AS lock_status, t.PROCESSLIST_ID AS id, t.PROCESSLIST_USER AS user, '
        't.PROCESSLIST_HOST AS host, t.PROCESSLIST_COMMAND AS command, t.PROCESSLIST_TIME AS time '
        'FROM performance_schema.metadata_locks ml JOIN performance_schema.threads t '
        'ON t.THREAD_ID = ml.OWNER_THREAD_ID WHERE ml.OBJECT_TYPE = %s AND ml.OBJECT_SCHEMA = %s '
        'AND ml.OBJECT_NAME = %s AND (t.PROCESSLIST_ID IS NULL OR t.PROCESSLIST_ID <> CONNECTION_ID())',
        ('TABLE',)),
    'metadata_lock_info': (
        "SELECT PLUGIN_STATUS FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'METADATA_LOCK_INFO'",
        'PLUGIN_STATUS', 'ACTIVE',
        'SELECT m.TABLE_SCHEMA AS db, m.TABLE_NAME AS tbl, m.LOCK_TYPE AS lock_type, '
        'm.LOCK_MODE AS lock_status, p.ID AS id, p.USER AS user, p.HOST AS host, '
        'p.COMMAND AS command, p.TIME AS time FROM information_schema.METADATA_LOCK_INFO m '
        'LEFT JOIN information_schema.PROCESSLIST p ON p.ID = m.THREAD_ID '
        'WHERE m.LOCK_TYPE LIKE %s AND m.TABLE_SCHEMA = %s AND m.TABLE_NAME = %s '
        'AND m.THREAD_ID <> CONNECTION_ID()',
        ('Table%',)),
}


class GuardedError(Exception):
    """An expected failure of a guarded change; the message is for the user."""


# ---------------------------------------------------------------- input rules (no connection)
def parse_table_name(text, verb='changed'):
    """('db', 'table') from 'db.table'; raises GuardedError naming the input.

    Only plain identifiers ([A-Za-z0-9_$], not all digits, at most 64 characters): no
    wildcards, quotes, backticks, spaces or comments can reach the SQL text.
    """
    if not isinstance(text, str):
        raise GuardedError('table %r: give a string "db.table"' % (text,))
    parts = text.split('.')
    if len(parts) != 2:
        raise GuardedError('table %r: give exactly "db.table" (one dot, no quoting)' % (text,))
    db, table = parts
    for what, name in (('schema', db), ('table', table)):
        if not is_plain_identifier(name):
            raise GuardedError('table %r: %s name %r is not a plain identifier (letters, digits, _ and $ '
                               'only, at most 64 characters; no wildcards, quotes or spaces)' % (text, what, name))
    if db.lower() in PROTECTED_SCHEMAS:
        raise GuardedError('table %r: schema %r is a system schema; nothing is %s there' % (text, db, verb))
    return db, table


def parse_table_names(names, verb='changed'):
    """Validated, de-duplicated [(db, table)] in the order given; raises GuardedError."""
    if not names:
        raise GuardedError('tables: give at least one "db.table"')
    seen = []
    for text in names:
        pair = parse_table_name(text, verb)
        if pair not in seen:
            seen.append(pair)
    return seen


def quote_name(name):
    """Backtick-quote any identifier the server accepts (spaces, hyphens, backticks, non-ASCII).

    Names read from the server (column names) reach the SQL text only through this: a backtick in the
    name is doubled, as the server's own SHOW CREATE TABLE writes it. Refused (GuardedError): what no
    server accepts as a name (not a string, empty, longer than 64 characters, NUL, characters outside
    the Basic Multilingual Plane)."""
    if not isinstance(name, str) or not name:
        raise GuardedError('identifier %r: give a non-empty name' % (name,))
    if len(name) > 64:
        raise GuardedError('identifier %r is longer than 64 characters' % (name,))
    if any(c == '\x00' or ord(c) > 0xFFFF for c in name):
        raise GuardedError('identifier %r holds a character no server accepts in a name (NUL or outside '
                           'the Basic Multilingual Plane)' % (name,))
    return '`%s`' % name.replace('`', '``')


def qualified_name(db, table):
    return '%s.%s' % (quote_name(db), quote_name(table))


def range_problems(params, ranges):
    """Messages for params outside their (low, high) range, naming the input and the value given."""
    return ['%s=%s is out of range %s-%s' % (name, params[name], low, high)
            for name, (low, high) in sorted(ranges.items())
            if params.get(name) is not None and not low <= params[name] <= high]


def window_gate(window, timezone, force=False, applies=True, now=None):
    """The off-peak window gate of a module's pure checks: (status, refusal, warning).

    status is offpeak.status() (None without a window); refusal is the message to fail with (a bad
    window or time zone, or outside the window unless forced); warning is set when forced outside.
    applies=False (read-only modes) only reports where the run stands."""
    if window is None:
        return None, None, None
    try:
        st = window_status(window, timezone or 'UTC', now)
    except WindowError as e:
        return None, str(e), None
    if st['inside'] or not applies:
        return st, None, None
    if force:
        return st, None, 'forced outside the window: %s' % st['message']
    return st, 'refusing: %s (set force_window to run anyway)' % st['message'], None


def module_window_gate(module, nothing, applies=True):
    """window_gate() for a module from its window / timezone / force_window options: fails the module with
    the refusal (and the nothing-done result), warns when forced. Returns the window status (or None)."""
    p = module.params
    st, refusal, warning = window_gate(p['window'], p['timezone'], p['force_window'], applies=applies)
    if refusal:
        module.fail_json(msg=refusal, window=st, **nothing)
    if warning:
        module.warn(warning)
    return st


def human_size(n):
    if n is None:
        return None
    n = float(n)
    for unit in ('B', 'KiB', 'MiB', 'GiB', 'TiB'):
        if n < 1024 or unit == 'TiB':
            return ('%d %s' % (n, unit)) if unit == 'B' else ('%.1f %s' % (n, unit))
        n /= 1024.0


def plan_size(stats_bytes, file_bytes):
    """The size the drop plan shows: the tablespace file's real size where the server tells it (the .ibd the
    DROP removes), else the statistics of information_schema.TABLES (DATA_LENGTH + INDEX_LENGTH), which lag
    behind after bulk inserts until the statistics refresh. size_source says which."""
    if file_bytes is not None and file_bytes >= (stats_bytes or 0):
        return dict(size_bytes=file_bytes, size=human_size(file_bytes), size_source='tablespace file')
    return dict(size_bytes=stats_bytes or 0, size=human_size(stats_bytes or 0), size_source='table statistics')


def now_stamp(now=None):
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return now.strftime('%Y%m%d%H%M%S')


def onoff(value):
    """'ON'/'OFF' from a server's boolean spelling; None stays None."""
    if value is None:
        return None
    return 'ON' if str(value).upper() in ('ON', '1', 'TRUE', 'YES') else 'OFF'


# ---------------------------------------------------------------- private paths and processes
def cancel_file_problem(path, euid=None):
    """A cancel file must live in a private directory (not a predictable name in /tmp)."""
    if not path:
        return None
    problem = private_dir_problem(os.path.dirname(os.path.abspath(path)) or '/', euid)
    if problem:
        return ('cancel_file %s: %s; give a file in a private directory (the playbook makes one per run '
                'with ansible.builtin.tempfile)' % (path, problem))
    return None


def process_start(pid):
    """Start time of a process in clock ticks since boot (None when it does not exist)."""
    try:
        with open('/proc/%d/stat' % int(pid)) as handle:
            return int(handle.read().rsplit(')', 1)[1].split()[19])
    except (OSError, IndexError, ValueError, TypeError):
        return None


def process_alive(pid, start=None):
    """Whether the process that wrote a marker still runs (same pid and start time)."""
    if not pid:
        return False
    now = process_start(pid)
    if now is None:
        return False
    return start is None or now == start


# ---------------------------------------------------------------- identities and the marker
def marker_key(variables):
    """The marker's key for one server: its server_uuid (MySQL, Percona); MariaDB has none, so there
    hostname, port, datadir and server_id. Two servers seen from one runner never share a key as long
    as their server_uuid (or that quadruple) differs."""
    uuid = variables.get('server_uuid')
    if uuid:
        text = 'uuid|%s' % uuid
    else:
        text = 'host|%s|%s|%s|%s' % (variables.get('hostname'), variables.get('port'), variables.get('datadir'),
                                     variables.get('server_id'))
    return hashlib.sha1(text.encode('utf-8')).hexdigest()[:16]


# Uptime and the server's clock in one statement, so the start time (UNIX_TIMESTAMP() - Uptime) does not move with
# the time between two statements on a loaded server: performance_schema.global_status (MySQL 5.7+),
# information_schema.GLOBAL_STATUS (MariaDB; MySQL 5.6); SHOW GLOBAL STATUS where neither answers.
UPTIME_SOURCES = ('performance_schema.global_status', 'information_schema.GLOBAL_STATUS')


def _clock_and_uptime(conn):
    for source in UPTIME_SOURCES:
        try:
            row = query_one(conn, 'SELECT CONNECTION_ID() AS id, UNIX_TIMESTAMP() AS now, (SELECT VARIABLE_VALUE FROM %s '
                                  "WHERE VARIABLE_NAME = 'Uptime') AS uptime" % source)
        except pymysql.err.MySQLError:
            continue
        if row and row.get('uptime') is not None:
            return row
    row = query_one(conn, 'SELECT CONNECTION_ID() AS id, UNIX_TIMESTAMP() AS now') or {}
    uptime = query_one(conn, "SHOW GLOBAL STATUS LIKE 'Uptime'") or {}
    return dict(row, uptime=uptime.get('Value'))


def read_identity(conn):
    """The server's and this session's identity, as a marker records them.

    server: uuid (None on MariaDB), hostname, port, datadir, server_id, started (UNIX time of NOW() - Uptime);
    session: id (CONNECTION_ID()), user, host (client address as PROCESSLIST shows it), started (UNIX time)."""
    row = _clock_and_uptime(conn) or {}
    variables = global_variables(conn, ['server_uuid', 'hostname', 'port', 'datadir', 'server_id'])
    me = query_one(conn, 'SELECT USER, HOST FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()') or {}
    now = int(float(row.get('now') or 0))
    up = int(float(row.get('uptime') or 0))
    server = dict(uuid=variables.get('server_uuid') or None, hostname=variables.get('hostname'),
                  port=variables.get('port'), datadir=variables.get('datadir'),
                  server_id=variables.get('server_id'), started=now - up if now else None)
    session = dict(id=int(row['id']) if row.get('id') is not None else None, user=me.get('USER'),
                   host=me.get('HOST'), started=now or None)
    return dict(server=server, session=session, now=now)


def same_server_start(recorded, now):
    """Whether two identities are one run of one server: same server_uuid, start time within tolerance."""
    if not recorded or not now:
        return False
    if recorded.get('uuid') != now.get('uuid'):
        return False
    a, b = recorded.get('started'), now.get('started')
    if a is None or b is None:
        return False
    return abs(int(a) - int(b)) <= START_TOLERANCE


def session_verdict(marker, server_now, row, now):
    """(kill, finding) for the session a marker names. KILL only a session that is still the same:
    the same server run (uuid and start time: ids start again at 1 after a restart), the same id, the same
    user and client address, and not in its current state for longer than that session has existed.

    marker: the marker's dict (server, session); server_now: read_identity()['server']; row: the
    PROCESSLIST row (ID, USER, HOST, TIME) of that id now, or None; now: the server's UNIX time now."""
    session = marker.get('session') or {}
    sid = session.get('id')
    if sid is None:
        return False, 'the marker names no session'
    if not same_server_start(marker.get('server'), server_now):
        return False, ('session %s not killed: the server was restarted (or is another one) since the marker was '
                       'written, so id %s names another session now' % (sid, sid))
    if row is None:
        return False, 'session %s is gone' % sid
    found = '%s@%s' % (row.get('USER'), row.get('HOST'))
    if row.get('USER') != session.get('user') or row.get('HOST') != session.get('host'):
        return False, ('session %s not killed: id %s is %s now, the marker\'s session was %s@%s'
                       % (sid, sid, found, session.get('user'), session.get('host')))
    started = session.get('started')
    age = None if started is None or now is None else int(now) - int(started)
    if age is not None and row.get('TIME') is not None and int(row['TIME']) > age + START_TOLERANCE:
        return False, ('session %s not killed: %s has been in its state for %ss, longer than the marker\'s session '
                       'existed (%ss)' % (sid, found, row['TIME'], age))
    return True, 'session %s (%s) is the interrupted run\'s: killed' % (sid, found)


def super_read_only_verdict(marker, role_now, sro_now):
    """(restore, finding): super_read_only goes back ON only on a server that is still a replica."""
    if not marker.get('super_read_only_lifted'):
        return False, None
    if sro_now == 'ON':
        return False, 'super_read_only is ON already'
    if role_now != topology.REPLICA:
        return False, ('super_read_only left OFF: the interrupted run lifted it on a replica, and this server is '
                       'a %s now (promoted since?)' % role_now)
    return True, 'super_read_only back ON (the interrupted run lifted it; the server is still a replica)'


def ahi_verdict(marker, server_now, ahi_now, set_info_now):
    """(restore, finding): AHI goes back to what the interrupted run found only when nobody changed it since:
    the same server run (a restart reads it from the configuration again), its value still what the run
    set, and (where the server records it, performance_schema.variables_info) the same SET time and user."""
    if not marker.get('ahi_toggled'):
        return False, None
    before, set_to = marker.get('ahi_before'), marker.get('ahi_set')
    if before is None or ahi_now == before:
        return False, None if ahi_now == before else 'the interrupted run recorded no AHI value'
    if not same_server_start(marker.get('server'), server_now):
        return False, ('AHI left %s: the server was restarted since the interrupted run switched it %s, so the '
                       'value is the configured one' % (ahi_now, set_to))
    if ahi_now != set_to:
        return False, 'AHI left %s: the interrupted run set %s, someone changed it since' % (ahi_now, set_to)
    recorded = marker.get('ahi_set_info')
    if recorded and set_info_now and recorded != set_info_now:
        return False, ('AHI left %s: it was SET again since the interrupted run (at %s by %s)'
                       % (ahi_now, set_info_now.get('time'), set_info_now.get('user')))
    return True, 'AHI back %s (the interrupted run found it %s and set %s)' % (before, before, set_to)


class Marker(object):
    """The per-server marker file: JSON, written atomically, in a private directory (0700)."""

    def __init__(self, state_dir, key, prefix='server'):
        self.dir = os.path.expanduser(state_dir or DEFAULT_STATE_DIR)
        self.key = key
        self.path = os.path.join(self.dir, '%s-%s.json' % (prefix, key))

    def read(self):
        """The marker's data, or None when there is none. The state directory is checked first (a marker in a
        directory others can write to could be anyone's: GuardedError naming it); the marker is opened without
        following a symbolic link."""
        if not os.path.lexists(self.dir):
            return None
        self.check_dir()
        try:
            fd = open_private_file(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise GuardedError('state_dir: the marker %s cannot be used (%s)' % (self.path, e.strerror or e))
        try:
            with os.fdopen(fd) as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def check_dir(self):
        problem = private_dir_problem(self.dir)
        if problem:
            raise GuardedError('state_dir: %s' % problem)

    def ensure_dir(self):
        if not os.path.lexists(self.dir):
            os.makedirs(self.dir, 0o700)
        self.check_dir()

    def write(self, data):
        self.ensure_dir()
        tmp = '%s.%d.tmp' % (self.path, os.getpid())
        try:
            os.unlink(tmp)          # a leftover of a process that had this pid
        except FileNotFoundError:
            pass
        fd = open_private_file(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        with os.fdopen(fd, 'w') as handle:
            json.dump(data, handle, sort_keys=True)
        os.rename(tmp, self.path)

    def remove(self):
        try:
            os.unlink(self.path)
        except OSError:
            pass


# ---------------------------------------------------------------- scope: where global settings reach
class ServerScope(object):
    """A change on one server: global settings are switched on this server only, and the statements
    (DROP, ALTER) reach the others by replication, which the playbooks orchestrate."""

    name = 'server'
    # Whether a DDL statement run here reaches the other members of its cluster by itself.
    ddl_reaches_members = False
    # The result of a table the member sees gone while it follows (the replica side).
    followed_result = 'dropped_by_replication'
    session_sql = ()
    # What a lock holder nobody can list does to a DROP or ALTER here (find_blockers' warning).
    unlisted_lock_effect = 'a DROP or ALTER that meets one waits at most lock_wait_timeout per attempt'

    def members(self, engine, conn=None):
        """The connections a global setting is applied on (this server's: each member of a cluster runs
        its own part, switching AHI off before the statement and back after)."""
        return [conn or engine.conn]


class ClusterScope(ServerScope):
    """A member of a cluster where DDL reaches every member by itself: Galera (the statement runs in total
    order isolation on every node at once, session wsrep_OSU_method=TOI; RSU, one node at a time out of the
    cluster, is never used) and Group Replication (the statement runs on the primary and reaches every
    secondary through the group). The playbooks run the statement once per cluster, on one member
    (cluster_parts), and every other member follows it: AHI off there before the statement (where the flavor
    needs it, decided per member as on any server), the window and the metadata-lock check there too, AHI back
    on all after; their tables are 'dropped_by_cluster'."""

    ddl_reaches_members = True
    followed_result = 'dropped_by_cluster'

    def __init__(self, kind):
        self.name = kind
        # Galera: this session's DDL in total order isolation, whatever the global method is.
        self.session_sql = ("SET SESSION wsrep_OSU_method = 'TOI'",) if kind == GALERA_SCOPE else ()
        if kind == GALERA_SCOPE:
            # Measured on the lab's MariaDB 10.11 Galera cluster (docs/drop_tables.md "Clusters"): a transaction holding
            # the table is aborted by the TOI statement (error 1213 for it), but a session holding FLUSH TABLES <t>
            # WITH READ LOCK made the DROP wait for over 10 minutes, lock_wait_timeout=3 notwithstanding, KILL refused
            # (error 1095), and every other DDL of the cluster waited behind it.
            self.unlisted_lock_effect = (
                'on a Galera node the DROP or ALTER runs in total order isolation: it aborts a transaction that holds '
                'the table, but a table lock (FLUSH TABLES ... WITH READ LOCK) makes it wait without bound, '
                'lock_wait_timeout does not apply, KILL refuses it (error 1095), and every other DDL of the cluster '
                'waits behind it; enable performance_schema or the METADATA_LOCK_INFO plugin so that holders are '
                'listed and the run refuses')


GALERA_SCOPE = 'galera'
GROUP_REPLICATION_SCOPE = 'group_replication'


def scope_for(identity, variables):
    """The scope of a guarded change on this server (the one place a cluster rule is added): a Galera node
    (wsrep_on with a provider) or a Group Replication member (a group name with the plugin running) is a
    ClusterScope; any other server a ServerScope."""
    lower = dict((str(k).lower(), v) for k, v in (variables or {}).items())
    if cluster_utils.galera_enabled(lower):
        return ClusterScope(GALERA_SCOPE)
    if cluster_utils.group_replication_enabled(lower) and onoff(lower.get('group_replication_single_primary_mode')) is not None:
        return ClusterScope(GROUP_REPLICATION_SCOPE)
    return ServerScope()


# Variables open() reads for scope_for.
SCOPE_VARIABLES = ('wsrep_on', 'wsrep_provider', 'group_replication_group_name', 'group_replication_single_primary_mode')


def cluster_parts(plan_hosts, run_hosts):
    """{host: dict(part, cluster, by)} for the hosts of a run that are cluster members (others are absent):
    the statement runs once per cluster, on one member ('drop'), and reaches every other member by itself,
    which follows it ('follow', by: the member that runs it). The member that runs it: a Group Replication
    group's primary (a secondary refuses writes); in a Galera cluster the first member of the run.

    plan_hosts: topology_plan's plan.hosts (cluster: kind, name, role per host); run_hosts: the run's hosts in
    play order."""
    plan_hosts = plan_hosts or {}
    groups = {}
    for h in run_hosts or []:
        cluster = (plan_hosts.get(h) or {}).get('cluster') or {}
        if cluster.get('name'):
            groups.setdefault((cluster.get('kind'), cluster['name']), []).append(h)
    out = {}
    for (kind, name), members in groups.items():
        runner = members[0]
        if kind == cluster_utils.GROUP_REPLICATION:
            primaries = [m for m in members if (plan_hosts[m].get('cluster') or {}).get('role') == cluster_utils.GR_PRIMARY]
            runner = primaries[0] if primaries else None
        for m in members:
            out[m] = dict(part='drop' if m == runner else 'follow', cluster=name, kind=kind, by=runner)
    return out


# ---------------------------------------------------------------- a run over a topology (the playbooks' checks)
def replica_problems(plan_hosts, run_hosts, check, results=None, whole_topology=True):
    """What stops a guarded change over several hosts before anything changes, one message per finding.

    plan_hosts: the topology plan's hosts (topology_plan's plan.hosts: role, sources, external_sources,
    server_id); run_hosts: the hosts of the run. check:
      - 'sources': replicas of the run whose source is not in the run (a replica only follows its source);
      - 'replicas': replicas of the run at all (a change that may not reach a replica);
      - 'registered': replicas registered with a host of the run (results: host -> the module's preflight
        result with replica_hosts) that are not in the run, or any of them when whole_topology is false.
    """
    plan_hosts = plan_hosts or {}
    run = list(run_hosts or [])
    out = []
    if check in ('sources', 'replicas'):
        for h in run:
            entry = plan_hosts.get(h) or {}
            if entry.get('role') != topology.REPLICA:
                continue
            if check == 'replicas':
                channels = list(entry.get('sources') or []) + [
                    e.get('channel') for e in entry.get('external_sources') or [] if e.get('channel')]
                out.append('%s is a replica of %s' % (h, ', '.join(str(c) for c in channels)))
                continue
            away = [s for s in entry.get('sources') or [] if s not in run] + [
                e.get('reason') for e in entry.get('external_sources') or [] if e.get('reason')]
            if away:
                out.append('%s replicates from %s' % (h, ', '.join(str(a) for a in away)))
        return out
    if check != 'registered':
        raise ValueError('check %r: sources, replicas or registered' % (check,))
    ids = [e.get('server_id') for e in plan_hosts.values() if isinstance(e, dict)]
    for h in run:
        result = (results or {}).get(h)
        if not isinstance(result, dict):
            continue
        for r in result.get('replica_hosts') or []:
            if r.get('server_id') in ids and whole_topology:
                continue
            where = ('%s:%s' % (r.get('host'), r.get('port'))) if r.get('host') else 'it reports no host'
            out.append('%s has replica server_id %s (%s)%s' % (
                h, r.get('server_id'), where, '' if whole_topology else ', and the whole topology is not converted'))
    return out


# ---------------------------------------------------------------- the engine
class GuardedChange(object):
    """One guarded change on one server. Clients (the drop, the conversion) fill tables, plan and report
    and call the engine for everything guarded. Collects steps as it goes."""

    module = 'dbfleet.innodb'
    marker_prefix = 'server'
    default_state_dir = DEFAULT_STATE_DIR

    def __init__(self, params, check_mode=False, warn=None, connect=None, sleep=time.sleep,
                 clock=time.monotonic):
        self.p = params
        self.check_mode = check_mode
        self.warn = warn or (lambda msg: None)
        self._connect = connect or open_connection
        self.sleep = sleep
        self.clock = clock
        self.conn = None
        self.identity = None
        self.ident = None
        self.server_vars = {}
        self.scope = ServerScope()
        self.changed = False
        self.steps = []
        self.plan = []
        self.tables = []
        self.blockers = []
        self.ahi = dict(requested=params.get('ahi_strategy') or 'auto', strategy=None, before=None,
                        after=None, toggled=False, reason=None, off_seconds=None)
        self.super_read_only = None
        self.window = None
        self.interrupted_run = None
        self.marker = None
        self.marker_data = None
        self.now = None  # the window check's clock (ISO text or datetime); None: the real time
        self.replica_hosts = None
        self._signals = None  # the signals.Interruptible of the guarded part, while it runs
        self._ahi_off_at = None
        self.own_run_alive = False  # this run's own follower runs on this server (check_interrupted)

    # ------------------------------------------------------------ helpers
    def step(self, name, started, ok=True, detail=None, target=None):
        rec = dict(step=name, seconds=round(self.clock() - started, 4), ok=ok)
        if target:
            rec['target'] = target
        if detail:
            rec['detail'] = detail
        self.steps.append(rec)
        return rec

    def open(self):
        try:
            self.conn = self._connect(self.p)
        except ConnectError as e:
            raise GuardedError(str(e))
        rows = global_variables(self.conn, list(flavors.DETECT_VARIABLES) + [
            AHI, SUPER_READ_ONLY, 'log_bin', 'hostname', 'port', 'datadir', 'server_uuid', 'server_id'] + list(SCOPE_VARIABLES))
        self.identity = flavors.identity_from_variables(rows)
        self.server_vars = rows
        self.scope = scope_for(self.identity, rows)
        for sql in self.scope.session_sql:
            execute(self.conn, sql)
        self.ident = read_identity(self.conn)
        if self.marker is None:
            self.marker = Marker(self.p.get('state_dir') or self.default_state_dir, marker_key(rows), self.marker_prefix)
        if flavors.variable_facts('information_schema_stats_expiry', self.identity.flavor, self.identity.version):
            # sizes from information_schema.TABLES are cached for a day otherwise
            execute(self.conn, 'SET SESSION information_schema_stats_expiry = 0')
        return self.conn

    def connect_and_identify(self):
        started = self.clock()
        self.open()
        self.step('connect and identify', started, detail='%s %s' % (
            self.identity.flavor, flavors.format_version(self.identity.version)))

    def report(self):
        """What every client reports; the client adds its own keys."""
        return dict(changed=self.changed, tables=self.tables, steps=self.steps, plan=self.plan,
                    blockers=self.blockers, window=self.window, interrupted_run=self.interrupted_run,
                    replica_hosts=self.replica_hosts,
                    server=self.identity.to_dict() if self.identity else None)

    def refresh_vars(self):
        self.server_vars.update(global_variables(self.conn, [AHI, SUPER_READ_ONLY]))

    # ------------------------------------------------------------ the window, again before each table and retry
    def window_closed(self):
        """None while the window is open (or none was given, or it is forced); else the message."""
        window = self.p.get('window')
        if not window or self.p.get('force_window'):
            return None
        st = window_status(window, self.p.get('timezone') or 'UTC', self.now)
        self.window = st
        return None if st['inside'] else st['message']

    # ------------------------------------------------------------ the marker of this run
    def new_marker(self, mode, tables):
        """The marker of this run's guarded part (not written yet)."""
        self.marker_data = dict(
            version=MARKER_VERSION, state='running', mode=mode, module=self.module, run_id=self.p.get('run_id'),
            pid=os.getpid(), pid_start=process_start(os.getpid()), server=(self.ident or {}).get('server'),
            session=(self.ident or {}).get('session'), connection_id=((self.ident or {}).get('session') or {}).get('id'),
            started=now_stamp(), ahi_before=self.ahi['before'],
            ahi_toggled=False, ahi_set=None, ahi_set_info=None,
            super_read_only_before=(self.super_read_only or {}).get('before'), super_read_only_lifted=False,
            tables=tables, done=[], cancel_file=self.p.get('cancel_file'))
        return self.marker_data

    def save_marker(self, **changes):
        self.marker_data.update(changes)
        self.marker.write(self.marker_data)

    def finish_marker(self):
        """After the restore: the marker records what was done (state done), unless AHI could not be put
        back, in which case it stays 'running' for the next run to finish the restore."""
        if self.marker_data is None:
            return
        if self.ahi['toggled'] and self.ahi['after'] != self.ahi['before']:
            return
        self.save_marker(state='done', finished=now_stamp())

    # ------------------------------------------------------------ an interrupted earlier run
    def check_interrupted(self):
        """Find what an earlier run on this server left behind; check before acting on it.

        A marker in state 'done' only records what that run did. A 'running' marker whose process is gone
        is an interrupted run: its session is killed when it is still the same session, super_read_only
        goes back ON on a server that is still a replica, AHI back only when nobody changed it since; each
        finding is reported. A running follower of another run is cancelled through its cancel file (its
        own finally puts AHI back); a running change of another run stops this one.
        Returns the marker's data for the client (what the earlier run did), or None."""
        data = self.marker.read()
        if not data:
            return None
        if data.get('state') == 'done':
            return data
        alive = process_alive(data.get('pid'), data.get('pid_start'))
        info = dict(found=data.get('mode'), run_id=data.get('run_id'), pid=data.get('pid'),
                    started=data.get('started'), tables=data.get('tables'), done=sorted(data.get('done') or []),
                    ahi_before=data.get('ahi_before'), process_alive=alive, outcome=None, actions=[], findings=[])
        if alive and self.p.get('run_id') and data.get('run_id') == self.p.get('run_id'):
            self.own_run_alive = True
            return None  # this run's own follower (the readiness probe sees it)
        self.interrupted_run = info
        if alive:
            data = self._cancel_follower(data, info)
            if data is None:
                return None
        return self._undo(data, info)

    def _cancel_follower(self, data, info):
        cancel = data.get('cancel_file')
        if data.get('mode') != 'follow' or not cancel:
            raise GuardedError('another %s run is under way on this server (pid %s, started %s UTC, %s of %s); wait '
                               'for it to end' % (data.get('module') or self.module, data.get('pid'),
                                                  data.get('started'), data.get('mode'),
                                                  ', '.join(data.get('tables') or [])))
        info['actions'].append('cancel the follower of run %s (pid %s) through %s' % (
            data.get('run_id'), data.get('pid'), cancel))
        if self.check_mode:
            info['outcome'] = 'would_cancel'
            self.changed = True
            return None
        problem = cancel_file_problem(cancel)
        if problem:
            raise GuardedError('the marker of an earlier run names a cancel file that is not private: %s' % problem)
        os.close(os.open(cancel, os.O_WRONLY | os.O_CREAT | os.O_APPEND | NOFOLLOW, 0o600))
        deadline = self.clock() + float(self.p.get('restore_timeout') or 60)
        while process_alive(data.get('pid'), data.get('pid_start')) and self.clock() < deadline:
            self.sleep(0.2)
        if process_alive(data.get('pid'), data.get('pid_start')):
            raise GuardedError('the follower of an earlier run (pid %s) did not stop within %ss of its cancel file %s'
                               % (data.get('pid'), self.p.get('restore_timeout'), cancel))
        info['outcome'] = 'cancelled'
        self.changed = True
        data = self.marker.read()
        if not data or data.get('state') == 'done':
            self.refresh_vars()
            return None
        return data

    def read_set_info(self, name, conn=None):
        """When and by whom a global variable was last SET (performance_schema.variables_info), or None."""
        if not flavors.capability('variables_info_table', self.identity.flavor, self.identity.version):
            return None
        try:
            row = query_one(conn or self.conn, 'SELECT SET_TIME, SET_USER, SET_HOST FROM '
                                               'performance_schema.variables_info WHERE VARIABLE_NAME = %s', (name,))
        except pymysql.err.MySQLError:
            return None
        if not row:
            return None
        return dict(time=str(row.get('SET_TIME')) if row.get('SET_TIME') is not None else None,
                    user=row.get('SET_USER') or None, host=row.get('SET_HOST') or None)

    def _undo(self, data, info):
        """The process is gone and left its changes: check each one, then undo what is still the run's."""
        ident = read_identity(self.conn)
        server_now = ident['server']
        ahi_now = self.read_ahi()
        sro_now = onoff(global_variables(self.conn, [SUPER_READ_ONLY]).get(SUPER_READ_ONLY))
        role_now = None
        if data.get('super_read_only_lifted'):
            role_now = topology.read_server(self.conn, query, global_variables)['role']
        row = None
        sid = (data.get('session') or {}).get('id')
        if sid is not None:
            row = query_one(self.conn, 'SELECT ID, USER, HOST, TIME FROM information_schema.PROCESSLIST WHERE ID = %s',
                            (sid,))
        kill, kill_finding = session_verdict(data, server_now, row, ident['now'])
        ahi_back, ahi_finding = ahi_verdict(data, server_now, ahi_now, self.read_set_info(AHI))
        sro_back, sro_finding = super_read_only_verdict(data, role_now, sro_now)
        if data.get('version', 1) < MARKER_VERSION:
            info['findings'].append('the marker was written by an older version (no server or session identity): '
                                    'nothing is replayed from it')
            kill = ahi_back = sro_back = False
        for finding in (kill_finding, ahi_finding, sro_finding):
            if finding:
                info['findings'].append(finding)
        if kill:
            info['actions'].append('KILL %s (the interrupted run\'s session)' % sid)
        if ahi_back:
            info['actions'].append('SET GLOBAL innodb_adaptive_hash_index = %s (the interrupted run found it %s, '
                                   'it is %s)' % (data['ahi_before'], data['ahi_before'], ahi_now))
        if sro_back:
            info['actions'].append('SET GLOBAL super_read_only = ON (the interrupted run lifted it)')
        if self.check_mode:
            info['outcome'] = info['outcome'] or 'would_undo'
            if ahi_back or sro_back or kill:
                self.changed = True
            self.plan.extend(info['actions'])
            return data
        if kill:
            self.kill_session(self.conn, sid)
        if ahi_back:
            self.set_ahi(data['ahi_before'])
            self.changed = True
        if sro_back:
            execute(self.conn, 'SET GLOBAL super_read_only = ON')
            self.changed = True
        info['outcome'] = 'undone' if (kill or ahi_back or sro_back or not info['findings']) else 'left'
        self.marker.write(dict(data, state='done', undone_by=self.p.get('run_id'), undone_pid=os.getpid(),
                               findings=info['findings']))
        self.refresh_vars()
        return data

    # ------------------------------------------------------------ read-only facts
    def read_replica_hosts(self):
        """The replicas registered with this server (server_id, host, port), for the playbook to compare
        with its hosts: a replica of a host that changes must be in the run. None when it cannot be read."""
        statement = flavors.capability('replica_hosts_statement', self.identity.flavor, self.identity.version)
        try:
            rows = query(self.conn, statement)
        except pymysql.err.MySQLError as e:
            self.warn('%s failed (%s): the replicas of this server cannot be listed' % (statement, error_text(e)))
            return None
        self.replica_hosts = [dict(server_id=int(r.get('Server_id') or r.get('Server_Id') or 0),
                                   host=r.get('Host') or None, port=int(r.get('Port') or 0) or None,
                                   uuid=r.get('Replica_UUID') or r.get('Slave_UUID') or None) for r in rows]
        return self.replica_hosts

    def table_row(self, db, table):
        return query_one(self.conn,
                         'SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, ENGINE, TABLE_ROWS, DATA_LENGTH, '
                         'INDEX_LENGTH, DATA_FREE FROM information_schema.TABLES '
                         'WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s', (db, table))

    def file_size(self, db, table):
        """The tablespace's real size where the server tells (file-per-table tablespaces; flavors.py
        tablespace_size_table names the table): file_bytes (the .ibd's size), allocated_bytes (on disk).
        {} where it cannot be read (a shared or general tablespace, no such table on this flavor)."""
        source = flavors.capability('tablespace_size_table', self.identity.flavor, self.identity.version)
        if not source:
            return {}
        try:
            row = query_one(self.conn, 'SELECT FILE_SIZE, ALLOCATED_SIZE FROM %s WHERE NAME = %%s' % source,
                            ('%s/%s' % (db, table),))
        except pymysql.err.MySQLError:
            return {}
        if not row or row.get('FILE_SIZE') is None:
            return {}
        return dict(file_bytes=int(row['FILE_SIZE'] or 0), file_size=human_size(row['FILE_SIZE']),
                    allocated_bytes=int(row.get('ALLOCATED_SIZE') or 0))

    # ------------------------------------------------------------ metadata locks
    def find_blockers(self, present):
        """Sessions holding metadata locks on the tables; also notes when nobody can tell."""
        sources = flavors.capability('metadata_lock_sources', self.identity.flavor, self.identity.version)
        used = None
        for source in sources:
            rows = self._mdl_rows(source, present)
            if rows is None:
                continue
            used = source
            self.blockers.extend(rows)
            break
        if used is None:
            old = query_one(self.conn,
                            'SELECT COUNT(*) AS n, MAX(TIMESTAMPDIFF(SECOND, trx_started, NOW())) AS oldest '
                            'FROM information_schema.INNODB_TRX')
            self.warn('cannot list metadata locks on this server (%s); %s open InnoDB transaction(s), oldest %s s; %s'
                      % (' / '.join(sources) + ' not enabled' if sources else 'no source known',
                         old['n'] if old else '?', old['oldest'] if old and old['oldest'] is not None else '-',
                         self.scope.unlisted_lock_effect))
        return used

    def blocker_text(self):
        return '; '.join('%s held by connection %s (%s@%s, %s, %ss, %s %s)' % (
            b['table'], b['connection_id'], b['user'], b['host'], b['command'], b['seconds'], b['lock'], b['status'])
            for b in self.blockers)

    def _mdl_rows(self, source, present):
        """The metadata-lock holders from one source (MDL_SOURCES), or None when it is not enabled here."""
        if source not in MDL_SOURCES:  # pragma: no cover - data error
            return None
        probe, column, enabled, sql, prefix = MDL_SOURCES[source]
        try:
            on = query_one(self.conn, probe)
        except pymysql.err.MySQLError:
            return None
        if not on or on[column] != enabled:
            return None
        rows = []
        for db, table in present:
            for r in query(self.conn, sql, prefix + (db, table)):
                rows.append(dict(table='%s.%s' % (r['db'], r['tbl']), connection_id=r['id'], user=r['user'],
                                 host=r['host'], command=r['command'], seconds=r['time'],
                                 lock=r['lock_type'], status=r['lock_status'], source=source))
        return rows

    # ------------------------------------------------------------ signals (module_utils/signals.py)
    def install_signal_handlers(self):
        self.restore_signal_handlers()
        self._signals = Interruptible(SIGNALS).install()

    def restore_signal_handlers(self):
        if self._signals is not None:
            self._signals.restore()
        self._signals = None

    def block_signals(self):
        """While restoring: a second signal must not abort the restore itself."""
        if self._signals is not None:
            self._signals.hold()

    # ------------------------------------------------------------ AHI and super_read_only
    def read_ahi(self, conn=None):
        return onoff(global_variables(conn or self.conn, [AHI]).get(AHI))

    def set_ahi(self, value, conn=None):
        for member in self.scope.members(self, conn):
            execute(member, 'SET GLOBAL innodb_adaptive_hash_index = %s' % ('ON' if value == 'ON' else 'OFF'))

    def switch_ahi_off(self):
        """AHI OFF for the guarded part, recorded in the marker first (a signal during the SET must still
        restore), then the value and the SET time the next run compares with."""
        s = self.clock()
        self.ahi['toggled'] = True
        self.save_marker(ahi_toggled=True, ahi_set='OFF')
        self.set_ahi('OFF')
        self.changed = True
        now = self.read_ahi()
        self.save_marker(ahi_set_info=self.read_set_info(AHI))
        self.step('switch AHI OFF', s, ok=(now == 'OFF'), detail='reads %s' % now)
        self._ahi_off_at = self.clock()
        return now

    def lift_super_read_only(self):
        s = self.clock()
        self.save_marker(super_read_only_lifted=True)
        execute(self.conn, 'SET GLOBAL super_read_only = OFF')
        self.super_read_only['lifted'] = True
        self.changed = True
        self.step('lift super_read_only', s)

    def fresh_connection(self, deadline):
        """A new connection for the restore, retrying until deadline (the server may be restarting)."""
        last = None
        while True:
            try:
                return self._connect(self.p)
            except ConnectError as e:
                last = e
            if self.clock() >= deadline:
                raise GuardedError('could not reconnect to restore settings: %s' % last)
            self.sleep(1)

    def kill_session(self, new_conn, thread_id):
        """Abort a statement the interrupted session may still be running (a DROP waiting on a lock)."""
        if thread_id is None:
            return
        try:
            execute(new_conn, 'KILL %d' % int(thread_id))
        except pymysql.err.MySQLError:
            pass  # already gone

    def abort_connection(self):
        """Kill this run's session from a fresh connection, which becomes the run's connection."""
        try:
            thread = self.conn.thread_id()
            fresh = self._connect(self.p)
        except Exception:  # pylint: disable=broad-except
            return
        try:
            self.kill_session(fresh, thread)
        finally:
            self.conn = fresh

    @staticmethod
    def alive(conn):
        if conn is None:
            return False
        try:
            conn.ping(reconnect=False)
            return True
        except Exception:  # pylint: disable=broad-except
            return False

    def restore(self, interrupted):
        """Put AHI and super_read_only back. Never raises for a lost connection: reconnects."""
        self.block_signals()
        if self._ahi_off_at is not None:
            self.ahi['off_seconds'] = round(self.clock() - self._ahi_off_at, 4)
        need_ahi = self.ahi['toggled'] and self.ahi['before'] is not None
        need_sro = self.super_read_only and self.super_read_only.get('lifted')
        if not need_ahi and not need_sro:
            if interrupted and self.conn is not None:
                self.abort_connection()
            return
        started = self.clock()
        deadline = started + float(self.p.get('restore_timeout') or 60)
        conn = self.conn
        old_thread = None
        try:
            old_thread = conn.thread_id() if conn is not None else None
        except Exception:  # pragma: no cover  # pylint: disable=broad-except
            old_thread = None
        if interrupted or not self.alive(conn):
            conn = self.fresh_connection(deadline)
            self.kill_session(conn, old_thread)
        errors = []
        if need_ahi:
            want = self.ahi['before']
            while True:
                try:
                    self.set_ahi(want, conn)
                    now = self.read_ahi(conn)
                except pymysql.err.MySQLError as e:
                    now = None
                    errors.append(error_text(e))
                    if not self.alive(conn):
                        conn = self.fresh_connection(deadline)
                if now == want:
                    break
                if self.clock() >= deadline:
                    errors.append('AHI is %s, wanted %s (a buffer pool resize in progress makes SET ON do '
                                  'nothing)' % (now, want))
                    break
                self.sleep(0.5)
            self.ahi['after'] = now
            self.step('restore AHI %s' % want, started, ok=(now == want))
        if need_sro:
            s2 = self.clock()
            try:
                execute(conn, 'SET GLOBAL super_read_only = ON')
                val = global_variables(conn, [SUPER_READ_ONLY]).get(SUPER_READ_ONLY)
                self.super_read_only['after'] = val
                self.step('restore super_read_only ON', s2, ok=(val == 'ON'))
            except pymysql.err.MySQLError as e:
                errors.append('super_read_only: %s' % error_text(e))
                self.step('restore super_read_only ON', s2, ok=False, detail=error_text(e))
        if conn is not self.conn:
            self.conn = conn
        if errors and (need_ahi and self.ahi['after'] != self.ahi['before']):
            raise GuardedError('could not put %s back to %s: %s' % (AHI, self.ahi['before'], '; '.join(errors)))

    # ------------------------------------------------------------ the guarded part
    def guarded(self, mode, tables, body):
        """Run body() as the guarded part: the marker written first, signal handlers installed, and in the
        finally the settings put back and the marker finished, whatever happened. Returns (failed,
        interrupted): body's return value (None or the message that stops the run) and the Interrupted
        caught, if any. Server errors outside a statement's own handling become the failure."""
        failed = None
        interrupted = None
        self.install_signal_handlers()
        self.new_marker(mode, tables)
        try:
            self.marker.write(self.marker_data)
            failed = body()
        except Interrupted as e:
            interrupted = e
        except pymysql.err.MySQLError as e:
            failed = error_text(e)
        finally:
            try:
                self.after_body(interrupted)
            finally:
                self.restore_signal_handlers()
        return failed, interrupted

    def after_body(self, interrupted):
        """What the finally of the guarded part does: settings back, then the marker finished."""
        self.restore(interrupted is not None)
        self.finish_marker()

    # ------------------------------------------------------------ one statement, bounded lock waits
    def run_statement(self, entry, sql, verb):
        """Run one statement with bounded retries on lock wait timeouts. Returns True when done."""
        retries = int(self.p.get('retries') or 0)
        delay = float(self.p.get('retry_delay') or 0)
        for attempt in range(1, retries + 2):
            entry['attempts'] = attempt
            started = self.clock()
            try:
                execute(self.conn, sql)
            except pymysql.err.MySQLError as e:
                code = e.args[0] if e.args else None
                rec = self.step('%s attempt %d' % (verb, attempt), started, ok=False, target=entry['name'],
                                detail=error_text(e))
                entry['error'] = rec['detail']
                if code in RETRYABLE_ERRORS and attempt <= retries:
                    self.sleep(delay)
                    closed = self.window_closed()
                    if closed:
                        entry['error'] = ('%s; no retry: %s' % (error_text(e), closed))
                        entry['window_closed'] = True
                        return False
                    continue
                if code in RETRYABLE_ERRORS:
                    entry['error'] = ('%s: gave up after %d attempts of lock_wait_timeout=%ss each'
                                      % (error_text(e), attempt, self.p.get('lock_wait_timeout')))
                return False
            rec = self.step('%s attempt %d' % (verb, attempt), started, target=entry['name'])
            entry['seconds'] = rec['seconds']
            entry.pop('error', None)
            return True
        return False  # pragma: no cover


# Ranges of the options every guarded-change module takes (module_argument_spec), checked by range_problems.
MODULE_RANGES = dict(lock_wait_timeout=(1, 3600), retries=(0, 10), retry_delay=(0, 300), restore_timeout=(1, 3600))


def module_argument_spec(login_spec, change_class, **own):
    """The argument spec of a guarded-change module: login_spec (connection.login_argument_spec()), the
    options every guarded change takes (the state directory defaulting to change_class's own) and the
    module's own options."""
    spec = dict(login_spec)
    spec.update(
        tables=dict(type='list', elements='str', required=True),
        lock_wait_timeout=dict(type='int', default=2),
        retries=dict(type='int', default=3),
        retry_delay=dict(type='float', default=1.0),
        window=dict(type='str'),
        timezone=dict(type='str', default='UTC'),
        force_window=dict(type='bool', default=False),
        follow=dict(type='bool', default=False),
        state_dir=dict(type='path', default=change_class.default_state_dir),
        restore_timeout=dict(type='int', default=60),
    )
    spec.update(own)
    return spec


def run_for_module(module, change_class, window=None):
    """Run a guarded change (the drop or a conversion) for its module: change_class built from the module's
    params and check mode, with window (the status of the module's window gate). Every failure fails the
    module with the change's report (what was done so far), no traceback reaches the user, and the
    connection is closed in all cases. Returns (the change, its report)."""
    change = change_class(module.params, check_mode=module.check_mode, warn=module.warn)
    change.window = window
    try:
        change.run()
    except GuardedError as e:  # the guard rails' refusals, and the clients' own errors
        module.fail_json(msg=str(e), **change.report())
    except pymysql.err.MySQLError as e:
        module.fail_json(msg='server error: %s' % error_text(e), **change.report())
    except Exception as e:  # pylint: disable=broad-except  # pragma: no cover - keep the report, trace at -vvv
        module.debug(traceback.format_exc())
        module.fail_json(msg='unexpected error (%s): %s' % (type(e).__name__, e), **change.report())
    finally:
        if change.conn is not None:
            try:
                change.conn.close()
            except Exception:  # pylint: disable=broad-except
                pass
    return change, change.report()
