# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A restart through systemd, its outcome read from systemd, and a server that refuses to start.

Pure functions (unit-tested with recorded `systemctl show` output and real server log lines), and
the host side of module `service_restart` (`Restart`), which runs `systemctl` and `journalctl`:

- unit_name(name): the unit a name means ('mariadb' -> 'mariadb.service'), or ValueError.
- parse_show(text): `systemctl show -p ...` output -> dict.
- outcome(before, now): whether a restart has started the server ('started'), failed ('failed')
  or is still under way ('waiting'), from ActiveState / SubState / Result / InvocationID / MainPID.
- refusals(lines, source): what the server refused at start, from its error log or journal lines:
  an unknown variable or option, a value it could not set, an option file it could not parse; the
  wordings of mysys/my_getopt and my_default of MySQL and MariaDB (MySQL prefixes [MY-nnnnnn] [Server]).
- locate(refusal, entries): the option-file line (file, line, text) a refusal names.
- unreadable_files(files, uid, gids): option files the server's user cannot read (the server skips
  an unreadable included file without a word and starts without its settings).
- dropin_backups(path, names): the backups ansible.builtin.template (backup: true) left beside a
  drop-in; the oldest is the version the server last started with.
"""

from __future__ import annotations

import os
import re
import stat

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import discovery
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles

# The properties read after `systemctl restart`, and why: the unit's state, how its last start ended,
# the main process, and the invocation (a new one for every start; its journal lines carry it).
# ControlPID, ControlGroup and TimeoutStopUSec say whether a stop that has outlived the server is waiting for leftover
# processes of the unit (final-sigterm), which ones, and for how long systemd itself would wait.
SHOW_PROPERTIES = ('LoadState', 'ActiveState', 'SubState', 'Result', 'MainPID', 'ControlPID', 'ExecMainStatus',
                   'ExecMainCode', 'InvocationID', 'NRestarts', 'ExecMainStartTimestampMonotonic', 'FragmentPath',
                   'ControlGroup', 'TimeoutStopUSec')

_UNIT_RE = re.compile(r'^[A-Za-z0-9:_.\\@-]+$')
_UNIT_SUFFIXES = ('.service',)


def unit_name(name):
    """'mariadb' -> 'mariadb.service'; ValueError for a name systemd would not take as a unit."""
    text = '' if name is None else str(name).strip()
    if not text or not _UNIT_RE.match(text) or text.startswith('-'):
        raise ValueError('dbfleet_service_name must be a systemd unit name such as mariadb or mysql.service; got %r'
                         % (name,))
    if '.' in text and not text.endswith(_UNIT_SUFFIXES):
        raise ValueError('dbfleet_service_name names a %s unit, not a service: %r' % (text.rsplit('.', 1)[1], name))
    return text if text.endswith(_UNIT_SUFFIXES) else text + '.service'


def parse_show(text):
    """Output of `systemctl show -p A,B ...` (KEY=VALUE lines) -> dict; MainPID and ExecMainStatus as int."""
    props = {}
    for line in (text or '').splitlines():
        key, sep, value = line.partition('=')
        if sep:
            props[key.strip()] = value.strip()
    for key in ('MainPID', 'ControlPID', 'ExecMainStatus', 'NRestarts', 'ExecMainStartTimestampMonotonic'):
        if key in props:
            try:
                props[key] = int(props[key])
            except ValueError:
                props[key] = None
    return props


def outcome(before, now):
    """('started' | 'failed' | 'waiting', why) of a restart: before is the unit's state before
    `systemctl restart`, now its state since. A start counts only in a new invocation."""
    if now.get('LoadState') not in (None, 'loaded'):
        return 'failed', 'unit %s' % now.get('LoadState')
    new = bool(now.get('InvocationID')) and now.get('InvocationID') != before.get('InvocationID')
    active, sub = now.get('ActiveState'), now.get('SubState')
    if active == 'active' and new and now.get('MainPID'):
        if sub == 'running' or sub is None:
            return 'started', 'active (%s), main PID %s' % (sub, now.get('MainPID'))
    if active == 'failed':
        return 'failed', _ended(now)
    if active == 'activating' and sub == 'auto-restart':
        # The start failed and systemd will try again (Restart=): the same refusal each time.
        return 'failed', _ended(now) + ', systemd restarting it (auto-restart)'
    if active == 'inactive' and new:
        return 'failed', _ended(now) + ', the unit stopped again'
    if active == 'active' and new and not now.get('MainPID'):
        return 'failed', 'active without a main process (%s)' % sub
    return 'waiting', '%s (%s)' % (active, sub)


# ---------------------------------------------------------------- a stop that outlived the server
# systemd stops a unit in steps: SIGTERM to the main process (stop-sigterm), ExecStopPost (stop-post), then SIGTERM to
# whatever is still in the unit's cgroup (final-sigterm), and SIGKILL (final-sigkill) once TimeoutStopSec has passed.
# A process of the unit that ignores SIGTERM (a helper an ExecStartPre/ExecStartPost left running, a child of the
# server that blocks the signal) keeps the unit in final-sigterm after the server itself has ended, and Debian's
# mysql.service says TimeoutSec=infinity: systemd then waits for ever, and a restart or start queued behind the stop
# with it. The module waits at most LEFTOVER_TIMEOUT seconds there (the unit's own stop timeout when shorter), then
# kills only what is left (the main and control processes are gone) and gives systemd KILL_GRACE seconds to finish.
LEFTOVER_TIMEOUT = 30
KILL_GRACE = 10
_TIMESPAN_UNITS = (('usec', 1e-6), ('us', 1e-6), ('msec', 1e-3), ('ms', 1e-3), ('seconds', 1), ('second', 1),
                   ('sec', 1), ('s', 1), ('minutes', 60), ('minute', 60), ('min', 60), ('m', 60), ('hours', 3600),
                   ('hour', 3600), ('hr', 3600), ('h', 3600), ('days', 86400), ('day', 86400), ('d', 86400),
                   ('weeks', 604800), ('week', 604800), ('w', 604800))
_TIMESPAN_RE = re.compile(r'(\d+(?:\.\d+)?)\s*([a-z]*)')


def timespan_seconds(text):
    """A systemd time span as `systemctl show` prints it ('infinity', '1min 30s', '5s', '0') -> seconds, or None
    for infinity or text that is no time span."""
    text = str(text or '').strip().lower()
    if not text or text == 'infinity':
        return None
    total = 0.0
    pos = 0
    for match in _TIMESPAN_RE.finditer(text):
        if text[pos:match.start()].strip():
            return None
        number, unit = match.groups()
        factors = dict(_TIMESPAN_UNITS)
        if unit and unit not in factors:
            return None
        total += float(number) * factors.get(unit, 1)
        pos = match.end()
    return total if not text[pos:].strip() and pos else None


# The states of a stop that waits for the whole cgroup (KillMode=control-group): SIGTERM sent with the stop, or after
# ExecStopPost; systemd leaves them when the cgroup is empty, or sends SIGKILL after TimeoutStopSec.
LINGERING_STATES = ('stop-sigterm', 'final-sigterm')


def lingering(props):
    """True when the unit's stop waits for leftover processes only: deactivating (stop-sigterm or final-sigterm) with
    neither a main nor a control process (the server has ended)."""
    return (props.get('ActiveState') == 'deactivating' and props.get('SubState') in LINGERING_STATES
            and not props.get('MainPID') and not props.get('ControlPID'))


def leftover_bound(props, leftover_timeout=LEFTOVER_TIMEOUT):
    """Seconds to let a unit linger in final-sigterm before its leftover processes are killed: leftover_timeout,
    or the unit's own TimeoutStopUSec when that is shorter (systemd would SIGKILL them then)."""
    own = timespan_seconds(props.get('TimeoutStopUSec'))
    return leftover_timeout if own is None else min(own, leftover_timeout)


