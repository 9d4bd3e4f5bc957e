# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report: built and masked in one place, for both audit modes.

verify_report(): per-host verify outcomes -> the report (a JSON-ready dict), every value of a secret
variable masked (masking.py: by what the variable is, not by substring); the evidence texts every rendering
shares (cell_evidence(), blocker_text(), upgrade_finding_text()) and the fleet's upgrade summary. Rendered by
html_page.py (one self-contained page; its style and script are the files of assets/)
and report/junit.py; written as one set of private files by report/files.py.

The filters of plugins/filter/verify_report.py and the action plugin of dbfleet.innodb.verify_fleet (both
modes of playbooks/verify.yml) call these functions.
"""

from __future__ import annotations

import datetime
import json

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import clusters
from ansible_collections.dbfleet.innodb.plugins.module_utils import masking


class ReportError(ValueError):
    """Input that is not a report (or not outcomes); the message says what was expected."""


STATUSES = ('ok', 'startup_unknown', 'drift_runtime', 'drift_config', 'pending_restart', 'unsupported', 'not_settable',
            'error')
NO_DRIFT = ('ok', 'startup_unknown', 'unsupported')
# A host: drift (any variable drifts), startup_unknown (no drift, but some variable runs the desired value with
# what a restart brings not known), ok, error (not audited).
HOST_STATUSES = ('ok', 'startup_unknown', 'drift', 'error')
REPORT_FORMAT = 1

# Keys of a verify result kept in the report (invocation and the like are dropped).
_RESULT_KEYS = ('variables', 'summary', 'drift', 'skipped_variables', 'option_files', 'errors', 'target', 'blockers',
                'engine_notes', 'upgrade')
_SERVER_KEYS = ('flavor', 'version_text', 'version_string', 'hostname', 'port', 'datadir', 'option_files',
                'option_files_source', 'runs_as_root', 'local', 'aurora_reader', 'notes')


# What _host_entry() reads of a verify result besides _RESULT_KEYS; of its server facts, _SERVER_KEYS and replication.
_OUTCOME_KEYS = _RESULT_KEYS + ('unreachable', 'skipped', 'skip_reason', 'msg', 'failed')


def _plain(value):
    """A copy made of plain dicts, lists and scalars (Ansible hands lazy/tagged containers)."""
    return json.loads(json.dumps(value, default=str))


def _read_outcome(outcome):
    """A plain copy of the parts of a verify result that the report reads: not the rest of the server facts
    (capabilities, variables), the desired state or the startup state, which were most of each copy's cost."""
    read = dict((k, outcome.get(k)) for k in _OUTCOME_KEYS if k in outcome)
    server = outcome.get('server')
    if isinstance(server, dict):
        read['server'] = dict((k, server.get(k)) for k in _SERVER_KEYS + ('replication',) if k in server)
    elif server is not None:
        read['server'] = server
    return _plain(read)


def _is_plain(report):
    """True for a report as verify_report() builds it (plain dicts of each host's entry): no copy needed."""
    hosts = report.get('hosts')
    return report.__class__ is dict and hosts.__class__ is dict and all(e.__class__ is dict for e in hosts.values())


