// Links of the workspace that lead out of it (docs/security.md, "Links out of the workspace"):
// the real binary, a workspace with a link into the hidden home and one to a read-only host
// directory, and one that stays inside.
#include <nlohmann/json.hpp>

#include "harness.hpp"

namespace pisandbox::testing {
namespace {

using nlohmann::json;

const std::string kHiddenWhy =
    "in the hidden home; filesystem.additionalAllowRead or additionalAllowWrite shows it";
const std::string kReadOnlyWhy =
    "the host outside the workspace is read-only; filesystem.additionalAllowWrite makes it "
    "writable";

/// A workspace with `backend` (into the hidden home), `system` (to /usr/share) and `inner`
/// (to a directory of the workspace).
struct LinkedWorkspace {
  Scratch s;
  fs::path backend;
  LinkedWorkspace() {
    backend = fs::canonical(s.home) / "repos" / "backend";
    write_file(backend / "README", "backend\n");
    fs::create_directory_symlink(backend, s.ws / "backend");
    fs::create_directory_symlink("/usr/share", s.ws / "system");
    fs::create_directories(s.ws / "lib");
    fs::create_directory_symlink("lib", s.ws / "inner");
  }
};

TEST(WorkspaceLinks, PolicyListsTheLinksOutWithWhatTheSandboxShowsThere) {
  LinkedWorkspace w;
  const RunResult text =
      run_process({sandbox_binary(), "policy", "--cwd", w.s.ws.string()}, w.s.env());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  for (const std::string& line :
       {std::string("\nlinks out of the workspace (its entries and their entries):\n"),
        "\n  backend -> " + w.backend.string() + ": hidden  # " + kHiddenWhy + "\n",
        "\n  system -> /usr/share: read-only  # " + kReadOnlyWhy + "\n"})
    EXPECT_NE(text.out.find(line), std::string::npos) << line << "\nin:\n" << text.out;
  EXPECT_EQ(text.out.find("inner ->"), std::string::npos) << text.out;

  const RunResult as_json =
      run_process({sandbox_binary(), "policy", "--cwd", w.s.ws.string(), "--json"}, w.s.env());
  ASSERT_EQ(as_json.exit_code, 0) << as_json.err;
  const json links = json::parse(as_json.out)["workspace_links"];
  ASSERT_EQ(links.size(), 2u) << links;
  for (const auto& link : links) {
    if (link["link"] == (fs::canonical(w.s.ws) / "backend").string()) {
      EXPECT_EQ(link["access"], "hidden");
      EXPECT_EQ(link["resolved"], w.backend.string());
    } else {
      EXPECT_EQ(link["link"], (fs::canonical(w.s.ws) / "system").string());
      EXPECT_EQ(link["access"], "read-only");
      EXPECT_EQ(link["target"], "/usr/share");
    }
  }
}

TEST(WorkspaceLinks, AFailedCommandThatNamedALinkGetsALineNamingIt) {
  LinkedWorkspace w;
  const RunResult hidden = w.s.run("cat backend/README");
  EXPECT_EQ(hidden.exit_code, 1);
  EXPECT_NE(hidden.err.find("cat: backend/README: No such file or directory\n"), std::string::npos)
      << hidden.err;
  EXPECT_NE(hidden.err.find("pi-sandbox: backend is a link to " + w.backend.string() +
                            ", which is hidden inside the sandbox (" + kHiddenWhy +
                            "): see pi-sandbox policy\n"),
            std::string::npos)
      << hidden.err;
  const RunResult read_only = w.s.run("touch system/pi-sandbox-links-test");
  EXPECT_EQ(read_only.exit_code, 1);
  EXPECT_NE(read_only.err.find("Read-only file system"), std::string::npos) << read_only.err;
  EXPECT_NE(read_only.err.find("pi-sandbox: system is a link to "
                               "/usr/share, which is read-only inside the sandbox (" +
                               kReadOnlyWhy + "): see pi-sandbox policy\n"),
            std::string::npos)
      << read_only.err;
  // A command that succeeded, or failed without naming a link, gets no such line.
  for (const char* command : {"cat backend/README || true", "ls inner lib; false"}) {
    const RunResult quiet = w.s.run(command);
    EXPECT_EQ(quiet.err.find("is a link to"), std::string::npos) << command << quiet.err;
  }
}

TEST(WorkspaceLinks, TheLineNamesARelativeLinkAndWhereItLeadsNotThePathThroughIt) {
  // `backend -> ../../elsewhere/backend`: a relative target outside the home, read-only.
  Scratch s;
  const fs::path elsewhere = fs::canonical(s.root) / "elsewhere" / "backend";
  write_file(elsewhere / "README", "backend\n");
  fs::create_directory_symlink("../../elsewhere/backend", s.ws / "backend");
  const RunResult r = s.run("touch backend/src/file ./backend/new");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("touch: cannot touch './backend/new': Read-only file system\n"),
            std::string::npos)
      << r.err;
  const std::string line = "pi-sandbox: backend is a link to " + elsewhere.string() +
                           ", which is read-only inside the sandbox (" + kReadOnlyWhy +
                           "): see pi-sandbox policy\n";
  const auto at = r.err.find(line);
  EXPECT_NE(at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(line, at + 1), std::string::npos) << r.err;  // the link once
  EXPECT_EQ(r.err.find("backend/src/file is a link"), std::string::npos) << r.err;
}

/// The line of a failed git command that read the remote `path` in the hidden home.
std::string hidden_remote_line(const fs::path& path) {
  return "pi-sandbox: git reads the remote " + path.string() +
         ", which is hidden inside the sandbox (" + kHiddenWhy + "): see docs/configuration.md\n";
}

/// Makes a bare repository `~/repos/x.git` in the scratch home and the workspace a repository
/// with one commit whose `origin` it is; returns the remote's real path. Fails the test (and
/// returns an empty path) when a git step fails.
fs::path workspace_with_home_remote(const Scratch& s) {
  const fs::path remote = fs::canonical(s.home) / "repos" / "x.git";
  const std::map<std::string, std::string> env = s.env();
  const auto git = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"/usr/bin/git", "-C", s.ws.string()});
    return run_process(args, env).exit_code;
  };
  for (const int code :
       {run_process({"/usr/bin/git", "init", "-q", "--bare", remote.string()}, env).exit_code,
        git({"init", "-q"}), git({"commit", "-q", "--allow-empty", "-m", "one"}),
        git({"remote", "add", "origin", remote.string()})}) {
    EXPECT_EQ(code, 0);
    if (code != 0) return {};
  }
  return remote;
}