def kill_command(unit):
    """What finishes a unit lingering in final-sigterm: SIGKILL to every process left in its cgroup (the main and
    control processes are gone, so only the leftovers)."""
    return ['systemctl', 'kill', '--signal=SIGKILL', unit]


# Where a unit's cgroup is read on this host: the unified hierarchy (cgroup v2), the hybrid one's, or v1's name=systemd.
CGROUP_ROOTS = ('/sys/fs/cgroup', '/sys/fs/cgroup/unified', '/sys/fs/cgroup/systemd')


def cgroup_processes(control_group, roots=CGROUP_ROOTS, read=None):
    """[(pid, command line)] of the processes in a unit's cgroup (ControlGroup), from the first hierarchy that has it."""
    read = read or discovery._read_text  # pylint: disable=protected-access
    if not control_group:
        return []
    for root in roots:
        text = read(root + control_group + '/cgroup.procs')
        if text is None:
            continue
        found = []
        for pid in text.split():
            cmdline = read('/proc/%s/cmdline' % pid)
            found.append((int(pid), ' '.join((cmdline or '').split('\0')).strip() or 'exited') if pid != '0' else
                         (0, 'another PID namespace'))
        return found
    return []


def describe_processes(found):
    """'PID 812 (sleep 600), ...'; processes of another PID namespace (PID 0 in cgroup.procs: the cgroup is shared with
    another container's, whose processes systemd here can neither see nor kill) are counted apart."""
    own = ['PID %d (%s)' % item for item in found if item[0]]
    others = len([item for item in found if not item[0]])
    if others:
        own.append('%d process%s of another PID namespace (PID 0 in cgroup.procs: the cgroup is shared with another '
                   'container, whose processes systemd here cannot end)' % (others, '' if others == 1 else 'es'))
    return ', '.join(own) or 'none listed in the cgroup'


