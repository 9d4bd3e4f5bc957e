# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report as JUnit XML: one suite per host (a test case per variable), the upgrade blockers and readiness,
and the clusters whose members disagree (suite clusters)."""

from __future__ import annotations

import html
from xml.sax.saxutils import quoteattr

from ansible_collections.dbfleet.innodb.plugins.module_utils.report.build import (
    UPGRADE_SILENT, ReportError, _is_plain, _plain, blocker_text, cell_evidence, upgrade_finding_text)


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
    elif upgrade.get('start_unknown'):
        counts['skipped'] += 1
        case += '<skipped message=%s/>' % quoteattr(upgrade['start_unknown'])
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
