# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report: built, masked, rendered and written in one place, for both audit modes.

verify_report(): per-host verify outcomes -> the report (a JSON-ready dict), every value of a secret
variable masked (masking.py: by what the variable is, not by substring). verify_report_html(): one
self-contained HTML page whose embedded data is escaped for any string. verify_report_junit(): JUnit XML.
write_report_set(): the three files written as one set (staged in a new directory, then one rename), in a
directory of mode 0700 with files of mode 0600 unless told otherwise.

The filters of plugins/filter/verify_report.py and the action plugin of dbfleet.innodb.verify_fleet (both
modes of playbooks/verify.yml) call these functions.
"""

from __future__ import annotations

import datetime
import fcntl
import html
import json
import os
import re
import shutil
import tempfile
from xml.sax.saxutils import quoteattr

from ansible_collections.dbfleet.innodb.plugins.module_utils import clusters
from ansible_collections.dbfleet.innodb.plugins.module_utils import masking
from ansible_collections.dbfleet.innodb.plugins.module_utils.private_paths import (
    NOFOLLOW, open_private_file, private_dir_problem)


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
    # cluster entry carries (server_facts.cluster_info: settings).
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
.controls label{margin-right:.8em}
#shown{color:#5b6475}
#more{color:#5b6475;padding:.4em;font-size:.85em;cursor:pointer}
.legend{color:#5b6475;font-size:.85em;margin-top:.6em}
'''

_JS = r'''
(function(){
  var started = performance.now();
  var D = JSON.parse(document.getElementById('verify-data').textContent);
  var parsed = performance.now();
  var STR = D.strings, ITEMS = D.items, VARS = D.variables, CODES = D.codes, LABELS = D.labels;
  var HOSTS = D.hosts;            // [name, host status, sub (string index), [tag indexes], reason (string index or -1), status codes, [item indexes]]
  var PAGE = 100;
  var table = document.getElementById('matrix'), tbody = table.tBodies[0], headRow = table.tHead.rows[0];
  var details = document.getElementById('details'), shown = document.getElementById('shown');
  var fStatus = document.getElementById('filter-status'), fTag = document.getElementById('filter-group');
  var fVar = document.getElementById('filter-var'), fHost = document.getElementById('filter-host');
  var only = document.getElementById('only-problems');
  var list = [], next = 0, columns = [];
  var PROBLEMS = {drift: 1, error: 1};

  function text(value) {
    if (value === true) { return 'true'; }
    if (value === false) { return 'false'; }
    if (value === null || value === undefined) { return 'None'; }
    return String(value);
  }
  // The evidence of one cell: the same lines as verify_report.cell_evidence() (the JUnit file's).
  function evidence(host, name, item) {
    var lines = [name + ' on ' + host + ': ' + item.status];
    if (item.resolved_name && item.resolved_name !== name) { lines.push('name on this server: ' + item.resolved_name); }
    lines.push('desired: ' + text(item.desired));
    if (item.runtime !== null && item.runtime !== undefined) { lines.push('running (GLOBAL): ' + item.runtime); }
    var c = item.configured;
    if (c) { lines.push('configured: ' + text(c.value) + ' (' + c.file + ':' + c.line + ' [' + c.group + '])'); }
    else if (item.resolved_name) { lines.push('configured: not in any option file'); }
    if (item.command_line) { lines.push('command line: ' + text(item.command_line.text)); }
    if (item.persisted !== null && item.persisted !== undefined) { lines.push('persisted: ' + item.persisted); }
    var st = item.startup || {};
    if (st.read_at) {
      lines.push('a restart brings: ' + (st.value !== null && st.value !== undefined ? text(st.value) : 'the default') +
                 ', from ' + st.source);
    } else if (st.state === 'unavailable') { lines.push('a restart brings: not known here (option files not read)'); }
    if (item.origin) { lines.push('running value from: ' + item.origin + (item.origin_path ? ' (' + item.origin_path + ')' : '')); }
    if (item.dynamic !== null && item.dynamic !== undefined) { lines.push('dynamic: ' + (item.dynamic ? 'yes' : 'no (read-only at runtime)')); }
    if (item.default !== null && item.default !== undefined) { lines.push('default: ' + item.default); }
    (item.notes || []).forEach(function(n){ lines.push('note: ' + n); });
    return lines.join('\n');
  }
  function option(select, value, label) {
    var o = document.createElement('option');
    o.value = value; o.textContent = label; select.appendChild(o);
  }
  // Filters: what exists in the data only.
  (function(){
    var tags = {};
    HOSTS.forEach(function(h){ h[3].forEach(function(t){ tags[t] = (tags[t] || 0) + 1; }); });
    Object.keys(tags).map(Number).sort(function(a, b){ return STR[a] < STR[b] ? -1 : 1; }).forEach(function(t){
      option(fTag, String(t), STR[t] + ' (' + tags[t] + ')');
    });
    VARS.forEach(function(v, i){ option(fVar, String(i), v); });
  })();

  function matches(h) {
    var s = fStatus.value, t = fTag.value, v = fVar.value, q = fHost.value.trim().toLowerCase();
    if (q && h[0].toLowerCase().indexOf(q) < 0) { return false; }
    if (t && h[3].indexOf(Number(t)) < 0) { return false; }
    if (s) {
      if (s.charAt(0) === 'h') { if (h[1] !== s.slice(2)) { return false; } }
      else {
        var code = CODES[s.slice(2)];
        if (v) { if (h[5].charAt(Number(v)) !== code) { return false; } }
        else if (h[5].indexOf(code) < 0) { return false; }
      }
    }
    return true;
  }
  function header() {
    while (headRow.cells.length > 1) { headRow.deleteCell(1); }
    columns = fVar.value ? [Number(fVar.value)] : VARS.map(function(v, i){ return i; });
    columns.forEach(function(i){
      var th = document.createElement('th');
      th.className = 'var'; th.setAttribute('data-var', VARS[i]); th.textContent = VARS[i];
      headRow.appendChild(th);
    });
  }
  function row(h) {
    var tr = document.createElement('tr'), host = h[0], status = h[1];
    tr.className = 'hostrow' + (only.checked && !PROBLEMS[status] ? ' hidden' : '');
    tr.setAttribute('data-host', host); tr.setAttribute('data-status', status);
    var th = document.createElement('th'), small = document.createElement('small');
    th.className = 'host st-' + status; th.textContent = host; small.textContent = STR[h[2]];
    th.appendChild(small); tr.appendChild(th);
    if (status === 'error' && h[6].length === 0) {
      var td = document.createElement('td'), reason = h[4] >= 0 ? STR[h[4]] : 'error';
      td.className = 'cell hosterror st-error'; td.colSpan = Math.max(columns.length, 1);
      td.setAttribute('data-host', host); td.setAttribute('data-status', 'error'); td.title = reason;
      td.textContent = 'error: ' + reason; tr.appendChild(td);
      return tr;
    }
    columns.forEach(function(i){
      var td = document.createElement('td'), name = VARS[i], index = h[6][i];
      td.setAttribute('data-host', host); td.setAttribute('data-var', name);
      if (index === undefined || index < 0) {
        td.className = 'cell st-none'; td.setAttribute('data-status', 'none');
        td.title = name + ': not verified on ' + host; td.textContent = '\u2013';
      } else {
        var item = ITEMS[index];
        td.className = 'cell st-' + item.status; td.setAttribute('data-status', item.status);
        td.title = evidence(host, name, item); td.textContent = LABELS[item.status] || item.status;
      }
      tr.appendChild(td);
    });
    return tr;
  }
  // Rows are made as they come into view: PAGE visible rows at a time.
  function more() {
    var fragment = document.createDocumentFragment(), visible = 0;
    while (next < list.length && visible < PAGE) {
      var tr = row(HOSTS[list[next++]]);
      if (tr.className === 'hostrow') { visible++; }
      fragment.appendChild(tr);
    }
    tbody.appendChild(fragment);
    shown.textContent = 'showing ' + tbody.rows.length + ' of ' + list.length + ' matching hosts (' + HOSTS.length + ' in all)';
    shown.setAttribute('data-matching', String(list.length));
  }
  function refilter() {
    list = [];
    for (var i = 0; i < HOSTS.length; i++) { if (matches(HOSTS[i])) { list.push(i); } }
    next = 0; tbody.textContent = ''; header(); more();
  }
  var sentinel = document.getElementById('more');
  if ('IntersectionObserver' in window) {
    new IntersectionObserver(function(entries){
      if (entries[0].isIntersecting && next < list.length) { more(); }
    }, {rootMargin: '600px'}).observe(sentinel);
  }
  sentinel.addEventListener('click', function(){ more(); });

  function show(cell) {
    var sel = document.querySelector('td.cell.selected');
    if (sel) { sel.classList.remove('selected'); }
    cell.classList.add('selected');
    var host = cell.getAttribute('data-host'), name = cell.getAttribute('data-var');
    details.setAttribute('data-host', host);
    details.setAttribute('data-var', name || '');
    var h = null;
    for (var i = 0; i < HOSTS.length; i++) { if (HOSTS[i][0] === host) { h = HOSTS[i]; break; } }
    var index = (h && name) ? h[6][VARS.indexOf(name)] : -1;
    if (index === undefined || index < 0) {
      details.textContent = host + ': ' + (h && h[4] >= 0 ? STR[h[4]] : 'not verified'); return;
    }
    details.textContent = cell.getAttribute('title') + '\n\n' + JSON.stringify(ITEMS[index], null, 2);
  }
  tbody.addEventListener('click', function(event){
    var cell = event.target.closest('td.cell');
    if (cell) { show(cell); }
  });
  only.addEventListener('change', function(){
    Array.prototype.forEach.call(tbody.rows, function(r){
      r.classList.toggle('hidden', only.checked && !PROBLEMS[r.getAttribute('data-status')]);
    });
    if (only.checked) { more(); }
  });
  [fStatus, fTag, fVar].forEach(function(f){ f.addEventListener('change', refilter); });
  var typing = null;
  fHost.addEventListener('input', function(){ clearTimeout(typing); typing = setTimeout(refilter, 150); });
  refilter();
  document.body.setAttribute('data-ready-ms', String(Math.round(performance.now())));
  document.body.setAttribute('data-timing', JSON.stringify({script: Math.round(started), parsed: Math.round(parsed),
                                                            rendered: Math.round(performance.now())}));
  document.body.setAttribute('data-ready', 'true');
})();
'''

_LABELS = dict(ok='ok', startup_unknown='runtime ok, startup unknown', drift_runtime='drift: runtime',
               drift_config='drift: config', pending_restart='pending restart', unsupported='unsupported',
               not_settable='not settable', error='error')
# One letter per status in the page's data (a host's cells are one string); '-' is a variable not verified there.
STATUS_CODES = dict(ok='o', startup_unknown='u', drift_runtime='r', drift_config='c', pending_restart='p',
                    unsupported='s', not_settable='n', error='e')


def _e(value):
    return html.escape('%s' % (value,), quote=True)


def embedded_json(value):
    """JSON for a <script type="application/json"> element: no '<', '>' or '&' in it at all (written as \\u003c,
    \\u003e, \\u0026, which JSON.parse reads back), so no string - '</script>', '<!--<script>', ']]>' - can
    end the element or change how the HTML parser reads it."""
    text = json.dumps(value, sort_keys=True, separators=(',', ':'), default=str)
    return text.replace('<', '\\u003c').replace('>', '\\u003e').replace('&', '\\u0026')


def host_tags(entry):
    """What a host can be filtered by besides its status: its replication role and cluster fields, as data
    (any scalar field of server.cluster: kind, label, state, role, ...), 'field: value' texts."""
    server = entry.get('server') or {}
    tags = []
    if server.get('role'):
        tags.append('role: %s' % server['role'])
    cluster = server.get('cluster') if isinstance(server.get('cluster'), dict) else {}
    for key in sorted(cluster):
        if isinstance(cluster[key], (str, int, float)) and not isinstance(cluster[key], bool) and cluster[key] != '':
            tags.append('cluster %s: %s' % (key, cluster[key]))
    if server.get('flavor'):
        tags.append('flavor: %s %s' % (server['flavor'], server.get('version_text') or ''))
    return [t.strip() for t in tags]


def page_data(report):
    """The data of the HTML page, compact: each distinct string and each distinct verify item once, and per host
    one row of indexes into them and one letter per variable for its status (STATUS_CODES); the page renders
    rows from it as they come into view, and a cell's evidence when it is asked for."""
    strings, string_index = [], {}
    items, item_index = [], {}

    def intern(text):
        key = '%s' % (text,)
        if key not in string_index:
            string_index[key] = len(strings)
            strings.append(key)
        return string_index[key]

    variables = report['variables']
    hosts = []
    for host in sorted(report['hosts']):
        entry = report['hosts'][host]
        server = entry.get('server') or {}
        cluster = server.get('cluster') or {}
        in_cluster = ' '.join(str(cluster[k]) for k in ('kind', 'label', 'state', 'role') if cluster.get(k))
        sub = ' '.join(str(x) for x in (server.get('flavor'), server.get('version_text'), server.get('role'),
                                        in_cluster) if x)
        own = entry.get('variables') or {}
        codes, indexes = [], []
        for name in variables:
            item = own.get(name)
            if not isinstance(item, dict):
                codes.append('-')
                indexes.append(-1)
                continue
            key = json.dumps(item, sort_keys=True, default=str)
            if key not in item_index:
                item_index[key] = len(items)
                items.append(item)
            codes.append(STATUS_CODES.get(item.get('status'), 'e'))
            indexes.append(item_index[key])
        if not own:
            indexes = []
        reason = intern(entry['reason']) if entry.get('reason') else -1
        hosts.append([host, entry.get('status'), intern(sub), [intern(t) for t in host_tags(entry)], reason,
                      ''.join(codes), indexes])
    return dict(variables=variables, strings=strings, items=items, hosts=hosts, codes=STATUS_CODES, labels=_LABELS)


