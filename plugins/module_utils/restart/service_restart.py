# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A restart through systemd and its outcome read from systemd (module service_restart).

Pure functions (unit-tested with recorded `systemctl show` output), and the host side (`Restart`), which runs
`systemctl` and `journalctl`:

- unit_name(name): the unit a name means ('mariadb' -> 'mariadb.service'), or ValueError.
- parse_show(text): `systemctl show -p ...` output -> dict.
- outcome(before, now): whether a restart has started the server ('started'), failed ('failed')
  or is still under way ('waiting'), from ActiveState / SubState / Result / InvocationID / MainPID.
- lingering(), leftover_bound(), cgroup_processes(): a stop that outlived the server, its leftover processes.
- run_module(module): the module's run; what the server refused at a start that failed is read by
  restart/refused_start.py, the drop-ins are put back by restart/dropin_backups.py (both shared with command_restart).
"""

from __future__ import annotations

import re

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import discovery
from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import dropin_backups
from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import refused_start

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


def _unit_state(props):
    keys = ('ActiveState', 'SubState', 'Result', 'MainPID', 'ExecMainStatus', 'InvocationID')
    return dict((k, props.get(k)) for k in keys)


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

    known = refused_start.before_restart(module, p['error_log'], p['dropins'])
    server, dropins = known['server'], known['dropins']
    last_start = start_time(before) if before.get('MainPID') else None

    verdict, why, before, after, seconds = restart.restart('restart')
    result = dict(changed=True, unit=unit, before=_unit_state(before), after=_unit_state(after), seconds=seconds,
                  error_log=known['log_path'], option_files=known['files_read'], dropins=dropins, refused=[],
                  put_back=[], started_again=None, notes=[n for n in [server['note']] if n] + restart.events)
    if verdict == 'started':
        # An included file the server's user cannot read is skipped without a word: the server runs
        # without its settings. That is a refusal of the file, not a start.
        refused = refused_start.unreadable_refusals(dropins, server, skipped=True)
        if not refused:
            dropin_backups.drop_backups(dropins)
            result['msg'] = '%s restarted: main PID %s -> %s, invocation %s (%s s)%s' % (
                unit, before.get('MainPID'), after.get('MainPID'), after.get('InvocationID'), seconds,
                ''.join('; ' + e for e in restart.events))
            module.exit_json(**result)
    else:
        # The invocation that failed: the last one, or the one systemd's auto-restart replaced.
        failed_invocation = after.get('FailedInvocationID') or after.get('InvocationID')
        lines = restart.journal(failed_invocation if failed_invocation != before.get('InvocationID') else None)
        refused = refused_start.refused_at_start(known, [(lines, 'journal of invocation %s' % failed_invocation)])
    result['refused'] = refused
    # Put back what this change wrote since the server last started, and start the server again.
    result['put_back'], notes = dropin_backups.put_back(dropin_backups.put_back_targets(dropins, refused), last_start)
    result['notes'].extend(notes)
    events = len(restart.events)
    again, again_why, dummy, again_after, again_seconds = restart.restart('restart')
    result['notes'].extend(restart.events[events:])
    result['started_again'] = again == 'started'
    result['again'] = dict(_unit_state(again_after), why=again_why, seconds=again_seconds)
    result['msg'] = refused_start.put_back_report(
        '%s %s' % (unit, ('did not start (%s)' % why) if verdict != 'started'
                   else 'started without an option file it cannot read'),
        refused, result['put_back'],
        ('yes, main PID %s' % again_after.get('MainPID')) if again == 'started' else 'NO (%s)' % again_why, why) + \
        ''.join('. Also: ' + e for e in restart.events)
    module.fail_json(**result)
