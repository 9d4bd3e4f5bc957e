"""The local lab's servers as its inventory (inventories/lab/hosts.yml) names them: logins, SQL, a module run as
Ansible runs it (a subprocess with ANSIBLE_MODULE_ARGS), verify's result, a test drop-in, the roles' state kept."""
import json
import os
import subprocess
import time
from contextlib import contextmanager

import pymysql
import yaml
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavor_data import catalog as flavor_data
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import facts as version_facts
from dbfleet_testing.lab import DEFAULT_HOSTS, REPO, Connection, require_lab_hosts, statement_rows
from dbfleet_testing.runs import COLLECTIONS, PYTHON

ROOT = REPO
INVENTORY = os.path.join(ROOT, 'inventories', 'lab', 'hosts.yml')
# The lab's default hosts (mysql57 with DBFLEET_LAB_WITH_57=1; mysql56 has tests of its own).
LAB_HOSTS = tuple(h for h in DEFAULT_HOSTS if h != 'mysql56')
TEST_DROPIN = '90-dbfleet-test-verify.cnf'


def alias_inventory(path, host, aliases, inventory=INVENTORY):
    """An inventory, written to path, in which each alias of aliases ({alias: {variable: value}}) is host under
    another name: in host's groups, with its variables and the alias's own on top (host variables: over the lab's
    group_vars, under extra variables). Given after inventory (its group_vars and `all` variables), one
    ansible-playbook run reaches the one server once per alias: the cases of a test that each need a run of their own
    (a bad input each) in one run, each case's outcome under its own name (runs.recap(), runs.host_failure())."""
    with open(inventory, encoding='utf-8') as handle:
        data = yaml.safe_load(handle) or {}
    groups = {}

    def walk(name, group):
        if host in ((group or {}).get('hosts') or {}):
            groups[name] = {'hosts': dict((alias, dict(group['hosts'][host] or {}, **own))
                                          for alias, own in aliases.items())}
        for child, sub in ((group or {}).get('children') or {}).items():
            walk(child, sub)
    for name, group in data.items():
        walk(name, group)
    assert groups, '%s is not in %s' % (host, inventory)
    top = dict(groups.pop('all', {}), children=groups)
    with open(path, 'w', encoding='utf-8') as handle:
        yaml.safe_dump({'all': top}, handle)
    return str(path)


# ---------------------------------------------------------------- lab access
def lab_inventory():
    return require_lab_hosts(INVENTORY)


def host_vars(host):
    return require_lab_hosts(INVENTORY, [host])[host]


def login(host):
    hv = host_vars(host)
    return dict(login_host=hv['dbfleet_login_host'], login_port=int(hv['dbfleet_login_port']),
                login_user=hv['dbfleet_login_user'], login_password=hv['dbfleet_login_password'],
                config_file='')


def sql(host, statement, args=None, attempts=10):
    """Run one statement (retrying while another user of the lab restarts the server); rows as dicts."""
    params = login(host)
    for attempt in range(attempts):
        try:
            conn = Connection(host=params['login_host'], port=params['login_port'],
                              user=params['login_user'], password=params['login_password'],
                              autocommit=True, cursorclass=pymysql.cursors.DictCursor,
                              connect_timeout=5)
            try:
                with conn.cursor() as cur:
                    cur.execute(statement, args)
                    return list(cur.fetchall() or [])
            finally:
                conn.close()
        except pymysql.err.OperationalError:
            if attempt == attempts - 1:
                raise
            time.sleep(2)
    return []


def global_value(host, name):
    rows = sql(host, 'SHOW GLOBAL VARIABLES LIKE %s', [name])
    return rows[0]['Value'] if rows else None


def global_values(host, names):
    """{name: running value} of names on host in one statement (None: the server has no such variable)."""
    if not names:
        return {}
    rows = sql(host, 'SHOW GLOBAL VARIABLES WHERE Variable_name IN (%s)' % ', '.join(['%s'] * len(names)), list(names))
    found = dict((r['Variable_name'].lower(), r['Value']) for r in rows)
    return dict((n, found.get(n.lower())) for n in names)


