"""What a server binary says of itself: ``mysqld --no-defaults --user=root --verbose --help``.

Two readings of that text, used by lab/read_flavor_data.py (the version facts of
plugins/module_utils/versions/flavor_data/) and tests/integration/local/flavors/test_version_truth.py:

- ``compiled_defaults()``: the table after the dashes, ``{variable: default}`` (the compiled-in
  default; a default decided at start-up from the machine is not in it: MySQL 9.7 prints
  innodb_flush_method fsync and runs O_DIRECT);
- ``option_names()``: every option the binary accepts (``--name`` at the start of a line of the
  options part, and every name of the table), in the ``_`` spelling: what a server refuses to start
  on is a name outside this set (unless written ``loose-``).
"""
import re
import subprocess

_TABLE_RULE = re.compile(r"^-{20,} -+$")
_OPTION_LINE = re.compile(r"^\s{1,4}(?:-[A-Za-z#?], )?--([A-Za-z0-9][A-Za-z0-9_-]*)")


def help_text(command, timeout=120, plugin_dir=None, plugins=None):
    """The output of COMMAND --no-defaults --user=root --verbose --help (command: the argv of the binary).
    plugins ({name: library}) are loaded for the listing (--plugin-load from plugin_dir, the server's plugin_dir), so
    that the variables a plugin brings are listed with their compiled defaults."""
    extra = []
    if plugins:
        extra = ["--plugin-dir=%s" % plugin_dir,
                 "--plugin-load=%s" % ";".join("%s=%s" % item for item in sorted(plugins.items()))]
    proc = subprocess.run(list(command) + ["--no-defaults", "--user=root"] + extra + ["--verbose", "--help"],
                          capture_output=True, text=True, timeout=timeout, check=False)
    if not any(_TABLE_RULE.match(line) for line in proc.stdout.splitlines()):
        raise AssertionError("no variables table in the output of %s --no-defaults --verbose --help (exit %d):\n%s"
                             % (" ".join(list(command) + extra), proc.returncode, (proc.stdout + proc.stderr)[-2000:]))
    return proc.stdout


def _split(text):
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if _TABLE_RULE.match(line))
    return lines[:start], lines[start + 1:]


def defaults_from_text(text):
    """{variable: default or None} from the table of a --verbose --help text."""
    defaults = {}
    for line in _split(text)[1]:
        if not line.strip():
            break
        name, _sep, value = line.partition(" ")
        value = value.strip()
        defaults[name.replace("-", "_")] = None if value == "(No default value)" else value
    return defaults


def options_from_text(text):
    """The option names (lower case, '_' spelling) a --verbose --help text lists."""
    head, _table = _split(text)
    names = set(defaults_from_text(text))
    for line in head:
        match = _OPTION_LINE.match(line)
        if match:
            names.add(match.group(1).lower().replace("-", "_"))
    return names


def compiled_defaults(command, plugin_dir=None, plugins=None):
    """{variable: default} from `mysqld --no-defaults --verbose --help` (the table after the dashes): the compiled
    defaults, whatever the server's option files, the roles' drop-ins or mysqld-auto.cnf (SET PERSIST) say, as
    --no-defaults reads none of them; with plugins ({name: library} from plugin_dir), their variables too."""
    return defaults_from_text(help_text(command, plugin_dir=plugin_dir, plugins=plugins))
