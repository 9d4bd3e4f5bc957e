#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: login
short_description: Check the collection's login to a MySQL, Percona Server or MariaDB server and say what it reached
version_added: 1.0.0
description:
  - Logs in the way every module of the collection logs in - the login options, else the host variables
    C(dbfleet_login_*), else the client option file O(config_file), else the local server's socket - with the
    collection's rules for TLS and the password (docs/security.md), and reports what the login reached, changing
    nothing.
  - The server's flavor and version; the account the server matched (C(CURRENT_USER())) and the user it saw
    (C(USER())); the authentication plugin the login ended with and the one the account has; whether the session
    uses TLS, its version and cipher, and whether the client verified the server; the socket or the host and port
    the connection reached, where the socket was found, and the client option file read.
  - Never a credential - no password, password hash or key is read into the result, also at C(-vvv).
  - Its action plugin is the collection's one login action - every module of the action group
    C(group/dbfleet.innodb.innodb) runs through it (C(meta/runtime.yml)); it fills in the login options from the host
    variables C(dbfleet_login_*).
author:
  - dbfleet maintainers (@dbfleet)
extends_documentation_fragment:
  - dbfleet.innodb.attributes.read_only
  - dbfleet.innodb.attributes.pymysql
  - dbfleet.innodb.login
seealso:
  - module: dbfleet.innodb.server_facts
notes:
  - RV(login.account_plugin) is read from C(mysql.user) for C(CURRENT_USER()); an account without C(SELECT) on it
    gets V(null) and a note in RV(login.notes). RV(login.auth_plugin) is the client's side of the exchange - a
    server plugin that asks nothing of the client (MariaDB's C(unix_socket)) shows as the plugin the server's
    greeting named.
'''

EXAMPLES = r'''
- name: Check the login of every database host (the inventory's dbfleet_login_* variables)
  dbfleet.innodb.login:
  register: login

- name: Say who each host logged in as and how
  ansible.builtin.debug:
    msg:
      account: "{{ login.login.current_user }}"
      server: "{{ login.login.flavor }} {{ login.login.version_text }}"
      transport: "{{ login.login.transport }}"
      tls: "{{ login.login.tls.version | default('none', true) }}"
      server_verified: "{{ login.login.tls.verified }}"

- name: The login must be TLS with the server verified
  ansible.builtin.assert:
    that:
      - login.login.transport == 'socket' or login.login.tls.verified
    fail_msg: "{{ inventory_hostname }}: the password goes to a server that is not verified ({{ login.login.tls }})"
'''

RETURN = r'''
login:
  description: What the login reached. Never holds a password, a password hash or a key.
  returned: success
  type: dict
  contains:
    flavor:
      description: C(mysql), C(percona), C(mariadb) or C(aurora-mysql).
      type: str
      sample: mysql
    version:
      description: Version as three integers, comparable as a list.
      type: list
      elements: int
      sample: [8, 0, 33]
    version_text:
      description: The version as C(X.Y.Z).
      type: str
      sample: 8.0.33
    version_string:
      description: C(@@version) as the server reports it.
      type: str
      sample: 10.11.19-MariaDB-0+deb12u1-log
    aurora_reader:
      description: On Aurora, whether this is a reader instance; V(null) elsewhere.
      type: bool
    user:
      description: C(USER()) - the user name the client gave and the host the server saw it come from.
      type: str
      sample: dbfleet@localhost
    current_user:
      description: C(CURRENT_USER()) - the account the server matched, whose privileges the modules have.
      type: str
      sample: dbfleet@localhost
    auth_plugin:
      description: The authentication plugin the login ended with (the one the server switched the client to, else
        the one its greeting named).
      type: str
      sample: mysql_native_password
    account_plugin:
      description: The authentication plugin C(mysql.user) names for the account; V(null) when the account may not
        read it.
      type: str
      sample: mysql_native_password
    tls:
      description: The session's TLS as the server has it (C(Ssl_version), C(Ssl_cipher)), the mode the login
        followed (C(socket) over a unix socket) and whether the client verified the server's certificate.
      type: dict
      sample: {in_use: true, version: TLSv1.3, cipher: TLS_AES_256_GCM_SHA384, mode: preferred, verified: false}
    transport:
      description: C(socket) or C(tcp).
      type: str
      sample: socket
    socket:
      description: The unix socket the connection went through; V(null) over TCP.
      type: str
      sample: /run/mysqld/mysqld.sock
    host:
      description: The host the TCP connection reached; V(null) over a socket.
      type: str
    port:
      description: The port the TCP connection reached; V(null) over a socket.
      type: int
    socket_source:
      description: When no login option named a server, where the socket was found (the system option files'
        client groups, or the OS family's package place); V(null) otherwise.
      type: str
    config_file:
      description: The client option file read for the login (O(config_file)); V(null) when none was (missing,
        unreadable or set to an empty string).
      type: str
      sample: /root/.my.cnf
    peer:
      description: For a socket or a loopback address, whether the process at the other end is proven to run as
        the server's user, and why (docs/security.md); V(null) for TCP to another machine.
      type: dict
      sample: {trusted: true, reason: the process serving socket /run/mysqld/mysqld.sock belongs to mysql}
    notes:
      description: What could not be read, and a TCP login that went through the local server's socket.
      type: list
      elements: str
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
from ansible_collections.dbfleet.innodb.plugins.module_utils.login import login
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_argument_spec


def main():
    module = AnsibleModule(argument_spec=login_argument_spec(), supports_check_mode=True)
    conn = connection.connect(module)
    try:
        facts = login.read(conn, module.params)
    except connection.pymysql.err.MySQLError as e:
        module.fail_json(msg='reading the login failed: %s' % connection.error_text(e))
    finally:
        conn.close()
    module.exit_json(changed=False, login=facts)


if __name__ == '__main__':
    main()