# The roles' drop-ins and the runtime values they change, for tests that run site.yml on the lab.
ROLE_DROPINS = ('60-dbfleet-adaptive_hash.cnf', '60-dbfleet-flush_neighbors.cnf')
ROLE_VARIABLES = ('innodb_adaptive_hash_index', 'innodb_flush_neighbors')


def persisted_put_back(name, value):
    """The statement and arguments that leave NAME persisted as it was (VALUE: its VARIABLE_VALUE in
    performance_schema.persisted_variables, or None: not persisted) without touching its running value: SET
    PERSIST_ONLY, or RESET PERSIST IF EXISTS. A test that persists a value puts back what a used server had, not
    nothing."""
    if value is None:
        return "RESET PERSIST IF EXISTS %s" % name, None
    for kind in (int, float):       # a numeric variable refuses a string
        try:
            return "SET PERSIST_ONLY %s = %%s" % name, (kind(value),)
        except ValueError:
            pass
    return "SET PERSIST_ONLY %s = %%s" % name, (value,)


def persisted_value(host, name):
    """NAME's value in mysqld-auto.cnf (performance_schema.persisted_variables), or None (also on a server without
    SET PERSIST)."""
    return persisted_values(host).get(name)


def persisted_values(host):
    """{name: value} of everything persisted in host's mysqld-auto.cnf (performance_schema.persisted_variables); {}
    on a server without SET PERSIST."""
    if not sql(host, "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'performance_schema' "
                     "AND TABLE_NAME = 'persisted_variables'"):
        return {}
    return dict((r['VARIABLE_NAME'], r['VARIABLE_VALUE']) for r in sql(
        host, 'SELECT VARIABLE_NAME, VARIABLE_VALUE FROM performance_schema.persisted_variables'))


@contextmanager
def persisted_aside(host, name):
    """NAME not persisted while a test reads what the option files say of it (a persisted value wins over them at
    start: a used server may have one), then persisted again as it was."""
    was = persisted_value(host, name)
    if was is not None:
        sql(host, *persisted_put_back(name, None))
    try:
        yield
    finally:
        if was is not None:
            sql(host, *persisted_put_back(name, was))


@contextmanager
def role_state_kept(hosts, variables=ROLE_VARIABLES):
    """Put the roles' drop-ins and the given global values of each host back as they were afterwards, their persisted
    values too (a role resets a used server's persisted value that differs from its desired one: RESET PERSIST)."""
    dropins = dict((h, host_vars(h)['dbfleet_option_dropin_dir']) for h in hosts)
    kept = {}
    for host, directory in dropins.items():
        for name in ROLE_DROPINS:
            if os.path.exists(os.path.join(directory, name)):
                with open(os.path.join(directory, name), encoding='utf-8') as handle:
                    kept[(host, name)] = handle.read()
    original = dict((h, dict((v, global_value(h, v)) for v in variables)) for h in hosts)
    persisted = dict((h, dict((v, persisted_value(h, v)) for v in variables)) for h in hosts)
    try:
        yield original
    finally:
        for host, directory in dropins.items():
            for name in ROLE_DROPINS:
                path = os.path.join(directory, name)
                if (host, name) in kept:
                    with open(path, 'w', encoding='utf-8') as handle:
                        handle.write(kept[(host, name)])
                elif os.path.exists(path):
                    os.unlink(path)
            for variable, value in original[host].items():
                sql(host, 'SET GLOBAL %s = %s' % (variable, '%s'), [int(value) if value.isdigit() else value])
                if persisted_value(host, variable) != persisted[host][variable]:
                    sql(host, *persisted_put_back(variable, persisted[host][variable]))


