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
