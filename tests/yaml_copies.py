"""Copies in the collection's Ansible YAML: tasks written twice, and runs of tasks repeated in shape.

The library tool ``duplicates`` reads code as text; this one reads the Ansible YAML with a YAML loader
(``yaml.SafeLoader``, every tag such as ``!unsafe`` or ``!vault`` read as its plain value), so that layout,
comments, quoting and task names do not hide a copy.

What it reads (``CHECKED``): ``roles/*/tasks/*.yml``, ``roles/*/handlers/*.yml``, ``playbooks/*.yml``,
``playbooks/tasks/*.yml``, ``awx/playbooks/*.yml`` and the Molecule scenarios' playbooks
(``molecule/*/*.yml`` but each scenario's ``molecule.yml`` and ``group_vars``), all held to the same rule.
A file is a playbook (a list of plays: the tasks of each play's ``pre_tasks``, ``tasks``, ``post_tasks`` and
``handlers``) or a task list; a ``block`` task is a task and its ``block`` / ``rescue`` / ``always`` lists are
task lists too.

Normalized task: the task without ``name`` (and without comments, which the loader drops): its module and
arguments, ``when``, ``loop``, ``vars``, ``register`` and every other keyword stay. Its *size* is the number of
scalar values (leaves) in it.

Shape of a task: the normalized task with every scalar replaced by its type (string, number, boolean, null):
the keys (module, argument and keyword names) stay, the names, strings, Jinja expressions and variable names
go.

The rule:

(a) *Same task*: one normalized task standing in two or more places, when its size is at least
    ``MIN_TASK_LEAVES`` (4). Smaller tasks are the one-line calls meant to be the same everywhere: an
    ``include_role: dbfleet.innodb.scaffold`` with ``tasks_from`` and one variable, ``meta: flush_handlers``,
    an ``include_tasks`` of one file under one condition.
(b) *Same shape*: a run of consecutive tasks of one task list whose shapes repeat, in the same order,
    elsewhere (another list, or another place of the same list), with at least ``MIN_SHAPE_LEAVES`` (12)
    leaves in the run: two tasks or more of a dozen values together (``MIN_RUN``, 2), or one task of a dozen
    values on its own (a module call copied with its variable names changed). Not counted: a run whose every
    task is only an ``include_role`` / ``import_role`` / ``include_tasks`` / ``import_tasks`` call (with its
    ``vars`` / ``when``): a row of scaffold includes is the scaffold used as it is meant to be; and a run of one
    task whose places are the very same task (that is (a)). Each run is reported at its longest (a run
    inside a longer reported one is not reported again). Below the floor are the idioms every playbook
    repeats with other values: ``validate_argument_spec`` then one ``assert``, a ``command`` then a ``debug``
    of its output, a ``verify`` then an ``assert`` of its result.

A YAML alias (``*name``) or merge key (``<<: *name``) is the YAML way of writing a value once: it is read as
a reference to its anchor, not as a second copy of the value.

Each finding names the file:line of every place. Exit status 1 when there is a finding.

    python tests/yaml_copies.py [ROOT]
"""

import glob
import json
import os
import sys

import yaml

MIN_TASK_LEAVES = 4
MIN_RUN = 2
MIN_SHAPE_LEAVES = 12

CHECKED = (
    'roles/*/tasks/*.yml',
    'roles/*/handlers/*.yml',
    'playbooks/*.yml',
    'playbooks/tasks/*.yml',
    'awx/playbooks/*.yml',
    'molecule/*/*.yml',
)
NOT_PLAYBOOKS = ('molecule.yml',)
PLAY_TASK_LISTS = ('pre_tasks', 'tasks', 'post_tasks', 'handlers')
BLOCK_LISTS = ('block', 'rescue', 'always')
INCLUDES = frozenset(
    prefix + name
    for prefix in ('', 'ansible.builtin.', 'ansible.legacy.')
    for name in ('include_role', 'import_role', 'include_tasks', 'import_tasks')
)
LINE = '__line__'


class _Loader(yaml.SafeLoader):
    """SafeLoader that keeps each mapping's first line and reads any tag as its plain value."""

    def compose_node(self, parent, index):
        # An alias (*name) is the YAML way of writing a value once: it stays a reference, not a second copy.
        if self.check_event(yaml.AliasEvent):
            event = self.get_event()
            return yaml.ScalarNode('tag:yaml.org,2002:str', '*' + event.anchor, event.start_mark, event.end_mark)
        return super().compose_node(parent, index)

    def flatten_mapping(self, node):
        # A merge key (<<: *name) stays a key whose value is the reference.
        for key_node, _value in node.value:
            if key_node.tag == 'tag:yaml.org,2002:merge':
                key_node.tag = 'tag:yaml.org,2002:str'

    def construct_mapping(self, node, deep=False):
        mapping = super().construct_mapping(node, deep=True)
        mapping[LINE] = node.start_mark.line + 1
        return mapping


def _plain(loader, suffix, node):
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_mapping(node, deep=True)


_Loader.add_multi_constructor('!', _plain)


