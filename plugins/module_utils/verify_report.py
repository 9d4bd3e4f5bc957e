# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report: built, masked, rendered and written in one place, for both audit modes.

verify_report(): per-host verify outcomes -> the report (a JSON-ready dict), every value of a secret
variable masked (mask_item(): by what the variable is, not by substring). verify_report_html(): one
self-contained HTML page whose embedded data is escaped for any string. verify_report_junit(): JUnit XML.
write_report_set(): the three files written as one set (staged in a new directory, then one rename), in a
directory of mode 0700 with files of mode 0600 unless told otherwise.

The filters of plugins/filter/verify_report.py and the action plugin of dbfleet.innodb.verify_fleet (both
modes of playbooks/verify.yml) call these functions.
"""

from __future__ import annotations

import datetime
import fcntl
import fnmatch
import html
import json
import os
import re
import shutil
import tempfile
from xml.sax.saxutils import quoteattr

from ansible_collections.dbfleet.innodb.plugins.module_utils import clusters


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
_RESULT_KEYS = ('variables', 'summary', 'drift', 'skipped', 'option_files', 'errors', 'target', 'blockers',
                'engine_notes')
_SERVER_KEYS = ('flavor', 'version_text', 'version_string', 'hostname', 'port', 'datadir', 'option_files',
                'option_files_source', 'runs_as_root', 'local', 'aurora_reader', 'notes')


def _plain(value):
    """A copy made of plain dicts, lists and scalars (Ansible hands lazy/tagged containers)."""
    return json.loads(json.dumps(value, default=str))


# ---------------------------------------------------------------- secrets
MASK = '********'
# Variables whose value is a secret, by name (MySQL, Percona, MariaDB, Galera): every value of theirs is masked.
SECRET_VARIABLES = ('wsrep_sst_auth', 'report_password', 'rpl_semi_sync_master_password')
SECRET_SUFFIXES = ('_password', '_passwd', '_auth', '_secret', '_credentials', '_token')
# Named like a secret, but a setting about passwords, not one.
NOT_SECRET = ('disconnect_on_expired_password', 'log_builtin_as_identified_by_password')
# Variables whose value is a list of options or a command line: credentials inside (key=value) are masked.
OPTION_STRING_PATTERNS = ('*_option', '*_options', '*_cmd', '*_command', 'wsrep_provider_options',
                          'daemon_memcached_option')
_CREDENTIAL_RE = re.compile(r'(?i)(\b[a-z0-9_.-]*(?:password|passwd|pwd|auth|secret|token|credentials?)\b'
                            r'[a-z0-9_.-]*\s*[=:]\s*)("[^"]*"|\'[^\']*\'|[^\s;,]+)')
# The fields of a verify item that hold the variable's value in some form.
_VALUE_FIELDS = ('desired', 'desired_normalized', 'runtime', 'persisted', 'default')
_NESTED_VALUE_FIELDS = (('configured', ('value', 'text')), ('command_line', ('value', 'text')),
                        ('startup', ('value',)))


def is_secret_variable(name):
    """True for a variable whose value is a secret (wsrep_sst_auth, report_password, *_password, *_auth, ...)."""
    text = str(name or '').strip().lower().replace('-', '_')
    if text.startswith('loose_'):
        text = text[len('loose_'):]
    if text in NOT_SECRET:
        return False
    return text in SECRET_VARIABLES or text == 'password' or text.endswith(SECRET_SUFFIXES)


def is_option_string_variable(name):
    text = str(name or '').strip().lower().replace('-', '_')
    return any(fnmatch.fnmatchcase(text, pattern) for pattern in OPTION_STRING_PATTERNS)


def mask_text(text):
    """text with the value of every credential-looking key=value / key: value masked (password=, *_auth =, ...).

    By the key, never by the value: a short password such as ON does not blank other text."""
    if not isinstance(text, str):
        return text
    return _CREDENTIAL_RE.sub(lambda m: m.group(1) + MASK, text)


def mask_item(name, item):
    """Mask, in place, a verify item's values by what its variable is: every value of a secret variable
    (and the option-file line and command-line text that hold it), or the credentials inside an option
    string. Returns item."""
    names = (name, item.get('resolved_name'))
    if any(is_secret_variable(n) for n in names if n):
        shown = set()
        for field in _VALUE_FIELDS:
            if item.get(field) not in (None, ''):
                shown.add('%s' % (item[field],))
                item[field] = MASK
        for field, keys in _NESTED_VALUE_FIELDS:
            if isinstance(item.get(field), dict):
                for key in keys:
                    if item[field].get(key) not in (None, ''):
                        shown.add('%s' % (item[field][key],))
                        item[field][key] = MASK
        notes = []
        for note in item.get('notes') or []:
            text = '%s' % (note,)
            for value in sorted(shown, key=len, reverse=True):   # this variable's own values, in its own notes
                text = text.replace(value, MASK)
            notes.append(text)
        item['notes'] = notes
        item['masked'] = True
    elif any(is_option_string_variable(n) for n in names if n):
        for field in _VALUE_FIELDS:
            item[field] = mask_text(item.get(field))
        for field, keys in _NESTED_VALUE_FIELDS:
            if isinstance(item.get(field), dict):
                for key in keys:
                    item[field][key] = mask_text(item[field].get(key))
        item['notes'] = [mask_text(n) for n in item.get('notes') or []]
    return item


def mask_login_secrets(results, secrets):
    """results (host -> result) with each of secrets (login passwords) masked in the messages of a result
    (msg, errors) where it stands as a word of its own; values are never touched. Only a host whose message
    quotes one is copied."""
    patterns = [re.compile(r'(?<![A-Za-z0-9])%s(?![A-Za-z0-9])' % re.escape(s)) for s in secrets if s]
    out = dict(results)
    if not patterns:
        return out

    def clean(text):
        if not isinstance(text, str):
            return text
        for pattern in patterns:
            text = pattern.sub(MASK, text)
        return text

    for name, outcome in results.items():
        if not isinstance(outcome, dict):
            continue
        msg, errors = outcome.get('msg'), outcome.get('errors')
        new_msg = clean(msg)
        new_errors = [clean(e) for e in errors] if isinstance(errors, list) else errors
        if new_msg != msg or new_errors != errors:
            out[name] = dict(outcome, msg=new_msg, errors=new_errors) if 'errors' in outcome else dict(outcome, msg=new_msg)
    return out


def _host_entry(outcome):
    if outcome is None:
        return dict(status='error', reason='not audited: the host dropped out of the play before the audit ran')
    if not isinstance(outcome, dict):
        return dict(status='error', reason='not audited: unexpected result %r' % (outcome,))
    outcome = _plain(outcome)
    if outcome.get('unreachable'):
        return dict(status='error', reason='unreachable: %s' % (outcome.get('msg') or 'no reason given'))
    if outcome.get('skipped'):
        return dict(status='error', reason='not audited: %s' % (outcome.get('skip_reason') or 'skipped'))
    if 'variables' not in outcome or not isinstance(outcome.get('variables'), dict):
        return dict(status='error', reason=mask_text(outcome.get('msg') or 'the audit failed without a message'))
    entry = dict((k, outcome.get(k)) for k in _RESULT_KEYS)
    for name, item in (entry.get('variables') or {}).items():
        if isinstance(item, dict):
            mask_item(name, item)
    for key in ('errors',):
        entry[key] = [mask_text(e) for e in entry.get(key) or []]
    if isinstance(entry.get('option_files'), dict):
        for key in ('errors', 'warnings'):
            if isinstance(entry['option_files'].get(key), list):
                entry['option_files'][key] = [mask_text(e) for e in entry['option_files'][key]]
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
    drift = any(summary.get(s) for s in STATUSES if s not in NO_DRIFT)
    entry['status'] = 'drift' if drift else 'startup_unknown' if summary.get('startup_unknown') else 'ok'
    entry['reason'] = '; '.join(entry.get('errors') or []) or None
    if outcome.get('failed') and outcome.get('msg'):
        msg = mask_text(outcome['msg'])
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
    disagree = clusters.member_disagreements(dict(
        (h, dict(cluster=(e.get('server') or {}).get('cluster'),
                 values=dict((n, i.get('runtime')) for n, i in (e.get('variables') or {}).items() if isinstance(i, dict))))
        for h, e in hosts.items()))
    summary['cluster_disagreements'] = [d for d in disagree if d['must_match']]
    summary['per_member_settings'] = [d for d in disagree if not d['must_match']]
    if generated is None:
        generated = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
    return dict(format=REPORT_FORMAT, generated=generated, summary=summary, variables=variables, hosts=hosts)


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


# ---------------------------------------------------------------- HTML
_CSS = '''
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em;color:#1d2330}
h1{font-size:1.4em;margin:0 0 .2em}
.meta{color:#5b6475;margin-bottom:1em}
.summary{display:flex;flex-wrap:wrap;gap:.5em;margin:.5em 0 1em}
.badge{border-radius:6px;padding:.35em .7em;font-weight:600;border:1px solid rgba(0,0,0,.12)}
.badge .n{font-size:1.2em;margin-right:.3em}
.badge.zero{opacity:.45}
table.matrix{border-collapse:collapse;font-size:.9em}
.matrix th,.matrix td{border:1px solid #d5d9e0;padding:.3em .5em;text-align:center}
.matrix th.host{text-align:left;white-space:nowrap}
.matrix th.host small{display:block;color:#5b6475;font-weight:normal}
.matrix thead th{background:#f1f3f6;position:sticky;top:0}
.matrix thead th.var{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;vertical-align:bottom}
td.cell{cursor:pointer;min-width:5.5em}
td.cell.selected{outline:3px solid #1d2330;outline-offset:-3px}
td.hosterror{text-align:left}
.st-ok{background:#d7f2dc}
.st-startup_unknown{background:#d5e8f7}
.st-drift_runtime{background:#f8c9c4}
.st-drift_config{background:#fde2b8}
.st-pending_restart{background:#fff3a8}
.st-unsupported{background:#e6e8ec;color:#5b6475}
.st-not_settable{background:#dcd6f7}
.st-error{background:#b3261e;color:#fff}
.st-none{background:#fff;color:#9aa1ad}
.st-drift{background:#fde2b8}
#details{margin-top:1em;padding:.8em 1em;border:1px solid #d5d9e0;border-radius:6px;background:#fafbfc;
 white-space:pre-wrap;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85em;min-height:3em}
.controls{margin:.5em 0}
tr.hidden{display:none}
.legend{color:#5b6475;font-size:.85em;margin-top:.6em}
'''

_JS = '''
(function(){
  var data = JSON.parse(document.getElementById('verify-data').textContent);
  var details = document.getElementById('details');
  function show(cell){
    var sel = document.querySelector('td.cell.selected');
    if (sel) { sel.classList.remove('selected'); }
    cell.classList.add('selected');
    var host = cell.getAttribute('data-host'), name = cell.getAttribute('data-var');
    var entry = data.hosts[host] || {};
    var item = (entry.variables || {})[name];
    details.setAttribute('data-host', host);
    details.setAttribute('data-var', name || '');
    if (!item) { details.textContent = host + ': ' + (entry.reason || 'not verified'); return; }
    details.textContent = cell.getAttribute('title') + '\\n\\n' + JSON.stringify(item, null, 2);
  }
  document.querySelectorAll('td.cell').forEach(function(cell){
    cell.addEventListener('click', function(){ show(cell); });
  });
  var only = document.getElementById('only-problems');
  only.addEventListener('change', function(){
    document.querySelectorAll('tr.hostrow').forEach(function(row){
      row.classList.toggle('hidden', only.checked && row.getAttribute('data-status') === 'ok');
    });
  });
  document.body.setAttribute('data-ready', 'true');
})();
'''

_LABELS = dict(ok='ok', startup_unknown='runtime ok, startup unknown', drift_runtime='drift: runtime', drift_config='drift: config',
               pending_restart='pending restart', unsupported='unsupported', not_settable='not settable',
               error='error')


def _e(value):
    return html.escape('%s' % (value,), quote=True)


def embedded_json(value):
    """JSON for a <script type="application/json"> element: no '<', '>' or '&' in it at all (written as \\u003c,
    \\u003e, \\u0026, which JSON.parse reads back), so no string - '</script>', '<!--<script>', ']]>' - can
    end the element or change how the HTML parser reads it."""
    text = json.dumps(value, sort_keys=True)
    return text.replace('<', '\\u003c').replace('>', '\\u003e').replace('&', '\\u0026')


def verify_report_html(report, title='InnoDB fleet verification'):
    """One self-contained HTML page (no network): summary, hosts x variables matrix, evidence on click."""
    if not isinstance(report, dict) or 'hosts' not in report:
        raise ReportError('verify_report_html: expected the output of dbfleet.innodb.verify_report')
    report = _plain(report)
    summary = report['summary']
    variables = report['variables']
    out = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           '<title>%s</title>' % _e(title), '<style>%s</style></head><body>' % _CSS,
           '<h1>%s</h1>' % _e(title),
           '<div class="meta">generated %s &middot; %d hosts &middot; %d variables</div>'
           % (_e(report.get('generated')), summary['hosts'], len(variables))]
    out.append('<div class="summary" id="host-summary">')
    for status, label in (('ok', 'hosts ok'), ('startup_unknown', 'hosts with startup unknown'),
                          ('drift', 'hosts with drift'), ('error', 'hosts in error')):
        count = summary['hosts_%s' % status]
        out.append('<span class="badge st-%s%s" id="hosts-%s" data-count="%d"><span class="n">%d</span> %s</span>'
                   % (status, '' if count else ' zero', status, count, count, label))
    out.append('</div><div class="summary" id="variable-summary">')
    for status in STATUSES:
        count = summary['variables'].get(status, 0)
        out.append('<span class="badge st-%s%s" id="count-%s" data-count="%d"><span class="n">%d</span> %s</span>'
                   % (status, '' if count else ' zero', status, count, count, _e(_LABELS[status])))
    out.append('</div>')
    out.append('<div class="controls"><label><input type="checkbox" id="only-problems"> '
               'only hosts with drift or errors</label></div>')
    out.append('<table class="matrix" id="matrix"><thead><tr><th class="host">host</th>')
    for name in variables:
        out.append('<th class="var" data-var="%s">%s</th>' % (_e(name), _e(name)))
    out.append('</tr></thead><tbody>')
    for host in sorted(report['hosts']):
        entry = report['hosts'][host]
        server = entry.get('server') or {}
        cluster = server.get('cluster') or {}
        in_cluster = ' '.join(str(cluster[k]) for k in ('kind', 'label', 'state', 'role') if cluster.get(k))
        sub = ' '.join(str(x) for x in (server.get('flavor'), server.get('version_text'), server.get('role'),
                                        in_cluster) if x)
        out.append('<tr class="hostrow" data-host="%s" data-status="%s"><th class="host st-%s">%s<small>%s'
                   '</small></th>' % (_e(host), _e(entry['status']), _e(entry['status']), _e(host), _e(sub)))
        if entry['status'] == 'error' and not entry.get('variables'):
            reason = entry.get('reason') or 'error'
            out.append('<td class="cell hosterror st-error" colspan="%d" data-host="%s" data-status="error" '
                       'title="%s">error: %s</td>' % (max(len(variables), 1), _e(host), _e(reason), _e(reason)))
            out.append('</tr>')
            continue
        items = entry.get('variables') or {}
        for name in variables:
            item = items.get(name)
            if item is None:
                missing = '%s: not verified on %s' % (name, host)
                out.append('<td class="cell st-none" data-host="%s" data-var="%s" data-status="none" '
                           'title="%s">&ndash;</td>' % (_e(host), _e(name), _e(missing)))
                continue
            status = item.get('status', 'error')
            out.append('<td class="cell st-%s" data-host="%s" data-var="%s" data-status="%s" title="%s">%s</td>'
                       % (_e(status), _e(host), _e(name), _e(status), _e(cell_evidence(host, name, item)),
                          _e(_LABELS.get(status, status))))
        out.append('</tr>')
    out.append('</tbody></table>')
    out.extend(_blockers_html(report))
    out.append('<div id="details" aria-live="polite">Click a cell to see the evidence.</div>')
    out.append('<div class="legend">ok: runs the desired value and keeps it after a restart &middot; '
               'drift: runtime: the running value differs &middot; drift: config: a restart loses the value '
               '&middot; pending restart: configured, applied at the next restart &middot; unsupported: no '
               'such variable there &middot; not settable: the server ignores it &middot; error: see the '
               'evidence</div>')
    data = embedded_json(report)
    out.append('<script id="verify-data" type="application/json">%s</script>' % data)
    out.append('<script>%s</script></body></html>' % _JS)
    return '\n'.join(out) + '\n'


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


def _blockers_html(report):
    """The upgrade blockers section: one row per table, per host (only when any host has a target)."""
    targets = [e.get('target') for e in report['hosts'].values() if e.get('target')]
    if not targets:
        return []
    out = ['<h2 id="blockers-title">Upgrade blockers: %d</h2>' % report['summary'].get('blockers', 0),
           '<table class="matrix" id="blockers"><thead><tr><th>host</th><th>table</th><th>engine</th>'
           '<th>size (bytes)</th><th>rows (estimate)</th><th>concerns</th><th>reason</th><th>source</th></tr>'
           '</thead><tbody>']
    for host in sorted(report['hosts']):
        entry = report['hosts'][host]
        if not entry.get('target'):
            continue
        blockers = entry.get('blockers') or []
        if not blockers:
            out.append('<tr class="blocker-none" data-host="%s"><th class="host">%s</th><td colspan="7" '
                       'class="st-ok">no table stops a move to %s %s</td></tr>'
                       % (_e(host), _e(host), _e(entry['target'].get('flavor')), _e(entry['target'].get('version'))))
            continue
        for b in blockers:
            out.append('<tr class="blocker" data-host="%s" data-table="%s.%s" title="%s"><th class="host">%s</th>'
                       '<td>%s.%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class="st-drift_runtime">%s'
                       '</td><td>%s</td></tr>'
                       % (_e(host), _e(b.get('schema')), _e(b.get('table')), _e(blocker_text(host, b)), _e(host),
                          _e(b.get('schema')), _e(b.get('table')), _e(b.get('engine') or 'unknown'),
                          _e(b.get('total_bytes')), _e(b.get('rows_estimate')), _e(b.get('version')),
                          _e(b.get('reason')), _e(b.get('source') or '')))
    out.append('</tbody></table>')
    return out


# ---------------------------------------------------------------- JUnit
def verify_report_junit(report, suite_name='dbfleet.innodb.verify'):
    """JUnit XML: a test suite per host, a test case per variable; drift fails, error errs,
    unsupported / not_settable are skipped."""
    if not isinstance(report, dict) or 'hosts' not in report:
        raise ReportError('verify_report_junit: expected the output of dbfleet.innodb.verify_report')
    report = _plain(report)
    suites = []
    totals = dict(tests=0, failures=0, errors=0, skipped=0)
    for host in sorted(report['hosts']):
        entry = report['hosts'][host]
        cases = []
        counts = dict(tests=0, failures=0, errors=0, skipped=0)
        if entry['status'] == 'error' and not entry.get('variables'):
            counts['tests'] += 1
            counts['errors'] += 1
            reason = entry.get('reason') or 'error'
            cases.append('    <testcase classname=%s name="audit"><error message=%s type="error">%s</error>'
                         '</testcase>' % (quoteattr(host), quoteattr(reason), html.escape(reason)))
        for name in sorted(entry.get('variables') or {}):
            item = entry['variables'][name]
            status = item.get('status', 'error')
            counts['tests'] += 1
            evidence = html.escape(cell_evidence(host, name, item))
            message = quoteattr('%s: %s' % (status, '; '.join(item.get('notes') or []) or status))
            case = '    <testcase classname=%s name=%s>' % (quoteattr(host), quoteattr(name))
            if status == 'error':
                counts['errors'] += 1
                case += '<error message=%s type="error">%s</error>' % (message, evidence)
            elif status in ('unsupported', 'not_settable', 'startup_unknown'):
                # startup_unknown: the running value passed, what a restart brings could not be checked
                counts['skipped'] += 1
                case += '<skipped message=%s/>' % message
            elif status != 'ok':
                counts['failures'] += 1
                case += '<failure message=%s type=%s>%s</failure>' % (message, quoteattr(status), evidence)
            else:
                case += '<system-out>%s</system-out>' % evidence
            cases.append(case + '</testcase>')
        if entry.get('target'):
            target = '%s %s' % (entry['target'].get('flavor'), entry['target'].get('version'))
            blockers = entry.get('blockers') or []
            for b in blockers:
                counts['tests'] += 1
                counts['failures'] += 1
                cases.append('    <testcase classname=%s name=%s><failure message=%s type="upgrade_blocker">%s'
                             '</failure></testcase>'
                             % (quoteattr(host), quoteattr('upgrade blocker: %s.%s' % (b.get('schema'), b.get('table'))),
                                quoteattr(b.get('reason') or 'upgrade blocker'), html.escape(blocker_text(host, b))))
            if not blockers:
                counts['tests'] += 1
                cases.append('    <testcase classname=%s name=%s><system-out>no table stops a move to %s'
                             '</system-out></testcase>'
                             % (quoteattr(host), quoteattr('upgrade blockers: %s' % target), html.escape(target)))
        for k in totals:
            totals[k] += counts[k]
        suites.append('  <testsuite name=%s tests="%d" failures="%d" errors="%d" skipped="%d" timestamp=%s>\n'
                      '%s\n  </testsuite>'
                      % (quoteattr(host), counts['tests'], counts['failures'], counts['errors'],
                         counts['skipped'], quoteattr(str(report.get('generated', ''))[:19]), '\n'.join(cases)))
    head = ('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name=%s tests="%d" failures="%d" errors="%d" '
            'skipped="%d">' % (quoteattr(suite_name), totals['tests'], totals['failures'], totals['errors'],
                               totals['skipped']))
    return '\n'.join([head] + suites + ['</testsuites>']) + '\n'


# ---------------------------------------------------------------- the files, as one set
REPORT_FILES = ('verify.json', 'verify.html', 'verify-junit.xml')
DEFAULT_FILE_MODE = 0o600
# Inside the report directory: set-*/ (one directory per written set) and current -> set-*, which the
# public names (verify.json -> .verify-report/current/verify.json, ...) go through.
SETS_DIR = '.verify-report'


def render_json(report):
    """verify.json: as Ansible's to_nice_json(indent=2) writes it, with a final newline."""
    return json.dumps(report, indent=2, sort_keys=True, separators=(',', ': ')) + '\n'