TEST(HiddenRemotes, AFetchPullOrCloneOfARepositoryInTheHiddenHomeNamesItAndTheSetting) {
  Scratch s;
  const fs::path remote = workspace_with_home_remote(s);
  ASSERT_FALSE(remote.empty());
  const std::map<std::string, std::string> env = s.env();
  ASSERT_EQ(run_process({"/usr/bin/git", "-C", s.ws.string(), "push", "-q", "origin",
                         "HEAD:refs/heads/main"},
                        env)
                .exit_code,
            0);
  for (const auto& [command, code] :
       std::vector<std::pair<std::string, int>>{{"git fetch", 128},
                                                {"git pull origin main", 1},
                                                {"git clone -q ~/repos/x.git copy", 128}}) {
    const RunResult r = s.run(command);
    EXPECT_EQ(r.exit_code, code) << command << r.err;
    EXPECT_NE(r.err.find("fatal: "), std::string::npos) << command << r.err;
    const std::string line = hidden_remote_line(remote);
    const auto at = r.err.find(line);
    EXPECT_NE(at, std::string::npos) << command << "\n" << r.err;
    EXPECT_EQ(r.err.find(line, at + 1), std::string::npos) << command << "\n" << r.err;
  }
  // What the line says works: the remote re-exposed, the fetch succeeds and says nothing more.
  const fs::path config = s.root / "config.json";
  write_file(config, R"({"filesystem": {"additionalAllowRead": [")" + remote.string() + R"("]}})");
  const RunResult allowed =
      s.run("git fetch -q && git rev-parse --verify -q origin/main", {"--config", config.string()});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_EQ(allowed.err.find("git reads the remote"), std::string::npos) << allowed.err;
  // A remote that is not hidden, or a command that did not fail, gets no line.
  EXPECT_EQ(s.run("git fetch || true").err.find("git reads the remote"), std::string::npos);
}

// A push to a bare repository of the home made readable with additionalAllowRead goes into the
// sandbox's copy-on-write layer: git says it succeeded, so a line says the host never got it.
TEST(HiddenRemotes, APushToACopyOnWriteRemoteNamesItAndTheSettingThatWritesIt) {
  Scratch s;
  const fs::path remote = workspace_with_home_remote(s);
  ASSERT_FALSE(remote.empty());
  const std::map<std::string, std::string> env = s.env();
  const std::string line = "pi-sandbox: git pushed to " + remote.string() +
                           ", which is copy-on-write inside the sandbox: the push is not on the "
                           "host; to push there, add it to filesystem.additionalAllowWrite\n";
  const fs::path read = s.root / "read.json";
  write_file(read, R"({"filesystem": {"additionalAllowRead": [")" + remote.string() + R"("]}})");
  const RunResult pushed =
      s.run("git push -q origin HEAD:refs/heads/x", {"--config", read.string()});
  EXPECT_EQ(pushed.exit_code, 0) << pushed.err;
  const auto at = pushed.err.find(line);
  EXPECT_NE(at, std::string::npos) << pushed.err;
  EXPECT_EQ(pushed.err.find(line, at + 1), std::string::npos) << pushed.err;
  EXPECT_NE(run_process({"/usr/bin/git", "-C", remote.string(), "rev-parse", "--verify", "-q",
                         "refs/heads/x"},
                        env)
                .exit_code,
            0);
  // What the line says works: writable, the push reaches the host and gets no line.
  const fs::path write = s.root / "write.json";
  write_file(write, R"({"filesystem": {"additionalAllowWrite": [")" + remote.string() + R"("]}})");
  const RunResult written =
      s.run("git push -q origin HEAD:refs/heads/x", {"--config", write.string()});
  EXPECT_EQ(written.exit_code, 0) << written.err;
  EXPECT_EQ(written.err.find("git pushed to"), std::string::npos) << written.err;
  EXPECT_EQ(run_process({"/usr/bin/git", "-C", remote.string(), "rev-parse", "--verify", "-q",
                         "refs/heads/x"},
                        env)
                .exit_code,
            0);
  // A fetch from the copy-on-write remote is no push: no line.
  EXPECT_EQ(s.run("git fetch -q", {"--config", read.string()}).err.find("git pushed to"),
            std::string::npos);
}

}  // namespace
}  // namespace pisandbox::testing