def _host_entry(outcome):
    if outcome is None:
        return dict(status='error', reason='not audited: the host dropped out of the play before the audit ran')
    if not isinstance(outcome, dict):
        return dict(status='error', reason='not audited: unexpected result %r' % (outcome,))
    outcome = _read_outcome(outcome)
    if outcome.get('unreachable'):
        return dict(status='error', reason='unreachable: %s' % (outcome.get('msg') or 'no reason given'))
    if outcome.get('skipped'):
        return dict(status='error', reason='not audited: %s' % (outcome.get('skip_reason') or 'skipped'))
    if 'variables' not in outcome or not isinstance(outcome.get('variables'), dict):
        return dict(status='error', reason=masking.mask_text(outcome.get('msg') or 'the audit failed without a message'))
    entry = dict((k, outcome.get(k)) for k in _RESULT_KEYS)
    for name, item in (entry.get('variables') or {}).items():
        if isinstance(item, dict):
            masking.mask_item(name, item)
    for key in ('errors',):
        entry[key] = [masking.mask_text(e) for e in entry.get(key) or []]
    if isinstance(entry.get('option_files'), dict):
        for key in ('errors', 'warnings'):
            if isinstance(entry['option_files'].get(key), list):
                entry['option_files'][key] = [masking.mask_text(e) for e in entry['option_files'][key]]
    server = outcome.get('server') or {}
    entry['server'] = dict((k, server.get(k)) for k in _SERVER_KEYS)
    entry['server']['role'] = (server.get('replication') or {}).get('role')
    entry['server']['cluster'] = (server.get('replication') or {}).get('cluster')
    summary = dict((s, 0) for s in STATUSES)
    for item in entry['variables'].values():
        status = item.get('status') if isinstance(item, dict) else 'error'
        summary[status] = summary.get(status, 0) + 1
    entry['summary'] = summary
    entry['blockers'] = entry.get('blockers') or []
    entry['engine_notes'] = entry.get('engine_notes') or []
    entry['upgrade'] = _upgrade_entry(entry.get('upgrade'))
    drift = any(summary.get(s) for s in STATUSES if s not in NO_DRIFT)
    entry['status'] = 'drift' if drift else 'startup_unknown' if summary.get('startup_unknown') else 'ok'
    entry['reason'] = '; '.join(entry.get('errors') or []) or None
    if outcome.get('failed') and outcome.get('msg'):
        msg = masking.mask_text(outcome['msg'])
        entry['reason'] = msg if not entry['reason'] else '%s; %s' % (msg, entry['reason'])
    return entry


def verify_report(outcomes, hostvars=None, key='__verify_result', generated=None):
    """The fleet report from per-host verify outcomes.

    outcomes: a dict host -> registered verify result, or a list of host names read from hostvars[host][key]."""
    if isinstance(outcomes, (list, tuple)):
        if hostvars is None:
            raise ReportError('verify_report: a list of hosts needs hostvars as its first argument')
        names = [str(h) for h in outcomes]
        outcomes = dict((h, _hostvar(hostvars, h, key)) for h in names)
    if not isinstance(outcomes, dict):
        raise ReportError('verify_report: expected a dict of host -> verify result or a list of hosts, '
                          'got %s' % type(outcomes).__name__)
    hosts = {}
    for host in sorted(outcomes, key=str):
        hosts[str(host)] = _host_entry(outcomes[host])
    variables = sorted(set(name for entry in hosts.values() for name in (entry.get('variables') or {})))
    cells = dict((s, 0) for s in STATUSES)
    for entry in hosts.values():
        for status, count in (entry.get('summary') or {}).items():
            cells[status] = cells.get(status, 0) + count
    by_status = dict((s, sorted(h for h, e in hosts.items() if e['status'] == s)) for s in HOST_STATUSES)
    summary = dict(
        hosts=len(hosts),
        hosts_ok=len(by_status['ok']),
        hosts_startup_unknown=len(by_status['startup_unknown']),
        hosts_drift=len(by_status['drift']),
        hosts_error=len(by_status['error']),
        drift_hosts=by_status['drift'],
        startup_unknown_hosts=by_status['startup_unknown'],
        error_hosts=by_status['error'],
        variables=cells,
        blockers=sum(len(e.get('blockers') or []) for e in hosts.values()),
        blocked_hosts=sorted(h for h, e in hosts.items() if e.get('blockers')),
    )
    # Clusters: settings every member must share that differ (flagged), and per-member ones that differ (shown).
    # The values compared: what verify checked (runtime) and the settings every member must share, which the host's
    # cluster entry carries (replication/membership.cluster_info: settings).
    disagree = clusters.member_disagreements(dict(
        (h, dict(cluster=(e.get('server') or {}).get('cluster'),
                 values=dict(dict((n, i.get('runtime')) for n, i in (e.get('variables') or {}).items() if isinstance(i, dict)),
                             **(((e.get('server') or {}).get('cluster') or {}).get('settings') or {}))))
        for h, e in hosts.items()))
    summary['cluster_disagreements'] = [d for d in disagree if d['must_match']]
    summary['per_member_settings'] = [d for d in disagree if not d['must_match']]
    summary['upgrade'] = upgrade_summary(hosts)
    if generated is None:
        generated = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
    return dict(format=REPORT_FORMAT, generated=generated, summary=summary, variables=variables, hosts=hosts)


