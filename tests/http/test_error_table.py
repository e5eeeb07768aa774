"""README "Errors" lists every code the server can put in ``extensions.code``."""

from __future__ import annotations

import re
from pathlib import Path

from dealroom.domain.errors import ErrorCode

README = Path(__file__).resolve().parents[2] / "README.md"


def test_every_error_code_has_a_row_in_the_readme_table() -> None:
    text = README.read_text()
    section = text[text.index("### Errors") : text.index("#### Websocket close codes")]
    rows = set(re.findall(r"^\| `([A-Z_]+)` \|", section, re.MULTILINE))

    assert rows == {code.value for code in ErrorCode}
