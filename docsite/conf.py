# Sphinx configuration of the collection's HTML docs: `make docs-html` renders the collection with antsibull-docs
# into .build/docsite/rst and builds .build/docsite/html from it, with warnings as errors (docs/development.md).
# From antsibull-docs' sphinx-init, without intersphinx: the build runs offline.
project = 'dbfleet.innodb'
copyright = 'dbfleet.innodb contributors'
title = 'dbfleet.innodb'
html_short_title = 'dbfleet.innodb'

extensions = ['sphinx.ext.autodoc', 'sphinx_antsibull_ext']
pygments_style = 'ansible'
highlight_language = 'YAML+Jinja'
html_theme = 'sphinx_ansible_theme'
html_show_sphinx = False
display_version = False
html_use_smartypants = True
html_use_modindex = False
html_use_index = False
html_copy_source = False
default_role = 'any'

# References into Ansible's own docs, which intersphinx would resolve online: the labels the pages antsibull-docs
# writes use, and other collections' plugins (ansible.builtin, community.mysql), as links to docs.ansible.com.
# A reference into dbfleet.innodb that does not resolve stays a warning, and so fails the build.
ANSIBLE_DOCS = 'https://docs.ansible.com/projects/ansible/latest/'
EXTERNAL_LABELS = {
    'common_return_values': 'reference_appendices/common_return_values.html',
    'action_plugins': 'plugins/action.html',
    'ansible_configuration_settings': 'reference_appendices/config.html',
}


def external_url(target):
    """The docs.ansible.com page of a label outside this collection, or None."""
    if target in EXTERNAL_LABELS:
        return ANSIBLE_DOCS + EXTERNAL_LABELS[target]
    parts = target.split('.')
    if len(parts) == 4 and parts[0] == 'ansible_collections' and parts[1:3] != ['dbfleet', 'innodb']:
        return ANSIBLE_DOCS + 'collections/%s/%s/%s.html' % tuple(parts[1:])
    return None


def _external_label(app, env, node, contnode):  # pylint: disable=unused-argument
    from docutils import nodes  # pylint: disable=import-outside-toplevel
    url = external_url(node.get('reftarget') or '')
    if url is None:
        return None
    return nodes.reference('', '', contnode, internal=False, refuri=url)


def setup(app):
    app.connect('missing-reference', _external_label)
