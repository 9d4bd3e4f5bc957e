"""Reading the inventories the lab writes (and any YAML inventory of the same shape).

Used by the integration tests and the benchmarks; lab.py itself writes inventories without PyYAML
(``yamlout``) and never reads them, so PyYAML is imported here only when an inventory is read.
"""


def read_hosts(path):
    """{host: its variables} of a YAML inventory, every group walked from the top-level ones down.

    A host that stands in several groups gets the variables of all its entries merged; group
    variables are not applied. Raises OSError when the file cannot be read.
    """
    import yaml  # pylint: disable=import-outside-toplevel

    with open(path, encoding="utf-8") as handle:
        return hosts_in(yaml.safe_load(handle) or {})


def hosts_in(data):
    """read_hosts() for an inventory already parsed into a dict."""
    hosts = {}

    def walk(group):
        for name, host_vars in ((group or {}).get("hosts") or {}).items():
            hosts.setdefault(name, {}).update(host_vars or {})
        for child in ((group or {}).get("children") or {}).values():
            walk(child)

    for group in data.values():
        walk(group)
    return hosts
