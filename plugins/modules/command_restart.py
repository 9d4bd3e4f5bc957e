#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: command_restart
short_description: Restart a server with the host's own restart command, and handle a server that will not start
version_added: 1.0.0
description:
  - Runs the restart command O(command) (an argument list, no shell) on the host, then asks the server (login
    options) until it answers in a process started since the command (its C(Uptime) no longer than the time since the
    command started), or O(timeout) passes. A command after which the server still runs in the process it ran in
    before (it exited 0 and restarted nothing, or failed before the stop) fails the module with nothing put back (the
    server was never down). The gate (replication, clusters, settings) is M(dbfleet.innodb.restart_gate)'s, after this
    module.
  - Before the restart it asks the running server for its option files, option groups, error log and process, so that
    a refusal can be traced to a line and the drop-ins written since the server last started are known.
  - A server that does not start (the command fails, or the server does not answer) is a handled fault, as with
    M(dbfleet.innodb.service_restart). The module reads the error log lines written since the restart (the
    command's output when the server has no error log file), finds what the server refused (an unknown variable or option, a value it could not set or
    parse, a file a setting names that it could not open, an option file it could not parse; MySQL's and MariaDB's
    wordings) and the option-file line that set it (file:line). It puts back the drop-in the refusal is traced to,
    or every drop-in written since the server last started when no line is named (the oldest backup
    C(ansible.builtin.template) left beside it with C(backup=true) since that start, the version the server last
    started with; a drop-in new since then is removed), starts the server again with the same command, and fails
    naming the refused line, what was put back and whether the server answers again.
  - After a good start it removes the backups of the drop-ins (their version has now started).
author:
  - dbfleet maintainers (@dbfleet)
extends_documentation_fragment:
  - dbfleet.innodb.login
  - dbfleet.innodb.restart
attributes:
  check_mode:
    support: full
    description: Says which command it would run and runs nothing.
  diff_mode:
    support: none
    description: Restarts a server; there is no file difference to show.
  platform:
    platforms: posix
    support: full
    description: Any host whose server a command restarts (run it where the command and the server's files are).
options:
  command:
    description:
      - The restart command, an argument list run without a shell (the host variable C(dbfleet_restart_command)). It
        must stop and start the server, start it when it is down, and exit non-zero when the server does not start.
    type: list
    elements: str
    required: true
  timeout:
    description:
      - Seconds (1 to 86400) to wait, after the command exited 0, for the server to answer, for the restart and again
        for the start after a put-back.
    type: int
    default: 300
notes:
  - The restart role P(dbfleet.innodb.restart#role) runs it for C(dbfleet_restart_method=command), one host at a time.
  - The drop-ins written since the server last started are those changed after its process started
    (C(/proc/PID/stat)); a drop-in without a backup is left in place when the process cannot be read on the host.
seealso:
  - module: dbfleet.innodb.service_restart
  - module: dbfleet.innodb.restart_gate
'''

EXAMPLES = r'''
- name: Restart a server with its init script
  dbfleet.innodb.command_restart:
    command: [/etc/init.d/mysql, restart]
    timeout: 600
  become: true
  register: restarted

- name: Show the refused line when it did not start
  ansible.builtin.debug:
    msg: "{{ restarted.refused | map(attribute='message') | list }}"
  when: restarted is failed
'''

RETURN = r'''
command:
  description: The command run (a password on it masked).
  returned: always
  type: list
  elements: str
seconds:
  description: Seconds from the command's start to the server answering again, or to the failure.
  returned: when the restart ran
  type: float
error_log:
  description: The error log file read, or V(null) (the server logs to stderr).
  returned: when the restart ran
  type: str
refused:
  description:
    - What the server refused, each with C(kind) (as M(dbfleet.innodb.service_restart) returns it), C(option),
      C(value), C(message) (the server's words), C(source) (the error log, or the output of the restart command) and
      C(where) (C([file, line, text]) of the option-file line, or V(null)).
  returned: when the server did not start
  type: list
  elements: dict
put_back:
  description: The drop-ins put back, each C(path), C(action) (V(restore) or V(remove)) and C(backup).
  returned: when the server did not start
  type: list
  elements: dict
started_again:
  description: Whether the server answers again after the put-back and the second run of the command.
  returned: when the server did not start
  type: bool
again:
  description: How the second run of the command ended (C(why), C(seconds)).
  returned: when the server did not start
  type: dict
notes:
  description: What else the module saw, one sentence each (the server could not be asked before the restart).
  returned: when the restart ran
  type: list
  elements: str
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import command_restart
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_argument_spec
from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import refused_start


def main():
    argument_spec = login_argument_spec()
    argument_spec.update(refused_start.put_back_options())
    argument_spec.update(
        command=dict(type='list', elements='str', required=True),
        timeout=dict(type='int', default=300),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    command_restart.run_module(module)


if __name__ == '__main__':
    main()
