# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report's one writer: secrets masked by variable, HTML data escaped for any string (parsed, and
rendered in headless Chromium), the three files written as one set with private modes."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import threading
from html.parser import HTMLParser

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils import masking
from ansible_collections.dbfleet.innodb.plugins.module_utils import verify_report as vr
from ansible_collections.dbfleet.innodb.plugins.module_utils import verify_report_files as vf
from ansible_collections.dbfleet.innodb.plugins.module_utils import verify_report_html as vh
from ansible_collections.dbfleet.innodb.plugins.module_utils import verify_report_junit as vj

CHROMIUM = '/usr/bin/chromium'
EVIL = '<!--<script>'


def item(status='ok', **extra):
    base = dict(desired=1, resolved_name=None, runtime='1', status=status, notes=[], configured=None,
                persisted=None, origin=None, command_line=None, startup=None, default=None)
    base.update(extra)
    return base


def outcomes():
    return {
        'db1': dict(variables={
            'wsrep_sst_auth': item('drift_config', desired='sst:N3wPass', runtime='sst:0ldPass', resolved_name='wsrep_sst_auth',
                                   configured=dict(value='sst:0ldPass', file='/etc/mysql/conf.d/galera.cnf', line=4,
                                                   group='galera', text='wsrep_sst_auth = sst:0ldPass'),
                                   notes=['the server runs sst:0ldPass; a restart brings sst:0ldPass']),
            'report_password': item(runtime='hunter2', desired='hunter2'),
            'wsrep_provider_options': item(runtime='gcache.size=1G; socket.ssl_key_password=k3y; pc.weight=1',
                                           desired='gcache.size=1G'),
            'innodb_adaptive_hash_index': item(runtime='ON', desired='ON'),
            'disconnect_on_expired_password': item(runtime='ON', desired='ON'),
        }, errors=['option file /etc/mysql/x.cnf line 3: wsrep_sst_auth=sst:0ldPass has no group'],
            server=dict(flavor='mariadb')),
        'db2': dict(failed=True, msg='cannot connect: server said password=Pr1vate'),
    }


# ---------------------------------------------------------------- secrets, by what the variable is
def test_secret_variables_are_masked_everywhere_they_show():
    report = vr.verify_report(outcomes(), generated='2026-01-01T00:00:00+00:00')
    text = json.dumps(report)
    for secret in ('N3wPass', '0ldPass', 'hunter2', 'k3y', 'Pr1vate'):
        assert secret not in text, secret
    auth = report['hosts']['db1']['variables']['wsrep_sst_auth']
    assert auth['runtime'] == auth['desired'] == auth['configured']['value'] == auth['configured']['text'] == masking.MASK
    assert auth['configured']['file'] == '/etc/mysql/conf.d/galera.cnf'       # where, not what
    assert auth['status'] == 'drift_config' and auth['masked'] is True
    assert auth['notes'] == ['the server runs ********; a restart brings ********']
    # an option string keeps what is not a credential
    assert report['hosts']['db1']['variables']['wsrep_provider_options']['runtime'] == \
        'gcache.size=1G; socket.ssl_key_password=********; pc.weight=1'
    # settings about passwords and ordinary values are shown
    assert report['hosts']['db1']['variables']['disconnect_on_expired_password']['runtime'] == 'ON'
    assert report['hosts']['db1']['variables']['innodb_adaptive_hash_index']['runtime'] == 'ON'
    assert report['hosts']['db2']['reason'] == 'cannot connect: server said password=********'
    for page in (vh.verify_report_html(report), vj.verify_report_junit(report)):
        for secret in ('N3wPass', '0ldPass', 'hunter2', 'k3y', 'Pr1vate'):
            assert secret not in page, secret


def test_a_short_login_password_blanks_no_value():
    """The login password 'ON' is masked where a message quotes it as a word, never in values."""
    results = {'db1': dict(variables={'innodb_adaptive_hash_index': item(runtime='ON', desired='ON')}, errors=[],
                           msg=None),
               'db2': dict(failed=True, msg='login with password ON refused; ONLINE check skipped')}
    masked = masking.mask_login_secrets(results, {'ON'})
    report = vr.verify_report(masked)
    assert report['hosts']['db1']['variables']['innodb_adaptive_hash_index']['runtime'] == 'ON'
    assert report['hosts']['db1']['variables']['innodb_adaptive_hash_index']['desired'] == 'ON'
    assert report['hosts']['db2']['reason'] == 'login with password ******** refused; ONLINE check skipped'


# ---------------------------------------------------------------- HTML escaping
def evil_report():
    blocker = dict(schema='shop', table=EVIL, engine='Aria', rows_estimate=1, total_bytes=16384, status='never',
                   where=['target'], version='mysql 8.4.0', gone_in=None, source='x', reason='%s uses Aria' % EVIL)
    out = {
        'db1': dict(variables={'innodb_io_capacity': item('drift_runtime', runtime='200', desired=300,
                                                          notes=['</script><script>document.title="pwned"</script>',
                                                                 EVIL, ']]><!-- & \u2028'])},
                    errors=[], server=dict(flavor='mysql'), target=dict(flavor='mysql', version='8.4.0'),
                    blockers=[blocker]),
        'db2': dict(variables={'innodb_io_capacity': item('ok', runtime='300', desired=300)}, errors=[],
                    server=dict(flavor='mysql')),
    }
    return vr.verify_report(out, generated='2026-01-01T00:00:00+00:00')