def verify_report_html(report, title='InnoDB fleet verification'):
    """One self-contained HTML page (no network): summary, filters, the hosts x variables matrix rendered as it
    comes into view from compact embedded data (page_data()), the evidence of a cell on hover and click."""
    if not isinstance(report, dict) or 'hosts' not in report:
        raise ReportError('verify_report_html: expected the output of dbfleet.innodb.verify_report')
    if not _is_plain(report):
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
        count = summary.get('hosts_%s' % status, 0)
        out.append('<span class="badge st-%s%s" id="hosts-%s" data-count="%d"><span class="n">%d</span> %s</span>'
                   % (status, '' if count else ' zero', status, count, count, label))
    out.append('</div><div class="summary" id="variable-summary">')
    for status in STATUSES:
        count = summary['variables'].get(status, 0)
        out.append('<span class="badge st-%s%s" id="count-%s" data-count="%d"><span class="n">%d</span> %s</span>'
                   % (status, '' if count else ' zero', status, count, count, _e(_LABELS[status])))
    out.append('</div>')
    disagreements = summary.get('cluster_disagreements') or []
    if disagreements:
        out.append('<div class="summary" id="cluster-disagreements"><b>clusters whose members disagree on a setting '
                   'that must match</b><ul>%s</ul></div>'
                   % ''.join('<li class="st-drift">%s</li>' % _e(d.get('text')) for d in disagreements))
    out.append('<div class="controls"><label>status <select id="filter-status"><option value="">any</option>')
    for status in HOST_STATUSES:
        out.append('<option value="h:%s">host: %s</option>' % (status, _e(status)))
    for status in STATUSES:
        out.append('<option value="v:%s">variable: %s</option>' % (status, _e(_LABELS[status])))
    out.append('</select></label> <label>cluster / topology <select id="filter-group"><option value="">any'
               '</option></select></label> <label>variable <select id="filter-var"><option value="">all</option>'
               '</select></label> <label>host <input type="search" id="filter-host" placeholder="name contains">'
               '</label> <label><input type="checkbox" id="only-problems"> only hosts with drift or errors</label>'
               ' <span id="shown"></span></div>')
    out.append('<table class="matrix" id="matrix"><thead><tr><th class="host">host</th></tr></thead><tbody></tbody>'
               '</table><div id="more">more hosts</div>')
    out.extend(_blockers_html(report))
    out.extend(_upgrade_html(report))
    out.append('<div id="details" aria-live="polite">Click a cell to see the evidence.</div>')
    out.append('<div class="legend">ok: runs the desired value and keeps it after a restart &middot; '
               'runtime ok, startup unknown: runs the desired value; what a restart brings could not be read '
               '(not drift) &middot; '
               'drift: runtime: the running value differs &middot; drift: config: a restart loses the value '
               '&middot; pending restart: configured, applied at the next restart &middot; unsupported: no '
               'such variable there &middot; not settable: the server ignores it &middot; error: see the '
               'evidence</div>')
    out.append('<script id="verify-data" type="application/json">%s</script>' % embedded_json(page_data(report)))
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


