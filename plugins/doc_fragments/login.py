# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment(object):

    # Login options shared by every module that talks to a server.
    # Names and behaviour follow community.mysql so one module_defaults block serves both.
    DOCUMENTATION = r'''
options:
  login_user:
    description:
      - The user to connect as.
      - When not set, the user from O(config_file) is used, then the user the module runs as.
    type: str
    aliases: [ login_username ]
  login_password:
    description:
      - The password for O(login_user). Never logged.
      - When not set, the password from O(config_file) is used, if any.
    type: str
  login_host:
    description:
      - Host the server runs on. Ignored when O(login_unix_socket) is set.
    type: str
    default: localhost
  login_port:
    description:
      - TCP port of the server. Ignored when O(login_unix_socket) is set.
    type: int
    default: 3306
  login_unix_socket:
    description:
      - Path to the server's Unix socket. When set, the connection uses it instead of TCP.
      - With a socket, MariaDB's unix_socket authentication lets C(root) log in without a password.
    type: str
  config_file:
    description:
      - Client option file to read C([client]) settings (user, password, socket, host, port) from.
      - A missing file is ignored. Set to an empty string to read none.
    type: path
    default: '~/.my.cnf'
  connect_timeout:
    description:
      - Seconds to wait for the connection.
    type: int
    default: 30
requirements:
  - PyMySQL (Python library) on the host the module runs on.
notes:
  - Credentials given here are never written to the module's output, also at C(-vvv).
'''
