#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: service_restart
short_description: Restart a server through systemd, read the outcome from systemd, and handle a server that will not start
version_added: 1.0.0
description:
  - Restarts the systemd unit O(name) (C(systemctl restart --no-block)) and reads the outcome from systemd
    (C(systemctl show -p ActiveState,SubState,Result,MainPID,ExecMainStatus,InvocationID)) until the unit runs
    in a new invocation with a main process, fails, or O(timeout) passes. The gate (replication, clusters,
    settings) is M(dbfleet.innodb.restart_gate)'s, after this module.
  - Before the restart it asks the running server (login options) for its option files, option groups, error log
    and user, so that a refusal can be traced to a line.
  - A server that does not start is a handled fault. The module reads the unit's journal lines of the failed
    invocation (C(journalctl _SYSTEMD_INVOCATION_ID=...)) and the error log lines written since the restart,
    finds what the server refused (an unknown variable or option, a value it could not set, an option file it
    could not parse, read or open; MySQL's and MariaDB's wordings) and the option-file line that set it
    (file:line). It puts back the drop-in the refusal is traced to, or every drop-in written since the server last
    started when no line is named (the oldest backup C(ansible.builtin.template) left beside it with C(backup=true)
    since that start, the version the server last started with; a drop-in new since then is removed), starts the
    server again, and fails naming the refused line, what was put back and whether the server runs again.
  - A drop-in the server's user cannot read is skipped by the server without a word; after a start the module
    checks the drop-ins against the server's user and treats an unreadable one as refused.
  - After a good start it removes the backups of the drop-ins (their version has now started).
author:
  - dbfleet maintainers (@dbfleet)
extends_documentation_fragment:
  - dbfleet.innodb.login
  - dbfleet.innodb.restart
attributes:
  check_mode:
    support: full
    description: Says which unit it would restart and restarts nothing.
  diff_mode:
    support: none
    description: Restarts a service; there is no file difference to show.
  platform:
    platforms: posix
    support: full
    description: Hosts run by systemd (C(systemctl), C(journalctl)); run with become.
options:
  name:
    description:
      - The systemd unit of the server (V(mariadb), V(mysql), V(mysqld.service)); C(.service) is added when absent.
    type: str
    required: true
  timeout:
    description:
      - Seconds to wait for the unit to run again (1 to 86400), for the restart and again for the start after a
        put-back.
    type: int
    default: 300
  leftover_timeout:
    description:
      - Seconds (1 to 86400) a stop may wait for processes left in the unit's cgroup once the server itself has ended
        (systemd's C(deactivating (final-sigterm)), a helper of the unit or a child of the server that ignores
        SIGTERM). Then the module kills what is left (C(systemctl kill --signal=SIGKILL), only when the unit has no
        main and no control process) and names it in RV(notes); the unit's own C(TimeoutStopSec) wins when shorter.
        Debian's C(mysql.service) says C(TimeoutSec=infinity), where systemd alone would wait for ever.
      - When the unit is still in C(final-sigterm) 10 seconds after the kill, or the kill fails, the module stops,
        naming the state, the processes left and the commands that would finish the stop and start the server.
    type: int
    default: 30
notes:
  - The restart role P(dbfleet.innodb.restart#role) runs it for C(dbfleet_restart_method=service), one host at a time.
seealso:
  - module: dbfleet.innodb.command_restart
  - module: dbfleet.innodb.restart_gate
  - module: dbfleet.innodb.topology_facts
'''

EXAMPLES = r'''
- name: Restart MariaDB through systemd
  dbfleet.innodb.service_restart:
    name: mariadb
    timeout: 600
  become: true
  register: restarted

- name: Show the refused line when it did not start
  ansible.builtin.debug:
    msg: "{{ restarted.refused | map(attribute='message') | list }}"
  when: restarted is failed
'''

RETURN = r'''
unit:
  description: The unit restarted.
  returned: always
  type: str
  sample: mariadb.service
before:
  description: The unit before the restart (C(ActiveState), C(SubState), C(Result), C(MainPID), C(ExecMainStatus), C(InvocationID)).
  returned: always
  type: dict
after:
  description: The unit after the restart, same keys as RV(before).
  returned: when the restart ran
  type: dict
seconds:
  description: Seconds from C(systemctl restart) to the outcome.
  returned: when the restart ran
  type: float
error_log:
  description: The error log file read, or V(null) (the server logs to the journal).
  returned: when the restart ran
  type: str
refused:
  description:
    - What the server refused, each with C(kind) (V(unknown variable), V(unknown option), V(value refused),
      V(ambiguous option), V(value missing), V(option file syntax), V(option file unreadable), or V(error) for an
      [ERROR] line that names no option), C(option), C(value), C(message) (the server's words), C(source) (journal or
      error log) and C(where) (C([file, line, text]) of the option-file line, or V(null)).
  returned: when the server did not start
  type: list
  elements: dict
put_back:
  description: The drop-ins put back, each C(path), C(action) (V(restore) or V(remove)) and C(backup).
  returned: when the server did not start
  type: list
  elements: dict
started_again:
  description: Whether the server runs again after the put-back.
  returned: when the server did not start
  type: bool
again:
  description: The unit after the start that followed the put-back, with C(why) and C(seconds).
  returned: when the server did not start
  type: dict
notes:
  description:
    - What else the module saw or did, one sentence each - the server could not be asked before the restart, or the
      processes left in the unit's cgroup after the server ended that it killed after O(leftover_timeout) seconds
      in C(deactivating (final-sigterm)) (their PIDs and command lines, and the command it ran).
  returned: when the restart ran
  type: list
  elements: str
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_argument_spec
from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import service_restart
from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import refused_start


def main():
    argument_spec = login_argument_spec()
    argument_spec.update(refused_start.put_back_options())
    argument_spec.update(
        name=dict(type='str', required=True),
        timeout=dict(type='int', default=300),
        leftover_timeout=dict(type='int', default=30),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    service_restart.run_module(module)


if __name__ == '__main__':
    main()
