# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report's files, written as one set: verify.json (streamed host by host), verify.html and
verify-junit.xml staged in a new private directory and published with one rename, in a directory of mode 0700 with
files of mode 0600 unless told otherwise (write_report_set()); the outline the playbook shows (report_outline())."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import tempfile

from ansible_collections.dbfleet.innodb.plugins.module_utils.host.private_paths import (
    NOFOLLOW, open_private_file, private_dir_problem)
from ansible_collections.dbfleet.innodb.plugins.module_utils.report.build import ReportError
from ansible_collections.dbfleet.innodb.plugins.module_utils.report.html_page import verify_report_html
from ansible_collections.dbfleet.innodb.plugins.module_utils.report.junit import verify_report_junit


REPORT_FILES = ('verify.json', 'verify.html', 'verify-junit.xml')
DEFAULT_FILE_MODE = 0o600
# Inside the report directory: set-*/ (one directory per written set) and current -> set-*, which the
# public names (verify.json -> .verify-report/current/verify.json, ...) go through.
SETS_DIR = '.verify-report'


def iter_json(report):
    """verify.json in pieces, one host at a time: the same text as render_json(), never one string of the whole
    report (a 10,000-host report is about 100 MB of JSON)."""
    def dumps(value):
        return json.dumps(value, indent=2, sort_keys=True, separators=(',', ': '), default=str)

    keys = sorted(report)
    yield '{'
    for number, key in enumerate(keys):
        yield '%s\n  %s: ' % (',' if number else '', json.dumps(key))
        value = report[key]
        if key == 'hosts' and isinstance(value, dict) and value:
            yield '{'
            for position, host in enumerate(sorted(value)):
                text = dumps(value[host]).replace('\n', '\n    ')
                yield '%s\n    %s: %s' % (',' if position else '', json.dumps(host), text)
            yield '\n  }'
        else:
            yield dumps(value).replace('\n', '\n  ')
    yield '\n}\n' if keys else '}\n'


def render_json(report):
    """verify.json: as Ansible's to_nice_json(indent=2) writes it, with a final newline."""
    return ''.join(iter_json(report))


# The files of a set, each rendered as pieces of text (verify.json streamed host by host).
_RENDER = {'verify.json': iter_json, 'verify.html': lambda r: [verify_report_html(r)],
           'verify-junit.xml': lambda r: [verify_report_junit(r)]}


def parse_mode(value):
    """The file mode of the report files from '0600', '600', 0o600 (an int); raises ReportError."""
    mode = None
    if isinstance(value, int) and not isinstance(value, bool):
        mode = value
    elif isinstance(value, str) and re.match(r'^0?[0-7]{3}$', value.strip()):
        mode = int(value.strip(), 8)
    if mode is None or not 0 <= mode <= 0o777 or mode & 0o600 != 0o600:
        raise ReportError('report mode must be an octal file mode such as \'0600\' or \'0640\' that lets the owner '
                          'read and write; got %r' % (value,))
    return mode


def directory_mode(file_mode):
    """The directory mode that goes with a file mode: search (x) wherever read is allowed (0600 -> 0700)."""
    return file_mode | ((file_mode & 0o444) >> 2) | 0o700


def write_report_set(report, directory, mode=DEFAULT_FILE_MODE):
    """Write verify.json, verify.html and verify-junit.xml into directory as one set; returns their paths.

    The three files are rendered and written into a new staging directory (mode directory_mode(mode), files
    mode); then, under a lock (two runs writing into the same directory: AWX job slices), the staging
    directory becomes set-XXXX and one rename of the symbolic link <directory>/.verify-report/current makes
    the three files current together: the public names point through it, so a reader never sees files of
    two runs. The sets no longer current are removed under the same lock. A missing directory is made with
    directory_mode(mode). The directory and its .verify-report are used only when private
    (private_paths.private_dir_problem(): no symbolic link followed, this user's, writable by nobody else),
    else ReportError naming the path, before anything in them is changed; files in them are opened with
    O_NOFOLLOW."""
    mode = parse_mode(mode)
    dmode = directory_mode(mode)
    # The HTML and JUnit files before anything is written (a report they cannot render writes nothing); the JSON
    # is streamed into its staged file.
    rendered = [(name, _RENDER[name](report)) for name in REPORT_FILES]
    rendered = [(name, pieces if name == 'verify.json' else list(pieces)) for name, pieces in rendered]
    # Two runs may make the directories at the same moment: whoever comes second finds them made.
    if not os.path.lexists(directory):
        try:
            os.makedirs(directory, dmode)
            os.chmod(directory, dmode)
        except FileExistsError:
            pass
    _check_private(directory, 'report directory')
    sets = os.path.join(directory, SETS_DIR)
    try:
        os.mkdir(sets, dmode)
    except FileExistsError:
        pass
    _check_private(sets, 'report directory')
    os.chmod(sets, dmode)
    stage = tempfile.mkdtemp(prefix='stage-', dir=sets)
    done = os.path.join(sets, 'set-' + os.path.basename(stage)[len('stage-'):])
    try:
        os.chmod(stage, dmode)
        for name, pieces in rendered:
            fd = os.open(os.path.join(stage, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, mode)
            with os.fdopen(fd, 'w', encoding='utf-8') as out:
                os.fchmod(out.fileno(), mode)   # whatever the umask
                for text in pieces:
                    out.write(text)
                out.flush()
                os.fsync(out.fileno())
        lock = open_private_file(os.path.join(sets, 'lock'), os.O_RDWR | os.O_CREAT, mode)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            os.rename(stage, done)
            link = os.path.join(sets, 'current')
            staged_link = os.path.join(sets, '.current-%s' % os.path.basename(done))
            os.symlink(os.path.basename(done), staged_link)
            os.replace(staged_link, link)                 # the one step that makes the new set current
            paths = _public_links(directory, os.path.basename(done))
            for entry in os.listdir(sets):
                if entry.startswith('set-') and entry != os.path.basename(done):
                    old = os.path.join(sets, entry)
                    if os.path.islink(old):
                        os.unlink(old)          # removed, never followed
                    else:
                        shutil.rmtree(old, ignore_errors=True)
        finally:
            os.close(lock)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return paths


def _check_private(path, what):
    problem = private_dir_problem(path)
    if problem:
        raise ReportError('%s %s is not used: %s' % (what, path, problem))


def _public_links(directory, stamp):
    """verify.json -> .verify-report/current/verify.json, ... (made once; replaces a plain file of an older version)."""
    paths = []
    for name in REPORT_FILES:
        path = os.path.join(directory, name)
        target = os.path.join(SETS_DIR, 'current', name)
        if not (os.path.islink(path) and os.readlink(path) == target):
            staged = os.path.join(directory, '.%s.%s' % (name, stamp))
            os.symlink(target, staged)
            os.replace(staged, path)
        paths.append(path)
    return paths


def report_outline(report):
    """The report without its per-variable cells: summary, variables and each host's status and reason."""
    hosts = dict((name, dict(status=entry.get('status'), reason=entry.get('reason')))
                 for name, entry in report['hosts'].items())
    return dict(format=report['format'], generated=report['generated'], summary=report['summary'],
                variables=report['variables'], hosts=hosts)
