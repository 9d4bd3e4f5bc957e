# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A module's main() run in-process as Ansible would run it, for the unit tests of plugins/modules."""

from __future__ import annotations

import contextlib
import json

import pytest

try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core before 2.19 reads a module's arguments from basic._ANSIBLE_ARGS
    from ansible.module_utils import basic
    from ansible.module_utils.common.text.converters import to_bytes

    @contextlib.contextmanager
    def patch_module_args(args):
        """The module arguments ARGS for the AnsibleModule created inside the block."""
        saved = basic._ANSIBLE_ARGS
        basic._ANSIBLE_ARGS = to_bytes(json.dumps({'ANSIBLE_MODULE_ARGS': args}))
        try:
            yield
        finally:
            basic._ANSIBLE_ARGS = saved


def module_result(capsys, main, args):
    """The JSON result main() prints for the module arguments ARGS, with its exit code as ``_rc``."""
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exc:
            main()
    out = json.loads(capsys.readouterr().out)
    out['_rc'] = exc.value.code
    return out
