"""Reading a JSON document a user handed to portlint (a baseline, SARIF shards)."""

from __future__ import annotations

import json
from pathlib import Path


def read_json(path: Path, error: type[Exception], label: str = "") -> object:
    """The parsed document at `path`, or `error(message)` when it cannot be read or is not
    JSON. `label` names it in the message ("the baseline" -> "the baseline x.json is not JSON")."""
    shown = f"{label} {path}" if label else str(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise error(f"cannot read {shown}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise error(f"{shown} is not JSON: {exc}") from None
