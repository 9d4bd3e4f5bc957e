"""Every server restart the restart role makes goes through the modules that put a refused configuration back and
start the server again (command_restart, service_restart: tests/unit/plugins/module_utils/restart/), the switchover's
included: switchover.yml only hands the primary role away, and the old primary's restart after it is one_host.yml's,
through the same tasks as any other host's."""
import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TASKS = os.path.join(ROOT, 'roles', 'restart', 'tasks')
RESTARTS = ('dbfleet.innodb.command_restart', 'dbfleet.innodb.service_restart')
# Modules that could stop or start a server behind the put-back's back.
BYPASSES = ('ansible.builtin.service', 'ansible.builtin.systemd', 'ansible.builtin.systemd_service',
            'ansible.builtin.command', 'ansible.builtin.shell', 'ansible.builtin.raw', 'ansible.builtin.script')


def _tasks(tasks):
    """Every task of a task list, in order, blocks (block, rescue, always) walked into."""
    for task in tasks or []:
        yield task
        for key in ('block', 'rescue', 'always'):
            yield from _tasks(task.get(key))


def _modules(name):
    with open(os.path.join(TASKS, name), encoding='utf-8') as handle:
        return [(t.get('name'), next((k for k in t if k.startswith(('ansible.', 'dbfleet.'))), None))
                for t in _tasks(yaml.safe_load(handle))]


def test_the_switchover_restarts_through_the_put_back_of_every_method():
    files = sorted(f for f in os.listdir(TASKS) if f.endswith('.yml'))
    used = dict((f, [m for _n, m in _modules(f)]) for f in files)
    assert not [(f, m) for f, ms in used.items() for m in ms if m in BYPASSES]
    assert [f for f, ms in used.items() if any(m in RESTARTS for m in ms)] == ['one_host.yml']
    assert not [m for f in ('switchover.yml', 'switchover_endpoint.yml') for m in used[f] if m in RESTARTS]
    # In one_host.yml the switch comes first, then the host's restart by its method (both methods' put-back).
    order = _modules('one_host.yml')
    switch = next(i for i, (n, m) in enumerate(order) if m == 'ansible.builtin.include_tasks'
                  and n.startswith('Hand the primary role away'))
    assert all(i > switch for i, (_n, m) in enumerate(order) if m in RESTARTS)
    assert sorted(m for _n, m in order if m in RESTARTS) == sorted(RESTARTS)