class _Scripts(HTMLParser):
    def __init__(self):
        HTMLParser.__init__(self)
        self.scripts, self._in, self.cells = [], None, 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == 'script':
            self._in = dict(id=attrs.get('id'), text='')
        if tag == 'td' and 'cell' in (attrs.get('class') or '').split():
            self.cells += 1

    def handle_data(self, data):
        if self._in is not None:
            self._in['text'] += data

    def handle_endtag(self, tag):
        if tag == 'script' and self._in is not None:
            self.scripts.append(self._in)
            self._in = None


def test_embedded_data_is_escaped_for_any_string_parsed():
    report = evil_report()
    page = vh.verify_report_html(report)
    data = page.split('<script id="verify-data" type="application/json">')[1].split('</script>')[0]
    assert '<' not in data and '>' not in data and '&' not in data
    parser = _Scripts()
    parser.feed(page)
    parser.close()
    assert [s['id'] for s in parser.scripts] == ['verify-data', None]        # the data, then the page's script
    data = json.loads(parser.scripts[0]['text'])
    assert data == json.loads(json.dumps(vh.page_data(report)))
    # every string comes back as it was: the notes of the drifting cell, the host names
    notes = data['items'][data['hosts'][0][6][0]]['notes']
    assert notes == ['</script><script>document.title="pwned"</script>', EVIL, ']]><!-- & \u2028']
    assert [h[0] for h in data['hosts']] == ['db1', 'db2'] and data['hosts'][0][5] == 'r'
    # the upgrade blocker's table name is text of the page, escaped
    assert '&lt;!--&lt;script&gt;' in page and parser.cells == 0     # cells are made by the page's script


def chromium_dom(html_text, tmp_path):
    """The DOM headless Chromium makes of the page html_text once its script ran (it marks <body data-ready>)."""
    if not os.path.exists(CHROMIUM):
        pytest.fail('chromium (Debian package chromium) is not installed: run `make deps`', pytrace=False)
    page = tmp_path / 'verify.html'
    page.write_text(html_text, encoding='utf-8')
    proc = subprocess.run([CHROMIUM, '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
                           '--disable-background-networking', '--disable-component-update', '--disable-sync',
                           '--user-data-dir=%s' % (tmp_path / 'profile'), '--dump-dom', page.as_uri()],
                          capture_output=True, text=True, timeout=120, check=False)
    dom = proc.stdout
    assert 'data-ready="true"' in dom, (proc.returncode, proc.stderr[-2000:], dom[-2000:])
    return dom


def test_the_page_renders_in_headless_chromium(tmp_path):
    """Chromium's own parser runs the page's script (it marks <body data-ready>) and keeps every row: a table
    named <!--<script> does not swallow the page."""
    dom = chromium_dom(vh.verify_report_html(evil_report()), tmp_path)
    assert dom.count('class="hostrow"') == 2 and 'id="details"' in dom and 'class="legend"' in dom
    assert dom.count('class="cell st-') == 2 and 'data-status="drift_runtime"' in dom
    assert '<title>InnoDB fleet verification</title>' in dom


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


class _Lazy(dict):
    """A dict subclass, as Ansible hands registered results (lazy/tagged containers)."""


def test_the_report_copies_only_what_it_reads_and_says_the_same(monkeypatch):
    """Each host's entry is built from a plain copy of the parts of its result that the report reads (not the
    server's capabilities, the desired state, ...): the same entries as from a copy of the whole result."""
    full = outcomes()
    full['db1'] = _Lazy(full['db1'], desired=dict(settings={'x': 1}), startup_state=dict(state='unavailable'),
                        server=_Lazy(flavor='mariadb', version_text='11.8.3', capabilities=dict(('c%d' % i, True) for i in range(200)),
                                     replication=_Lazy(role='primary', cluster=_Lazy(kind='galera', name='galera-a', settings={}), channels=[])))
    full['db3'] = dict(unreachable=True, msg='ssh: no route')
    full['db4'] = dict(skipped=True, skip_reason='not in the window')
    copied = []
    monkeypatch.setattr(vr, '_plain', lambda value: copied.append(value) or json.loads(json.dumps(value, default=str)))
    report = vr.verify_report(full)
    db1 = [c for c in copied if isinstance(c, dict) and c.get('server', {}).get('version_text') == '11.8.3']
    assert len(db1) == 1 and 'capabilities' not in db1[0]['server'] and 'desired' not in db1[0]
    assert report['hosts']['db1']['server']['cluster'] == dict(kind='galera', name='galera-a', settings={})
    assert report['hosts']['db1']['server']['role'] == 'primary'
    assert report['hosts']['db3']['reason'] == 'unreachable: ssh: no route'
    assert report['hosts']['db4']['reason'] == 'not audited: not in the window'
    monkeypatch.setattr(vr, '_read_outcome', lambda value: json.loads(json.dumps(value, default=str)))
    assert vr.verify_report(full)['hosts'] == report['hosts']
