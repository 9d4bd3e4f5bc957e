"""Make the collection importable as ansible_collections.dbfleet.innodb for every test."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLECTIONS = os.path.join(ROOT, '.collections')
LINK = os.path.join(COLLECTIONS, 'ansible_collections', 'dbfleet', 'innodb')

if not os.path.exists(LINK):
    os.makedirs(os.path.dirname(LINK), exist_ok=True)
    os.symlink(ROOT, LINK)
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)
