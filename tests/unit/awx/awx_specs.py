"""Argument specs read offline: awx.awx modules, dbfleet.innodb modules, roles and playbooks."""
import importlib
import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


class _Captured(Exception):
    def __init__(self, spec, kwargs):
        super().__init__("captured")
        self.spec = spec
        self.kwargs = kwargs


def _capture(module_path, class_name):
    """The argument spec (and constraints) a module's main() builds, without running it."""
    mod = importlib.import_module(module_path)

    def fake(*args, **kwargs):
        spec = kwargs.pop("argument_spec", None) if "argument_spec" in kwargs else args[0]
        raise _Captured(dict(spec), kwargs)

    original = getattr(mod, class_name)
    setattr(mod, class_name, fake)
    try:
        mod.main()
    except _Captured as captured:
        return captured.spec, captured.kwargs, original
    finally:
        setattr(mod, class_name, original)
    raise AssertionError("%s.main() built no %s" % (module_path, class_name))


def awx_module_spec(name):
    """(argument_spec incl. the controller auth options, constraints) of awx.awx.<name>."""
    spec, kwargs, cls = _capture("ansible_collections.awx.awx.plugins.modules.%s" % name, "ControllerAPIModule")
    full = dict(cls.AUTH_ARGSPEC)
    full.update(spec)
    return full, kwargs


def dbfleet_module_spec(name):
    spec, kwargs, _cls = _capture("ansible_collections.dbfleet.innodb.plugins.modules.%s" % name, "AnsibleModule")
    return spec, kwargs


def role_spec(role):
    with open(os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)["argument_specs"]["main"]["options"]


def playbook_spec(playbook):
    """The spec a playbook checks its inputs against, by variable name (the lookup dbfleet.innodb.playbook_inputs's
    data, plugins/plugin_utils/playbook_inputs.py)."""
    from ansible_collections.dbfleet.innodb.plugins.plugin_utils import playbook_inputs
    return playbook_inputs.argument_spec(playbook_inputs.PLAYBOOKS[os.path.splitext(playbook)[0]])


def source_option(source):
    """(kind, name, option, option spec) for a survey source "module:<m>:<opt>" / "role:..." / "playbook:..."."""
    kind, name, option = source.split(":")
    if kind == "module":
        spec = dbfleet_module_spec(name)[0]
    elif kind == "role":
        spec = role_spec(name)
    elif kind == "playbook":
        spec = playbook_spec(name)
    else:
        raise AssertionError("unknown survey source kind %r" % kind)
    assert option in spec, "%s has no option %s" % (source, option)
    return kind, name, option, spec[option]
