"""Job templates and surveys (awx/job_templates.yml) and the controller playbook (awx/controller.yml).

Each survey question must agree with the argument spec its answer lands in (variable, type, choices,
default, range), and every awx.awx task of awx/controller.yml, rendered for each job template, must pass
that awx.awx module's own argument spec.
"""
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import awx_specs  # noqa: E402  pylint: disable=wrong-import-position

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator  # noqa: E402
from ansible.parsing.dataloader import DataLoader  # noqa: E402
from ansible.template import Templar  # noqa: E402

try:  # ansible-core 2.19+: templates only data marked trusted; `{{ omit }}` raises
    from ansible.errors import AnsibleValueOmittedError  # noqa: E402
    TRUSTED = {"trusted_as_template": True}
    OMIT = {}
except ImportError:  # before 2.19: every string is a template; `{{ omit }}` gives a placeholder string
    class AnsibleValueOmittedError(Exception):
        """Never raised: the placeholder is compared instead."""
    TRUSTED = {}
    OMIT = {"omit": "__omit_place_holder__dbfleet"}

ROOT = awx_specs.ROOT
SURVEY_TYPES = {"text", "textarea", "password", "integer", "float", "multiplechoice", "multiselect"}


def _templates():
    with open(os.path.join(ROOT, "awx", "job_templates.yml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)["dbfleet_awx_job_templates"]


TEMPLATES = _templates()
QUESTIONS = [(jt, q) for jt in TEMPLATES for q in (jt["survey_spec"] or {}).get("spec", [])]


def _qid(param):
    return param[1]["variable"] if isinstance(param, tuple) else None


def _validate(option, option_spec, value):
    """Errors of value for one option under option_spec (ansible's own type conversion)."""
    result = ArgumentSpecValidator({option: option_spec}).validate({option: value})
    return [str(e) for e in result.errors], result.validated_parameters.get(option)


# ------------------------------------------------------------------ AWX survey format
@pytest.mark.parametrize("jt", TEMPLATES, ids=[jt["name"] for jt in TEMPLATES])
def test_survey_follows_awx_format(jt):
    survey = jt["survey_spec"]
    if not survey:
        return
    assert set(survey) == {"name", "description", "spec"}
    names = [q["variable"] for q in survey["spec"]]
    assert len(names) == len(set(names)), "duplicate survey variables in %s" % jt["name"]
    for q in survey["spec"]:
        assert {"question_name", "variable", "type", "required"} <= set(q), q
        assert q["type"] in SURVEY_TYPES, q
        assert re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", q["variable"]), q
        if q["type"] in ("multiplechoice", "multiselect"):
            assert isinstance(q["choices"], list) and q["choices"], q
            defaults = q["default"].split("\n") if q["type"] == "multiselect" else [q["default"]]
            assert set(d for d in defaults if d) <= set(q["choices"]), q
        else:
            assert "choices" not in q, q
            assert isinstance(q["min"], int) and isinstance(q["max"], int) and q["min"] <= q["max"], q
            if q["type"] in ("integer", "float"):
                assert q["min"] <= q["default"] <= q["max"], q
            elif q["default"] != "":
                assert q["min"] <= len(q["default"]) <= q["max"], q


@pytest.mark.parametrize("jt", TEMPLATES, ids=[jt["name"] for jt in TEMPLATES])
def test_every_question_has_a_source_and_no_question_asks_for_the_login(jt):
    variables = {q["variable"] for q in (jt["survey_spec"] or {}).get("spec", [])}
    assert variables == set(jt["survey_sources"]), jt["name"]
    for q in (jt["survey_spec"] or {}).get("spec", []):
        assert q["type"] != "password" and not q["variable"].startswith("dbfleet_login_"), \
            "the database login comes from the credential, not a survey: %s" % q["variable"]


# ------------------------------------------------------------------ survey vs argument specs
@pytest.mark.parametrize("jt,q", QUESTIONS, ids=[q["variable"] for _jt, q in QUESTIONS])
def test_question_agrees_with_the_argument_spec(jt, q):
    kind, name, option, spec = awx_specs.source_option(jt["survey_sources"][q["variable"]])
    where = "%s (%s %s option %s)" % (q["variable"], kind, name, option)
    stype, elements = spec.get("type", "str"), spec.get("elements")
    choices = [str(c) for c in spec.get("choices") or []]
    allowed = {
        "text": stype in ("str", "path") and not choices,
        "textarea": stype == "str" or (stype == "list" and elements == "str"),
        "password": stype == "str" and spec.get("no_log"),
        "integer": stype == "int",
        "float": stype == "float",
        "multiplechoice": (stype == "str" and bool(choices)) or stype == "bool",
        "multiselect": stype == "list" and bool(choices),
    }
    assert allowed[q["type"]], "%s: survey type %s does not fit type %s" % (where, q["type"], stype)
    if q["type"] in ("multiplechoice", "multiselect"):
        wanted = ["false", "true"] if stype == "bool" else choices
        assert sorted(q["choices"]) == sorted(wanted), "%s: choices %s, spec %s" % (where, q["choices"], wanted)
    default = q.get("default")
    if q["type"] == "textarea" and stype == "list":
        default = [line for line in default.split("\n") if line.strip()]
    elif q["type"] == "multiselect":
        default = [d for d in default.split("\n") if d]
    if default not in ("", []):
        errors, value = _validate(option, spec, default)
        assert not errors, "%s: default %r: %s" % (where, default, errors)
        if "default" in spec:
            assert value == spec["default"], "%s: survey default %r, spec default %r" % (where, value, spec["default"])
    if q["type"] in ("integer", "float"):
        assert q["min"] >= 0, "%s: negative minimum" % where
        if kind == "module":
            for value in (q["min"], q["max"]):
                msg = _module_input_error(name, option, value)
                assert option not in msg, "%s: the module refuses %s: %s" % (where, value, msg)


def _module_input_error(module, option, value):
    """The message dbfleet.innodb.<module> fails with for option=value (no server: login to a closed port)."""
    spec = awx_specs.dbfleet_module_spec(module)[0]
    args = {name: (["db.t"] if s.get("type") == "list" else "x") for name, s in spec.items() if s.get("required")}
    args.update({option: value, "login_host": "127.0.0.1", "login_port": 9, "connect_timeout": 2})
    args = {k: v for k, v in args.items() if k in spec}
    proc = subprocess.run([sys.executable, "-m", "ansible_collections.dbfleet.innodb.plugins.modules." + module],
                          input=json.dumps({"ANSIBLE_MODULE_ARGS": args}), capture_output=True, text=True,
                          timeout=60, check=False, env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, ".collections")))
    return json.loads(proc.stdout.strip().splitlines()[-1]).get("msg", "")