def _ended(props):
    result = props.get('Result') or 'unknown'
    code = props.get('ExecMainCode')
    status = props.get('ExecMainStatus')
    how = 'result %s' % result
    if status not in (None, ''):
        # ExecMainCode 1: exited (status is the exit code), 2: killed, 3: dumped core (status is the signal).
        how += ', %s %s' % ('signal' if str(code) in ('2', '3') else 'exit status', status)
    return how


# ---------------------------------------------------------------- the server's log lines
# One line of the error log or of stderr in the journal, from MySQL 8.0+ ("2026-11-25T16:00:35.780567Z 0
# [ERROR] [MY-000067] [Server] ...") or MariaDB / MySQL 5.7 ("2026-11-25 16:00:22 0 [ERROR] ..."), and the
# prefix-less lines my_default writes before the log is open ("mysqld: [ERROR] ...", "error: ...").
_LINE_RE = re.compile(r'^\s*(?:\d{4}-\d\d-\d\d[T ]\s?\d?\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?\s+'
                      r'(?:\d+\s+)?)?(?:\S+:\s+)?\[(?P<level>ERROR|Warning|Note|System|ERROR_LEVEL)\]\s+'
                      r'(?:\[MY-\d+\]\s+\[\w+\]\s+)?(?P<message>.*?)\s*$')
_BARE_ERROR_RE = re.compile(r'^\s*(?:\S+:\s+)?error:\s+(?P<message>.*?)\s*$', re.I)
_PROGRAM_RE = re.compile(r'^/?\S*(?:mysqld|mariadbd|mysqld-debug):\s+')

# (kind, pattern over the message[, the option when the message names none]): what the server refused, in the
# wordings of my_getopt.c (unknown variable / option, a value it cannot set, an ambiguous prefix) and my_default.c (an
# option file it cannot parse or open) of MySQL and MariaDB, and of start checks that name the option or its value.
# Each names the option (or the file and line) it refused.
REFUSAL_PATTERNS = (
    ('unknown variable', re.compile(r"unknown variable '(?P<option>[^'=]*)(?:=(?P<value>[^']*))?'")),
    ('unknown option', re.compile(r"unknown option '-{0,2}(?P<option>[^'=]*)(?:=(?P<value>[^']*))?'")),
    ('value refused', re.compile(r"Error while setting value '(?P<value>[^']*)' to '(?P<option>[^']*)'")),
    ('ambiguous option', re.compile(r"(?:ambiguous option|variable prefix) '-{0,2}(?P<option>[^'=]*)(?:=(?P<value>[^']*))?'")),
    ('value missing', re.compile(r"option '-{0,2}(?P<option>[^']*)' requires an argument")),
    # InnoDB's own start checks (MariaDB: "InnoDB: innodb_page_size=16384 requires innodb_buffer_pool_size >= 6 MiB").
    ('value refused', re.compile(r"InnoDB: .*\brequires (?P<option>innodb_\w+) (?:>=|<=|<|>)")),
    # InnoDB's parsers of its file specifications (innodb_data_file_path, innodb_temp_data_file_path), MySQL's and
    # MariaDB's wording: "Unable to parse innodb_temp_data_file_path=ibtmp1:12M:bogus".
    ('value refused', re.compile(r"Unable to parse (?P<option>innodb_\w+)=(?P<value>\S*)")),
    # MySQL: init_file names a file the server cannot open ("Failed to open the bootstrap file /tmp/x.sql").
    ('value refused', re.compile(r"Failed to open the bootstrap file (?P<value>\S+)"), 'init_file'),
    ('option file unreadable', re.compile(r"Could not open required defaults file:\s*(?P<file>\S+)")),
    ('option file syntax', re.compile(r"(?:Found option without preceding group|Wrong group definition|"
                                      r"Wrong '!\w+' directive) in config file:?\s*(?P<file>.+?):?\s+at line:?\s*(?P<line>\d+)")),
)
# Lines that say the server gave up (kept in the report after the refusal itself).
ABORT_PATTERNS = (re.compile(r'^Aborting'), re.compile(r'Fatal error in defaults handling'),
                  re.compile(r"Parsing options for plugin '[^']+' failed"), re.compile(r'Failed to initialize builtin plugins'))


