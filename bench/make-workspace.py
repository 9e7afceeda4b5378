#!/usr/bin/env python3
"""Generates the large benchmark workspace: exactly 100 000 files, deterministically.

Usage: make-workspace.py DIR > MANIFEST.json   (DIR must not exist yet)

The shape is what makes the protected-path scan work or skip work: a top-level git
repository, nested repositories at depths 1-3 (each with .git/hooks), a node_modules tree
holding most of the files (deep, as npm leaves it), secrets (.env.*, *.pem) at several
depths, and ordinary source trees. No randomness: names come from counters, so every run
produces the same tree and bench/run can cache it by this file's hash.
"""
import json
import os
import sys

TOTAL_FILES = 100_000

created = 0


def touch(path, text=""):
    global created
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    created += 1


def files(directory, count, stem="file", ext=".js"):
    for i in range(count):
        touch(os.path.join(directory, f"{stem}{i:04d}{ext}"))


def git_repo(root, objects=20):
    git = os.path.join(root, ".git")
    touch(os.path.join(git, "HEAD"), "ref: refs/heads/main\n")
    touch(os.path.join(git, "config"), "[core]\n\trepositoryformatversion = 0\n")
    touch(os.path.join(git, "description"))
    for hook in ("pre-commit.sample", "pre-push.sample", "commit-msg.sample"):
        touch(os.path.join(git, "hooks", hook), "#!/bin/sh\n")
    for i in range(objects):
        touch(os.path.join(git, "objects", f"{i % 256:02x}", f"{i:038x}"))
    touch(os.path.join(git, "refs", "heads", "main"))


def node_modules(root, packages, files_per_package):
    # Every fourth package carries its own nested node_modules three levels deep, like
    # npm's conflict resolution does; the files are spread so each package stays
    # files_per_package files in total.
    for p in range(packages):
        pkg = os.path.join(root, f"pkg-{p:04d}")
        touch(os.path.join(pkg, "package.json"), "{}\n")
        rest = files_per_package - 1
        if p % 4 == 0:
            deep = os.path.join(pkg, "node_modules", "dep-a", "node_modules", "dep-b", "lib")
            files(deep, rest // 2)
            rest -= rest // 2
        files(os.path.join(pkg, "lib", "internal"), rest // 2)
        files(os.path.join(pkg, "dist"), rest - rest // 2, ext=".cjs")


def main():
    ws = sys.argv[1]
    os.makedirs(ws)  # refuses an existing directory: never write into someone's tree
    git_repo(ws, objects=500)
    touch(os.path.join(ws, "package.json"), "{}\n")
    touch(os.path.join(ws, ".gitignore"), "node_modules\n")

    # 54 000 files in the top-level node_modules, 6 000 in those of nested packages.
    node_modules(os.path.join(ws, "node_modules"), 540, 100)
    # (A key inside node_modules: the scan skips the tree, so it is not looked for.)
    touch(os.path.join(ws, "node_modules", "pkg-0001", "test", "fixture.pem"))

    # Nested repositories: 2 at depth 1, 10 at depth 2, 8 at depth 3.
    repos = [os.path.join(ws, name) for name in ("tools", "website")]
    repos += [os.path.join(ws, "packages", f"pkg-{i:02d}") for i in range(10)]
    repos += [os.path.join(ws, "services", f"team-{t}", f"svc-{i}") for t in "ab" for i in range(4)]
    for i, repo in enumerate(repos):
        git_repo(repo)
        files(os.path.join(repo, "src"), 150, ext=".ts")
        files(os.path.join(repo, "test"), 50, ext=".ts")
        if i < 6:
            node_modules(os.path.join(repo, "node_modules"), 10, 100)

    # Secrets at depths 1 to 6 (.env.example is a template, not a secret).
    secrets = [".env", ".env.local", "config/.env.production", "config/certs/server.pem",
               "services/team-a/svc-1/.env.staging", "packages/pkg-03/test/fixtures/client.pem",
               "src/app/modules/auth/.env.test", "src/app/modules/auth/keys/signing.pem"]
    for rel in secrets + [".env.example"]:
        touch(os.path.join(ws, rel))

    # Ordinary sources fill the rest, spread evenly over 80 directories five levels down.
    remaining = TOTAL_FILES - created
    dirs = [os.path.join(ws, "src", "app", f"module-{m}", f"part-{p}", "impl")
            for m in range(8) for p in range(10)]
    for i, d in enumerate(dirs):
        files(d, remaining // len(dirs) + (1 if i < remaining % len(dirs) else 0), ext=".ts")

    assert created == TOTAL_FILES, created
    # The manifest lets the report say which of the planted secrets the policy protects.
    json.dump({"files": created, "nested_repositories": len(repos), "secrets": secrets},
              sys.stdout, indent=1)


if __name__ == "__main__":
    main()
