// The guard when a file system is full, and the quarantine across file systems
// (docs/security.md, "The guard": "Fail closed" and the quarantine paragraph). A small tmpfs
// stands for the full disk, mounted in a private mount namespace (with a user namespace when
// the test does not run as root: `unshare -Urm`, in which pi-sandbox runs as that namespace's
// root), so that nothing of the machine's fills up.
#include <unistd.h>

#include <regex>
#include <sstream>

#include "harness.hpp"

namespace pisandbox::testing {
namespace {

/// What a script run in a private mount namespace left: the script's stdout (`exit=N` after
/// pi-sandbox, then its own checks on the host) and pi-sandbox's stderr.
struct PrivateRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs `script` with /bin/sh in a private mount namespace, with PI (the binary), WS (the
/// workspace), HOME, Q (the quarantine) and ERRF (where pi-sandbox's stderr goes) set.
/// `run_sandbox` in the script runs `pi-sandbox run --no-prompt --cwd $WS -c "$1"` and prints
/// `exit=N`.
PrivateRun in_private_mounts(const Scratch& s, const std::string& script) {
  const fs::path errf = s.root / "sandbox.err";
  auto env = s.env();
  env["PI"] = sandbox_binary();
  env["WS"] = s.ws.string();
  env["Q"] = (s.home / ".local/state/pi-sandbox/quarantine").string();
  env["ERRF"] = errf.string();
  const std::string prelude =
      "set -u\n"
      "run_sandbox() { \"$PI\" run --no-prompt --cwd \"$WS\" -c \"$1\" 2>\"$ERRF\"; "
      "echo \"exit=$?\"; }\n"
      "fresh_repo() { (cd \"$1\" && git init -q && git commit -q --allow-empty -m init); }\n";
  const RunResult r = run_process({"/usr/bin/unshare", ::geteuid() == 0 ? "-m" : "-Urm",
                                   "--propagation", "private", "/bin/sh", "-c", prelude + script},
                                  env);
  return {r.exit_code, r.out, read_file(errf) + r.err};
}

/// Whether this user can mount a tmpfs in a private mount namespace (`unshare -m`, or
/// `unshare -Urm` without root).
bool can_mount_tmpfs() {
  Scratch s;
  return in_private_mounts(s, "mount -t tmpfs -o size=1m tmpfs \"$WS\" && echo mounted").out ==
         "mounted\n";
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// The one line of `text` that matches `pattern` whole ("" when none or several).
std::string matching_line(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  std::string found;
  int count = 0;
  for (const auto& line : lines(text))
    if (std::regex_match(line, re)) {
      found = line;
      ++count;
    }
  return count == 1 ? found : "";
}

/// `text` with the regular expression's special characters escaped.
std::string literal(const std::string& text) {
  static const std::regex special(R"([.^$|()\[\]{}*+?\\])");
  return std::regex_replace(text, special, R"(\$&)");
}

bool have_git() {
  return run_process({"/bin/sh", "-c", "command -v git"}).exit_code == 0;
}

#define REQUIRE_PRIVATE_TMPFS()                                                                 \
  do {                                                                                          \
    PI_SANDBOX_REQUIRE(have_git(), "git is not installed");                                     \
    PI_SANDBOX_REQUIRE(can_mount_tmpfs(), "cannot mount a tmpfs in a private mount namespace"); \
  } while (0)

// Item: a full disk fails closed. `.git/config` rewritten in place (same size, no new block) on
// a full file system: the undo's new file gets ENOSPC, so the file is rewritten in place
// without the key, and the command is stopped.
TEST(FullDisk, AConfigurationChangeThatCannotBeUndoneByANewFileIsUndoneInPlaceAndStopsTheCommand) {
  REQUIRE_PRIVATE_TMPFS();
  Scratch s;
  const PrivateRun r = in_private_mounts(s, R"sh(
mount -t tmpfs -o size=1m tmpfs "$WS" && fresh_repo "$WS" || exit 2
echo "size=$(wc -c <"$WS/.git/config")"
run_sandbox '
  dd if=/dev/zero of=fill bs=4k 2>/dev/null
  p="[core]
	fsmonitor = touch ../pwned
"
  pad=$(( $(wc -c <.git/config) - ${#p} ))
  { printf "%s" "$p"; printf "#%.0s" $(seq 1 $pad); } | dd of=.git/config conv=notrunc 2>/dev/null
  sleep 2
  echo carried on'
echo "fsmonitor=[$(cd "$WS" && git config --get core.fsmonitor)]"
cat "$WS/.git/config"
)sh");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const fs::path config = s.ws / ".git/config";
  const std::string temp =
      "write\\(" + literal((s.ws / ".git").string()) + "/\\.pi-sandbox-restore-[0-9a-f]{8}\\)";
  const std::string cause = "it could not be put back \\(" + temp +
                            ": ENOSPC \\(No space left on device\\)\\), so it was rewritten in "
                            "place without it";
  // Rewritten in place: the command's edit without the key (its padding stays).
  const auto out = lines(r.out);
  ASSERT_EQ(out.size(), 5U) << r.out << r.err;
  ASSERT_TRUE(out[0].starts_with("size=")) << out[0];
  const std::size_t padding =
      std::stoul(out[0].substr(5)) - std::string("[core]\n\tfsmonitor = touch ../pwned\n").size();
  EXPECT_EQ(out[1], "exit=125") << r.err;
  EXPECT_EQ(out[2], "fsmonitor=[]");
  EXPECT_EQ(out[3], "[core]");
  EXPECT_EQ(out[4], std::string(padding, '#'));
  EXPECT_NE(
      matching_line(r.err, "pi-sandbox: undid a change to " + literal(config.string()) +
                               ": it set core.fsmonitor, which is not on the allowlist of keys "
                               "that run nothing; " +
                               cause + "; the attempted version is kept in the quarantine: " +
                               literal(s.home.string()) + "/.+/config"),
      "")
      << r.err;
  EXPECT_NE(matching_line(r.err,
                          "pi-sandbox: the guard could not check or undo what the command made, "
                          "so the command was stopped: could not undo a change to " +
                              literal(config.string()) + ": " + cause),
            "")
      << r.err;
}

// The quarantine's own file system full (another one than the workspace's): the copy gets
// ENOSPC, the item is renamed in place and the command is stopped.
TEST(FullDisk, AGuardedNameTheQuarantineCannotTakeIsRenamedInPlaceAndStopsTheCommand) {
  REQUIRE_PRIVATE_TMPFS();
  Scratch s;
  fs::create_directories(s.home / ".local/state");
  const PrivateRun r = in_private_mounts(s, R"sh(
fresh_repo "$WS" || exit 2
mount -t tmpfs -o size=1m tmpfs "$HOME/.local/state" || exit 2
dd if=/dev/zero of="$HOME/.local/state/fill" bs=4k 2>/dev/null
run_sandbox 'mkdir d && echo "{}" >d/tasks.json && mv d .vscode; sleep 2; echo carried on'
cd "$WS" && ls -d .vscode*
)sh");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto out = lines(r.out);
  ASSERT_EQ(out.size(), 2U) << r.out << r.err;
  EXPECT_EQ(out[0], "exit=125");
  EXPECT_TRUE(std::regex_match(out[1], std::regex(R"(\.vscode\.pi-sandbox-defused-[0-9a-f]{8})")))
      << out[1];
  const std::string vscode = (s.ws / ".vscode").string();
  const std::string cause = "write(\"tasks.json\"): ENOSPC (No space left on device)";
  EXPECT_NE(r.err.find("pi-sandbox: renamed " + vscode + " to " + (s.ws / out[1]).string() +
                       " (a guarded name: dangerous-file); the quarantine failed: " + cause + "\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("pi-sandbox: the guard could not check or undo what the command made, so "
                       "the command was stopped: could not quarantine " +
                       vscode + " (" + cause + ")\n"),
            std::string::npos)
      << r.err;
}

// A repository the command creates is cleaned as it appears; its configuration written in place
// once the disk is full (no new block) cannot be cleaned by a new file: it is rewritten in place
// without the key and the command is stopped.
TEST(FullDisk, ANewRepositoryConfigurationWrittenOnAFullDiskIsCleanedInPlace) {
  REQUIRE_PRIVATE_TMPFS();
  Scratch s;
  const PrivateRun r = in_private_mounts(s, R"sh(
mount -t tmpfs -o size=1m tmpfs "$WS" && fresh_repo "$WS" || exit 2
run_sandbox 'git init -q sub && printf "#%.0s" $(seq 1 200) >>sub/.git/config &&
  echo >>sub/.git/config && dd if=/dev/zero of=fill bs=4k 2>/dev/null
  p="[core]
	fsmonitor = touch ../pwned
"
  pad=$(( $(wc -c <sub/.git/config) - ${#p} ))
  { printf "%s" "$p"; printf "#%.0s" $(seq 1 $pad); } | dd of=sub/.git/config conv=notrunc 2>/dev/null
  sleep 2
  echo carried on'
echo "fsmonitor=[$(cd "$WS/sub" && git config --get core.fsmonitor)]"
head -1 "$WS/sub/.git/config"
)sh");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(lines(r.out), (std::vector<std::string>{"exit=125", "fsmonitor=[]", "[core]"}))
      << r.err;
  const fs::path config = s.ws / "sub/.git/config";
  const std::string cause = "it could not be put back \\(write\\(" +
                            literal((s.ws / "sub/.git").string()) +
                            "/\\.pi-sandbox-restore-[0-9a-f]{8}\\): ENOSPC \\(No space left on "
                            "device\\)\\), so it was rewritten in place without it";
  EXPECT_NE(
      matching_line(r.err,
                    "pi-sandbox: cleaned " + literal(config.string()) +
                        " in a repository the command created: it set "
                        "core.fsmonitor, which is not on the allowlist of keys that run nothing; " +
                        cause + "; the original is kept in the quarantine: .+"),
      "")
      << r.err;
  EXPECT_NE(matching_line(r.err,
                          "pi-sandbox: the guard could not check or undo what the command made, "
                          "so the command was stopped: could not undo a change to " +
                              literal(config.string()) + ": " + cause),
            "")
      << r.err;
}

// Item: the quarantine costs no more than the workspace. A sparse file moved to a guarded name
// on another file system than the home is copied with its holes.
TEST(QuarantineAcrossFileSystems, ASparseFileStaysSparse) {
  REQUIRE_PRIVATE_TMPFS();
  Scratch s;
  const PrivateRun r = in_private_mounts(s, R"sh(
mount -t tmpfs -o size=16m tmpfs "$WS" && fresh_repo "$WS" || exit 2
run_sandbox 'mkdir d && truncate -s 400M d/big && echo data >d/small && mv d .vscode'
echo "kib=$(du -sk "$Q" | cut -f1)"
stat -c "size=%s" "$Q"/*/.vscode/big
cat "$Q"/*/.vscode/small
)sh");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto out = lines(r.out);
  ASSERT_EQ(out.size(), 4U) << r.out << r.err;
  EXPECT_EQ(out[0], "exit=0");
  EXPECT_TRUE(out[1].starts_with("kib=") && std::stoi(out[1].substr(4)) <= 256) << out[1];
  EXPECT_EQ(out[2], "size=419430400");
  EXPECT_EQ(out[3], "data");
  EXPECT_NE(
      matching_line(r.err, "pi-sandbox: moved " + literal((s.ws / ".vscode").string()) +
                               " to the quarantine \\(a guarded name: dangerous-file\\); "
                               "restore with: pi-sandbox quarantine restore [0-9T]+Z-[0-9a-f]{8}"),
      "")
      << r.err;
}

// Past 64 MiB of data the item is not copied: it is renamed in place, and said.
TEST(QuarantineAcrossFileSystems, ADenseItemOverTheCapIsRenamedInPlace) {
  REQUIRE_PRIVATE_TMPFS();
  Scratch s;
  const PrivateRun r = in_private_mounts(s, R"sh(
mount -t tmpfs -o size=96m tmpfs "$WS" && fresh_repo "$WS" || exit 2
run_sandbox 'mkdir d && dd if=/dev/zero of=d/big bs=1M count=65 2>/dev/null && mv d .vscode'
echo "kib=$(du -sk "$Q" 2>/dev/null | cut -f1)"
cd "$WS" && ls -d .vscode*
)sh");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto out = lines(r.out);
  ASSERT_EQ(out.size(), 3U) << r.out << r.err;
  EXPECT_EQ(out[0], "exit=0");
  EXPECT_TRUE(out[1] == "kib=" || (out[1].starts_with("kib=") && std::stoi(out[1].substr(4)) <= 64))
      << out[1];
  EXPECT_TRUE(std::regex_match(out[2], std::regex(R"(\.vscode\.pi-sandbox-defused-[0-9a-f]{8})")))
      << out[2];
  EXPECT_NE(r.err.find("pi-sandbox: renamed " + (s.ws / ".vscode").string() + " to " +
                       (s.ws / out[2]).string() +
                       " (a guarded name: dangerous-file); the quarantine did not take it: the "
                       "quarantine takes at most 64 MiB of data per item copied across file "
                       "systems\n"),
            std::string::npos)
      << r.err;
}

// Past 1000 entries (the directory counts as one) the item is not copied either.
TEST(QuarantineAcrossFileSystems, AnItemOfMoreThan1000EntriesIsRenamedInPlace) {
  REQUIRE_PRIVATE_TMPFS();
  Scratch s;
  const PrivateRun r = in_private_mounts(s, R"sh(
mount -t tmpfs -o size=16m tmpfs "$WS" && fresh_repo "$WS" || exit 2
run_sandbox 'mkdir d && (cd d && seq 1 1000 | xargs touch) && mv d .vscode'
cd "$WS" && ls -d .vscode* && ls .vscode.pi-sandbox-defused-* | wc -l
ls "$Q" 2>/dev/null | wc -l
)sh");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto out = lines(r.out);
  ASSERT_EQ(out.size(), 4U) << r.out << r.err;
  EXPECT_EQ(out[0], "exit=0");
  EXPECT_TRUE(std::regex_match(out[1], std::regex(R"(\.vscode\.pi-sandbox-defused-[0-9a-f]{8})")))
      << out[1];
  EXPECT_EQ(out[2], "1000");
  EXPECT_EQ(out[3], "0");  // nothing half-copied left in the quarantine
  EXPECT_NE(r.err.find("pi-sandbox: renamed " + (s.ws / ".vscode").string() + " to " +
                       (s.ws / out[1]).string() +
                       " (a guarded name: dangerous-file); the quarantine did not take it: the "
                       "quarantine takes at most 1000 entries per item copied across file "
                       "systems\n"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace pisandbox::testing
