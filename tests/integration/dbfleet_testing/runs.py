"""ansible and ansible-playbook run the way a user runs them, from the repository, and readers of their output."""
import json
import os
import re
import subprocess
import tempfile

from dbfleet_testing.lab import REPO

BIN = os.path.join(REPO, '.venv', 'bin')
PYTHON = os.path.join(BIN, 'python')
COLLECTIONS = os.path.join(REPO, '.collections')
CALLBACKS = os.path.join(REPO, 'tests', 'integration', 'callback_plugins')
PLAYBOOKS = os.path.join(REPO, 'playbooks')
# Ad-hoc results as JSON ("host | SUCCESS => {...}", read by adhoc_result), without deprecation warnings in between.
JSON_RESULTS = dict(ANSIBLE_CALLBACK_RESULT_FORMAT='json', ANSIBLE_DEPRECATION_WARNINGS='0')
# Playbook output as the default callback prints it with YAML results, no warnings in between (read by the drop and
# convert tests: the playbooks' messages folded over lines; flat() unfolds them).
YAML_RESULTS = dict(ANSIBLE_STDOUT_CALLBACK='ansible.builtin.default', ANSIBLE_LOAD_CALLBACK_PLUGINS='0',
                    ANSIBLE_CALLBACK_RESULT_FORMAT='yaml', ANSIBLE_DEPRECATION_WARNINGS='0',
                    ANSIBLE_LOCALHOST_WARNING='0', ANSIBLE_INVENTORY_UNPARSED_WARNING='0')

# A module's result as the minimal callback prints it ("localhost | SUCCESS => {...}"), read by local_module.
MINIMAL_JSON = dict(ANSIBLE_LOAD_CALLBACK_PLUGINS='1', ANSIBLE_STDOUT_CALLBACK='ansible.builtin.minimal',
                    ANSIBLE_CALLBACK_RESULT_FORMAT='json', ANSIBLE_DEPRECATION_WARNINGS='0',
                    ANSIBLE_LOCALHOST_WARNING='0', ANSIBLE_INVENTORY_UNPARSED_WARNING='0')


def env(**extra):
    """The environment of every ansible command of the tests: this repository's ansible.cfg, collections and virtualenv,
    no colours; extra on top."""
    environ = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, 'ansible.cfg'), ANSIBLE_COLLECTIONS_PATH=COLLECTIONS,
                   ANSIBLE_NOCOLOR='1', ANSIBLE_FORCE_COLOR='0', PATH=BIN + os.pathsep + os.environ.get('PATH', ''))
    environ.update(extra)
    return environ


