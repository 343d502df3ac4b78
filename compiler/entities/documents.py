"""Documents, sheets and wikis: Google Docs/Sheets/Slides/Forms and Drive, Notion, Confluence,
SharePoint/Office, Dropbox, Figma.

Google ids are kept whole (they are the document's identity; the title lives in the window
title). Sharing links whose path is itself a capability token are reduced to a digest.
"""

from __future__ import annotations

import re

from .ref import PageRef
from .url import Parser, Url, is_number, short_id, slug_words, tidy

_GOOGLE_EDITORS = {
    "document": "google_doc",
    "spreadsheets": "google_sheet",
    "presentation": "google_slides",
    "forms": "google_form",
    "drawings": "google_drawing",
}


def _skip_account(seg: tuple[str, ...]) -> tuple[str, ...]:
    """Drop the `u/1` account switch Google inserts in front of paths."""
    if len(seg) >= 2 and seg[0] == "u" and is_number(seg[1]):
        return seg[2:]
    return seg


def _google_docs(url: Url) -> PageRef | None:
    seg = url.segments
    kind = _GOOGLE_EDITORS.get(url.seg(0))
    if kind is None:
        return None
    rest = _skip_account(seg[1:])
    if len(rest) >= 2 and rest[0] == "d":
        doc_id = rest[2] if rest[1] == "e" and len(rest) >= 3 else rest[1]
        return PageRef(kind, doc_id)
    return None


def _google_drive(url: Url) -> PageRef | None:
    seg = url.segments
    if seg[:1] == ("drive",):
        rest = _skip_account(seg[1:])
        if len(rest) >= 2 and rest[0] == "folders":
            return PageRef("google_drive_folder", rest[1])
        if rest:
            return PageRef("google_drive", rest[0])
        return None
    if len(seg) >= 3 and seg[0] == "file" and seg[1] == "d":
        return PageRef("google_drive_file", seg[2])
    if url.seg(0) == "open" and url.param("id"):
        return PageRef("google_drive_file", url.param("id") or "")
    return None


_NOTION_ID = re.compile(r"(?:^|-)([0-9a-f]{32})$")


def _notion(url: Url) -> PageRef | None:
    seg = url.segments
    if not seg:
        return None
    last = seg[-1]
    match = _NOTION_ID.search(last)
    if match is None:
        return None
    page_id = match.group(1)[:8]
    title = slug_words(last[: match.start()])
    return PageRef("notion_page", f"{tidy(title, 80)} ({page_id})" if title else page_id)


def confluence(url: Url, seg: tuple[str, ...]) -> PageRef | None:
    """Confluence paths after the optional `/wiki` prefix, cloud and server alike."""
    section = seg[0] if seg else ""
    if section == "spaces" and len(seg) >= 2:
        space = seg[1]
        if len(seg) >= 4 and seg[2] in ("pages", "blog") and is_number(seg[3]):
            rest = seg[3:]
            if seg[2] == "blog" and len(rest) >= 4 and all(is_number(part) for part in rest[:4]):
                rest = rest[3:]  # `/blog/2024/01/15/<id>/<title>`: the post's date leads its id
            title = slug_words(rest[1]) if len(rest) >= 2 else ""
            return PageRef("confluence_page", f"{space}/{tidy(title, 80) or rest[0]}")
        return PageRef("confluence_space", space)
    if section == "display" and len(seg) >= 2:
        if len(seg) >= 3:
            return PageRef("confluence_page", f"{seg[1]}/{tidy(slug_words(seg[2]), 80)}")
        return PageRef("confluence_space", seg[1])
    if section == "pages":
        page_id = url.param("pageid")
        if page_id and is_number(page_id):
            return PageRef("confluence_page", page_id)
    return None


def _confluence_brand(url: Url) -> PageRef | None:
    """Self-hosted Confluence on `confluence.<company>`."""
    seg = url.segments
    return confluence(url, seg[1:] if seg[:1] == ("wiki",) else seg)


_OFFICE_LETTERS = {
    "w": "office_document",
    "x": "office_spreadsheet",
    "p": "office_presentation",
    "o": "onenote",
}
_OFFICE_EXTENSIONS = {
    "doc": "office_document",
    "docx": "office_document",
    "xls": "office_spreadsheet",
    "xlsx": "office_spreadsheet",
    "xlsm": "office_spreadsheet",
    "csv": "office_spreadsheet",
    "ppt": "office_presentation",
    "pptx": "office_presentation",
    "one": "onenote",
}


def _sharepoint(url: Url) -> PageRef | None:
    seg = url.segments
    first = url.seg(0)
    name = url.param("file")
    if name is None and seg and "." in seg[-1] and not seg[-1].lower().endswith(".aspx"):
        name = seg[-1]
    if name:
        extension = name.rpartition(".")[2].lower()
        letter_kind = _OFFICE_LETTERS.get(first.strip(":"), "office_file")
        kind = _OFFICE_EXTENSIONS.get(extension, letter_kind)
        return PageRef(kind, tidy(name, 100))
    if len(first) == 3 and first.startswith(":") and first.endswith(":"):
        # `/:w:/g/<token>`: the path is a sharing capability, so only its digest is kept.
        kind = _OFFICE_LETTERS.get(first[1], "office_file")
        return PageRef(kind, short_id("/".join(seg[1:]), keep=0))
    if first in ("sites", "teams") and len(seg) >= 2:
        if len(seg) >= 4 and seg[2] == "SitePages":
            page = seg[3].removesuffix(".aspx")
            return PageRef("sharepoint_page", f"{seg[1]}/{tidy(slug_words(page), 80)}")
        return PageRef("sharepoint_site", seg[1])
    return None


def _dropbox(url: Url) -> PageRef | None:
    seg = url.segments
    if seg[:1] == ("home",):
        return PageRef("dropbox_folder", "/" + "/".join(seg[1:]))
    if seg[:2] == ("scl", "fi") and len(seg) >= 4:
        return PageRef("dropbox_file", tidy(seg[3], 100))
    if seg[:1] == ("s",) and len(seg) >= 3:
        return PageRef("dropbox_file", tidy(seg[2], 100))
    return None


def _figma(url: Url) -> PageRef | None:
    seg = url.segments
    if len(seg) >= 2 and seg[0] in ("file", "design", "board", "proto", "slides"):
        name = tidy(slug_words(seg[2]), 80) if len(seg) >= 3 else ""
        return PageRef("figma_file", name or seg[1])
    return None


HOSTS: dict[str, Parser] = {
    "docs.google.com": _google_docs,
    "drive.google.com": _google_drive,
    "notion.so": _notion,
    "app.notion.com": _notion,
    "dropbox.com": _dropbox,
    "figma.com": _figma,
}
SUFFIXES: dict[str, Parser] = {
    "notion.site": _notion,
    "sharepoint.com": _sharepoint,
}
BRANDS: dict[str, Parser] = {"confluence": _confluence_brand}
