"""The version table (plugins/module_utils/flavors.py VARIABLES) against every real server of the lab.

For each variable of the table and each lab host, the server's own answers must agree with the table:

- exists:   the table has a span for the server's flavor/version  <=>  SHOW GLOBAL VARIABLES lists it
            (a plugin's variables exist only while the plugin is loaded: a table row marked with a
            plugin is accepted as absent when that plugin is not loaded);
- default:  the compiled default, from ``mysqld --no-defaults --verbose --help`` run with that host's own
            binary (the lab's status gives the command: chroot servers run inside their chroot);
- dynamic:  ``SET GLOBAL v = @@GLOBAL.v`` is accepted (dynamic) or refused with
            ER_INCORRECT_GLOBAL_LOCAL_VAR 1238 (read-only);
- range:    minimum/maximum from performance_schema.variables_info (MySQL 8.0+) or
            information_schema.SYSTEM_VARIABLES (MariaDB), where the table gives them.

A table value of None means "not known / depends on the machine" and is not compared. Each
disagreement is reported with the variable, the server, the table's value and the server's value.
"""
import pymysql
import pytest
from ansible_collections.dbfleet.innodb.plugins.module_utils import flavors
from dbfleet_lab.serverhelp import compiled_defaults
from test_verify import LAB_HOSTS

HOSTS = LAB_HOSTS
ER_INCORRECT_GLOBAL_LOCAL_VAR = 1238
TRUE_WORDS = ('ON', 'TRUE', '1', 'YES')
FALSE_WORDS = ('OFF', 'FALSE', '0', 'NO')


def same(kind, table_value, server_value):
    """Compare a table value with what the server printed, in the variable's kind."""
    if server_value is None:
        return table_value in (None, '')
    text = str(server_value).strip()
    if kind == 'bool':
        want = 'ON' if str(table_value).upper() in TRUE_WORDS else 'OFF'
        got = 'ON' if text.upper() in TRUE_WORDS else ('OFF' if text.upper() in FALSE_WORDS else text)
        return want == got
    if kind in ('int', 'size'):
        try:
            return int(table_value) == int(text)
        except ValueError:
            return False
    if kind == 'enum':
        return str(table_value).upper() == text.upper()
    return str(table_value) == text


def dynamic_on_server(cur, name):
    """True when SET GLOBAL accepts the variable at run time, False when it is read-only."""
    try:
        cur.execute('SET GLOBAL %s = @@GLOBAL.%s' % (name, name))
    except pymysql.err.MySQLError as exc:
        if exc.args[0] == ER_INCORRECT_GLOBAL_LOCAL_VAR:
            return False
        return True     # refused for its value (e.g. ER_WRONG_VALUE_FOR_VAR), not for being read-only
    return True


def server_ranges(cur, identity):
    """{variable: (min, max)} where the server publishes them."""
    if flavors.capability('system_variables_table', identity.flavor, identity.version):
        cur.execute('SELECT LOWER(VARIABLE_NAME), NUMERIC_MIN_VALUE, NUMERIC_MAX_VALUE, ENUM_VALUE_LIST '
                    'FROM information_schema.SYSTEM_VARIABLES')
    elif flavors.capability('variables_info_table', identity.flavor, identity.version):
        cur.execute('SELECT LOWER(VARIABLE_NAME), MIN_VALUE, MAX_VALUE, NULL FROM performance_schema.variables_info')
    else:
        return {}
    return {row[0]: row[1:] for row in cur.fetchall()}


def loaded_plugins(cur):
    cur.execute("SELECT LOWER(PLUGIN_NAME) FROM information_schema.PLUGINS WHERE PLUGIN_STATUS = 'ACTIVE'")
    return {row[0] for row in cur.fetchall()}


@pytest.mark.parametrize('host', HOSTS)
def test_the_version_table_agrees_with_the_server(lab, host):
    row = lab.hosts.get(host)
    assert row and row['state'] == 'up', '%s is not up: make lab-up (lab/lab.py up)' % host
    conn = lab.connect(host)
    problems = []
    try:
        with conn.cursor() as cur:
            cur.execute('SHOW GLOBAL VARIABLES')
            variables = {name.lower(): value for name, value in cur.fetchall()}
            identity = flavors.identity_from_variables(variables)
            ranges = server_ranges(cur, identity)
            plugins = loaded_plugins(cur)
            defaults = compiled_defaults(row['server_command'])
            where = '%s (%s %s)' % (host, identity.flavor, flavors.format_version(identity.version))
            checked = 0
            for name in sorted(flavors.VARIABLES):
                facts = flavors.variable_facts(name, identity.flavor, identity.version)
                on_server = name in variables
                if facts is None:
                    if on_server:
                        problems.append('%s on %s: the table says it does not exist, the server has it (= %r)'
                                        % (name, where, variables[name]))
                    continue
                if not on_server:
                    if facts.plugin and facts.plugin not in plugins:
                        continue        # a plugin variable; the plugin is not loaded here
                    problems.append('%s on %s: the table says it exists, SHOW GLOBAL VARIABLES has no such '
                                    'variable' % (name, where))
                    continue
                checked += 1
                if facts.default is not None:
                    compiled = defaults.get(name, '(not in --verbose --help)')
                    if not same(facts.kind, facts.default, compiled):
                        problems.append('%s on %s: default in the table %r, compiled default on the server %r'
                                        % (name, where, facts.default, compiled))
                if facts.dynamic is not None:
                    dynamic = dynamic_on_server(cur, name)
                    if dynamic != facts.dynamic:
                        problems.append('%s on %s: the table says dynamic=%s, the server says dynamic=%s '
                                        '(SET GLOBAL %s)' % (name, where, facts.dynamic, dynamic,
                                                             'accepted' if dynamic else 'refused: read-only'))
                low, high, choices = ranges.get(name, (None, None, None))
                for what, table_value, server_value in (('minimum', facts.minimum, low),
                                                        ('maximum', facts.maximum, high)):
                    if table_value is not None and server_value is not None \
                            and int(table_value) != int(server_value):
                        problems.append('%s on %s: %s in the table %r, on the server %r'
                                        % (name, where, what, table_value, server_value))
                if facts.choices and choices:
                    server_choices = {c.upper() for c in choices.split(',')}
                    if {c.upper() for c in facts.choices} != server_choices:
                        problems.append('%s on %s: choices in the table %s, on the server %s'
                                        % (name, where, sorted(facts.choices), sorted(server_choices)))
    finally:
        conn.close()
    assert checked >= 10, 'only %d variables of the table exist on %s: is this the right server?' % (checked, host)
    assert not problems, 'flavors.VARIABLES disagrees with the server:\n' + '\n'.join(problems)
