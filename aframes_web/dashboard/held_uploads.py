"""A file chosen on the import form, held on the server while the form is shown again with an
error, so the person fixes the field and sends it without choosing the file a second time.

Browsers never refill a file input, so without this every form error loses the file.
"""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path

from django.conf import settings
from django.core import signing
from django.core.files import File
from django.core.files.uploadedfile import UploadedFile

HELD_FOR_S = 24 * 3600  # a form left open longer than a day starts again with a new file
_SALT = "aframes.dashboard.held-upload"


def held_dir() -> Path:
    # Beside uploads/, not in it: that folder holds exactly the files of queued imports.
    folder = Path(settings.VAR_DIR) / "uploads-held"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _sweep(now: float) -> None:
    for path in held_dir().iterdir():
        try:
            if path.stat().st_mtime < now - HELD_FOR_S:
                path.unlink()
        except FileNotFoundError:
            pass  # another request swept it first


def upload_hold(*, upload: UploadedFile, owner_id: int, team_slug: str) -> str:
    """Keep ``upload`` and return a signed token naming it, for a hidden form field.

    The token binds the file to the person and team that chose it: nobody else can send it.
    """
    _sweep(time.time())
    name = upload.name or "upload"
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name)[-100:]
    stored = f"{uuid.uuid4().hex}-{safe}"
    with (held_dir() / stored).open("wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)
    return signing.dumps(
        {"file": stored, "name": name, "user": owner_id, "team": team_slug}, salt=_SALT
    )


def held_upload(*, token: str, owner_id: int, team_slug: str) -> File | None:
    """The file a token from ``upload_hold`` names, opened, or None when the token is not this
    person's and team's, is older than a day, or its file is gone."""
    try:
        data = signing.loads(token, salt=_SALT, max_age=HELD_FOR_S)
    except signing.BadSignature:
        return None
    if data.get("user") != owner_id or data.get("team") != team_slug:
        return None
    path = held_dir() / Path(str(data.get("file", ""))).name
    if not path.is_file():
        return None
    return File(path.open("rb"), name=str(data.get("name") or path.name))


def held_release(file: File) -> None:
    """Close and delete a held file once its import has its own copy."""
    file.close()
    Path(file.file.name).unlink(missing_ok=True)
