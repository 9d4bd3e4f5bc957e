# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A restart by the host's own command (dbfleet_restart_method: command) and a server that refuses to start: the
host side of module `command_restart`. What the server refused and the message are restart/refused_start.py's
(before_restart(), refused_at_start(), put_back_report()), the put-back of the drop-ins restart/dropin_backups.py's
(put_back()), shared with service_restart; this file adds what only a command has:

- process_start(pid): when the running server's process started (the drop-ins written since then are this run's).
- CommandRestart: the command, then the server answering in a process started since (its Uptime no longer than the
  time since the command started), or not.
"""

from __future__ import annotations

import os
import time

from ansible_collections.dbfleet.innodb.plugins.module_utils import masking
from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import method as restart_method
from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import dropin_backups
from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import refused_start


def process_start(pid, proc_root='/proc', now=None, boottime=None, ticks=None):
    """Seconds since the epoch at which process pid started, from /proc/PID/stat (starttime, clock ticks since boot)
    and CLOCK_BOOTTIME, or None when it cannot be read."""
    if not pid:
        return None
    try:
        with open(os.path.join(proc_root, str(pid), 'stat'), encoding='utf-8', errors='replace') as handle:
            text = handle.read()
        # Fields after the command name (which may hold spaces and parentheses): state is field 3, starttime 22.
        started = int(text[text.rindex(')') + 1:].split()[19])
    except (OSError, ValueError, IndexError):
        return None
    now = time.time() if now is None else now
    boottime = time.clock_gettime(time.CLOCK_BOOTTIME) if boottime is None else boottime
    ticks = os.sysconf('SC_CLK_TCK') if ticks is None else ticks
    return now - (boottime - started / float(ticks))


def uptime(params):
    """The server's Uptime over SQL (login options params), or (None, why it does not answer)."""
    from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
    from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import query_one
    try:
        conn = connection.open_connection(params)
    except Exception as e:  # pylint: disable=broad-except
        return None, str(e)
    try:
        return int(query_one(conn, "SHOW GLOBAL STATUS LIKE 'Uptime'")['Value']), ''
    except Exception as e:  # pylint: disable=broad-except
        return None, str(e)
    finally:
        conn.close()


class CommandRestart(object):
    """The restart command of one host and what came of it. run(argv) -> (rc, out, err) (AnsibleModule.run_command);
    answer() -> (Uptime or None, why): the server over SQL; sleep and clock are injected for the unit tests."""

    def __init__(self, command, run, answer, timeout=300, interval=1.0, sleep=None, clock=None):  # pylint: disable=too-many-arguments
        self.command = list(command)
        self.run = run
        self.answer = answer
        self.timeout = timeout
        self.interval = interval
        self.sleep = sleep or time.sleep
        self.clock = clock or time.time
        self.output = []

    def restart(self):
        """The command, then the server until it answers in a process started since the command, or timeout passes.
        Returns (verdict, why, seconds): 'started'; 'failed' (the command failed, or the server does not answer in
        time); or 'not restarted' (whatever the command's exit status, the server answers in the process it ran in
        before: it was never down). The command's output lines are kept in self.output (a server that refuses to
        start may say why only there)."""
        started = self.clock()
        rc, out, err = self.run(self.command)
        self.output = (out or '').splitlines() + (err or '').splitlines()
        # What the command says first (its error message, before any log lines it shows), on stderr or else stdout.
        said = [line.strip() for line in (err or '').splitlines() + (out or '').splitlines() if line.strip()][:1]
        ended = 'the restart command exited %s%s' % (rc, (': %s' % said[0]) if rc != 0 and said else '')
        while True:
            up, why = self.answer()
            seconds = round(self.clock() - started, 1)
            if up is not None and up > self.clock() - started + 1:
                return 'not restarted', '%s, and the server runs in the process it ran in before (up %d s)' % (
                    ended, up), seconds
            if up is not None:
                return 'started', 'the server answers again, up %d s' % up, seconds
            if rc != 0:
                return 'failed', ended, seconds
            if self.clock() - started >= self.timeout:
                return 'failed', '%s, but the server does not answer after %d s: %s' % (ended, self.timeout, why), \
                    seconds
            self.sleep(self.interval)


def run_module(module):
    """module command_restart: run the command, wait for the server; on a refusal put back, start again, fail."""
    p = module.params
    errors = restart_method.restart_method_errors('command', p['command'])
    if errors:
        module.fail_json(msg=errors[0])
    if p['timeout'] < 1 or p['timeout'] > 86400:
        module.fail_json(msg='timeout must be 1 to 86400 seconds; got %s' % p['timeout'])
    # (a password on the command line, -p<password> or --password=..., never in the result)
    masked = masking.mask_argv(p['command'])
    shown = ' '.join(masked)
    if module.check_mode:
        module.exit_json(changed=True, command=masked, msg='would restart the server with: %s' % shown)

    known = refused_start.before_restart(module, p['error_log'], p['dropins'])
    server, dropins = known['server'], known['dropins']
    last_start = process_start(server.get('pid'))
    restart = CommandRestart(p['command'], module.run_command, lambda: uptime(module.params), timeout=p['timeout'])
    verdict, why, seconds = restart.restart()
    result = dict(changed=True, command=masked, seconds=seconds, error_log=known['log_path'],
                  option_files=known['files_read'], dropins=dropins, refused=[], put_back=[], started_again=None,
                  notes=[n for n in [server['note']] if n])
    if verdict == 'not restarted':
        module.fail_json(msg=why, **result)
    if verdict == 'started':
        # An included file the server's user cannot read is skipped without a word (service_restart does the same).
        refused = refused_start.unreadable_refusals(dropins, server, skipped=True)
        if not refused:
            dropin_backups.drop_backups(dropins)
            result['msg'] = 'restarted by %s: %s (%s s)' % (shown, why, seconds)
            module.exit_json(**result)
    else:
        # The error log when the server has one (the command's output may repeat older lines of it); else what the
        # command passed on from the server's stderr.
        others = [] if known['log_path'] else [(restart.output, 'output of the restart command')]
        refused = refused_start.refused_at_start(known, others)
    result['refused'] = refused
    # Put back what this change wrote since the server last started, and start the server again with the command.
    targets = dropin_backups.put_back_targets(dropins, refused)
    result['put_back'], notes = dropin_backups.put_back(targets, last_start)
    result['notes'].extend(notes)
    again, again_why, again_seconds = restart.restart()
    result['started_again'] = again == 'started'
    result['again'] = dict(why=again_why, seconds=again_seconds)
    result['msg'] = refused_start.put_back_report(
        'the server %s' % (('did not start (%s)' % why) if verdict != 'started'
                           else 'started without an option file it cannot read'),
        refused, result['put_back'], ('yes, %s' % again_why) if again == 'started' else 'NO (%s)' % again_why, why)
    module.fail_json(**result)