# ---------------------------------------------------------------- upgrade readiness (module_utils/upgrade.py)
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
        would_not_start=sorted(h for h, u in audited.items() if not u['summary'].get('would_start', True)),
        silent_changes=sorted(h for h, u in audited.items() if u['summary'].get('silent_changes')),
        incomplete=sorted(h for h, u in audited.items() if not u.get('complete')),
        by_setting=rows)


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


def _upgrade_html(report):
    """The "upgrade to X" section: the fleet summary, the findings by setting, then every host's findings."""
    fleet = report['summary'].get('upgrade')
    if not fleet:
        return []
    labels = dict(UPGRADE_KINDS)
    stop, silent = fleet['would_not_start'], fleet['silent_changes']
    out = ['<h2 id="upgrade-title">Upgrade to %s</h2>' % _e(', '.join(fleet['targets'])),
           '<div class="summary" id="upgrade-summary">',
           '<span class="badge st-%s" id="upgrade-would-not-start" data-count="%d"><span class="n">%d</span> hosts would '
           'not start</span>' % ('drift_runtime' if stop else 'ok zero', len(stop), len(stop)),
           '<span class="badge st-%s" id="upgrade-silent" data-count="%d"><span class="n">%d</span> hosts with silent '
           'changes</span>' % ('drift_config' if silent else 'ok zero', len(silent), len(silent)),
           '<span class="badge" data-count="%d"><span class="n">%d</span> hosts checked</span></div>'
           % (len(fleet['hosts']), len(fleet['hosts']))]
    if stop:
        out.append('<div class="summary" id="upgrade-stop-hosts"><b>would not start</b>: %s</div>'
                   % _e(', '.join(stop)))
    if fleet.get('incomplete'):
        out.append('<div class="summary" id="upgrade-incomplete">only the version table\'s variables compared (no facts '
                   'of every variable of the target): %s</div>' % _e(', '.join(fleet['incomplete'])))
    out.append('<table class="matrix" id="upgrade-by-setting"><thead><tr><th>setting</th><th>finding</th><th>hosts</th>'
               '<th>change (hosts)</th><th>pin</th></tr></thead><tbody>')
    for row in fleet['by_setting']:
        changes = ', '.join('%s (%d)' % (c, n) for c, n in sorted(row['changes'].items()))
        if row.get('machine'):
            changes += ' [depends on the machine: %s]' % row['machine']
        if row.get('target_name'):
            changes = (changes + ' ' if changes else '') + 'target name: %s' % row['target_name']
        out.append('<tr class="upgrade-setting" data-setting="%s" data-kind="%s" title="%s"><th>%s</th>'
                   '<td class="%s">%s</td><td>%d</td><td>%s</td><td>%s</td></tr>'
                   % (_e(row['setting']), _e(row['kind']), _e(', '.join(row['hosts'])), _e(row['setting']),
                      'st-drift_runtime' if row['stops_start'] else 'st-drift_config', _e(labels.get(row['kind'], row['kind'])),
                      row['count'], _e(changes), _e(pin_text(row.get('pin')))))
    out.append('</tbody></table>')
    out.append('<table class="matrix" id="upgrade-findings"><thead><tr><th>host</th><th>finding</th><th>setting</th>'
               '<th>where</th><th>message</th><th>pin</th></tr></thead><tbody>')
    for host in fleet['hosts']:
        upgrade = report['hosts'][host]['upgrade']
        if not upgrade['findings']:
            out.append('<tr class="upgrade-none" data-host="%s"><th class="host">%s</th><td colspan="5" class="st-ok">'
                       'nothing changes on %s</td></tr>' % (_e(host), _e(host), _e(upgrade['target'].get('label'))))
        for f in upgrade['findings']:
            out.append('<tr class="upgrade-finding" data-host="%s" data-kind="%s" title="%s"><th class="host">%s</th>'
                       '<td class="%s">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>'
                       % (_e(host), _e(f.get('kind')), _e(upgrade_finding_text(host, f)), _e(host),
                          'st-drift_runtime' if f.get('stops_start') else 'st-drift_config',
                          _e(labels.get(f.get('kind'), f.get('kind'))), _e(f.get('setting')), _e(f.get('where') or ''),
                          _e(f.get('message')), _e(pin_text(f.get('pin')))))
    out.append('</tbody></table>')
    return out


