#!/usr/bin/python3
"""A forward HTTP proxy on loopback for Lookout's proxy tests: plain http:// GETs and POSTs in
absolute form only (no CONNECT), fetched with urllib and answered as they came. The host
`token.lookout.test` is 127.0.0.1 here, so a URL naming it is reachable through the proxy only
(nothing resolves it). Prints "listening PORT", then "proxied METHOD URL" for each request.
"""
import http.server, sys, urllib.error, urllib.request


class Proxy(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        print("proxied", self.command, self.path, flush=True)
        url = self.path.replace("http://token.lookout.test:", "http://127.0.0.1:", 1)
        if not url.startswith("http://127.0.0.1:"):
            self.send_error(403, "only 127.0.0.1")
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if self.command == "POST" else None
        request = urllib.request.Request(
            url, data=body, method=self.command,
            headers={k: v for k, v in self.headers.items() if k.lower() not in ("host", "proxy-connection", "connection", "content-length")})
        try:
            with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=10) as answer:
                status, headers, body = answer.status, answer.getheaders(), answer.read()
        except urllib.error.HTTPError as error:
            status, headers, body = error.code, error.headers.items(), error.read()
        self.send_response(status)
        for name, value in headers:
            if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
print("listening", server.server_address[1], flush=True)
server.serve_forever()