def log_message(line):
    """(level, message) of a server log line, or None for a line that is not one. The message has no
    timestamp, thread id or MySQL error code prefix, and no program path before it."""
    match = _LINE_RE.match(line or '')
    if match:
        level = 'ERROR' if match.group('level').upper().startswith('ERROR') else match.group('level')
        return level, _PROGRAM_RE.sub('', match.group('message'))
    match = _BARE_ERROR_RE.match(line or '')
    if match:
        return 'ERROR', match.group('message')
    return None


def refusals(lines, source):
    """What the server refused at start, from its log lines: a list of dict(kind, option (normalized,
    or None), value, file, line, message, source). The refusals first; when no line names one, the
    server's first [ERROR] lines (an engine that would not start, a crash) with kind 'error'."""
    found = []
    errors = []
    for raw in lines:
        parsed = log_message(raw)
        if parsed is None:
            continue
        level, message = parsed
        for kind, pattern, *named in REFUSAL_PATTERNS:
            match = pattern.search(message)
            if match:
                fields = match.groupdict()
                # (a pattern whose message names the value only says which option it is about)
                option = fields.get('option') or (named[0] if named else None)
                item = dict(kind=kind, option=optionfiles.normalize_name(option) if option else None,
                            value=fields.get('value'), file=fields.get('file'),
                            line=int(fields['line']) if fields.get('line') else None,
                            message=message, source=source)
                if item not in found:
                    found.append(item)
                break
        else:
            if level == 'ERROR' and not any(p.search(message) for p in ABORT_PATTERNS):
                errors.append(dict(kind='error', option=None, value=None, file=None, line=None,
                                   message=message, source=source))
    return found or errors[:3]


def locate(refusal, entries):
    """(file, line, text) of the option-file line a refusal names, or None. entries: the server's
    options as optionfiles.read_option_files() read them; the last line setting the option is the one
    the server applied (also with the -/_ and loose- spellings)."""
    if refusal.get('file') and refusal.get('line'):
        return refusal['file'], refusal['line'], None
    option = refusal.get('option')
    if not option:
        # An error that quotes a setting's value only (MariaDB: "Can't create/write to file '/tmp/x.sql'" for an
        # init_file it cannot open): the option-file line in effect with that value.
        quoted = set(re.findall(r"(?<!\w)'([^']+)'", refusal.get('message') or '')) if refusal.get('kind') == 'error' else ()
        for entry in reversed(entries):
            if entry.file != 'command line' and entry.value and entry.value.strip('"\'') in quoted:
                return entry.file, entry.line, entry.text
        return None
    for entry in reversed(entries):
        if entry.name == option or (entry.name.startswith(option) and refusal['kind'] == 'ambiguous option'):
            if entry.file == 'command line':
                continue
            return entry.file, entry.line, entry.text
    return None


def describe(refusal, where):
    """One sentence: 'file:line (text): the server's message' or the message alone."""
    if where:
        path, line, text = where
        return '%s:%s%s: %s' % (path, line, (' (%s)' % text.strip()) if text else '', refusal['message'])
    return refusal['message']


def readable_by(st_mode, st_uid, st_gid, uid, gids):
    """Whether a file with these stat fields can be read by uid with groups gids (root always can)."""
    if uid == 0:
        return True
    if st_uid == uid:
        return bool(st_mode & stat.S_IRUSR)
    if st_gid in gids:
        return bool(st_mode & stat.S_IRGRP)
    return bool(st_mode & stat.S_IROTH)


def unreadable_files(files, uid, gids, stat_fn=os.stat):
    """[(path, mode)] of the files the user uid (groups gids) cannot read."""
    out = []
    for path in files:
        try:
            st = stat_fn(path)
        except OSError:
            continue
        if not readable_by(st.st_mode, st.st_uid, st.st_gid, uid, gids):
            out.append((path, '%04o' % stat.S_IMODE(st.st_mode)))
    return out


# ansible.builtin.template / copy with backup: true name the backup PATH.PID.YYYY-MM-DD@HH:MM:SS~
_BACKUP_RE = re.compile(r'^\.\d+\.\d{4}-\d\d-\d\d@\d\d:\d\d:\d\d~$')


def dropin_backups(path, names):
    """Backups of the drop-in at path among the file names of its directory, oldest first (by the time
    in the name). The server reads only *.cnf from a directory, so they are never read as options."""
    base = os.path.basename(path)
    found = [n for n in names if n.startswith(base) and _BACKUP_RE.match(n[len(base):])]
    return sorted(found, key=lambda n: n[len(base):].split('.', 2)[2])


def is_dropin(path):
    """A drop-in this collection writes (60-dbfleet-<role>.cnf)."""
    return bool(re.match(r'^60-dbfleet-[A-Za-z0-9_]+\.cnf$', os.path.basename(path or '')))