def _junit_upgrade(host, upgrade, counts):
    """A host's upgrade test cases: one that fails when the target would not start on the host's settings (each
    finding that stops it in the body), one per feature the target drops, and one that lists the silent changes."""
    label = (upgrade.get('target') or {}).get('label') or 'the target'
    cases = []
    stops = [f for f in upgrade['findings'] if f.get('stops_start')]
    counts['tests'] += 1
    case = '    <testcase classname=%s name=%s>' % (quoteattr(host), quoteattr('upgrade to %s: the server starts' % label))
    if stops:
        counts['failures'] += 1
        body = '\n\n'.join(upgrade_finding_text(host, f) for f in stops)
        case += '<failure message=%s type="upgrade_would_not_start">%s</failure>' % (
            quoteattr('; '.join(f.get('message') or '' for f in stops)), html.escape(body))
    cases.append(case + '</testcase>')
    for f in upgrade['findings']:
        if f.get('kind') != 'feature_removed':
            continue
        counts['tests'] += 1
        counts['failures'] += 1
        cases.append('    <testcase classname=%s name=%s><failure message=%s type="upgrade_feature_removed">%s</failure>'
                     '</testcase>' % (quoteattr(host), quoteattr('upgrade to %s: %s' % (label, f.get('setting'))),
                                      quoteattr(f.get('message') or ''), html.escape(upgrade_finding_text(host, f))))
    silent = [f for f in upgrade['findings'] if f.get('kind') in UPGRADE_SILENT]
    counts['tests'] += 1
    cases.append('    <testcase classname=%s name=%s><system-out>%s</system-out></testcase>'
                 % (quoteattr(host), quoteattr('upgrade to %s: silent changes (%d)' % (label, len(silent))),
                    html.escape('\n'.join(f.get('message') or '' for f in silent) or 'none')))
    return cases