def load(path):
    with open(path, encoding='utf-8') as handle:
        return yaml.load(handle, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass


def files(root):
    """The checked files under root, relative, sorted."""
    found = set()
    for pattern in CHECKED:
        for path in glob.glob(os.path.join(root, pattern)):
            if os.path.basename(path) not in NOT_PLAYBOOKS:
                found.add(os.path.relpath(path, root))
    return sorted(found)


def _is_play(item):
    return isinstance(item, dict) and (
        'hosts' in item or any(key.endswith('import_playbook') for key in item))


def task_lists(document):
    """Every task list of a loaded file (a playbook or a task list), blocks' lists included."""
    lists = []

    def tasks(items):
        if not isinstance(items, list):
            return
        items = [item for item in items if isinstance(item, dict)]
        lists.append(items)
        for item in items:
            for key in BLOCK_LISTS:
                tasks(item.get(key))

    if not isinstance(document, list):
        return lists
    if any(_is_play(item) for item in document):
        for play in document:
            if isinstance(play, dict):
                for key in PLAY_TASK_LISTS:
                    tasks(play.get(key))
    else:
        tasks(document)
    return lists


def normalize(task):
    """The task without its name and line marks (nested blocks' tasks likewise), keys sorted."""
    def strip(value, top=False):
        if isinstance(value, dict):
            return {key: strip(inner) for key, inner in sorted(value.items())
                    if key != LINE and not (key == 'name' and top)}
        if isinstance(value, list):
            return [strip(inner, top=isinstance(inner, dict)) for inner in value]
        return value
    return strip(task, top=True)


def leaves(value):
    if isinstance(value, dict):
        return sum(leaves(inner) for inner in value.values())
    if isinstance(value, list):
        return sum(leaves(inner) for inner in value)
    return 1


def shape(value):
    """The value with every scalar replaced by its type; keys kept."""
    if isinstance(value, dict):
        return {key: shape(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [shape(inner) for inner in value]
    if isinstance(value, bool):
        return '<bool>'
    if isinstance(value, (int, float)):
        return '<number>'
    if value is None:
        return '<null>'
    return '<string>'


def _key(value):
    return json.dumps(value, sort_keys=True, default=str)


def _is_include(body):
    keys = set(body) - {'vars', 'when', 'tags', 'loop', 'loop_control'}
    return len(keys) == 1 and keys <= INCLUDES


class Task:
    def __init__(self, path, task):
        self.where = '%s:%s' % (path, task.get(LINE, '?'))
        self.body = normalize(task)
        self.size = leaves(self.body)
        self.exact = _key(self.body)
        self.shape = _key(shape(self.body))
        self.include = _is_include(self.body)


def collect(root):
    """[[Task]]: every task list of the checked files."""
    result = []
    for path in files(root):
        for items in task_lists(load(os.path.join(root, path))):
            result.append([Task(path, item) for item in items])
    return result


def same_tasks(lists):
    """(a): [(size, [where, ...])] for each normalized task of MIN_TASK_LEAVES or more found in 2+ places."""
    places = {}
    for items in lists:
        for task in items:
            if task.size >= MIN_TASK_LEAVES:
                places.setdefault(task.exact, []).append(task)
    return sorted(((found[0].size, [task.where for task in found])
                   for found in places.values() if len(found) > 1), key=lambda row: row[1])


def _run_counts(run_a, run_b):
    if len(run_a) < MIN_RUN and all(a.exact == b.exact for a, b in zip(run_a, run_b)):
        return False
    return all(sum(task.size for task in run) >= MIN_SHAPE_LEAVES and not all(task.include for task in run)
               for run in (run_a, run_b))


def same_shapes(lists):
    """(b): [(length, ((first where, last where), (first where, last where)))] for each repeated run of shapes."""
    windows = {}
    for index, items in enumerate(lists):
        for start, task in enumerate(items):
            windows.setdefault(task.shape, []).append((index, start))
    findings = []
    covered = set()
    for places in windows.values():
        if len(places) < 2:
            continue
        for i, (list_a, start_a) in enumerate(places):
            for list_b, start_b in places[i + 1:]:
                if (list_a, start_a, list_b, start_b) in covered:
                    continue
                a, b = lists[list_a], lists[list_b]
                # Grow the run backwards and forwards as long as the shapes go on matching.
                while (start_a > 0 and start_b > 0 and a[start_a - 1].shape == b[start_b - 1].shape
                       and (list_a, start_a - 1) != (list_b, start_b)):
                    start_a, start_b = start_a - 1, start_b - 1
                length = 0
                while (start_a + length < len(a) and start_b + length < len(b)
                       and a[start_a + length].shape == b[start_b + length].shape
                       and (list_a != list_b or start_a + length < start_b)):
                    covered.add((list_a, start_a + length, list_b, start_b + length))
                    length += 1
                if length == 0:
                    continue
                run_a = a[start_a:start_a + length]
                run_b = b[start_b:start_b + length]
                if _run_counts(run_a, run_b):
                    findings.append((length, ((run_a[0].where, run_a[-1].where),
                                              (run_b[0].where, run_b[-1].where))))
    return sorted(set(findings), key=lambda row: row[1])


def _span(first, last):
    """file:line of a run's first task, with '-line' of its last one (in the same file)."""
    return first if first == last else '%s-%s' % (first, last.rsplit(':', 1)[1])


def report(root):
    """The findings as lines of text (empty: no copies)."""
    lists = collect(root)
    lines = []
    for size, places in same_tasks(lists):
        lines.append('same task (%d values) in %d places: %s' % (size, len(places), ', '.join(places)))
    for length, places in same_shapes(lists):
        lines.append('same shape, %d task%s: %s' % (
            length, '' if length == 1 else 's', ' and '.join(_span(first, last) for first, last in places)))
    return lines


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    root = argv[0] if argv else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    lines = report(root)
    for line in lines:
        print(line)
    print('%d copies in the Ansible YAML' % len(lines))
    return 1 if lines else 0


if __name__ == '__main__':
    sys.exit(main())
