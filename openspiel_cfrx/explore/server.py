"""Serves an explorer page on 127.0.0.1: the page at `/`, and each board's
views at `/board/<b>.json`, computed when the page first asks for them (a
large game's page embeds only the preflop; full flop hold'em's views of all
1,755 board classes would take gigabytes). Any explorer of `make_explorer`
(a team game's page has no boards)."""

from __future__ import annotations

import http.server
import json
import re
import threading

from openspiel_cfrx.explore.page import board_json, page_html

HOST = "127.0.0.1"  # never another interface: the page is for the person running it
BOARD_PATH = re.compile(r"/board/(\d+)\.json")
KEEP_BOARDS = 64  # board views kept after they are served


def make_server(explorer, port: int = 0) -> http.server.HTTPServer:
    """An HTTP server for `explorer` bound to 127.0.0.1:`port` (0: any free
    port, `server.server_address[1]`). Each connection has its own thread, so
    a connection the browser opens ahead and leaves idle (Chromium's
    preconnect) never holds up the next request; one board is computed at a
    time (the policies' readers are not shared between threads). Run
    `serve_forever()`."""
    page = page_html(explorer).encode("utf-8")
    boards: dict[int, bytes] = {}
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            path = self.path.split("?", 1)[0]
            if path in ("/", "/index.html"):
                return self._send(200, "text/html; charset=utf-8", page)
            match = BOARD_PATH.fullmatch(path)
            if match is None or int(match.group(1)) >= explorer.num_boards:
                return self._send(404, "text/plain; charset=utf-8", b"not found\n")
            b = int(match.group(1))
            with lock:
                if b not in boards:
                    if len(boards) >= KEEP_BOARDS:
                        boards.pop(next(iter(boards)))
                    text = json.dumps(board_json(explorer, b), separators=(",", ":"), allow_nan=False)
                    boards[b] = text.encode("utf-8")
                body = boards[b]
            return self._send(200, "application/json", body)

        def _send(self, status: int, kind: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format, *args):  # noqa: A002 (http.server's signature)
            pass  # quiet: the program prints the address once

    server = http.server.ThreadingHTTPServer((HOST, int(port)), Handler)
    server.daemon_threads = True  # an idle connection left open does not keep the program alive
    return server


def serve(explorer, port: int = 0, ready=print) -> None:
    """Serves `explorer` on 127.0.0.1 until interrupted (Ctrl-C);
    `ready(url)` is called once the server listens."""
    server = make_server(explorer, port)
    try:
        ready(f"http://{HOST}:{server.server_address[1]}/")
        server.serve_forever()
    finally:
        server.server_close()
