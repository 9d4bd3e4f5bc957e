"""The version table (plugins/module_utils/versions/flavors.py VARIABLES) against every real server of the lab.

For each variable of the table and each lab host, the server's own answers must agree with the table:

- exists:   the table has a span for the server's flavor/version  <=>  SHOW GLOBAL VARIABLES lists it
            (a plugin's variables exist only while the plugin is loaded: a table row marked with a
            plugin is accepted as absent when that plugin is not loaded, and required when it is, e.g. the
            memcached plugin that a used MySQL 8.0 has installed at run time: information_schema.PLUGINS,
            mysql.plugin);
- default:  the compiled default, from ``mysqld --no-defaults --verbose --help`` run with that host's own
            binary (the lab's status gives the command: chroot servers run inside their chroot), with the
            plugins the server has loaded from a library whose variables the table has (--plugin-load);
            --no-defaults reads neither the option files, the roles' drop-ins nor mysqld-auto.cnf, so what a
            used server was told (SET PERSIST, a role's drop-in) never passes for a default;
- dynamic:  ``SET GLOBAL v = @@GLOBAL.v`` is accepted (dynamic) or refused with
            ER_INCORRECT_GLOBAL_LOCAL_VAR 1238 (read-only);
- range:    minimum/maximum from performance_schema.variables_info (MySQL 8.0+) or
            information_schema.SYSTEM_VARIABLES (MariaDB), where the table gives them.

A table value of None means "not known / depends on the machine" and is not compared. Each
disagreement is reported with the variable, the server, the table's value and the server's value.
test_a_wrong_table_is_caught_on_a_used_server feeds the same comparison a table with one wrong row at a time
(default, dynamic, maximum, existence, a plugin's variable) and requires each to be named.
"""
import pymysql
import pytest
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from dbfleet_lab.serverhelp import compiled_defaults
from dbfleet_testing.servers import LAB_HOSTS, identified_cursor

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


@pytest.fixture(scope='module', autouse=True)
def origins_as_found(lab):
    """observe() sets each dynamic variable to its own value (SET GLOBAL v = @@GLOBAL.v): the value stays, but the
    server says from then on that SQL set it (MariaDB GLOBAL_VALUE_ORIGIN SQL, MySQL 8 VARIABLE_SOURCE DYNAMIC), which
    the audits read (verify: startup_unknown instead of ok for a value of the option files). The lab restarts each
    server at the end of the module: what its option files and mysqld-auto.cnf say comes back."""
    yield
    for host in HOSTS:
        lab.run('restart', host)


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
    if capability_facts.capability('system_variables_table', identity.flavor, identity.version):
        cur.execute('SELECT LOWER(VARIABLE_NAME), NUMERIC_MIN_VALUE, NUMERIC_MAX_VALUE, ENUM_VALUE_LIST '
                    'FROM information_schema.SYSTEM_VARIABLES')
    elif capability_facts.capability('variables_info_table', identity.flavor, identity.version):
        cur.execute('SELECT LOWER(VARIABLE_NAME), MIN_VALUE, MAX_VALUE, NULL FROM performance_schema.variables_info')
    else:
        return {}
    return {row[0]: row[1:] for row in cur.fetchall()}


def server_plugins(cur):
    """What a used server has loaded besides its own: ({plugin: library} of the ACTIVE plugins of
    information_schema.PLUGINS, None for a built-in one), and {plugin: library} of mysql.plugin, the plugins
    installed at run time (INSTALL PLUGIN: the memcached role on MySQL 8.0) that every later start loads."""
    cur.execute("SELECT LOWER(PLUGIN_NAME), PLUGIN_LIBRARY FROM information_schema.PLUGINS WHERE PLUGIN_STATUS = 'ACTIVE'")
    loaded = {row[0]: row[1] for row in cur.fetchall()}
    cur.execute('SELECT LOWER(name), dl FROM mysql.plugin')
    return loaded, {row[0]: row[1] for row in cur.fetchall()}


# What each lab host said about itself, read once per session (both tests below compare a table with it).
OBSERVED = {}


def observe(lab, host):
    """dict(where, identity, variables, ranges, plugins, installed, defaults, dynamic) of a lab host: what the
    server answers, and its binary's compiled defaults with the plugins it has loaded from a library, when the
    version table names a variable of theirs (flavors.plugin_variables)."""
    if host in OBSERVED:
        return OBSERVED[host]
    row = lab.hosts.get(host)
    with identified_cursor(lab, host) as (cur, variables, identity):
        plugins, installed = server_plugins(cur)
        with_library = {name: library for name, library in plugins.items()
                        if library and flavors.plugin_variables(name)}
        dynamic = {}
        for name in sorted(flavors.VARIABLES):
            facts = flavors.variable_facts(name, identity.flavor, identity.version)
            if name in variables and facts is not None and facts.dynamic is not None:
                dynamic[name] = dynamic_on_server(cur, name)
        seen = dict(where='%s (%s %s)' % (host, identity.flavor, flavors.format_version(identity.version)),
                    identity=identity, variables=variables, ranges=server_ranges(cur, identity), plugins=plugins,
                    installed=installed, dynamic=dynamic,
                    defaults=compiled_defaults(row['server_command'], variables.get('plugin_dir'), with_library))
    OBSERVED[host] = seen
    return seen


