"""The YAML-aware copy check (tests/yaml_copies.py): what it counts as a copy, what it leaves alone, and
that the collection's Ansible YAML has none (make test runs this file with the units)."""
import os
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'tests'))
import yaml_copies  # noqa: E402  pylint: disable=wrong-import-position


def _write(root, path, text):
    full = root / path
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_text(textwrap.dedent(text).lstrip('\n'))


# Four values: module argument, when, register, loop.
SET_AND_LOOP = '''
- name: {name}
  # a comment the loader drops
  ansible.builtin.set_fact:
    {var}: "{{{{ item }}}}"
  when: {when}
  register: __r
  loop: [1, 2]
'''


def test_the_collection_ansible_yaml_has_no_copies():
    copies = yaml_copies.report(ROOT)
    assert not copies, 'copies in the Ansible YAML (tests/yaml_copies.py):\n' + '\n'.join(copies)


def test_every_kind_of_ansible_yaml_is_read():
    checked = yaml_copies.files(ROOT)
    for path in ('roles/scaffold/tasks/apply.yml', 'roles/restart/tasks/one_host.yml', 'playbooks/site.yml',
                 'playbooks/tasks/topology_preflight.yml', 'awx/playbooks/preflight.yml',
                 'molecule/memcached/converge.yml'):
        assert path in checked
    assert not [path for path in checked if path.endswith('molecule.yml')]
    # Tasks of plays, of task files and of blocks' block/rescue lists are all seen.
    tasks = [task.where for items in yaml_copies.collect(ROOT) for task in items]
    assert len(tasks) > 200
    assert any(where.startswith('roles/restart/tasks/one_host.yml:') for where in tasks)


def test_a_task_in_two_places_is_a_copy_whatever_its_name_and_comments(tmp_path):
    _write(tmp_path, 'roles/a/tasks/main.yml', '---' + SET_AND_LOOP.format(name='One', var='x', when='true'))
    _write(tmp_path, 'playbooks/tasks/b.yml', '''
        ---
        - name: Something first
          ansible.builtin.debug:
            msg: hello
        - name: Other words, same task
          ansible.builtin.set_fact: {x: "{{ item }}"}
          loop:
            - 1
            - 2
          register: __r
          when: true
        ''')
    assert yaml_copies.report(str(tmp_path)) == [
        'same task (5 values) in 2 places: playbooks/tasks/b.yml:5, roles/a/tasks/main.yml:2']


def test_a_different_when_or_argument_is_no_copy(tmp_path):
    _write(tmp_path, 'roles/a/tasks/main.yml', '---' + SET_AND_LOOP.format(name='One', var='x', when='true'))
    _write(tmp_path, 'roles/b/tasks/main.yml', '---' + SET_AND_LOOP.format(name='One', var='x', when='false'))
    assert yaml_copies.report(str(tmp_path)) == []


def test_small_tasks_and_scaffold_includes_are_meant_to_be_the_same(tmp_path):
    include = '''
        ---
        - name: Apply
          ansible.builtin.include_role:
            name: dbfleet.innodb.scaffold
            tasks_from: apply
          vars:
            scaffold_role: {role}{extra}
        - name: Restart
          ansible.builtin.include_role:
            name: dbfleet.innodb.scaffold
            tasks_from: restart
          vars:
            scaffold_role: {role}
        - name: Flush
          ansible.builtin.meta: flush_handlers
        '''
    for role in ('a', 'b', 'c'):
        _write(tmp_path, 'roles/%s/tasks/main.yml' % role, include.format(role=role, extra=''))
    assert yaml_copies.report(str(tmp_path)) == []
    # The same three-value task with one value more is a copy.
    extra = '\n            scaffold_restart_pending: true'
    _write(tmp_path, 'roles/a/tasks/main.yml', include.format(role='a', extra=extra))
    _write(tmp_path, 'roles/b/tasks/main.yml', include.format(role='a', extra=extra))
    assert yaml_copies.report(str(tmp_path)) == [
        'same task (4 values) in 2 places: roles/a/tasks/main.yml:2, roles/b/tasks/main.yml:2']


