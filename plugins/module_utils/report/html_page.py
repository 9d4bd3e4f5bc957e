# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report as one self-contained HTML page (no network): summary, filters, the hosts x variables matrix
rendered as it comes into view from compact embedded data (page_data()), the evidence of a cell on hover and click,
the upgrade blockers and the upgrade readiness. Its style and script are static files shipped beside this module
(assets/report.css, report.js), read once and put into the page as they are."""

from __future__ import annotations

import html
import json
import os

from ansible_collections.dbfleet.innodb.plugins.module_utils.report.build import (
    HOST_STATUSES, STATUSES, UPGRADE_KINDS, ReportError, _is_plain, _plain, blocker_text, pin_text, upgrade_finding_text)

# The page's style and script: files of the collection (in the repository, in an installed collection and in an
# execution environment alike, beside this file; only controller-side code renders the page).
ASSETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'assets')
_ASSET_TEXT = {}


def asset(name):
    """The text of one asset file (report.css, report.js), read once per process."""
    if name not in _ASSET_TEXT:
        with open(os.path.join(ASSETS, name), encoding='utf-8', newline='') as handle:
            _ASSET_TEXT[name] = handle.read()
    return _ASSET_TEXT[name]


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
           '<title>%s</title>' % _e(title), '<style>%s</style></head><body>' % asset('report.css'),
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
    out.append('<script>%s</script></body></html>' % asset('report.js'))
    return '\n'.join(out) + '\n'


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
    if fleet.get('start_unknown'):
        out.append('<div class="summary" id="upgrade-start-unknown"><b>start unknown</b> (the collection has no facts '
                   'of the target): %s</div>' % _e(', '.join(fleet['start_unknown'])))
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
