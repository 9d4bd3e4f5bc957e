"""The Molecule scenarios' testinfra checks (tests/molecule/conftest.py): each scenario's verifier names the check
files that apply to it, each of them exists and runs in some scenario, and no check skips itself."""
import ast
import glob
import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECKS = os.path.join(ROOT, 'tests', 'molecule')


def scenario_verifiers():
    """{scenario: its verifier} of every scenario whose verifier is testinfra."""
    found = {}
    for path in sorted(glob.glob(os.path.join(ROOT, 'molecule', '*', 'molecule.yml'))):
        with open(path, encoding='utf-8') as handle:
            verifier = (yaml.safe_load(handle) or {}).get('verifier') or {}
        if verifier.get('name') == 'testinfra':
            found[os.path.basename(os.path.dirname(path))] = verifier
    return found


def named_checks(scenario, verifier):
    """The check files the scenario's verifier runs (Molecule: test_*.py under `directory`, then the additional files
    or directories, each relative to `directory`), as paths relative to the repository."""
    directory = os.path.join(ROOT, 'molecule', scenario, verifier.get('directory', 'tests'))
    walked = sorted(glob.glob(os.path.join(directory, '**', 'test_*.py'), recursive=True))
    named = [os.path.normpath(os.path.join(directory, f)) for f in verifier.get('additional_files_or_dirs') or []]
    return [os.path.relpath(p, ROOT) for p in walked], [os.path.relpath(p, ROOT) for p in named]


def skips_in(source, name='<source>'):
    """Where a check skips itself: pytest.skip(...), pytest.importorskip(...), a skip or skipif mark."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in ('skip', 'skipif', 'importorskip', 'xfail'):
            found.append('%s:%d uses %s' % (name, node.lineno, node.attr))
    return found


def test_every_testinfra_scenario_names_its_checks_and_nothing_else():
    scenarios = scenario_verifiers()
    assert len(scenarios) >= 8, sorted(scenarios)
    for scenario, verifier in scenarios.items():
        walked, named = named_checks(scenario, verifier)
        assert walked == [], '%s: its verifier directory holds test files of its own: %s' % (scenario, walked)
        assert named, '%s: its verifier names no check file (additional_files_or_dirs)' % scenario
        missing = [p for p in named if not os.path.isfile(os.path.join(ROOT, p))]
        assert missing == [], '%s names check files that do not exist: %s' % (scenario, missing)
        assert all(os.path.dirname(p) == os.path.join('tests', 'molecule') for p in named), named
        assert not {'k', 'm'} & set(verifier.get('options') or {}), \
            '%s: its checks are chosen by the files it names, not by -k/-m' % scenario


def test_every_check_file_runs_in_some_scenario():
    named = set()
    for scenario, verifier in scenario_verifiers().items():
        named.update(named_checks(scenario, verifier)[1])
    files = {os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(CHECKS, 'test_*.py'))}
    assert len(files) >= 6, files
    assert sorted(files - named) == []


def test_no_check_skips_itself():
    found = []
    for path in sorted(glob.glob(os.path.join(CHECKS, '*.py'))):
        with open(path, encoding='utf-8') as handle:
            found += skips_in(handle.read(), os.path.relpath(path, ROOT))
    assert found == []


def test_the_skip_finder_finds_skips():
    assert skips_in('import pytest\npytest.skip("x")\n') == ['<source>:2 uses skip']
    assert skips_in('pytestmark = pytest.mark.skipif(True, reason="x")\n') == ['<source>:1 uses skipif']
    assert skips_in('@pytest.mark.skip\ndef test_a():\n    pass\n') == ['<source>:1 uses skip']
    assert skips_in('@pytest.mark.hosts(applies=bool)\ndef test_a(host):\n    assert host\n') == []
