"""The MCP SDK's log, read as an operator reads it.

An agent that gives up on a request (its own timeout, a closed laptop, a load generator
stopping) disconnects before the SDK has read the body. The SDK logs that with
``logger.exception`` as an error with its traceback, which an operator would take for a fault
of the server. :class:`ClientGone` says it in one line at INFO instead; every other record
passes as it was.

The server is stateless (one transport per request, no session), and the SDK ends each
request's transport with "Terminating session: None" at INFO: a line per agent request beside
the access log's, about a session that never existed. :class:`NoSessionToEnd` drops exactly
that line; a real session's end is still logged.
"""

from __future__ import annotations

import logging

from starlette.requests import ClientDisconnect


class ClientGone(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if not isinstance(error, ClientDisconnect):
            return True
        said = record.getMessage()
        record.msg = "%s: the client disconnected before its request was read (not a server error)"
        record.args = (said,)
        record.levelno, record.levelname = logging.INFO, "INFO"
        record.exc_info = record.exc_text = None
        return logging.getLogger(record.name).isEnabledFor(logging.INFO)


# What the SDK logs when a stateless request's transport ends (it has no session id).
NO_SESSION_END = "Terminating session: None"


class NoSessionToEnd(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != NO_SESSION_END
