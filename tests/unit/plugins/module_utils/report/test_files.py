# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report's files written as one set (report/files.py): private modes, one rename, never a symlink
followed, two writers at once; verify.json streamed host by host."""

from __future__ import annotations

import json
import os
import stat
import threading

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.report import build as vr
from ansible_collections.dbfleet.innodb.plugins.module_utils.report import files as vf

from test_build import evil_report


# ---------------------------------------------------------------- the files, as one set
def test_files_are_private_by_default_and_the_mode_is_configurable(tmp_path):
    report = evil_report()
    directory = tmp_path / 'reports'
    paths = vf.write_report_set(report, str(directory))
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(directory / vf.SETS_DIR).st_mode) == 0o700
    assert [stat.S_IMODE(os.stat(p).st_mode) for p in paths] == [0o600] * 3
    with open(paths[0], encoding='utf-8') as handle:
        assert json.load(handle)['generated'] == report['generated']
    vf.write_report_set(report, str(directory), '0640')
    assert [stat.S_IMODE(os.stat(p).st_mode) for p in paths] == [0o640] * 3
    assert stat.S_IMODE(os.stat(directory / vf.SETS_DIR).st_mode) == 0o750
    # one set on disk after each write
    assert len([e for e in os.listdir(directory / vf.SETS_DIR) if e.startswith('set-')]) == 1


def test_an_existing_directory_is_left_as_it_is(tmp_path):
    shared = tmp_path / 'shared'
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    vf.write_report_set(evil_report(), str(shared))
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o755
    assert stat.S_IMODE(os.stat(shared / vf.SETS_DIR).st_mode) == 0o700


def test_plain_files_of_an_older_version_are_replaced(tmp_path):
    for name in vf.REPORT_FILES:
        (tmp_path / name).write_text('old')
    vf.write_report_set(evil_report(), str(tmp_path))
    for name in vf.REPORT_FILES:
        assert os.path.islink(tmp_path / name) and (tmp_path / name).read_text() != 'old'


def _others(tmp_path):
    """A directory of someone else's (uid 4242) with a file in it, as an attacker points a link to it."""
    other = tmp_path / 'others'
    other.mkdir()
    (other / 'theirs.txt').write_text('theirs')
    os.chmod(other, 0o755)
    os.chown(other, 4242, 4242)
    return other


def test_a_symlinked_marker_directory_is_refused_and_its_target_left_alone(tmp_path):
    reports = tmp_path / 'reports'
    reports.mkdir(mode=0o700)
    other = _others(tmp_path)
    os.symlink(str(other), str(reports / vf.SETS_DIR))
    with pytest.raises(vr.ReportError, match='%s is a symbolic link' % (reports / vf.SETS_DIR)):
        vf.write_report_set(evil_report(), str(reports))
    assert sorted(os.listdir(other)) == ['theirs.txt'] and stat.S_IMODE(os.stat(other).st_mode) == 0o755


@pytest.mark.parametrize('how', ['symlink', 'group_writable', 'world_writable', 'someone_elses'])
def test_a_report_directory_that_is_not_private_is_refused_naming_it(tmp_path, how):
    directory = tmp_path / 'reports'
    if how == 'symlink':
        real = tmp_path / 'real'
        real.mkdir(mode=0o700)
        os.symlink(str(real), str(directory))
    else:
        directory.mkdir()
        os.chmod(directory, dict(group_writable=0o770, world_writable=0o1777, someone_elses=0o700)[how])
        if how == 'someone_elses':
            os.chown(directory, 4242, 4242)
    with pytest.raises(vr.ReportError, match='report directory %s is not used' % directory):
        vf.write_report_set(evil_report(), str(directory))
    assert not os.path.lexists(os.path.join(os.path.realpath(directory), vf.SETS_DIR))


