"""The Molecule scenarios' testinfra checks (tests/molecule/conftest.py): each scenario's verifier names the check
files that apply to it, each of them exists and runs in some scenario, and no check skips itself."""
import ast
import glob
import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECKS = os.path.join(ROOT, 'tests', 'molecule')


# Molecule's base config: every scenario's molecule.yml is merged over it.
BASE_CONFIG = os.path.join(ROOT, '.config', 'molecule', 'config.yml')


def load_yaml(path):
    with open(path, encoding='utf-8') as handle:
        return yaml.safe_load(handle) or {}


def merged(base, scenario):
    """scenario merged over base as Molecule merges its config files (molecule.util.merge_dicts: a mapping key by
    key, any other value replaced whole)."""
    result = dict(base)
    for key, value in scenario.items():
        if isinstance(result.get(key), dict) and isinstance(value, dict):
            result[key] = merged(result[key], value)
        else:
            result[key] = value
    return result


def scenario_files():
    """{scenario: its molecule.yml as written}."""
    return {os.path.basename(os.path.dirname(path)): load_yaml(path)
            for path in sorted(glob.glob(os.path.join(ROOT, 'molecule', '*', 'molecule.yml')))}


def scenario_verifiers():
    """{scenario: its verifier, as Molecule reads it over the base config} of every scenario whose verifier is
    testinfra."""
    base = load_yaml(BASE_CONFIG)
    found = {}
    for scenario, config in scenario_files().items():
        verifier = merged(base, config).get('verifier') or {}
        if verifier.get('name') == 'testinfra':
            found[scenario] = verifier
    return found


def repeated(base, scenario, where=''):
    """The settings of scenario that say again what base says (key paths)."""
    found = []
    for key, value in scenario.items():
        path = '%s/%s' % (where, key)
        if key not in base:
            continue
        if isinstance(value, dict) and isinstance(base[key], dict):
            found += repeated(base[key], value, path)
        elif value == base[key]:
            found.append(path)
    return found


def test_every_scenario_extends_the_base_config_and_repeats_nothing_of_it():
    base = load_yaml(BASE_CONFIG)
    assert base['verifier']['name'] == 'testinfra' and base['provisioner']['playbooks']['create'], base
    scenarios = scenario_files()
    assert len(scenarios) >= 6, sorted(scenarios)
    found = {scenario: repeated(base, config) for scenario, config in scenarios.items()}
    assert {scenario: paths for scenario, paths in found.items() if paths} == {}
    for scenario, config in scenarios.items():
        assert config.get('platforms'), '%s names no host (platforms)' % scenario


def test_the_repeat_finder_finds_repeats():
    base = {'prerun': False, 'provisioner': {'env': {'A': '1', 'B': '2'}}, 'scenario': {'test_sequence': ['x']}}
    assert repeated(base, {'prerun': False, 'provisioner': {'env': {'A': '1', 'B': '3'}},
                           'scenario': {'test_sequence': ['x', 'y']}}) == ['/prerun', '/provisioner/env/A']
    assert merged(base, {'provisioner': {'env': {'B': '3'}}})['provisioner']['env'] == {'A': '1', 'B': '3'}


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
    assert len(scenarios) >= 6, sorted(scenarios)
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