def disagreements(seen, facts_of):
    """(problems, checked): where the table (facts_of(name) -> VarFacts or None) and the server disagree."""
    variables, plugins, where = seen['variables'], seen['plugins'], seen['where']
    problems = []
    checked = 0
    for name in sorted(flavors.VARIABLES):
        facts = facts_of(name)
        on_server = name in variables
        if facts is None:
            if on_server:
                problems.append('%s on %s: the table says it does not exist, the server has it (= %r)'
                                % (name, where, variables[name]))
            continue
        if not on_server:
            if facts.plugin and facts.plugin not in plugins:
                continue        # a plugin variable; the plugin is not loaded here
            problems.append('%s on %s: the table says it exists%s, SHOW GLOBAL VARIABLES has no such variable'
                            % (name, where, ' (plugin %s is loaded)' % facts.plugin if facts.plugin else ''))
            continue
        if facts.plugin and facts.plugin not in plugins:
            problems.append('%s on %s: the table says plugin %s brings it, the server has it without that plugin '
                            'loaded (= %r)' % (name, where, facts.plugin, variables[name]))
            continue
        checked += 1
        if facts.default is not None:
            compiled = seen['defaults'].get(name, '(not in --verbose --help)')
            if not same(facts.kind, facts.default, compiled):
                problems.append('%s on %s: default in the table %r, compiled default on the server %r'
                                % (name, where, facts.default, compiled))
        if facts.dynamic is not None and name in seen['dynamic']:
            dynamic = seen['dynamic'][name]
            if dynamic != facts.dynamic:
                problems.append('%s on %s: the table says dynamic=%s, the server says dynamic=%s '
                                '(SET GLOBAL %s)' % (name, where, facts.dynamic, dynamic,
                                                     'accepted' if dynamic else 'refused: read-only'))
        low, high, choices = seen['ranges'].get(name, (None, None, None))
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
    return problems, checked


def the_table(seen):
    identity = seen['identity']
    return lambda name: flavors.variable_facts(name, identity.flavor, identity.version)


@pytest.mark.parametrize('host', HOSTS)
def test_the_version_table_agrees_with_the_server(lab, host):
    seen = observe(lab, host)
    problems, checked = disagreements(seen, the_table(seen))
    assert checked >= 10, 'only %d variables of the table exist on %s: is this the right server?' % (checked, host)
    assert not problems, 'flavors.VARIABLES disagrees with the server:\n' + '\n'.join(problems)


def wrong_value(facts, field):
    """A value of facts.<field> that the server cannot agree with."""
    value = getattr(facts, field)
    if field == 'dynamic':
        return not value
    if facts.kind == 'bool':
        return 'OFF' if str(value).upper() in TRUE_WORDS else 'ON'
    return int(value) + 7


@pytest.mark.parametrize('host', HOSTS)
def test_a_wrong_table_is_caught_on_a_used_server(lab, host):
    """The comparison above still catches a wrong table on the used lab (conftest.used_lab: a plugin installed at
    run time on mysql80, a persisted setting, the roles' drop-ins): each kind of wrong row, one at a time, is named."""
    seen = observe(lab, host)
    table = the_table(seen)
    wrong = []          # (name, wrong facts or None, what the report must say)
    present = [name for name in sorted(flavors.VARIABLES) if name in seen['variables'] and table(name) is not None]
    absent = [name for name in sorted(flavors.VARIABLES) if name not in seen['variables'] and table(name) is None]
    for field, kinds, said in (('default', ('int', 'size', 'bool'), 'default in the table'),
                               ('dynamic', None, 'the table says dynamic='),
                               ('maximum', ('int', 'size'), 'maximum in the table')):
        name = next(n for n in present if getattr(table(n), field) is not None and (kinds is None or table(n).kind in kinds)
                    and (field != 'maximum' or seen['ranges'].get(n, (None, None))[1] is not None)
                    and (field != 'dynamic' or n in seen['dynamic']))
        wrong.append((name, table(name)._replace(**{field: wrong_value(table(name), field)}), said))
    wrong.append((present[0], None, 'the table says it does not exist, the server has it'))
    wrong.append((absent[0], flavors.VarFacts(absent[0], 'int', True, *([None] * (len(flavors.VarFacts._fields) - 3))),
                  'SHOW GLOBAL VARIABLES has no such variable'))
    if host == 'mysql80':
        # The used lab has the memcached plugin installed at run time: its variables are compared too.
        assert 'daemon_memcached' in seen['plugins'] and 'daemon_memcached' in seen['installed'], \
            'mysql80 is not a used server: no daemon_memcached in information_schema.PLUGINS / mysql.plugin (%s)' \
            % sorted(seen['installed'])
        facts = table('daemon_memcached_r_batch_size')
        wrong.append(('daemon_memcached_r_batch_size', facts._replace(default=wrong_value(facts, 'default')),
                      'default in the table'))
        facts = table('daemon_memcached_w_batch_size')
        wrong.append(('daemon_memcached_w_batch_size', facts._replace(maximum=wrong_value(facts, 'maximum')),
                      'maximum in the table'))
        wrong.append(('daemon_memcached_option', table('daemon_memcached_option')._replace(plugin='no_such_plugin'),
                      'the table says plugin no_such_plugin brings it'))
    assert not disagreements(seen, table)[0], 'the right table must agree (test_the_version_table_agrees_with_the_server)'
    for name, facts, said in wrong:
        problems, dummy = disagreements(seen, lambda n, name=name, facts=facts: facts if n == name else table(n))
        assert [p for p in problems if p.startswith(name + ' ') and said in p], \
            'a wrong row of %s (%s) went unnoticed on %s: %s' % (name, facts, seen['where'], problems)