def start_time(props, now=None, monotonic=None):
    """Seconds since the epoch at which the unit's main process started, from ExecMainStartTimestampMonotonic
    (CLOCK_MONOTONIC, exact to the microsecond, the same clock inside a container), or None."""
    import time
    mono = props.get('ExecMainStartTimestampMonotonic')
    if not mono:
        return None
    now = time.time() if now is None else now
    monotonic = time.monotonic() if monotonic is None else monotonic
    return now - (monotonic - mono / 1e6)


def backup_time(path, name):
    """Seconds since the epoch (to the second, local time as the backup's name says it) at which the backup name of
    the drop-in at path was made, or None."""
    import time
    try:
        return time.mktime(time.strptime(name[len(os.path.basename(path)):].split('.', 2)[2], '%Y-%m-%d@%H:%M:%S~'))
    except (IndexError, ValueError, OverflowError):
        return None


def put_back_plan(dropins, last_start, listdir=os.listdir, stat_fn=os.stat):
    """What putting back the drop-ins means: a list of dict(path, action, backup, discard): 'restore' the oldest
    backup made since the server last started (the version it last started with), or 'remove' a drop-in written
    since the server last started that had no earlier version; discard: the other backups. A backup made before the
    last start holds a version older than the one the server started with (a write the server has already started
    with replaced it): never restored. A drop-in unchanged since the last start stays, and so does one without a
    backup when the last start is not known (last_start None: every backup counts)."""
    plan = []
    for path in dropins:
        directory = os.path.dirname(path) or '.'
        try:
            names = listdir(directory)
        except OSError:
            names = []
        backups = dropin_backups(path, names)
        # (the name says the second: a backup within the second before the start counts as made since)
        since = [n for n in backups if last_start is None or (backup_time(path, n) or 0) + 1 > last_start]
        discard = [os.path.join(directory, n) for n in backups if n not in since[:1]]
        try:
            st = stat_fn(path)
            changed = max(st.st_mtime, st.st_ctime)
        except OSError:
            st = None
            changed = None
        if since:
            plan.append(dict(path=path, action='restore', backup=os.path.join(directory, since[0]), discard=discard))
        elif st is not None and last_start is not None and changed > last_start:
            plan.append(dict(path=path, action='remove', backup=None, discard=discard))
    return plan