def test_the_module_range_probe_sees_an_out_of_range_value():
    # The probe above is only worth something if it sees the module's own range check.
    assert "sample_seconds" in _module_input_error("ahi_advisor", "sample_seconds", 3601)
    assert "sample_seconds" not in _module_input_error("ahi_advisor", "sample_seconds", 3600)


# ------------------------------------------------------------------ job template rules
def _by_playbook(playbook):
    (jt,) = [jt for jt in TEMPLATES if os.path.basename(jt["playbook"]) == os.path.basename(playbook)]
    return jt


def test_rolling_restart_is_never_sliced_nor_concurrent():
    jt = _by_playbook("playbooks/rolling_restart.yml")
    assert jt["job_slice_count"] == 1 and not jt["allow_simultaneous"]


def test_converge_offers_a_check_run_with_diff():
    jt = _by_playbook("playbooks/site.yml")
    assert jt["ask_job_type_on_launch"] and jt["diff_mode"]


def test_every_template_runs_the_controller_checks_first_then_the_collections_playbook():
    for jt in TEMPLATES:
        assert jt["playbook"].startswith("awx/playbooks/"), jt["playbook"]
        with open(os.path.join(ROOT, jt["playbook"]), encoding="utf-8") as handle:
            plays = yaml.safe_load(handle)
        imports = [p["ansible.builtin.import_playbook"] for p in plays]
        name = os.path.splitext(os.path.basename(jt["playbook"]))[0]
        assert imports == ["preflight.yml", "dbfleet.innodb." + name], imports
        assert os.path.isfile(os.path.join(ROOT, "playbooks", name + ".yml"))


# ------------------------------------------------------------------ awx.awx tasks vs awx.awx argument specs
CONTROLLER_VARS = {"dbfleet_awx_login_user": "dbfleet", "dbfleet_awx_login_password": "secret",
                   "dbfleet_awx_inventory_source": "inventories/production/hosts.yml",
                   "dbfleet_awx_machine_credential": "fleet ssh"}


