# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that turn dbfleet.innodb.verify results into the fleet report.

verify_report (documentation: verify_report.yml): per-host outcomes -> the report (JSON-ready dict).
verify_report_html (verify_report_html.yml): the report -> one self-contained HTML page.
verify_report_junit (verify_report_junit.yml): the report -> JUnit XML.
verify_errors (verify_errors.yml): the report -> each host in error with its reason, in one line.
The work is done by plugins/module_utils/report/build.py, which the verify_fleet action calls too.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.dbfleet.innodb.plugins.module_utils.report import build as report_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils.report import html_page as report_html
from ansible_collections.dbfleet.innodb.plugins.module_utils.report import junit as report_junit

STATUSES = report_utils.STATUSES


def _filter(function):
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except report_utils.ReportError as e:
            raise AnsibleFilterError(str(e))
    wrapper.__name__ = function.__name__
    wrapper.__doc__ = function.__doc__
    return wrapper


verify_report = _filter(report_utils.verify_report)
verify_report_html = _filter(report_html.verify_report_html)
verify_report_junit = _filter(report_junit.verify_report_junit)
verify_errors = _filter(report_utils.error_text)


class FilterModule(object):

    def filters(self):
        return {
            'verify_report': verify_report,
            'verify_report_html': verify_report_html,
            'verify_report_junit': verify_report_junit,
            'verify_errors': verify_errors,
        }