class Restart(object):
    """systemctl restart of one unit on this host and what came of it (module service_restart).

    run(cmd) -> (rc, out, err) runs a command (AnsibleModule.run_command); sleep and clock are
    injected for the unit tests."""

    def __init__(self, unit, run, timeout=300, interval=1.0, sleep=None, clock=None,  # pylint: disable=too-many-arguments
                 leftover_timeout=LEFTOVER_TIMEOUT, processes=None):
        import time
        self.unit = unit
        self.run = run
        self.timeout = timeout
        self.interval = interval
        self.sleep = sleep or time.sleep
        self.clock = clock or time.time
        self.leftover_timeout = leftover_timeout
        self.processes = processes or cgroup_processes
        # What the waits did besides waiting (leftover processes killed), one sentence each, for the result's notes.
        self.events = []

    def show(self):
        rc, out, err = self.run(['systemctl', 'show', '-p', ','.join(SHOW_PROPERTIES), self.unit])
        if rc != 0:
            raise RuntimeError('systemctl show %s failed (rc %s): %s' % (self.unit, rc, (err or out).strip()))
        return parse_show(out)

    def restart(self, verb='restart'):
        """systemctl VERB --no-block, then the unit's state until it started, failed, or timeout passed.
        Returns (verdict, why, before, after, seconds)."""
        before = self.show()
        started = self.clock()
        if verb != 'start':
            self.run(['systemctl', 'reset-failed', self.unit])
        rc, out, err = self.run(['systemctl', verb, '--no-block', self.unit])
        if rc != 0:
            return 'failed', 'systemctl %s %s: %s' % (verb, self.unit, (err or out).strip()), before, before, 0.0
        first_new = None        # the first new invocation seen: another one after it is systemd's auto-restart
        lingering_since = killed_at = None
        while True:
            now = self.show()
            verdict, why = outcome(before, now)
            seconds = round(self.clock() - started, 1)
            invocation = now.get('InvocationID')
            if verdict == 'waiting' and invocation and invocation != before.get('InvocationID'):
                if first_new is None:
                    first_new = invocation
                elif invocation != first_new:
                    # Restart=: the start in first_new ended and systemd started the unit again (its auto-restart state
                    # lasts RestartSec, 100 ms by default, too short to be seen between two reads).
                    now['FailedInvocationID'] = first_new
                    return ('failed', 'the start in invocation %s ended without the server running, systemd '
                                      'restarting it (auto-restart, NRestarts %s)' % (first_new, now.get('NRestarts')),
                            before, now, seconds)
            if verdict != 'waiting':
                return verdict, why, before, now, seconds
            if lingering(now):
                lingering_since = self.clock() if lingering_since is None else lingering_since
                stuck, killed = self._finish_leftovers(now, self.clock() - lingering_since, killed_at)
                if stuck:
                    return 'failed', stuck, before, now, seconds
                killed_at = self.clock() if killed else killed_at
            else:
                lingering_since = killed_at = None
            if self.clock() - started >= self.timeout:
                return 'failed', 'not started after %d s: %s' % (self.timeout, why), before, now, seconds
            self.sleep(self.interval)

    def _finish_leftovers(self, now, lingered, killed_at):
        """The unit lingers in final-sigterm (the server has ended, processes of the unit are left): once it has for
        leftover_bound() seconds, SIGKILL them (an event). (reason to stop or None, whether it killed now): the reason
        when it still lingers KILL_GRACE seconds after the kill, or the kill fails, naming the state, the processes and
        the command that would finish it."""
        bound = leftover_bound(now, self.leftover_timeout)
        left = self.processes(now.get('ControlGroup'))
        command = ' '.join(kill_command(self.unit))
        state = 'deactivating (%s)' % now.get('SubState')
        if killed_at is None:
            if lingered < bound:
                return None, False
            rc, out, err = self.run(kill_command(self.unit))
            if rc != 0:
                return ('%s for %d s: the server has ended, %s left in %s; `%s` failed: %s'
                        % (state, lingered, describe_processes(left), now.get('ControlGroup'), command,
                           (err or out).strip()), False)
            self.events.append('killed the processes left in %s after %d s in %s, the server having ended '
                               '(TimeoutStopUSec %s; bound %d s): %s (%s)'
                               % (self.unit, lingered, state, now.get('TimeoutStopUSec'), bound, describe_processes(left),
                                  command))
            return None, True
        if self.clock() - killed_at >= KILL_GRACE:
            return (('still %s %d s after `%s`: %s left in %s; finish it with `%s` and `systemctl start %s`')
                    % (state, KILL_GRACE, command, describe_processes(left), now.get('ControlGroup'), command, self.unit),
                    False)
        return None, False

    def journal(self, invocation, limit=200):
        """The lines the unit's processes wrote in one invocation (stderr of a server without an error log
        file goes there), as written."""
        if not invocation:
            return []
        rc, out, dummy = self.run(['journalctl', '--no-pager', '-o', 'cat', '-n', str(limit),
                                   '_SYSTEMD_INVOCATION_ID=%s' % invocation])
        return out.splitlines() if rc == 0 else []


def read_from(path, offset):
    """Lines of a log file from byte offset on (from the start when the file is shorter: rotated)."""
    try:
        with open(path, 'rb') as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() < offset:
                offset = 0
            handle.seek(offset)
            return handle.read(1 << 20).decode('utf-8', 'replace').splitlines()
    except (IOError, OSError):
        return []


def file_size(path):
    try:
        return os.path.getsize(path)
    except (OSError, TypeError):
        return 0


def error_log_path(log_error, datadir, hostname=None):
    """The error log file of a server from its log_error and datadir variables, or None (stderr:
    the journal under systemd)."""
    if not log_error or log_error in ('stderr', './stderr'):
        return None
    path = log_error
    if not os.path.isabs(path):
        path = os.path.join(datadir or '', path[2:] if path.startswith('./') else path)
    return path


# ---------------------------------------------------------------- the module's run
# Groups every server reads when the server cannot be asked (it is down before the restart).
FALLBACK_GROUPS = ('mysqld', 'server', 'mariadb', 'mariadbd', 'client-server', 'galera')


def server_before(module):
    """What the running server says before its restart: dict(option_files, groups, log_error, datadir,
    pid, uid, gids, note). Asked over SQL (login options) when the server is up; else what can be read."""
    from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
    from ansible_collections.dbfleet.innodb.plugins.module_utils.login.tls import warn_unverified
    from ansible_collections.dbfleet.innodb.plugins.module_utils import server_facts
    info = dict(option_files=[], groups=list(FALLBACK_GROUPS), log_error=None, datadir=None, pid=None, uid=None,
                gids=[], note='')
    try:
        connection.require_pymysql(module)
        warn_unverified(module)
        conn = connection.open_connection(module.params)
    except (connection.ConnectError, Exception) as e:  # pylint: disable=broad-except
        info['note'] = 'the server was not asked before the restart (%s)' % e
        return info
    try:
        facts = server_facts.gather(conn, login_params=module.params)
    except Exception as e:  # pylint: disable=broad-except
        info['note'] = 'the server could not be read before the restart (%s)' % e
        return info
    finally:
        conn.close()
    info.update(option_files=list(facts.get('option_files') or []), groups=list(facts.get('option_groups') or []),
                log_error=error_log_path(facts.get('log_error'), facts.get('datadir')), datadir=facts.get('datadir'))
    process = facts.get('process') or {}
    info['pid'] = process.get('pid')
    if process.get('uid') is not None:
        info['uid'] = process['uid']
        try:
            import grp
            import pwd
            user = pwd.getpwuid(process['uid'])
            info['gids'] = [user.pw_gid] + [g.gr_gid for g in grp.getgrall() if user.pw_name in g.gr_mem]
        except KeyError:
            info['gids'] = []
    return info