def run_module(name, args, attempts=3):
    """Run plugins/modules/<name>.py as Ansible would; returns (result dict, rc)."""
    env = dict(os.environ, PYTHONPATH=COLLECTIONS)
    payload = json.dumps({'ANSIBLE_MODULE_ARGS': args})
    for attempt in range(attempts):
        proc = subprocess.run([PYTHON, '-m', 'ansible_collections.dbfleet.innodb.plugins.modules.%s' % name],
                              input=payload, capture_output=True, text=True, env=env, timeout=120, check=False,
                              cwd='/')
        assert 'Traceback' not in proc.stderr, proc.stderr
        result = json.loads(proc.stdout)
        lost = 'Lost connection' in result.get('msg', '') or "Can't connect" in result.get('msg', '')
        if not lost or attempt == attempts - 1:
            return result, proc.returncode
        time.sleep(3)
    return None, None


def read_only_result(name, host, **extra):
    """The result of read-only module NAME run with HOST's login and EXTRA options; it must succeed and change nothing."""
    args = dict(login(host))
    args.update(extra)
    result, rc = run_module(name, args)
    assert rc == 0, result
    assert result['changed'] is False
    return result


def verify(host, settings, **extra):
    """The verify module's result; with target_version, the version facts passed as its action plugin passes them."""
    if extra.get('target_version') and 'target_facts' not in extra:
        extra['target_facts'] = version_facts.catalog_data(flavor_data)
    return read_only_result('verify', host, settings=settings, **extra)


@contextmanager
def dropin(host, text):
    """A test drop-in in the host's !includedir directory, removed afterwards."""
    path = os.path.join(host_vars(host)['dbfleet_option_dropin_dir'], TEST_DROPIN)
    with open(path, 'w') as handle:
        handle.write('# test file of tests/integration (dbfleet_testing.servers.dropin); safe to delete\n[mysqld]\n' + text)
    try:
        yield path
    finally:
        os.unlink(path)


def engines(host, **extra):
    """The storage_engines module's facts of host (read-only, must succeed)."""
    return read_only_result('storage_engines', host, **extra)['storage_engines']


@contextmanager
def identified_cursor(lab, host):
    """(cursor, global variables by lowercase name, flavors identity) of lab host, which must be up; closed after."""
    row = lab.hosts.get(host)
    assert row and row['state'] == 'up', '%s is not up: make lab-up (lab/lab.py up)' % host
    conn = lab.connect(host)
    try:
        with conn.cursor() as cur:
            cur.execute('SHOW GLOBAL VARIABLES')
            variables = {name.lower(): value for name, value in cur.fetchall()}
            yield cur, variables, server_identity.identity_from_variables(variables)
    finally:
        conn.close()


# ---------------------------------------------------------------- over a host's unix socket (its inventory variables hv)
def socket_login(hv):
    """The module options of hv's login over its unix socket."""
    return dict(login_unix_socket=hv['dbfleet_login_unix_socket'], login_user=hv['dbfleet_login_user'],
                login_password=hv['dbfleet_login_password'])


def socket_connect(hv, database=None, tries=30):
    """A PyMySQL connection over hv's socket; tried again once a second while another user of the lab restarts it."""
    for i in range(tries):
        try:
            return Connection(unix_socket=hv['dbfleet_login_unix_socket'], user=hv['dbfleet_login_user'],
                              password=hv['dbfleet_login_password'], autocommit=True, database=database)
        except pymysql.err.OperationalError:
            if i == tries - 1:
                raise
            time.sleep(1)
    return None


def socket_sql(hv, statement, args=None):
    """The rows (tuples) of one statement over hv's socket."""
    return statement_rows(lambda: socket_connect(hv), statement, args)


def socket_global_value(hv, name):
    """@@GLOBAL.name over hv's socket, as a string."""
    return str(socket_sql(hv, 'SELECT @@GLOBAL.' + name)[0][0])
