# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bench's fleet: many inventory hosts on the few lab servers, as a fleet is usually described.

The login and the desired settings (each server's running values: ``verify_extra_settings``) are group
variables, one group ``on_<server>`` per lab server; host i is on the servers in turn (sorted by name), and one
host in ten wants another ``innodb_io_capacity`` (its running value + 1: a drift). Used by run.py (its arms and
the latency table) and by tests/integration/local/playbooks/test_verify_fleet_latency.py.
"""

from __future__ import annotations

import pymysql

# How each lab server is logged in to from the controller over a non-loopback address (the delayed path of
# latency.py), as its TLS allows: verified TLS where the lab CA signed a certificate the server presents for the
# bench addresses (verify_ca), unverified TLS chosen explicitly for MySQL 9.7's self-signed certificate, and no
# TLS for MariaDB 10.11, which offers none.
TLS = {'mysql80': 'verify_ca', 'mariadb118': 'verify_ca', 'mysql97': 'required', 'mariadb1011': 'disabled'}


def running_values(lab, names):
    """{server: {variable: value}}: what each lab server (lab: {server: host variables}) runs now of the
    variables names."""
    values = {}
    for server, hv in lab.items():
        conn = pymysql.connect(host=hv['dbfleet_login_host'], port=int(hv['dbfleet_login_port']),
                               user=hv['dbfleet_login_user'], password=hv['dbfleet_login_password'])
        try:
            with conn.cursor() as cur:
                cur.execute('SHOW GLOBAL VARIABLES WHERE Variable_name IN (%s)' % ', '.join(['%s'] * len(names)),
                            list(names))
                values[server] = dict(cur.fetchall())
        finally:
            conn.close()
    return values


def desired(running):
    """verify_extra_settings of a server's group: the values it runs (those it has)."""
    return dict((k, v) for k, v in running.items() if v is not None)


def delayed_login(path, server, hv):
    """A server's login through the delayed path (latency.DelayedPath): its user and password, the path's port for
    it, its TLS; the address is each host's own (fleet_inventory's address)."""
    return dict(dbfleet_login_user=hv['dbfleet_login_user'], dbfleet_login_password=hv['dbfleet_login_password'],
                dbfleet_login_port=path.ports[server], dbfleet_login_ssl_mode=TLS[server])


def fleet_inventory(top, groups, count, host_name='h%05d-%s', address=None):
    """The inventory: top (the variables of group all), groups ({server: its group's variables, with
    verify_extra_settings}) and count hosts named host_name % (i, server); host i at address(i) when given
    (ansible_host and dbfleet_login_host), and with its own verify_extra_settings, innodb_io_capacity + 1, when
    i % 10 == 0. Returns (inventory, {host: (server, the settings it wants)})."""
    names = sorted(groups)
    children = dict(('on_' + server, {'vars': dict(groups[server]), 'hosts': {}}) for server in names)
    wants = {}
    for i in range(count):
        server = names[i % len(names)]
        group = children['on_' + server]
        hv = {}
        if address is not None:
            hv.update(ansible_host=address(i), dbfleet_login_host=address(i))
        settings = group['vars']['verify_extra_settings']
        if i % 10 == 0:
            settings = dict(settings, innodb_io_capacity=int(settings['innodb_io_capacity']) + 1)
            hv['verify_extra_settings'] = settings
        host = host_name % (i, server)
        group['hosts'][host] = hv or None
        wants[host] = (server, settings)
    return {'all': {'vars': dict(top), 'children': children}}, wants