# ---------------------------------------------------------------- JUnit
def verify_report_junit(report, suite_name='dbfleet.innodb.verify'):
    """JUnit XML: a test suite per host, a test case per variable; drift fails, error errs,
    unsupported / not_settable are skipped."""
    if not isinstance(report, dict) or 'hosts' not in report:
        raise ReportError('verify_report_junit: expected the output of dbfleet.innodb.verify_report')
    if not _is_plain(report):
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
        if entry.get('upgrade'):
            cases.extend(_junit_upgrade(host, entry['upgrade'], counts))
        for k in totals:
            totals[k] += counts[k]
        suites.append('  <testsuite name=%s tests="%d" failures="%d" errors="%d" skipped="%d" timestamp=%s>\n'
                      '%s\n  </testsuite>'
                      % (quoteattr(host), counts['tests'], counts['failures'], counts['errors'],
                         counts['skipped'], quoteattr(str(report.get('generated', ''))[:19]), '\n'.join(cases)))
    cluster_suite = _junit_clusters(report)
    if cluster_suite:
        suite, counts = cluster_suite
        suites.append(suite)
        for k in totals:
            totals[k] += counts[k]
    head = ('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name=%s tests="%d" failures="%d" errors="%d" '
            'skipped="%d">' % (quoteattr(suite_name), totals['tests'], totals['failures'], totals['errors'],
                               totals['skipped']))
    return '\n'.join([head] + suites + ['</testsuites>']) + '\n'