def ansible(*argv, timeout=300, env_extra=None):
    """(rc, stdout + stderr) of one command of the virtualenv (argv[0]: 'ansible', 'ansible-playbook'...), run from
    the repository, results as JSON (JSON_RESULTS; env_extra on top)."""
    proc = subprocess.run([os.path.join(BIN, argv[0])] + [str(a) for a in argv[1:]], capture_output=True, text=True,
                          env=env(**dict(JSON_RESULTS, **(env_extra or {}))), cwd=REPO, timeout=timeout, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def playbook_proc(inventory, path, extra=None, check=False, diff=False, limit=None, forks=None, timeout=600,
                  env_extra=None, args=()):
    """The CompletedProcess of ansible-playbook: path is a playbook of playbooks/ by name, or a path; inventory one
    path or a list of them; extra the extra vars (JSON)."""
    cmd = [os.path.join(BIN, 'ansible-playbook')]
    for one in ([inventory] if isinstance(inventory, (str, os.PathLike)) else inventory):
        cmd += ['-i', str(one)]
    if forks:
        cmd += ['-f', str(forks)]
    if limit:
        cmd += ['--limit', limit]
    cmd.append(str(path) if os.path.isabs(str(path)) else os.path.join(PLAYBOOKS, str(path)))
    if extra:
        cmd += ['-e', json.dumps(extra)]
    cmd += (['--check'] if check else []) + (['--diff'] if diff else []) + list(args)
    return subprocess.run(cmd, env=env(**(env_extra or {})), capture_output=True, text=True, timeout=timeout, cwd=REPO,
                          check=False)


def playbook(inventory, path, extra=None, **kwargs):
    """(rc, stdout + stderr) of ansible-playbook (arguments as playbook_proc)."""
    proc = playbook_proc(inventory, path, extra, **kwargs)
    return proc.returncode, proc.stdout + proc.stderr


def recap(output):
    """{host: {ok, changed, unreachable, failed, skipped, rescued, ignored}} from the PLAY RECAP lines."""
    out = {}
    for m in re.finditer(r'^(\S+)\s+:\s+((?:\w+=\d+\s*)+)$', output, re.M):
        out[m.group(1)] = dict((k, int(v)) for k, v in re.findall(r'(\w+)=(\d+)', m.group(2)))
    return out


def host_failure(output, host):
    """What the default callback printed for host's first failed task ("fatal: [host]: FAILED! =>" and the result's
    indented lines below it), on one line; '' when host failed nowhere. One run's output names several hosts' failures:
    this one's alone."""
    lines = output.splitlines()
    head = re.compile(r'^fatal: \[%s(?: -> [^\]]+)?\]: FAILED!' % re.escape(host))
    for i, line in enumerate(lines):
        if head.match(line):
            return flat('\n'.join(_result_block(lines, i)))
    return ''


def host_output(output, task, host):
    """What the default callback printed for host under each task named task (its "ok: [host] =>" / "fatal: [host]..."
    line and the result's indented lines below it), on one line; '' when it printed nothing there. One run over several
    hosts: this one's alone."""
    lines = output.splitlines()
    head = re.compile(r'^\w+: \[%s(?: -> [^\]]+)?\]' % re.escape(host))
    blocks, current = [], None
    for i, line in enumerate(lines):
        if line.startswith('TASK ['):
            current = line[len('TASK ['):line.rindex(']')]
        elif current == task and head.match(line):
            blocks.append(flat('\n'.join(_result_block(lines, i))))
    return ' '.join(blocks)


def _result_block(lines, i):
    """lines[i] and the indented lines below it."""
    block = [lines[i]]
    for more in lines[i + 1:]:
        if not more[:1].isspace():
            break
        block.append(more)
    return block


def flat(text):
    """Output with the callback's line wrapping undone."""
    return ' '.join(text.split())


def adhoc_result(host, out):
    """The JSON result the default callback prints for host ("host | SUCCESS => {...}")."""
    marker = out.index('%s | ' % host)
    start = out.index('{', marker)
    return json.JSONDecoder().raw_decode(out[start:])[0]


def local_module_cmd(name, args, check=False):
    """The ansible command that runs module name with args on localhost (local connection, this virtualenv's Python):
    a real module process, as Ansible runs it."""
    return [os.path.join(BIN, 'ansible'), 'localhost', '-i', 'localhost,', '-c', 'local',
            '-e', 'ansible_python_interpreter=%s' % PYTHON, '-m', name, '-a', json.dumps(args)] + (
                ['--check'] if check else [])


def local_module(name, args, check=False, timeout=180):
    """(rc, result) of module name run by local_module_cmd; fails showing the output when it printed no result."""
    proc = subprocess.run(local_module_cmd(name, args, check), capture_output=True, text=True, env=env(**MINIMAL_JSON),
                          cwd=REPO, timeout=timeout, check=False)
    return proc.returncode, module_result(proc.stdout, proc.stderr)


def module_process(name, args, check=False, timeout=180):
    """(rc, result) of module name (dbfleet.innodb.<module>) run as Ansible runs it on a host: its own Python process of
    this virtualenv, given its arguments as ANSIBLE_MODULE_ARGS (check mode as `_ansible_check_mode`), its result the
    JSON it prints. The module's code and its SQL are the same as under local_module, without the ansible command
    around it (about a fifth of the CPU); fails showing the output when it printed no result."""
    proc = module_process_start(name, args, check)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return proc.returncode, module_process_result(name, out, err)


def module_process_start(name, args, check=False):
    """module_process's process, started and given its arguments, for a test that signals it while it runs (its pid is
    the module's): a Popen with stdout and stderr as pipes; module_process_result reads what it printed."""
    payload = dict(args, _ansible_check_mode=check)
    with tempfile.TemporaryFile() as stdin:
        stdin.write(json.dumps({'ANSIBLE_MODULE_ARGS': payload}).encode('utf-8'))
        stdin.seek(0)
        return subprocess.Popen([PYTHON, '-m', 'ansible_collections.%s.plugins.modules.%s' % tuple(name.rsplit('.', 1))],
                                stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ, PYTHONPATH=COLLECTIONS), cwd='/')


def module_process_result(name, stdout, stderr=''):
    """The result module name's own process printed (module_process_start); fails showing the output when there is
    none."""
    try:
        return json.loads(stdout)
    except ValueError:
        raise AssertionError('no JSON from %s:\n%s\n%s' % (name, stdout, stderr)) from None


def module_result(stdout, stderr=''):
    """The result the minimal callback printed (MINIMAL_JSON); fails showing the output when there is none."""
    try:
        return json.loads(stdout[stdout.index('=> {') + 3:])
    except ValueError:
        raise AssertionError('no JSON from ansible:\n%s\n%s' % (stdout, stderr)) from None


def adhoc(host, inventory, module, args, check=False, verbosity=0, timeout=300):
    """(result, CompletedProcess) of module run with args on host by `ansible -o` (one line per host); result['failed']
    says whether the host's line is FAILED."""
    cmd = [os.path.join(BIN, 'ansible'), host, '-i', inventory, '-o', '-m', module, '-a', json.dumps(args)]
    cmd += (['--check'] if check else []) + (['-' + 'v' * verbosity] if verbosity else [])
    proc = subprocess.run(cmd, env=env(ANSIBLE_CALLBACK_RESULT_FORMAT='json'), capture_output=True, text=True,
                          timeout=timeout, cwd=REPO, check=False)
    line = [x for x in proc.stdout.splitlines() if x.startswith(host + ' | ')][-1]
    result = json.loads(line[line.index('{'):])
    result['failed'] = line.split(' | ')[1].startswith('FAILED')
    return result, proc


def descendants(pid):
    """The process ids under pid (its children, theirs, ...; not pid itself), read from /proc: the processes of an
    ansible run (its forks, the module's Python)."""
    children = {}
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry, encoding='utf-8') as handle:
                ppid = int(handle.read().rsplit(')', 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out
