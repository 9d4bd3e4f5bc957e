"""Many module calls in one ansible-playbook run, their results read by several tests.

Ansible's fixed cost is per ansible / ansible-playbook process (a few seconds of CPU), a module call inside a
run costs a fraction of it: a test file whose cases each ran `ansible -m` runs one playbook instead (all its hosts at
once), each case a task (`ignore_errors` where a failure is what the case expects, `check_mode: true` where it is
check mode), and reads each task's result by task name and host (the task_results callback's JSON lines). Between
the calls the playbook reads or sets a server with the tests' own connection (lookup `lab_sql`, lookup_plugins/
beside this package's directory), so a test still sees what each call left."""
import json
import os
import subprocess

from dbfleet_testing.lab import REPO
from dbfleet_testing.runs import BIN, CALLBACKS, env, playbook_proc

LOOKUPS = os.path.join(os.path.dirname(CALLBACKS), 'lookup_plugins')


class TaskRun:
    """One playbook run: its process (returncode, stdout, stderr), every task result by (task name, host) and the
    time each came (epoch seconds)."""

    def __init__(self, proc, lines):
        self.proc = proc
        self.output = proc.stdout + proc.stderr
        self.results = {}
        self.times = {}
        for line in lines:
            self.results[(line['task'], line['host'])] = dict(line['result'], failed=line['status'] == 'failed')
            self.times[(line['task'], line['host'])] = line['time']

    def __call__(self, task, host):
        """The result of task on host (result['failed']: whether the task failed); fails naming what ran when the
        task has no result there."""
        try:
            return self.results[(task, host)]
        except KeyError:
            raise AssertionError('no result of %r on %s; the run:\n%s' % (task, host, self.output[-6000:])) from None

    def time(self, task, host):
        """When the result of task on host came."""
        self(task, host)
        return self.times[(task, host)]


def _written(book, directory):
    """(playbook path, results path) of the playbook text book written to directory, no results yet."""
    path = os.path.join(str(directory), 'play.yml')
    results = os.path.join(str(directory), 'results.jsonl')
    with open(path, 'w', encoding='utf-8') as handle:
        handle.write(book)
    if os.path.exists(results):
        os.unlink(results)
    return path, results


def _environment(results):
    """The run's environment on top of dbfleet_testing.runs.env(): the task_results callback, the lookups."""
    return dict(ANSIBLE_CALLBACK_PLUGINS=CALLBACKS, ANSIBLE_CALLBACKS_ENABLED='task_results',
                DBFLEET_TASK_RESULTS_FILE=results, ANSIBLE_LOOKUP_PLUGINS=LOOKUPS,
                ANSIBLE_CALLBACK_RESULT_FORMAT='json', ANSIBLE_DEPRECATION_WARNINGS='0')


def _lines(results):
    if not os.path.exists(results):
        return []
    with open(results, encoding='utf-8') as handle:
        return [json.loads(line) for line in handle if line.strip()]


def task_run(inventory, book, directory, extra=None, limit=None, verbosity=0, timeout=900):
    """Run the playbook text book (written to directory) with extra vars; its TaskRun."""
    path, results = _written(book, directory)
    proc = playbook_proc(inventory, path, extra, limit=limit, timeout=timeout,
                         args=['-' + 'v' * verbosity] if verbosity else [], env_extra=_environment(results))
    return TaskRun(proc, _lines(results))


def start_task_run(inventory, book, directory, extra=None):
    """task_run() in the background, for a test that acts on the run while it goes (signals a module process):
    (the Popen of ansible-playbook, finish); finish(timeout) waits for the run and returns its TaskRun."""
    path, results = _written(book, directory)
    cmd = [os.path.join(BIN, 'ansible-playbook'), '-i', str(inventory), path] + (
        ['-e', json.dumps(extra)] if extra else [])
    proc = subprocess.Popen(cmd, env=env(**_environment(results)), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, cwd=REPO)

    def finish(timeout=300):
        out, _err = proc.communicate(timeout=timeout)
        return TaskRun(subprocess.CompletedProcess(cmd, proc.returncode, out, ''), _lines(results))
    return proc, finish
