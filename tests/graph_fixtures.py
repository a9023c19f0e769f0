"""A small repository for the graph tests: the shop fixture plus nested directories and files
whose names are markup."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import FIXTURES, write_tree

HOSTILE = "<script>alert(1)</script>.py"
QUOTED = 'shop/a&b "q" <i>.py'

EXTRA = {
    HOSTILE: "from shop.catalog import Catalog\n\n\ndef hostile_helper(catalog: Catalog):\n    return catalog\n",
    QUOTED: "from shop.money import Money\n\n\ndef quoted_total():\n    return Money(1)\n",
    "shop/util/deep/helpers.py": "from shop.orders import Order\n\n\ndef make_order_helper():\n    return Order()\n",
    "shop/util/__init__.py": "",
}


def graph_repo(tmp_path: Path) -> Path:
    dest = tmp_path / "graphrepo"
    shutil.copytree(FIXTURES / "pyrepo", dest)
    return write_tree(dest, EXTRA)