RUN = '''
- name: Read the {thing}
  dbfleet.innodb.verify:
    settings: "{{{{ {var}_settings }}}}"
    fallback_option_files: "{{{{ [{var}_file] }}}}"
  register: __{var}_verify
  changed_when: false
  when: not ansible_check_mode
- name: Check the {thing}
  ansible.builtin.assert:
    that:
      - __{var}_verify.ok
      - __{var}_verify.summary.drift == {count}
    fail_msg: "{thing} is not in place"
    quiet: true
  when: not ansible_check_mode
- name: Report the {thing}
  ansible.builtin.debug:
    msg: "{{{{ __{var}_verify.summary }}}}"
    verbosity: 1
'''


def test_a_run_of_tasks_repeated_with_other_names_and_variables_is_a_shape_copy(tmp_path):
    _write(tmp_path, 'roles/a/tasks/main.yml', '---' + RUN.format(thing='ssd', var='a', count=0))
    play = textwrap.dedent('''
        ---
        - name: A play
          hosts: all
          tasks:
            - name: Guarded
              block:
                - name: First something else
                  ansible.builtin.ping:
        ''')
    _write(tmp_path, 'playbooks/b.yml', play + textwrap.indent(RUN.format(thing='hdd', var='b', count=1).lstrip('\n'), ' ' * 8))
    assert yaml_copies.report(str(tmp_path)) == [
        'same shape, 3 tasks: playbooks/b.yml:9-24 and roles/a/tasks/main.yml:2-17']


def test_a_run_below_the_floor_is_an_idiom_not_a_copy(tmp_path):
    small = '''
        ---
        - name: Run {what}
          ansible.builtin.command:
            argv: [{what}]
          register: __{what}
          changed_when: false
        - name: Show {what}
          ansible.builtin.debug:
            var: __{what}.stdout_lines
        '''
    _write(tmp_path, 'playbooks/a.yml', small.format(what='a'))
    _write(tmp_path, 'playbooks/b.yml', small.format(what='b'))
    assert yaml_copies.report(str(tmp_path)) == []


def test_one_big_task_copied_with_its_variables_renamed_is_a_shape_copy(tmp_path):
    big = '''
        ---
        - name: Probe
          dbfleet.innodb.memcached_probe:
            host: "{{{{ {v}.host }}}}"
            port: "{{{{ {v}.port }}}}"
            timeout: "{{{{ {v}.timeout }}}}"
            wait: 10
            container: "{{{{ {v}.container }}}}"
            delimiter: "{{{{ {v}.delimiter }}}}"
            expected: "{{{{ {v}.expected }}}}"
            stats: true
            check_write_refused: false
          register: __{v}
          until: __{v} is succeeded
          retries: 3
        '''
    _write(tmp_path, 'roles/a/tasks/main.yml', big.format(v='a'))
    _write(tmp_path, 'roles/b/tasks/main.yml', big.format(v='b'))
    assert yaml_copies.report(str(tmp_path)) == [
        'same shape, 1 task: roles/a/tasks/main.yml:2 and roles/b/tasks/main.yml:2']
    assert yaml_copies.main([str(tmp_path)]) == 1


def test_a_yaml_alias_is_written_once(tmp_path):
    _write(tmp_path, 'playbooks/a.yml', '''
        ---
        - name: First
          hosts: all
          tasks:
            - name: Drop on a replica
              dbfleet.innodb.drop_tables: &drop
                tables: "{{ t }}"
                confirm: true
                retries: 3
                window: "{{ w }}"
                timezone: UTC
              when: role == 'replica'
        - name: Then
          hosts: all
          tasks:
            - name: Drop on a primary
              dbfleet.innodb.drop_tables: *drop
              when: role == 'primary'
            - name: With a merge
              dbfleet.innodb.drop_tables:
                <<: *drop
                retries: 5
              when: role == 'primary'
        ''')
    assert yaml_copies.report(str(tmp_path)) == []
    assert yaml_copies.main([str(tmp_path)]) == 0