def error_text(report):
    """Each host of a report in error with its reason, "host: reason; ..." in the summary's order ('' for none): the
    summary line and the failure message of playbooks/verify.yml."""
    return '; '.join('%s: %s' % (host, report['hosts'][host].get('reason')) for host in report['summary']['error_hosts'])


def _hostvar(hostvars, host, key):
    try:
        host_vars = hostvars[host]
    except KeyError:
        return None
    try:
        return host_vars[key] if key in host_vars else None
    except Exception as e:  # a variable that fails to template: report it, do not stop the report
        return dict(failed=True, msg='cannot read the audit result: %s' % e)


# ---------------------------------------------------------------- evidence text
def cell_evidence(host, name, item):
    """Plain-text evidence for one cell (hover text, JUnit message body)."""
    lines = ['%s on %s: %s' % (name, host, item.get('status'))]
    if item.get('resolved_name') and item.get('resolved_name') != name:
        lines.append('name on this server: %s' % item['resolved_name'])
    lines.append('desired: %s' % _text(item.get('desired')))
    if item.get('runtime') is not None:
        lines.append('running (GLOBAL): %s' % item['runtime'])
    configured = item.get('configured')
    if configured:
        lines.append('configured: %s (%s:%s [%s])'
                     % (configured.get('value'), configured.get('file'), configured.get('line'),
                        configured.get('group')))
    elif item.get('resolved_name'):
        lines.append('configured: not in any option file')
    if item.get('command_line'):
        lines.append('command line: %s' % item['command_line'].get('text'))
    if item.get('persisted') is not None:
        lines.append('persisted: %s' % item['persisted'])
    startup = item.get('startup') if isinstance(item.get('startup'), dict) else {}
    if startup.get('read_at'):
        lines.append('a restart brings: %s, from %s' % (_text(startup.get('value')) if startup.get('value') is not None
                                                        else 'the default', startup.get('source')))
    elif startup.get('state') == 'unavailable':
        lines.append('a restart brings: not known here (option files not read)')
    if item.get('origin'):
        lines.append('running value from: %s%s' % (item['origin'], ' (%s)' % item['origin_path']
                                                   if item.get('origin_path') else ''))
    if item.get('dynamic') is not None:
        lines.append('dynamic: %s' % ('yes' if item['dynamic'] else 'no (read-only at runtime)'))
    if item.get('default') is not None:
        lines.append('default: %s' % item['default'])
    for note in item.get('notes') or []:
        lines.append('note: %s' % note)
    return '\n'.join(lines)


def _text(value):
    if isinstance(value, bool):
        return 'true' if value else 'false'
    return '%s' % (value,)


def blocker_text(host, blocker):
    """Plain-text evidence of one upgrade blocker (HTML title, JUnit message body)."""
    where = '%s.%s (%s)' % (blocker.get('schema'), blocker.get('table'), blocker.get('engine') or 'engine unknown')
    lines = ['upgrade blocker on %s: %s' % (host, where),
             'reason: %s' % blocker.get('reason'),
             'size: %s bytes, about %s rows' % (blocker.get('total_bytes'), blocker.get('rows_estimate')),
             'concerns: %s (%s)' % (blocker.get('version'), ', '.join(blocker.get('where') or []))]
    if blocker.get('gone_in'):
        lines.append('engine removed in: %s' % blocker['gone_in'])
    if blocker.get('source'):
        lines.append('source: %s' % blocker['source'])
    return '\n'.join(lines)


# ---------------------------------------------------------------- upgrade readiness (module_utils/versions/upgrade.py)
# Finding kinds in the order the report shows them, with their label; those that stop the target from starting.
UPGRADE_KINDS = (('would_not_start', 'would not start'), ('value_refused', 'value refused: would not start'),
                 ('feature_removed', 'feature removed'), ('ignored', 'ignored'), ('not_read', 'line not read'),
                 ('value_adjusted', 'value adjusted'), ('default_changes', 'default changes'))
UPGRADE_SILENT = ('default_changes', 'not_read', 'value_adjusted', 'ignored')


