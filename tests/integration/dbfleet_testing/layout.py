"""Where an integration test lives, checked: tests/integration/{local,fleet}/<subject>/test_*.py, each test of fleet/
marked `fleet` by its place (the conftest.py of tests/integration adds the marker at collection: `fleet_by_place`) and
none of local/ marked so, no test module importing another (what they share is this package), and test file names
unique across the tree (pytest imports them by their names). The conftest.py of tests/integration checks the markers at
collection; tests/unit/test_integration_layout.py checks the files (make test runs both)."""
import ast
import os

INTEGRATION = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Where the test of X lives (docs/development.md, "Integration tests by subject").
SUBJECTS = {
    'modules': "a module against real servers (its arguments, check mode, results, login and TLS)",
    'roles': "a role applied, checked and put back (its drop-in, runtime values, restarts it asks for)",
    'playbooks': "a playbook of playbooks/ end to end (inputs, reports, drop / convert runbooks)",
    'clusters': "the local lab's Galera cluster and Group Replication group (restart path, guarded DDL, drain)",
    'flavors': "the version and flavor facts (versions/flavors.py, flavor_data/) against the lab's real servers",
    'awx': "the AWX job templates run as AWX runs them, and the execution environment image",
    'lab': "the lab itself (lab/lab.py)",
    'faults': "faults injected during restarts and drops (killed processes, partitions, refused starts)",
    'hosts': "booted machines shaped like production (distribution packages, systemd, become)",
}
PLACES = ('local', 'fleet')


def integration_test_files():
    """Every test_*.py below tests/integration, as paths relative to it."""
    found = []
    for top, dirs, files in os.walk(INTEGRATION):
        dirs[:] = sorted(d for d in dirs if not d.startswith(('.', '__')))
        found += [os.path.relpath(os.path.join(top, f), INTEGRATION) for f in sorted(files)
                  if f.startswith('test_') and f.endswith('.py')]
    return found


def misplaced(paths):
    """The test files not at local/<subject>/ or fleet/<subject>/ with a subject of SUBJECTS, and the file names used
    twice."""
    problems, seen = [], {}
    for path in paths:
        parts = path.split(os.sep)
        if len(parts) != 3 or parts[0] not in PLACES or parts[1] not in SUBJECTS:
            problems.append('%s: not at {local,fleet}/<subject>/ (subjects: %s)' % (path, ', '.join(SUBJECTS)))
        if parts[-1] in seen:
            problems.append('%s: the same file name as %s (pytest imports test files by name)' % (path, seen[parts[-1]]))
        seen.setdefault(parts[-1], path)
    return problems


def imports_of_tests(source, path='<source>'):
    """The imports of test modules or of a conftest in source (anywhere in it, also inside functions), absolute or
    relative: `import test_x`, `from test_x import y`, `from .test_x import y`, `from . import test_x`,
    `from pkg import conftest`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = '.' * node.level + (node.module or '')
            names = [module] + [module.rstrip('.') + '.' + a.name if node.module else module + a.name for a in node.names]
        else:
            continue
        for name in names:
            last = name.split('.')[-1]
            if last.startswith('test_') or last == 'conftest':
                found.append('%s:%d imports %s' % (path, node.lineno, name))
                break
    return found


def fleet_by_place(relpath):
    """Whether a test at relpath (below tests/integration) is one of the SSH fleet's: it is under fleet/."""
    return relpath.split(os.sep)[0] == 'fleet'


def marker_mismatch(relpath, fleet_marked):
    """Why a test at relpath (below tests/integration) with or without the fleet marker is in the wrong place, or None.
    (The collection marks every test under fleet/ fleet: one unmarked there is a collection that skipped that step.)"""
    place = relpath.split(os.sep)[0]
    if place == 'fleet' and not fleet_marked:
        return '%s is under fleet/ but not marked fleet' % relpath
    if place == 'local' and fleet_marked:
        return '%s is marked fleet but under local/ (the SSH fleet\'s tests are under fleet/)' % relpath
    if place not in PLACES:
        return '%s is neither under local/ nor under fleet/' % relpath
    return None