def option_entries(files, groups):
    result = optionfiles.read_option_files(files, groups)
    return result.entries, result.files_read


def _unit_state(props):
    keys = ('ActiveState', 'SubState', 'Result', 'MainPID', 'ExecMainStatus', 'InvocationID')
    return dict((k, props.get(k)) for k in keys)


def put_back_options():
    """The options every restart method's module (service_restart, command_restart) has besides the login options and
    its own: error_log and dropins (doc fragment dbfleet.innodb.restart)."""
    return dict(error_log=dict(type='path'), dropins=dict(type='list', elements='path'))


def before_restart(module, error_log=None, dropins=None):
    """What any restart method reads before it restarts: dict(server (server_before()), log_path (error_log, else the
    server's log_error), log_offset (its size now: the restart's lines come after it), entries and files_read (the
    options the server reads), dropins (the parameter, else the 60-dbfleet-*.cnf files among the option files))."""
    server = server_before(module)
    log_path = error_log or server['log_error']
    entries, files_read = option_entries(server['option_files'], server['groups'])
    dropins = dropins if dropins is not None else [f for f in files_read if is_dropin(f)]
    if not server['option_files']:
        # The server could not be asked: the drop-ins are the option files a refusal is looked for in.
        entries, dummy = option_entries(dropins, server['groups'])
    return dict(server=server, log_path=log_path, log_offset=file_size(log_path) if log_path else 0, entries=entries,
                files_read=files_read, dropins=dropins)


def unreadable_refusals(files, server, skipped=False):
    """The option files among files the server's user cannot read, as refusals (kind 'option file unreadable'), or
    none when the server's user is not known."""
    if server.get('uid') is None:
        return []
    return [dict(kind='option file unreadable', option=None, value=None, file=path, line=None,
                 message='%s is not readable by the server (uid %s, mode %s)%s'
                 % (path, server['uid'], mode, '; the server skipped it' if skipped else ''),
                 source='file mode', where=None)
            for path, mode in unreadable_files(files, server['uid'], server.get('gids') or [])]


def refused_at_start(before, others):
    """What the server refused at a start that failed, each with 'where' (locate()): read from the error log lines
    written since before_restart() and from others, [(lines, source)] (the failed invocation's journal, the restart
    command's output). Refusals that name an option first, each once; else the first [ERROR] lines of each source."""
    found = []
    if before['log_path']:
        found.append(refusals(read_from(before['log_path'], before['log_offset']), before['log_path']))
    found.extend(refusals(lines, source) for lines, source in others)
    named = [r for group in found for r in group if r['kind'] != 'error']
    refused = []
    seen = set()
    for item in named or [r for group in found for r in group]:
        key = (item['kind'], item['option'], item['value'], item['message'])
        if key not in seen:
            seen.add(key)
            refused.append(item)
    refused += unreadable_refusals(before['server']['option_files'] + before['dropins'], before['server'])
    for item in refused:
        item['where'] = locate(item, before['entries'])
    return refused


def drop_backups(dropins):
    """After a good start: the backups beside the drop-ins go (the server has started with their new version)."""
    for plan in put_back_plan(dropins, None):
        for path in ([plan['backup']] if plan['action'] == 'restore' else []) + plan['discard']:
            _remove(path)


def put_back_targets(dropins, refused):
    """The drop-ins a refused start puts back: those a refusal is traced to (its file:line, or the file it names),
    when it is traced to one; else every drop-in (no line is named: whatever changed since the last start is
    suspect). A drop-in the server runs with that the refusal is not about stays: another run may have written it
    since the last start, its settings already in effect at runtime (a plugin's options read at INSTALL PLUGIN)."""
    def same(a, b):
        return bool(a) and bool(b) and os.path.realpath(a) == os.path.realpath(b)
    named = [d for d in dropins if any(same(d, (r.get('where') or (None,))[0]) or same(d, r.get('file'))
                                       for r in refused)]
    return named or list(dropins)


