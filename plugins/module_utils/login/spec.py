# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The login options: their argument spec, the host variables that give them, and which a task gives.

Every module builds its argument spec with login_argument_spec(); options are named as in community.mysql.
"""

from __future__ import annotations


def login_argument_spec():
    """Argument spec of the login options; matches doc fragment dbfleet.innodb.login.

    login_host and login_port have no default here: a value the task does not give comes from
    config_file, then localhost / 3306 (resolve_login()).
    """
    return dict(
        login_user=dict(type='str', aliases=['login_username']),
        login_password=dict(type='str', no_log=True),
        login_host=dict(type='str'),
        login_port=dict(type='int'),
        login_unix_socket=dict(type='str'),
        config_file=dict(type='path', default='~/.my.cnf'),
        connect_timeout=dict(type='int', default=30),
        ca_cert=dict(type='path', aliases=['ssl_ca']),
        client_cert=dict(type='path', aliases=['ssl_cert']),
        client_key=dict(type='path', aliases=['ssl_key']),
        check_hostname=dict(type='bool'),
        login_ssl_mode=dict(type='str', choices=list(SSL_MODES)),
        login_server_public_key=dict(type='path'),
        login_get_server_public_key=dict(type='bool'),
        login_trust_loopback=dict(type='bool'),
    )


# TLS as MySQL's --ssl-mode names it (lower case, as Ansible choices are written).
SSL_MODES = ('disabled', 'preferred', 'required', 'verify_ca', 'verify_identity')
VERIFIED_MODES = ('verify_ca', 'verify_identity')

LOGIN_OPTIONS = tuple(login_argument_spec())

# The host variable that gives each login option when a task does not pass it (the action
# plugin of every module in the action group fills them in: plugins/plugin_utils/login.py).
LOGIN_HOST_VARIABLES = (
    ('login_user', 'dbfleet_login_user'),
    ('login_password', 'dbfleet_login_password'),
    ('login_host', 'dbfleet_login_host'),
    ('login_port', 'dbfleet_login_port'),
    ('login_unix_socket', 'dbfleet_login_unix_socket'),
    ('config_file', 'dbfleet_config_file'),
    ('ca_cert', 'dbfleet_login_ca_cert'),
    ('client_cert', 'dbfleet_login_client_cert'),
    ('client_key', 'dbfleet_login_client_key'),
    ('check_hostname', 'dbfleet_login_check_hostname'),
    ('login_ssl_mode', 'dbfleet_login_ssl_mode'),
    ('login_server_public_key', 'dbfleet_login_server_public_key'),
    ('login_get_server_public_key', 'dbfleet_login_get_server_public_key'),
    ('login_trust_loopback', 'dbfleet_login_trust_loopback'),
)

# Where the connection goes. A task that names a host or a socket names its server: it gets none of
# these from the inventory (login_args_from_host()).
TARGET_OPTIONS = ('login_host', 'login_port', 'login_unix_socket')


def _names(option, spec):
    """option and its aliases in spec."""
    return [option] + list(spec[option].get('aliases', ()))


def _named(task_args, option, spec):
    """Whether task_args give option (under its name or an alias) a value."""
    return any(task_args.get(name) not in (None, '') for name in _names(option, spec))


def _passed(task_args, option, spec):
    """Whether task_args pass option (under its name or an alias), a null value included."""
    return any(name in task_args for name in _names(option, spec))


def names_a_server(task_args):
    """Whether a task's arguments name the server to log in to (login_host, login_unix_socket or login_port): then
    nothing of the inventory host's own server (its socket, host, port or option file) is added to them."""
    spec = login_argument_spec()
    return any(_named(task_args, option, spec) for option in ('login_host', 'login_unix_socket', 'login_port'))


def login_args_from_host(task_args, host_vars, template=None):
    """The login options to add to task_args (a dict), taken from host_vars.

    An option the task passes (under its name or an alias, also through module_defaults) is
    left alone; a host variable that is not set, or set to null, adds nothing. template, when
    given, turns a host variable's raw value into its final value (Jinja in inventories).

    Explicit options win as a set: a task that names a server (login_host or login_unix_socket)
    gets none of the inventory's TARGET_OPTIONS (no socket, host or port of this host), only the
    credentials and the TLS policy it does not give itself; a task that names only login_port
    (TCP) gets no socket from the inventory.
    Returns a new dict of option -> value; task_args is not changed.
    """
    spec = login_argument_spec()
    names_server = _named(task_args, 'login_host', spec) or _named(task_args, 'login_unix_socket', spec)
    names_port = _named(task_args, 'login_port', spec)
    added = {}
    for option, variable in LOGIN_HOST_VARIABLES:
        if _passed(task_args, option, spec) or variable not in host_vars:
            continue
        if names_server and option in TARGET_OPTIONS:
            continue
        if names_port and option == 'login_unix_socket':
            continue
        value = host_vars[variable]
        if template is not None:
            value = template(value)
        if value is not None:
            added[option] = value
    return added
