"""The integration tests' layout (tests/integration/dbfleet_testing/layout.py): one directory per subject under local/
and fleet/, no test module importing another, unique test file names; and the checks themselves."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'integration'))
from dbfleet_testing import layout  # noqa: E402  pylint: disable=wrong-import-position


def test_every_integration_test_file_is_in_a_subject_directory():
    files = layout.integration_test_files()
    assert len(files) > 40, files
    assert layout.misplaced(files) == []


def test_no_integration_module_imports_a_test_module_or_a_conftest():
    found = []
    for top, dirs, files in os.walk(layout.INTEGRATION):
        dirs[:] = [d for d in dirs if not d.startswith('.')]
        for name in files:
            if name.endswith('.py'):
                path = os.path.join(top, name)
                with open(path, encoding='utf-8') as handle:
                    found += layout.imports_of_tests(handle.read(), os.path.relpath(path, ROOT))
    assert found == []


def test_the_checks_find_what_they_look_for():
    assert layout.imports_of_tests('from test_verify import sql\n') == ['<source>:1 imports test_verify']
    assert layout.imports_of_tests('def f():\n    import test_tls as t\n') == ['<source>:2 imports test_tls']
    assert layout.imports_of_tests('from conftest import REPO\n') == ['<source>:1 imports conftest']
    assert layout.imports_of_tests('from dbfleet_testing.runs import playbook\nimport pytest\n') == []
    # relative imports too: of a test module, of one from its package, of a conftest
    assert layout.imports_of_tests('from .test_galera import x\n') == ['<source>:1 imports .test_galera']
    assert layout.imports_of_tests('from . import helpers, test_galera\n') == ['<source>:1 imports .test_galera']
    assert layout.imports_of_tests('from ..clusters.test_gr_ddl import y\n') == ['<source>:1 imports ..clusters.test_gr_ddl']
    assert layout.imports_of_tests('from .. import conftest\n') == ['<source>:1 imports ..conftest']
    assert layout.imports_of_tests('from dbfleet_testing import test_data\n') == ['<source>:1 imports dbfleet_testing.test_data']
    assert layout.imports_of_tests('from . import runs\nfrom .runs import playbook\n') == []
    assert layout.misplaced([os.path.join('local', 'modules', 'test_a.py'), os.path.join('fleet', 'faults', 'test_b.py')]) == []
    assert len(layout.misplaced([os.path.join('test_flat.py')])) == 1
    assert len(layout.misplaced([os.path.join('local', 'misc', 'test_a.py')])) == 1
    twice = layout.misplaced([os.path.join('local', 'modules', 'test_a.py'), os.path.join('fleet', 'modules', 'test_a.py')])
    assert len(twice) == 1 and 'same file name' in twice[0]
    assert layout.fleet_by_place(os.path.join('fleet', 'faults', 'test_b.py'))
    assert not layout.fleet_by_place(os.path.join('local', 'fleet', 'test_b.py'))
    assert layout.marker_mismatch(os.path.join('fleet', 'faults', 'test_b.py'), True) is None
    assert layout.marker_mismatch(os.path.join('local', 'roles', 'test_c.py'), False) is None
    assert 'not marked fleet' in layout.marker_mismatch(os.path.join('fleet', 'faults', 'test_b.py'), False)
    assert 'marked fleet but under local/' in layout.marker_mismatch(os.path.join('local', 'roles', 'test_c.py'), True)