def test_a_symlinked_lock_and_old_sets_are_never_followed(tmp_path):
    directory = tmp_path / 'reports'
    vf.write_report_set(evil_report(), str(directory))
    sets = directory / vf.SETS_DIR
    other = _others(tmp_path)
    os.symlink(str(other), str(sets / 'set-planted'))
    vf.write_report_set(evil_report(), str(directory))
    assert not os.path.lexists(sets / 'set-planted') and sorted(os.listdir(other)) == ['theirs.txt']
    os.unlink(sets / 'lock')
    os.symlink(str(other / 'lockfile'), str(sets / 'lock'))
    with pytest.raises(OSError):
        vf.write_report_set(evil_report(), str(directory))
    assert sorted(os.listdir(other)) == ['theirs.txt']
    assert not [e for e in os.listdir(sets) if e.startswith('stage-')]


@pytest.mark.parametrize('mode', ['0644x', '0400', 'rw', 0o1777, '0200', True])
def test_bad_modes_are_refused_before_anything_is_written(tmp_path, mode):
    with pytest.raises(vr.ReportError, match='report mode must be an octal file mode'):
        vf.write_report_set(evil_report(), str(tmp_path / 'r'), mode)
    assert not (tmp_path / 'r').exists()


def test_a_reader_never_sees_files_of_two_runs(tmp_path):
    """Writers alternate two reports while a reader reads the three files through the set's directory: every
    read gives files of the same run."""
    first = vr.verify_report({'a': dict(variables={}, errors=[])}, generated='2026-01-01T00:00:01+00:00')
    second = vr.verify_report({'b': dict(variables={}, errors=[])}, generated='2026-01-01T00:00:02+00:00')
    directory = str(tmp_path)
    vf.write_report_set(first, directory)
    stop, mixed, reads = threading.Event(), [], [0]

    def reader():
        while not stop.is_set():
            try:
                current = os.path.realpath(os.path.join(directory, vf.SETS_DIR, 'current'))
                with open(os.path.join(current, 'verify.json'), encoding='utf-8') as j, \
                        open(os.path.join(current, 'verify.html'), encoding='utf-8') as h:
                    generated = json.load(j)['generated']
                    page = h.read()
            except (OSError, ValueError):
                continue    # a set removed between realpath and open: read again
            reads[0] += 1
            if 'generated %s' % generated not in page:
                mixed.append(generated)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for i in range(40):
            vf.write_report_set(second if i % 2 else first, directory)
    finally:
        stop.set()
        thread.join()
    assert reads[0] > 0 and mixed == []


def test_two_writers_at_once_leave_one_complete_current_set(tmp_path):
    """Two runs writing into one directory (AWX job slices): every write completes, the current set is whole."""
    reports = [vr.verify_report({'h%d' % i: dict(variables={}, errors=[])}, generated='2026-01-01T00:00:%02d+00:00' % i)
               for i in range(2)]
    errors = []

    def writer(report):
        try:
            for _i in range(15):
                vf.write_report_set(report, str(tmp_path))
        except Exception as e:  # pylint: disable=broad-except
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(r,)) for r in reports]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    generated = json.loads((tmp_path / 'verify.json').read_text(encoding='utf-8'))['generated']
    assert 'generated %s' % generated in (tmp_path / 'verify.html').read_text(encoding='utf-8')
    assert [e for e in os.listdir(tmp_path / vf.SETS_DIR) if e.startswith(('set-', 'stage-'))] == \
        [os.readlink(tmp_path / vf.SETS_DIR / 'current')]


@pytest.mark.parametrize('report', [evil_report(), {'format': 1, 'hosts': {}}, {}])
def test_json_is_streamed_host_by_host_as_to_nice_json_writes_it(report):
    pieces = list(vf.iter_json(report))
    assert ''.join(pieces) == json.dumps(report, indent=2, sort_keys=True, separators=(',', ': ')) + '\n'
    if report.get('hosts'):
        assert len(pieces) >= len(report) + len(report['hosts'])      # one piece per host, not one string
