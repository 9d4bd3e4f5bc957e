# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A module's main() run in-process as Ansible would run it, for the unit tests of plugins/modules."""

from __future__ import annotations

import json

import pytest

from ansible.module_utils.testing import patch_module_args


def module_result(capsys, main, args):
    """The JSON result main() prints for the module arguments ARGS, with its exit code as ``_rc``."""
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exc:
            main()
    out = json.loads(capsys.readouterr().out)
    out['_rc'] = exc.value.code
    return out
