# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A start the server refused, as every restart method reads it (modules service_restart, command_restart):

- before_restart(module): what is read before the restart: the server's option files and groups (asked over SQL
  while it runs: server_before()), the options they set, its error log and the offset the restart's lines follow;
- refusals(lines, source): what the server refused at start, from its error log or journal lines:
  an unknown variable or option, a value it could not set, an option file it could not parse; the
  wordings of mysys/my_getopt and my_default of MySQL and MariaDB (MySQL prefixes [MY-nnnnnn] [Server]);
- locate(refusal, entries): the option-file line (file, line, text) a refusal names;
- unreadable_files(files, uid, gids): option files the server's user cannot read (the server skips
  an unreadable included file without a word and starts without its settings);
- refused_at_start(before, others): all of it after a start that failed, and put_back_report() its message.
"""

from __future__ import annotations

import os
import re
import stat

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles
from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import dropin_backups


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
    dropins = dropins if dropins is not None else [f for f in files_read if dropin_backups.is_dropin(f)]
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


def put_back_report(what, refused, done, again, why):
    """The message of a start the server refused: 'WHAT: the refused lines (file:line (text): the server's words).
    Put back: ... Started again: AGAIN'; why: how the start ended, when no line names a refusal."""
    named = '; '.join(describe(r, r.get('where')) for r in refused) or \
        'no line of the server\'s log names a refused option (%s)' % why
    put = ', '.join('%s %s' % ('restored' if i['action'] == 'restore' else 'removed', i['path']) for i in done) or \
        'nothing to put back'
    return '%s: %s. Put back: %s. Started again: %s' % (what, named, put, again)
