#!/usr/bin/env python3
"""`denpex lsp` at the protocol level: a real client's messages over a pipe.

    lsp_test.py DENPEX TESTDATA

initialize, didOpen, publishDiagnostics (the initiating failure, its
collateral), hover (= `denpex explain`), codeAction and executeCommand (the
fix), didChange, didClose, shutdown and exit; a tqdm bar's '\\r' redraws
(the editor's line, not denpex's); and bad input: a body that is not JSON,
an unknown method, a message over the size limit, a request before
initialize, headers without a Content-Length.
"""
import json
import os
import subprocess
import sys
import threading

BIN, TESTDATA = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def frame(obj_or_bytes):
    body = obj_or_bytes if isinstance(obj_or_bytes, bytes) else json.dumps(obj_or_bytes).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Client:
    def __init__(self):
        self.p = subprocess.Popen([BIN, "lsp", "--no-config"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        self.next_id = 0
        self.err = b""
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _drain_stderr(self):
        self.err = self.p.stderr.read()

    def send(self, obj_or_bytes):
        self.p.stdin.write(frame(obj_or_bytes))
        self.p.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def read(self):
        length = None
        while True:
            line = self.p.stdout.readline()
            if not line:
                return None
            line = line.strip()
            if not line:
                break
            k, _, v = line.decode().partition(":")
            if k.lower() == "content-length":
                length = int(v)
        return json.loads(self.p.stdout.read(length))

    def until(self, pred):
        while True:
            m = self.read()
            if m is None:
                return None
            if pred(m):
                return m

    def response(self, rid):
        return self.until(lambda m: m.get("id") == rid and "method" not in m)

    def diagnostics(self, uri):
        m = self.until(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri)
        return None if m is None else m["params"]["diagnostics"]


def main():
    sample = os.path.join(TESTDATA, "sample", "train.log")
    uri = "file://" + os.path.abspath(sample)
    text = open(sample, encoding="utf-8").read()

    c = Client()
    # A request before initialize is refused, and the server goes on.
    rid = c.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})
    r = c.response(rid)
    check(r and r.get("error", {}).get("code") == -32002, "request before initialize: ServerNotInitialized")

    rid = c.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    r = c.response(rid)
    caps = r["result"]["capabilities"]
    check(caps["textDocumentSync"]["change"] == 1 and caps["hoverProvider"], "initialize: capabilities")
    check(r["result"]["serverInfo"]["name"] == "denpex", "initialize: serverInfo")
    c.notify("initialized", {})

    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "log", "version": 1, "text": text}})
    diags = c.diagnostics(uri)
    errors = [d for d in diags if d["severity"] == 1]
    check(len(errors) == 1, "one error: the initiating failure (got %d)" % len(errors))
    init = errors[0]
    # testdata/sample/train.log line 41 (denpex counts from 1; LSP from 0).
    check(init["range"]["start"]["line"] == 40, "initiating failure at line 41 (got %s)" % init["range"])
    check(init["code"] == "nccl.nvls.cuda-700" and init["source"] == "denpex", "its entry and source")
    check(init["message"].startswith("rank 3 (node-017, GPU 3) nccl.nvls.cuda-700:"), "the verdict: " + init["message"])
    check("fix: export NCCL_NVLS_ENABLE=0" in init["message"], "the verdict names the fix")
    line41 = text.split("\n")[40]
    check(init["range"]["end"]["character"] == len(line41.encode("utf-16-le")) // 2, "the range ends at the line's end")
    infos = [d for d in diags if d["severity"] == 3]
    check(any(d["code"] == "pytorch.nccl.watchdog-timeout" and d["message"].startswith("collateral of nccl.nvls.cuda-700")
              for d in infos), "the watchdog timeouts are collateral, grouped")
    check(all("relatedInformation" in d for d in infos if d["message"].startswith("collateral")),
          "collateral points back at the failure")

    # The same answer as the CLI's JSON.
    cli = json.loads(subprocess.run([BIN, "diagnose", "--no-config", "--format", "json", sample],
                                    capture_output=True, check=False).stdout)
    check(cli["verdict"]["line"] == "denpex: " + init["message"], "the message is the CLI's verdict line")

    rid = c.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 40, "character": 3}})
    hover = c.response(rid)["result"]
    check(hover and hover["contents"]["kind"] == "markdown", "hover on the failure's line")
    explain = subprocess.run([BIN, "explain", "--no-config", "--color", "never", "nccl.nvls.cuda-700"],
                             capture_output=True, text=True, env=dict(os.environ, COLUMNS="80")).stdout
    check(hover and explain.strip().splitlines()[0] in hover["contents"]["value"], "hover is `denpex explain`")
    rid = c.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})
    check(c.response(rid)["result"] is None, "no hover on an unmarked line")

    rid = c.request("textDocument/codeAction", {"textDocument": {"uri": uri},
                                                "range": {"start": {"line": 40, "character": 0},
                                                          "end": {"line": 40, "character": 5}},
                                                "context": {"diagnostics": [init]}})
    actions = c.response(rid)["result"]
    check(len(actions) == 1 and actions[0]["kind"] == "quickfix", "one code action: the fix")
    cmd = actions[0]["command"]
    check(cmd["command"] == "denpex.showFix" and cmd["arguments"][0][0] == "export NCCL_NVLS_ENABLE=0",
          "the action carries the fix commands")
    rid = c.request("workspace/executeCommand", {"command": cmd["command"], "arguments": cmd["arguments"]})
    shown = c.until(lambda m: m.get("method") == "window/showMessage")
    check(shown and "export NCCL_NVLS_ENABLE=0" in shown["params"]["message"], "the fix is shown")
    r = c.response(rid)
    check(r["result"].startswith("export NCCL_NVLS_ENABLE=0"), "executeCommand returns the fix")

    # A tqdm bar redraws with '\r': denpex says line 2, the editor shows it on line 3 (0-based 2 -> 3).
    bar_uri = "file:///tmp/denpex-lsp-test/bar.log"
    bar = ("Epoch 1:  10%|#         | 1/10\rEpoch 1:  20%|##        | 2/10\n"
           + text.split("\n")[40] + "\n")
    c.notify("textDocument/didOpen", {"textDocument": {"uri": bar_uri, "languageId": "log", "version": 1, "text": bar}})
    d = [x for x in c.diagnostics(bar_uri) if x["severity"] == 1]
    check(len(d) == 1 and d[0]["range"]["start"]["line"] == 2,
          "a '\\r'-redrawn bar: the editor's line (got %s)" % (d[0]["range"] if d else None))

    # Edits re-diagnose; closing clears.
    c.notify("textDocument/didChange", {"textDocument": {"uri": bar_uri, "version": 2},
                                        "contentChanges": [{"text": "all fine here\n"}]})
    check(c.diagnostics(bar_uri) == [], "an edit that removes the failure clears it")
    c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    check(c.diagnostics(uri) == [], "closing a document clears its diagnostics")

    # Bad input: answered, never fatal.
    c.send(b"{this is not json")
    r = c.until(lambda m: "error" in m and m.get("id") is None)
    check(r and r["error"]["code"] == -32700, "a body that is not JSON: ParseError")
    rid = c.request("textDocument/frobnicate", {})
    check(c.response(rid)["error"]["code"] == -32601, "an unknown method: MethodNotFound")
    rid = c.request("textDocument/hover", {"textDocument": {}})
    check(c.response(rid)["error"]["code"] == -32602, "missing parameters: InvalidParams")
    big = 65 * 1024 * 1024
    c.p.stdin.write(b"Content-Length: %d\r\n\r\n" % big)
    chunk = b" " * (1 << 20)
    for _ in range(big // len(chunk)):
        c.p.stdin.write(chunk)
    c.p.stdin.write(b" " * (big % len(chunk)))
    c.p.stdin.flush()
    r = c.until(lambda m: "error" in m and m.get("id") is None)
    check(r and r["error"]["code"] == -32600 and "limit" in r["error"]["message"], "a huge message: skipped, said so")
    rid = c.request("shutdown", None)
    check(c.response(rid)["result"] is None, "shutdown")
    c.notify("exit", None)
    check(c.p.wait(timeout=30) == 0, "exit after shutdown: status 0")

    # Headers the server cannot frame by: one line on stderr, status 1, no crash.
    p = subprocess.run([BIN, "lsp", "--no-config"], input=b"Content-Type: x\r\n\r\n{}", capture_output=True)
    check(p.returncode != 0 and b"without a Content-Length" in p.stderr, "no Content-Length: a clear error")
    check(p.returncode < 128 and p.returncode > 0, "no crash (status %d)" % p.returncode)

    if failures:
        print("%d failed" % len(failures), file=sys.stderr)
        return 1
    print("lsp: all protocol checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