def _controller_tasks():
    loader = DataLoader()
    plays = loader.load_from_file(os.path.join(ROOT, "awx", "controller.yml"), **TRUSTED)
    (play,) = plays
    variables = dict(play.get("vars") or {})
    for vars_file in play.get("vars_files", []):
        variables.update(loader.load_from_file(os.path.join(ROOT, "awx", vars_file), **TRUSTED))
    variables.update(CONTROLLER_VARS, **OMIT)
    return play["tasks"], variables


def _render(args, variables):
    templar = Templar(loader=DataLoader(), variables=variables)
    out = {}
    for key, value in args.items():
        try:
            value = templar.template(value)
        except AnsibleValueOmittedError:
            continue
        if not OMIT or value != OMIT["omit"]:
            out[key] = value
    return out


def test_controller_playbook_passes_the_awx_modules_argument_specs():
    tasks, variables = _controller_tasks()
    checked = []
    for task in tasks:
        (module,) = [k for k in task if k.startswith("awx.awx.")]
        spec, constraints = awx_specs.awx_module_spec(module.split(".")[-1])
        items = Templar(loader=DataLoader(), variables=variables).template(task["loop"]) if "loop" in task else [None]
        for item in items:
            args = _render(task[module], dict(variables, item=item))
            result = ArgumentSpecValidator(spec, **{k: v for k, v in constraints.items() if k.startswith("required_")
                                                    or k == "mutually_exclusive"}).validate(args)
            assert not result.error_messages, "%s %s: %s" % (module, item and item["name"], result.error_messages)
            checked.append(module)
    assert checked.count("awx.awx.job_template") == len(TEMPLATES)
    assert {"awx.awx.credential_type", "awx.awx.credential", "awx.awx.project", "awx.awx.inventory"} <= set(checked)


def test_validation_catches_a_wrong_argument():
    spec, _constraints = awx_specs.awx_module_spec("job_template")
    assert ArgumentSpecValidator(spec).validate({"name": "x", "job_slice_count": "two"}).error_messages
    assert ArgumentSpecValidator(spec).validate({"name": "x", "survey": {}}).error_messages


def test_credential_type_injects_the_collections_login_variables():
    from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import LOGIN_HOST_VARIABLES
    tasks, _variables = _controller_tasks()
    (ct,) = [t["awx.awx.credential_type"] for t in tasks if "awx.awx.credential_type" in t]
    fields = {f["id"]: f for f in ct["inputs"]["fields"]}
    injected = ct["injectors"]["extra_vars"]
    login_vars = {variable for _option, variable in LOGIN_HOST_VARIABLES}
    assert set(injected) <= login_vars and {"dbfleet_login_user", "dbfleet_login_password"} <= set(injected)
    for variable, template in injected.items():
        (field,) = re.findall(r"\{\{\s*(\w+)\s*\}\}", str(template))
        assert field in fields, "%s injects unknown field %s" % (variable, field)
    assert fields["login_password"].get("secret") is True
    (cred,) = [t for t in tasks if "awx.awx.credential" in t]
    assert cred.get("no_log") is True


def test_no_job_template_lets_a_launch_acknowledge_a_security_setting():
    """settings_allow_security_settings (the settings role's acknowledgement of init_file, skip_grant_tables, ...)
    is decided where the run is (inventory, playbook), never at launch: no survey asks it, no template sets it, and
    no template takes extra variables at launch (awx.awx.job_template's ask_variables_on_launch, default false, is
    never passed by awx/controller.yml). The settings survey's map is checked by the role like any other."""
    for jt in TEMPLATES:
        asked = [q["variable"] for q in (jt["survey_spec"] or {}).get("spec", [])]
        assert "settings_allow_security_settings" not in asked + list(jt["extra_vars"] or {}), jt["name"]
        assert not jt.get("ask_variables_on_launch"), jt["name"]
    with open(os.path.join(ROOT, "awx", "controller.yml"), encoding="utf-8") as handle:
        assert "ask_variables_on_launch" not in handle.read()
    settings = _by_playbook("awx/playbooks/settings.yml")
    assert sorted(q["variable"] for q in settings["survey_spec"]["spec"]) == ["dbfleet_settings_text", "settings_restart"]