_RENDER = {'verify.json': render_json, 'verify.html': verify_report_html, 'verify-junit.xml': verify_report_junit}


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
    directory_mode(mode); an existing one is left as it is (it may be shared), the set's own directory keeps
    others out."""
    mode = parse_mode(mode)
    dmode = directory_mode(mode)
    rendered = [(name, _RENDER[name](report)) for name in REPORT_FILES]   # before anything is written
    # Two runs may make the directories at the same moment: whoever comes second finds them made.
    if not os.path.isdir(directory):
        try:
            os.makedirs(directory, dmode)
            os.chmod(directory, dmode)
        except FileExistsError:
            pass
    sets = os.path.join(directory, SETS_DIR)
    try:
        os.mkdir(sets, dmode)
    except FileExistsError:
        pass
    os.chmod(sets, dmode)
    stage = tempfile.mkdtemp(prefix='stage-', dir=sets)
    done = os.path.join(sets, 'set-' + os.path.basename(stage)[len('stage-'):])
    try:
        os.chmod(stage, dmode)
        for name, text in rendered:
            fd = os.open(os.path.join(stage, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
            with os.fdopen(fd, 'w', encoding='utf-8') as out:
                os.fchmod(out.fileno(), mode)   # whatever the umask
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
        lock = os.open(os.path.join(sets, 'lock'), os.O_RDWR | os.O_CREAT, mode)
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
                    shutil.rmtree(os.path.join(sets, entry), ignore_errors=True)
        finally:
            os.close(lock)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return paths


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