def _junit_clusters(report):
    """(suite, counts) of the clusters in a report: a test case per cluster, failed when its members disagree on a
    setting that must match (summary.cluster_disagreements); None when no host is a cluster member."""
    names = sorted(set(str(((e.get('server') or {}).get('cluster') or {}).get('label')
                           or ((e.get('server') or {}).get('cluster') or {}).get('name'))
                       for e in report['hosts'].values() if ((e.get('server') or {}).get('cluster') or {}).get('name')))
    if not names:
        return None
    counts = dict(tests=0, failures=0, errors=0, skipped=0)
    cases = []
    disagreements = report['summary'].get('cluster_disagreements') or []
    for name in names:
        mine = [d for d in disagreements if str(d.get('cluster')) == name]
        counts['tests'] += 1
        case = '    <testcase classname="clusters" name=%s>' % quoteattr('%s: members agree on the settings that must match' % name)
        if mine:
            counts['failures'] += 1
            text = '; '.join(d.get('text') or '' for d in mine)
            case += '<failure message=%s type="cluster_disagreement">%s</failure>' % (quoteattr(text), html.escape(text))
        cases.append(case + '</testcase>')
    suite = ('  <testsuite name="clusters" tests="%d" failures="%d" errors="0" skipped="0" timestamp=%s>\n%s\n  </testsuite>'
             % (counts['tests'], counts['failures'], quoteattr(str(report.get('generated', ''))[:19]), '\n'.join(cases)))
    return suite, counts


# ---------------------------------------------------------------- the files, as one set
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
