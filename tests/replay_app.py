"""A small expense web app on a local thread, for the replay executor's browser test.

Three pages (the list, the new-expense form, an expense's page) and two form posts, served by
the standard library's ``http.server``. The server keeps what it was sent, so a test reads the
app's own state to prove what a replay did and did not do. ``changed`` switches the app to an
updated version whose form button is renamed ("Save" becomes "Save draft"), the kind of change a
replay plan's guards exist for (Activity Frames §7.1).
"""

from __future__ import annotations

import html
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

_EXPENSE = re.compile(r"^/expenses/(\d+)$")
_SUBMIT = re.compile(r"^/expenses/(\d+)/submit$")


@dataclass
class Expense:
    id: int
    amount: str
    merchant: str
    submitted: bool = False


@dataclass
class ExpenseApp:
    """The app's state: its expenses, every request it answered, and which version it serves."""

    expenses: list[Expense] = field(default_factory=list)
    posts: list[str] = field(default_factory=list)  # paths of every POST, in order
    changed: bool = False
    banner: bool = False  # a cookie banner over the list page that takes every click
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self, *, changed: bool = False, banner: bool = False) -> None:
        with self.lock:
            self.expenses.clear()
            self.posts.clear()
            self.changed = changed
            self.banner = banner


def _page(title: str, body: str) -> bytes:
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{html.escape(title)}</title></head><body><main>{body}</main></body></html>"
    ).encode()


def _list_page(app: ExpenseApp) -> bytes:
    rows = "".join(
        f"<tr><td>{e.id}</td><td>{html.escape(e.amount)}</td><td>{html.escape(e.merchant)}</td>"
        f"<td>{'submitted' if e.submitted else 'draft'}</td></tr>"
        for e in app.expenses
    )
    # A page states its help link twice (header and footer) and disables Export while there
    # is nothing to export: two things a replay must not act on blindly.
    banner = (
        '<div style="position:fixed;inset:0;background:#fff">We use cookies. '
        "<button type=button>Accept all</button></div>"
        if app.banner
        else ""
    )
    return _page(
        "Expenses",
        "<header><a href=/help>Help</a></header><h1>Expenses</h1>"
        "<a href=/expenses/new>New expense</a>"
        f"<button type=button{'' if app.expenses else ' disabled'}>Export</button>"
        f"<table><tbody>{rows}</tbody></table><footer><a href=/help>Help</a></footer>{banner}",
    )


def _form_page(app: ExpenseApp) -> bytes:
    save = "Save draft" if app.changed else "Save"
    return _page(
        "New expense",
        "<h1>New expense</h1><form method=post action=/expenses>"
        "<label for=amount>Amount</label><input id=amount name=amount>"
        "<label for=merchant>Merchant</label><input id=merchant name=merchant>"
        f"<button type=submit>{save}</button></form><a href=/expenses>Cancel</a>",
    )


def _expense_page(expense: Expense) -> bytes:
    return _page(
        f"Expense {expense.id}",
        f"<h1>Expense {expense.id}</h1><p>{html.escape(expense.amount)} at "
        f"{html.escape(expense.merchant)}</p>"
        f"<form method=post action=/expenses/{expense.id}/submit>"
        "<button type=submit>Submit expense</button></form>",
    )


def handler_for(app: ExpenseApp) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
            """Quiet: the test reads the app's state, not its log."""

        def _send(self, status: int, body: bytes = b"", location: str | None = None) -> None:
            self.send_response(status)
            if location:
                self.send_header("Location", location)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            with app.lock:
                if self.path == "/expenses":
                    return self._send(200, _list_page(app))
                if self.path == "/expenses/new":
                    return self._send(200, _form_page(app))
                match = _EXPENSE.match(self.path)
                if match and 0 < int(match[1]) <= len(app.expenses):
                    return self._send(200, _expense_page(app.expenses[int(match[1]) - 1]))
            return self._send(404, _page("Not found", "<h1>Not found</h1>"))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            form = parse_qs(self.rfile.read(length).decode())
            with app.lock:
                app.posts.append(self.path)
                if self.path == "/expenses":
                    expense = Expense(
                        len(app.expenses) + 1,
                        form.get("amount", [""])[0],
                        form.get("merchant", [""])[0],
                    )
                    app.expenses.append(expense)
                    return self._send(303, location=f"/expenses/{expense.id}")
                match = _SUBMIT.match(self.path)
                if match and 0 < int(match[1]) <= len(app.expenses):
                    app.expenses[int(match[1]) - 1].submitted = True
                    return self._send(303, location="/expenses")
            return self._send(404, _page("Not found", "<h1>Not found</h1>"))

    return Handler


class Served:
    """The app on 127.0.0.1 at a free port, in a daemon thread, until ``close``."""

    def __init__(self) -> None:
        self.app = ExpenseApp()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(self.app))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()