def put_back(dropins, last_start):
    """Put back what was written since the server last started (put_back_plan()): ([dict(path, action, backup)] done,
    [notes on what could not be put back])."""
    done, notes = [], []
    for item in put_back_plan(dropins, last_start):
        try:
            if item['action'] == 'restore':
                os.replace(item['backup'], item['path'])
            else:
                os.remove(item['path'])
            for path in item['discard']:
                _remove(path)
            done.append(dict(path=item['path'], action=item['action'], backup=item['backup']))
        except OSError as e:
            notes.append('could not put back %s: %s' % (item['path'], e))
    return done, notes


def put_back_report(what, refused, done, again, why):
    """The message of a start the server refused: 'WHAT: the refused lines (file:line (text): the server's words).
    Put back: ... Started again: AGAIN'; why: how the start ended, when no line names a refusal."""
    named = '; '.join(describe(r, r.get('where')) for r in refused) or \
        'no line of the server\'s log names a refused option (%s)' % why
    put = ', '.join('%s %s' % ('restored' if i['action'] == 'restore' else 'removed', i['path']) for i in done) or \
        'nothing to put back'
    return '%s: %s. Put back: %s. Started again: %s' % (what, named, put, again)


def run_module(module):
    """module service_restart: restart, read the outcome; on a refusal put back, start again, fail."""
    p = module.params
    try:
        unit = unit_name(p['name'])
    except ValueError as e:
        module.fail_json(msg=str(e))
    if p['timeout'] < 1 or p['timeout'] > 86400:
        module.fail_json(msg='timeout must be 1 to 86400 seconds; got %s' % p['timeout'])
    if p['leftover_timeout'] < 1 or p['leftover_timeout'] > 86400:
        module.fail_json(msg='leftover_timeout must be 1 to 86400 seconds; got %s' % p['leftover_timeout'])
    restart = Restart(unit, module.run_command, timeout=p['timeout'], leftover_timeout=p['leftover_timeout'])
    try:
        before = restart.show()
    except RuntimeError as e:
        module.fail_json(msg=str(e))
    if before.get('LoadState') != 'loaded':
        module.fail_json(msg='%s: no such unit on this host (LoadState %s); set dbfleet_service_name'
                         % (unit, before.get('LoadState')), unit=unit)
    if module.check_mode:
        module.exit_json(changed=True, unit=unit, before=_unit_state(before), msg='would restart %s' % unit)

    known = before_restart(module, p['error_log'], p['dropins'])
    server, dropins = known['server'], known['dropins']
    last_start = start_time(before) if before.get('MainPID') else None

    verdict, why, before, after, seconds = restart.restart('restart')
    result = dict(changed=True, unit=unit, before=_unit_state(before), after=_unit_state(after), seconds=seconds,
                  error_log=known['log_path'], option_files=known['files_read'], dropins=dropins, refused=[],
                  put_back=[], started_again=None, notes=[n for n in [server['note']] if n] + restart.events)
    if verdict == 'started':
        # An included file the server's user cannot read is skipped without a word: the server runs
        # without its settings. That is a refusal of the file, not a start.
        refused = unreadable_refusals(dropins, server, skipped=True)
        if not refused:
            drop_backups(dropins)
            result['msg'] = '%s restarted: main PID %s -> %s, invocation %s (%s s)%s' % (
                unit, before.get('MainPID'), after.get('MainPID'), after.get('InvocationID'), seconds,
                ''.join('; ' + e for e in restart.events))
            module.exit_json(**result)
    else:
        # The invocation that failed: the last one, or the one systemd's auto-restart replaced.
        failed_invocation = after.get('FailedInvocationID') or after.get('InvocationID')
        lines = restart.journal(failed_invocation if failed_invocation != before.get('InvocationID') else None)
        refused = refused_at_start(known, [(lines, 'journal of invocation %s' % failed_invocation)])
    result['refused'] = refused
    # Put back what this change wrote since the server last started, and start the server again.
    result['put_back'], notes = put_back(put_back_targets(dropins, refused), last_start)
    result['notes'].extend(notes)
    events = len(restart.events)
    again, again_why, dummy, again_after, again_seconds = restart.restart('restart')
    result['notes'].extend(restart.events[events:])
    result['started_again'] = again == 'started'
    result['again'] = dict(_unit_state(again_after), why=again_why, seconds=again_seconds)
    result['msg'] = put_back_report(
        '%s %s' % (unit, ('did not start (%s)' % why) if verdict != 'started'
                   else 'started without an option file it cannot read'),
        refused, result['put_back'],
        ('yes, main PID %s' % again_after.get('MainPID')) if again == 'started' else 'NO (%s)' % again_why, why) + \
        ''.join('. Also: ' + e for e in restart.events)
    module.fail_json(**result)


def _remove(path):
    try:
        os.remove(path)
    except OSError:
        pass
