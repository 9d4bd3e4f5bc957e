"""The version facts of plugins/module_utils/versions/flavor_data/ against every real server of the lab of that version.

For each lab host, the data module of its flavor and major.minor (written by lab/read_flavor_data.py) must agree
with the running server:

- names:    every global variable the server lists is in the data (except those of a plugin the lab loaded from a
            library, e.g. daemon_memcached_*), and every variable of the data the server lacks belongs to a plugin
            the server has not active (the lab's MySQL servers run with mysqlx=OFF);
- defaults: every variable the server still runs at its default (performance_schema.variables_info
            VARIABLE_SOURCE COMPILED; information_schema.SYSTEM_VARIABLES GLOBAL_VALUE_ORIGIN COMPILE-TIME) has
            the data's default, unless the data marks it machine-dependent or an instance value;
- ranges:   minimum and maximum as the server's table gives them; on MariaDB also READ_ONLY (dynamic) and
            ENUM_VALUE_LIST (choices).

A disagreement names the variable, the server and both values; a server of another patch version than the data
says so: run `lab/read_flavor_data.py` again to refresh the data.
"""
import pytest
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavor_data import catalog as flavor_data
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from dbfleet_testing.servers import LAB_HOSTS, identified_cursor

RUNNING_AT_DEFAULT = ('COMPILED', 'COMPILE-TIME')


def same_value(data_value, server_value):
    """Equal as text, without case, or as numbers (90 is 90.000000)."""
    a, b = str(data_value).strip().upper(), str(server_value if server_value is not None else '').strip().upper()
    if a == b:
        return True
    try:
        return float(a) == float(b)
    except ValueError:
        return False


def server_table(cur, identity):
    """{name: (origin, min, max, read_only, choices)} from the server's variable table."""
    if identity.flavor == flavors.MARIADB:
        cur.execute('SELECT LOWER(VARIABLE_NAME), GLOBAL_VALUE_ORIGIN, NUMERIC_MIN_VALUE, NUMERIC_MAX_VALUE, READ_ONLY, '
                    'ENUM_VALUE_LIST, VARIABLE_TYPE FROM information_schema.SYSTEM_VARIABLES')
    else:
        cur.execute('SELECT LOWER(VARIABLE_NAME), VARIABLE_SOURCE, MIN_VALUE, MAX_VALUE, NULL, NULL, NULL '
                    'FROM performance_schema.variables_info')
    return {row[0]: row[1:] for row in cur.fetchall()}


def plugin_states(cur):
    """{plugin name: (status, library)} of information_schema.PLUGINS."""
    cur.execute('SELECT LOWER(PLUGIN_NAME), PLUGIN_STATUS, PLUGIN_LIBRARY FROM information_schema.PLUGINS')
    return {row[0]: (row[1], row[2]) for row in cur.fetchall()}


def _of_plugin(name, plugins):
    return any(name == p or name.startswith(p + '_') for p in plugins)


@pytest.mark.parametrize('host', LAB_HOSTS)
def test_the_flavor_data_agrees_with_the_server(lab, host):
    with identified_cursor(lab, host) as (cur, running, identity):
        facts = flavor_data.facts_for(identity.flavor, identity.version)
        where = '%s (%s %s)' % (host, identity.flavor, flavors.format_version(identity.version))
        assert facts is not None, ('no flavor_data for %s (have: %s): run lab/read_flavor_data.py --only %s'
                                   % (where, ', '.join(flavor_data.known_versions()), host))
        table = server_table(cur, identity)
        plugins = plugin_states(cur)
    refresh = '' if facts.version == tuple(identity.version) else (
        ' (the data is of %s, the server %s: run lab/read_flavor_data.py --only %s)'
        % (facts.label, flavors.format_version(identity.version), host))
    loaded_from_library = {p for p, (status, library) in plugins.items() if status == 'ACTIVE' and library}
    not_active = {p for p, (status, _library) in plugins.items() if status != 'ACTIVE'}
    problems = []
    for name in sorted(set(running) - facts.names()):
        if not _of_plugin(name, loaded_from_library):
            problems.append('%s on %s: the server has it (= %r), the data has no such variable' % (name, where, running[name]))
    for name in sorted(facts.names() - set(running)):
        if not _of_plugin(name, not_active):
            problems.append('%s on %s: in the data, not on the server (and no inactive plugin explains it)' % (name, where))
    compared = machine = 0
    for name in sorted(facts.names() & set(running)):
        variable = facts.variable(name)
        origin, low, high, read_only, choices, _type = table.get(name, (None,) * 6)
        if variable.machine:
            machine += 1
        elif str(origin or '').upper() in RUNNING_AT_DEFAULT:
            compared += 1
            if not same_value(variable.default, running[name]):
                problems.append('%s on %s: default in the data %r, the server runs %r at its default'
                                % (name, where, variable.default, running[name]))
        for what, data_value, server_value in (('minimum', variable.minimum, low), ('maximum', variable.maximum, high)):
            if data_value is not None and server_value is not None and not same_value(data_value, server_value):
                problems.append('%s on %s: %s in the data %r, on the server %r' % (name, where, what, data_value, server_value))
        if read_only is not None and variable.dynamic != (str(read_only).upper() == 'NO'):
            problems.append('%s on %s: dynamic in the data %s, READ_ONLY on the server %s' % (name, where, variable.dynamic, read_only))
        if choices and variable.choices and [c.upper() for c in variable.choices] != [c.upper() for c in choices.split(',')]:
            problems.append('%s on %s: choices in the data %s, on the server %s' % (name, where, variable.choices, choices))
    assert compared >= 200, 'only %d variables of %s run at their default: is this the right server?' % (compared, where)
    assert machine >= 20, 'only %d machine-dependent variables in the data of %s' % (machine, facts.label)
    assert not problems, 'flavor_data disagrees with the server%s:\n%s' % (refresh, '\n'.join(problems))
