#!/usr/bin/env python3
"""fake_server.py - a scripted MCP server for Sluice's tests: stdio (default) or streamable HTTP (--http).

Tools: echo (the arguments as JSON text), say (its "said" and "n"), env (the environment and cwd),
two ("hello " + "world"), empty, fail (isError), structured, badstruct,
nostruct (each with an outputSchema), image, rpcerror, ping (asks the
client for a ping first), crash (exits mid-call), slow (sleeps 10 s).
Options: --version V (answer initialize with it), --hang (never answer
initialize), --flood (write stdout without newlines forever), --stubborn
PIDFILE (ignore SIGTERM and stdin's end, with a child doing the same;
both pids written), --http (listen; print "mock-mcp listening on
127.0.0.1:PORT"), --sse (HTTP answers as SSE streams), --legacy (the
HTTP+SSE transport: GET /sse names /messages, answers come on the GET
stream; GET /evil names another origin).
In HTTP mode GET /_log gives every request seen (method, headers, body).
"""
import json
import os
import signal
import sys
import time

ARGS = sys.argv[1:]
VERSION = ARGS[ARGS.index("--version") + 1] if "--version" in ARGS else "2025-06-18"
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def tools():
    names = ["echo", "env", "two", "empty", "fail", "structured", "badstruct",
             "nostruct", "image", "ping", "crash", "slow"]
    out = []
    for n in names:
        t = {"name": n, "inputSchema": {"type": "object"}}
        if n in ("structured", "badstruct", "nostruct"):
            t["outputSchema"] = SCHEMA
        if n == "echo":
            t["description"] = "Echo the arguments"
        if n == "two":
            t["inputSchema"] = {}
        out.append(t)
    out.append({"description": "a tool without a name",
                "inputSchema": {"type": "object"}})
    return {"tools": out}


def call(name, args):
    text = lambda s: {"content": [{"type": "text", "text": s}]}
    if name == "echo":
        return text(json.dumps(args, sort_keys=True))
    if name == "say":
        return text("%s (%r)" % (args.get("said"), args.get("n")))
    if name == "env":
        return text(json.dumps({"env": dict(os.environ), "cwd": os.getcwd()}))
    if name == "two":
        return {"content": [{"type": "text", "text": "hello "},
                            {"type": "text", "text": "world"}]}
    if name == "empty":
        return {"content": []}
    if name == "fail":
        return {"content": [{"type": "text", "text": "boom"}], "isError": True}
    if name == "structured":
        return {"content": [{"type": "text", "text": "ignored"}],
                "structuredContent": {"n": 1, "s": "\u00e9"}}
    if name == "badstruct":
        return {"content": [], "structuredContent": {"m": 1}}
    if name == "nostruct":
        return text("no structure")
    if name == "image":
        return {"content": [{"type": "image", "data": "iVBO", "mimeType": "image/png"}]}
    if name == "crash":
        os._exit(3)
    if name == "slow":
        time.sleep(10)
        return text("late")
    return None


def answer(msg, send, recv):
    """The answer to one client message, or None."""
    if "id" not in msg or "method" not in msg:
        return None
    m, i = msg["method"], msg["id"]
    if m == "initialize":
        if "--hang" in ARGS:
            while True:
                time.sleep(1)
        return {"jsonrpc": "2.0", "id": i, "result": {
            "protocolVersion": VERSION, "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "1"}}}
    if m == "tools/list":
        return {"jsonrpc": "2.0", "id": i, "result": tools()}
    if m == "tools/call":
        p = msg.get("params", {})
        name = p.get("name")
        if name == "rpcerror":
            return {"jsonrpc": "2.0", "id": i,
                    "error": {"code": -32602, "message": "Unknown tool: rpcerror"}}
        if name == "ping" and recv is not None:
            send({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"})
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "info", "data": "x"}})
            send({"jsonrpc": "2.0", "id": "srv-2", "method": "sampling/createMessage",
                  "params": {}})
            got = [recv(), recv()]
            return {"jsonrpc": "2.0", "id": i,
                    "result": {"content": [{"type": "text",
                                            "text": json.dumps(got, sort_keys=True)}]}}
        r = call(name, p.get("arguments"))
        if r is None:
            return {"jsonrpc": "2.0", "id": i,
                    "error": {"code": -32602, "message": "Unknown tool: %s" % name}}
        return {"jsonrpc": "2.0", "id": i, "result": r}
    return {"jsonrpc": "2.0", "id": i, "result": {}}


def stubborn(pidfile):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    kid = os.fork()
    if kid == 0:
        while True:
            time.sleep(1)
    with open(pidfile, "w") as f:
        f.write("%d %d\n" % (os.getpid(), kid))
    while True:
        time.sleep(1)


def stdio():
    if "--flood" in ARGS:
        chunk = b"x" * 65536
        while True:
            sys.stdout.buffer.write(chunk)
            sys.stdout.buffer.flush()
    if "--stubborn" in ARGS:
        stubborn(ARGS[ARGS.index("--stubborn") + 1])

    def send(m):
        sys.stdout.write(json.dumps(m, separators=(",", ":")) + "\n")
        sys.stdout.flush()

    def recv():
        return json.loads(sys.stdin.readline())

    sys.stdout.write("this line is not JSON\n")
    for line in sys.stdin:
        a = answer(json.loads(line), send, recv)
        if a is not None:
            send(a)


def http():
    import queue
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    log = []
    streams = {}    # session id -> queue of messages for its GET stream

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def reply(self, status, body=b"", ctype="application/json", hdrs=()):
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in hdrs:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def record(self, body):
            log.append({"method": self.command, "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": body})

        def event(self, name, data):
            self.wfile.write(("event: %s\ndata: %s\n\n" % (name, data)).encode())
            self.wfile.flush()

        def do_GET(self):
            if self.path == "/_log":
                return self.reply(200, json.dumps(log).encode())
            self.record(None)
            if "--legacy" not in ARGS or self.path not in ("/sse", "/evil"):
                return self.reply(405)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b": hello\n\n")
            if self.path == "/evil":
                return self.event("endpoint", "http://127.0.0.2:1/messages")
            sid = "s%d" % (len(streams) + 1)
            q = streams[sid] = queue.Queue()
            self.event("endpoint", "/messages?session_id=" + sid)
            while True:
                a = q.get()
                if a is None:
                    return
                self.event("message", json.dumps(a))

        def do_DELETE(self):
            self.record(None)
            self.reply(200)

        def do_POST(self):
            n = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(n).decode()
            self.record(body)
            if self.path == "/denied":
                return self.reply(401, b'{"error":"no"}')
            msg = json.loads(body)
            crash = msg.get("method") == "tools/call" and \
                msg["params"]["name"] == "crash"
            a = None if crash else answer(msg, None, None)
            if "--legacy" in ARGS:
                q = streams[self.path.split("=")[-1]]
                if a is not None or crash:
                    q.put(a)
                return self.reply(202, b"Accepted", "text/plain")
            if a is None:
                return self.reply(202)
            hdrs = [("mcp-session-id", "sess-42")] if msg["method"] == "initialize" else []
            if "--sse" in ARGS:
                data = (": keep-alive\n\nevent: message\ndata: " +
                        json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                                    "params": {"level": "info", "data": "x"}}) +
                        "\n\nevent: message\ndata: " + json.dumps(a) + "\n\n")
                return self.reply(200, data.encode(), "text/event-stream", hdrs)
            self.reply(200, json.dumps(a).encode(), "application/json", hdrs)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
    print("mock-mcp listening on 127.0.0.1:%d" % srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    http() if "--http" in ARGS else stdio()