def _upgrade_entry(upgrade):
    """A host's upgrade result as the report keeps it (texts masked again; None without a target)."""
    if not isinstance(upgrade, dict):
        return None
    upgrade = dict(upgrade)
    upgrade['findings'] = [dict(f, message=masking.mask_text(f.get('message'))) for f in upgrade.get('findings') or []
                           if isinstance(f, dict)]
    upgrade['notes'] = [masking.mask_text(n) for n in upgrade.get('notes') or []]
    return upgrade


def upgrade_summary(hosts):
    """The fleet's upgrade readiness: hosts that would not start on the target, hosts with silent changes, and by
    setting which hosts have which finding (stops first, then the most hosts); None when no host has a target."""
    audited = dict((h, e['upgrade']) for h, e in hosts.items() if e.get('upgrade'))
    if not audited:
        return None
    by_setting = {}
    for host, upgrade in sorted(audited.items()):
        for f in upgrade['findings']:
            row = by_setting.setdefault((f.get('setting'), f.get('kind')), dict(
                setting=f.get('setting'), kind=f.get('kind'), hosts=[], changes={}, stops_start=bool(f.get('stops_start')),
                pin=f.get('pin'), machine=f.get('machine'), target_name=f.get('target_name')))
            if host not in row['hosts']:
                row['hosts'].append(host)
            if f.get('kind') == 'default_changes':
                change = '%s -> %s' % (f.get('now'), f.get('after'))
                row['changes'][change] = row['changes'].get(change, 0) + 1
    order = dict((k, i) for i, (k, _label) in enumerate(UPGRADE_KINDS))
    rows = sorted(by_setting.values(), key=lambda r: (order.get(r['kind'], 99), -len(r['hosts']), str(r['setting'])))
    for row in rows:
        row['count'] = len(row['hosts'])
    return dict(
        targets=sorted(set(u['target']['label'] for u in audited.values() if u.get('target'))),
        hosts=sorted(audited),
        would_not_start=sorted(h for h, u in audited.items() if u['summary'].get('would_start') is False),
        start_unknown=sorted(h for h, u in audited.items() if u['summary'].get('would_start') is None),
        silent_changes=sorted(h for h, u in audited.items() if u['summary'].get('silent_changes')),
        incomplete=sorted(h for h, u in audited.items() if not u.get('complete')),
        by_setting=rows)


def upgrade_warnings(hosts):
    """One warning per upgrade target whose start the report cannot tell (the collection has no facts of it), naming
    the target, the versions the collection has facts of and the hosts: for the run's output, where the JSON's note
    is not read."""
    by_text = {}
    for host, entry in sorted(hosts.items()):
        text = (entry.get('upgrade') or {}).get('start_unknown')
        if text:
            by_text.setdefault(text, []).append(host)
    return ['upgrade to %s: %s (%d host%s: %s)' % (
        hosts[names[0]]['upgrade']['target'].get('label'), text, len(names), '' if len(names) == 1 else 's',
        ', '.join(names[:10]) + (', ...' if len(names) > 10 else '')) for text, names in sorted(by_text.items())]


def upgrade_finding_text(host, finding):
    """Plain-text evidence of one upgrade finding (HTML title, JUnit message body)."""
    lines = ['%s on %s: %s' % (finding.get('kind'), host, finding.get('message'))]
    for key in ('where', 'now', 'after', 'machine', 'target_name'):
        if finding.get(key) not in (None, ''):
            lines.append('%s: %s' % (key.replace('_', ' '), finding[key]))
    if finding.get('pin'):
        lines.append('pin: %s' % pin_text(finding['pin']))
    return '\n'.join(lines)


def pin_text(pin):
    """'dbfleet.innodb.adaptive_hash: adaptive_hash_enabled: true', 'dbfleet.innodb.settings: settings_values: {...}'."""
    if not isinstance(pin, dict):
        return ''
    value = json.dumps(pin.get('value'), sort_keys=True, default=str)
    if pin.get('variable'):
        return '%s: %s: %s' % (pin.get('role'), pin['variable'], value)
    return '%s (%s)' % (pin.get('role'), pin.get('note') or value)
