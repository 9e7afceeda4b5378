#!/usr/bin/env python3
"""A local npm registry stand-in for bench/npm.sh (issue 13, "A benchmark row"). Standard
library only.

Usage:
  npm_registry.py make DIR BASE_URL   writes the registry into DIR: one package `pisb-app`
                                      with ten dependencies `pisb-dep-0` … `pisb-dep-9` (no
                                      further dependencies), each a packument (DIR/<name>,
                                      JSON) and a tarball (DIR/<name>/-/<name>-1.0.0.tgz)
                                      whose `dist.tarball` URL starts with BASE_URL
  npm_registry.py serve DIR ADDRESS PORT READY_FILE
                                      serves DIR over HTTP/1.1 (GET only, keep-alive, one
                                      thread per connection); creates READY_FILE once it
                                      listens; appends one line per request to DIR.log

A packument is what the public registry answers for GET /<name> (its abbreviated form,
application/vnd.npm.install-v1+json, is a subset of these fields).
"""
import base64
import gzip
import hashlib
import http.server
import io
import json
import os
import socketserver
import sys
import tarfile

APP = "pisb-app"
DEPENDENCIES = [f"pisb-dep-{i}" for i in range(10)]
VERSION = "1.0.0"


def tarball(name, dependencies):
    """The package as npm packs it: package/package.json and package/index.js, gzipped, with
    fixed times so that the bytes (and their integrity) are the same on every run."""
    manifest = {"name": name, "version": VERSION, "main": "index.js",
                "dependencies": {d: VERSION for d in dependencies}}
    files = {"package/package.json": json.dumps(manifest, indent=2).encode(),
             "package/index.js": f"module.exports = {json.dumps(name)};\n".encode()}
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0), manifest


def make(root, base_url):
    os.makedirs(root, exist_ok=True)
    for name, dependencies in [(APP, DEPENDENCIES)] + [(d, []) for d in DEPENDENCIES]:
        data, manifest = tarball(name, dependencies)
        os.makedirs(os.path.join(root, name, "-"), exist_ok=True)
        file_name = f"{name}-{VERSION}.tgz"
        with open(os.path.join(root, name, "-", file_name), "wb") as f:
            f.write(data)
        dist = {"tarball": f"{base_url.rstrip('/')}/{name}/-/{file_name}",
                "shasum": hashlib.sha1(data).hexdigest(),
                "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()}
        packument = {"name": name, "dist-tags": {"latest": VERSION},
                     "versions": {VERSION: dict(manifest, dist=dist)},
                     "modified": "2026-01-01T00:00:00.000Z"}
        # GET /<name> must answer the packument: a file next to the directory of the tarballs.
        with open(os.path.join(root, name + ".json"), "w") as f:
            json.dump(packument, f)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    root = "."

    def do_GET(self):
        path = self.path.split("?")[0].lstrip("/")
        with open(self.root + ".log", "a") as log:
            log.write(f"GET /{path}\n")
        if "/" not in path:
            path += ".json"  # a packument
        file_name = os.path.normpath(os.path.join(self.root, path))
        if ".." in path or not os.path.isfile(file_name):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        with open(file_name, "rb") as f:
            body = f.read()
        self.send_response(200)
        kind = "application/json" if file_name.endswith(".json") else "application/octet-stream"
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def serve(root, address, port, ready):
    Handler.root = os.path.abspath(root)
    server = Server((address, int(port)), Handler)
    open(ready, "w").close()
    server.serve_forever()


if __name__ == "__main__":
    if sys.argv[1:2] == ["make"]:
        make(*sys.argv[2:4])
    elif sys.argv[1:2] == ["serve"]:
        serve(*sys.argv[2:6])
    else:
        sys.exit(__doc__)
