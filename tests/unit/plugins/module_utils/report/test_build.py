# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report built in one place (verify_report.py): secrets masked by variable, each host's entry from what
the report reads. The page: test_verify_report_html.py; the files: test_verify_report_files.py."""

from __future__ import annotations

import json

from ansible_collections.dbfleet.innodb.plugins.module_utils import masking
from ansible_collections.dbfleet.innodb.plugins.module_utils.report import build as vr
from ansible_collections.dbfleet.innodb.plugins.module_utils.report import html_page as vh
from ansible_collections.dbfleet.innodb.plugins.module_utils.report import junit as vj

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


def test_error_text_names_each_host_in_error_with_its_reason():
    report = vr.verify_report(dict(outcomes(), db3=dict(unreachable=True, msg='ssh: no route'),
                                   db4=dict(variables={'innodb_adaptive_hash_index': item()})))
    assert vr.error_text(report) == 'db2: cannot connect: server said password=********; db3: unreachable: ssh: no route'
    assert vr.error_text(vr.verify_report(dict(db4=dict(variables={'innodb_adaptive_hash_index': item()})))) == ''
    from ansible_collections.dbfleet.innodb.plugins.filter.verify_report import FilterModule
    assert FilterModule().filters()['verify_errors'](report) == vr.error_text(report)
