from __future__ import annotations

import os

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import private_paths as pp


def test_a_private_directory_passes(tmp_path):
    os.chmod(tmp_path, 0o700)
    assert pp.private_dir_problem(str(tmp_path)) is None


def test_a_symbolic_link_to_a_private_directory_is_not_followed(tmp_path):
    os.chmod(tmp_path, 0o700)
    link = tmp_path / 'link'
    target = tmp_path / 'target'
    target.mkdir(mode=0o700)
    os.symlink(str(target), str(link))
    assert pp.private_dir_problem(str(link)) == '%s is a symbolic link (not followed): give the directory itself' % link


@pytest.mark.parametrize('mode,owner,expected', [
    (0o770, None, 'writable by others'), (0o702, None, 'writable by others'), (0o700, 4242, 'belongs to uid 4242'),
])
def test_others_may_not_write_or_own_it(tmp_path, mode, owner, expected):
    path = tmp_path / 'd'
    path.mkdir()
    os.chmod(path, mode)
    if owner:
        os.chown(path, owner, owner)
    assert expected in pp.private_dir_problem(str(path)) and str(path) in pp.private_dir_problem(str(path))


def test_a_file_in_it_is_opened_without_following_a_link(tmp_path):
    target = tmp_path / 'target'
    target.write_text('x')
    os.symlink(str(target), str(tmp_path / 'link'))
    with pytest.raises(OSError):
        pp.open_private_file(str(tmp_path / 'link'), os.O_RDONLY)
    fd = pp.open_private_file(str(target), os.O_RDONLY)
    os.close(fd)
    os.chown(target, 4242, 4242)
    with pytest.raises(OSError, match='not a regular file of this user'):
        pp.open_private_file(str(target), os.O_RDONLY)


@pytest.mark.parametrize('mode,owner,expected', [
    (0o777, None, 'is writable by others (mode 0o777) and not sticky'), (0o755, 4242, 'belongs to uid 4242'),
])
def test_every_directory_above_is_checked(tmp_path, mode, owner, expected):
    above = tmp_path / 'above'
    private = above / 'below' / 'private'
    private.mkdir(parents=True, mode=0o700)
    os.chmod(above, mode)
    if owner is not None:
        if os.geteuid() != 0:
            pytest.fail('this test changes a directory\'s owner: run it as root (the unit tests run as root in CI)')
        os.chown(above, owner, -1)
    problem = pp.private_dir_problem(str(private))
    assert problem is not None and problem.startswith('directory %s above %s ' % (above, private)), problem
    assert expected in problem, problem


def test_a_sticky_directory_above_is_allowed_and_a_link_is_checked_where_it_leads(tmp_path):
    sticky = tmp_path / 'sticky'
    sticky.mkdir()
    os.chmod(sticky, 0o1777)
    private = sticky / 'private'
    private.mkdir(mode=0o700)
    assert pp.private_dir_problem(str(private)) is None
    shared = tmp_path / 'shared'
    (shared / 'private').mkdir(parents=True, mode=0o700)
    os.chmod(shared, 0o777)
    os.chmod(tmp_path, 0o755)
    link = tmp_path / 'link'
    os.symlink(str(shared), str(link))
    problem = pp.private_dir_problem(str(link / 'private'))
    assert problem is not None and 'directory %s above' % shared in problem, problem
