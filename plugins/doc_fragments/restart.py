# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment(object):

    # The options of every restart method's module (service_restart, command_restart): where a refused start is read
    # and what it may put back.
    DOCUMENTATION = r'''
options:
  error_log:
    description:
      - The server's error log file, read from where it ended before the restart. Default - the C(log_error) the
        server reports before the restart (none when it logs to stderr - under systemd the journal, with a command
        the command's output).
    type: path
  dropins:
    description:
      - The drop-in files a put-back may restore. Default - the C(60-dbfleet-*.cnf) files among the option files
        the server reads.
    type: list
    elements: path
'''
