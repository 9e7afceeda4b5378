// What pi-sandbox starts on the host runs what was meant (docs/security.md, "What pi-sandbox
// starts on the host"): a real reviewer started through `#!/usr/bin/env python3`, real host-IPC
// runs of the host's tmux, and a real `pi-sandbox serve` worker, each with a caller environment
// that points into the workspace, and a command that plants files there first.
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "harness.hpp"

namespace pisandbox::testing {
namespace {

using nlohmann::json;

/// The reviewer's verdict as a shell script prints it.
std::string verdict_script(const std::string& outcome, const std::string& rationale) {
  return "cat >/dev/null\necho '{\"outcome\":\"" + outcome +
         "\",\"risk_level\":\"low\",\"rationale\":\"" + rationale + "\"}'\n";
}

void write_executable(const fs::path& path, const std::string& text) {
  write_file(path, text);
  ::chmod(path.c_str(), 0755);
}

/// The stderr lines that are not the "no cgroup" warning (which depends on the machine).
std::string without_cgroup_warning(const std::string& err) {
  std::istringstream in(err);
  std::string out;
  for (std::string line; std::getline(in, line);)
    if (line.find("no cgroup for this command") == std::string::npos) out += line + "\n";
  return out;
}

/// The caller's PATH with `first` in front.
std::string path_with(const std::string& first) {
  const char* path = ::getenv("PATH");
  return first + ":" + (path != nullptr ? path : "/usr/bin:/bin");
}

class HostEnvironment : public ::testing::Test {
 protected:
  void SetUp() override { marker_ = scratch_.root / "planted-ran-on-host"; }

  /// `pi-sandbox run --no-prompt` in the workspace with the scratch's environment and `env`.
  RunResult run(const std::string& command, const std::vector<std::string>& extra,
                std::map<std::string, std::string> env) const {
    std::vector<std::string> argv = {sandbox_binary(), "run", "--no-prompt", "--cwd",
                                     scratch_.ws.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {"-c", command});
    env.merge(scratch_.env());
    return run_process(argv, env);
  }

  /// A sandboxed command that writes an executable `<dir>/<name>` leaving marker_ when run.
  std::string plant(const std::string& dir, const std::string& name,
                    const std::string& output) const {
    return "mkdir -p " + dir + " && printf '#!/bin/sh\\ntouch " + marker_.string() + "\\necho " +
           output + "\\n' > " + dir + "/" + name + " && chmod +x " + dir + "/" + name;
  }

  /// The trusted configuration asking before `tmux` runs on the host, and an allowing reviewer.
  std::vector<std::string> host_ipc_allowed() const {
    const fs::path config = scratch_.root / "host-ipc.json";
    write_file(config, R"({"hostIPC": {"mode": "ask", "preflightCommandPrefixes": ["tmux"]}})");
    const fs::path allow = scratch_.root / "allow.sh";
    write_executable(allow, "#!/bin/sh\n" + verdict_script("allow", "ok"));
    return {"--config", config.string(), "--reviewer", allow.string()};
  }

  /// The audit lines written so far, parsed.
  std::vector<json> audit() const {
    std::vector<json> lines;
    std::istringstream in(
        read_file(scratch_.home / ".pi" / "agent" / "logs" / "pi-sandbox-audit.jsonl"));
    for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
    return lines;
  }

  static std::string host_tmux_version() {
    const RunResult v = run_process({"/usr/bin/tmux", "-V"});
    return v.out;
  }

  Scratch scratch_;
  fs::path marker_;
};

TEST_F(HostEnvironment, AReviewerStartedThroughEnvFindsTheHostPythonNotTheWorkspaces) {
  PI_SANDBOX_REQUIRE(::access("/usr/bin/python3", X_OK) == 0, "python3 is not installed");
  const fs::path reviewer = scratch_.root / "review";
  write_executable(reviewer,
                   "#!/usr/bin/env python3\nimport json, sys\nsys.stdin.read()\n"
                   "print(json.dumps({'outcome': 'deny', 'risk_level': 'low', 'rationale': "
                   "'the host python3 reviewed it'}))\n");
  // An activated virtualenv first on PATH; a parent proxy makes the question come before any
  // name lookup, so no DNS is needed.
  const RunResult r = run(plant(".venv/bin", "python3", "planted") +
                              "; curl -sS -m 10 -o /dev/null http://example.com/; echo curl=$?",
                          {"--reviewer", reviewer.string()},
                          {{"PATH", path_with((scratch_.ws / ".venv" / "bin").string())},
                           {"VIRTUAL_ENV", (scratch_.ws / ".venv").string()},
                           {"http_proxy", "http://127.0.0.1:9"}});
  EXPECT_FALSE(fs::exists(marker_));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "curl=0\n");
  EXPECT_EQ(without_cgroup_warning(r.err),
            "pi-sandbox: network: refused example.com:80: the host python3 reviewed it\n");
}

TEST_F(HostEnvironment, AReviewerWhoseInterpreterLiesInAWritableDirectoryIsRefused) {
  const fs::path extra = scratch_.root / "extra";
  fs::create_directories(extra);
  fs::copy_file("/bin/sh", extra / "sh");
  const fs::path config = scratch_.root / "config.json";
  write_file(config, R"({"filesystem": {"additionalAllowWrite": [")" + extra.string() + R"("]}})");
  const fs::path reviewer = scratch_.root / "review";
  write_executable(reviewer, "#!" + (extra / "sh").string() + "\n" + verdict_script("deny", "x"));
  const RunResult r =
      run("echo ran", {"--config", config.string(), "--reviewer", reviewer.string()}, {});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "pi-sandbox: refusing the reviewer " + reviewer.string() + ": its interpreter " +
                       (extra / "sh").string() + " lies in " + extra.string() +
                       ", where sandboxed commands can write\n"
                       "hint: keep the reviewer, its files and its interpreter outside the "
                       "workspace and every writable directory; a `#!/usr/bin/env NAME` line is "
                       "resolved with $PATH less its entries in those places\n");
}

TEST_F(HostEnvironment, AReviewerWhoseEnvProgramIsNotOnTheCleanedPathIsRefused) {
  const fs::path reviewer = scratch_.root / "review";
  write_executable(reviewer, "#!/usr/bin/env -S pi-reviewer-interp -u\n");
  const RunResult r = run("echo ran", {"--reviewer", reviewer.string()},
                          {{"PATH", path_with((scratch_.ws / "bin").string())}});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("pi-sandbox: refusing the reviewer " + reviewer.string() +
                       ": its interpreter pi-reviewer-interp (`#!/usr/bin/env -S "
                       "pi-reviewer-interp -u`) is not found in the cleaned $PATH\n"),
            std::string::npos)
      << r.err;
}

TEST_F(HostEnvironment, TheHostIpcRunFindsTheHostTmuxWhateverThePathPointsAtInTheWorkspace) {
  PI_SANDBOX_REQUIRE(::access("/usr/bin/tmux", X_OK) == 0, "tmux is not installed");
  const auto allowed = host_ipc_allowed();
  const std::map<std::string, std::string> env = {
      {"PATH", path_with("./node_modules/.bin:" + (scratch_.ws / ".venv" / "bin").string())}};
  const RunResult planted = run(plant("node_modules/.bin", "tmux", "planted") + " && " +
                                    plant(".venv/bin", "tmux", "planted") + " && echo ok",
                                allowed, env);
  ASSERT_EQ(planted.exit_code, 0) << planted.err;
  ASSERT_EQ(planted.out, "ok\n");
  const RunResult r = run("tmux -V", allowed, env);
  EXPECT_FALSE(fs::exists(marker_));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, host_tmux_version());
  EXPECT_EQ(r.err, "");
  // The decision names the file that ran.
  const auto lines = audit();
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back().value("command", ""), "tmux -V") << lines.back().dump();
  EXPECT_EQ(lines.back().value("path", ""), "/usr/bin/tmux") << lines.back().dump();
}

TEST_F(HostEnvironment, TheHostIpcRunIgnoresBashEnvAndAnExportedFunctionPointingIntoTheWorkspace) {
  PI_SANDBOX_REQUIRE(::access("/usr/bin/tmux", X_OK) == 0, "tmux is not installed");
  const auto allowed = host_ipc_allowed();
  const RunResult planted = run("printf 'touch " + marker_.string() + ".bash_env\\n' > env.sh && " +
                                    plant("bin", "tmux", "planted") + " && echo ok",
                                allowed, {});
  ASSERT_EQ(planted.exit_code, 0) << planted.err;
  const RunResult r =
      run("tmux -V", allowed,
          {{"BASH_ENV", (scratch_.ws / "env.sh").string()},
           {"ENV", (scratch_.ws / "env.sh").string()},
           {"BASH_FUNC_tmux%%", "() {  " + (scratch_.ws / "bin/tmux").string() + "; }"}});
  EXPECT_FALSE(fs::exists(marker_.string() + ".bash_env"));
  EXPECT_FALSE(fs::exists(marker_));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, host_tmux_version());
}

TEST_F(HostEnvironment, TheHostIpcRunKeepsTheCallersAgentsAndTokens) {
  PI_SANDBOX_REQUIRE(::access("/usr/bin/tmux", X_OK) == 0, "tmux is not installed");
  // Credentials are what the host run is for: only what points into a writable place goes.
  const RunResult r = run("tmux -V >/dev/null; echo \"$SSH_AUTH_SOCK $GITHUB_TOKEN $LD_PRELOAD\"",
                          host_ipc_allowed(),
                          {{"SSH_AUTH_SOCK", "/run/user/agent.sock"},
                           {"GITHUB_TOKEN", "t0ken"},
                           {"LD_PRELOAD", (scratch_.ws / "x.so").string()}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "/run/user/agent.sock t0ken \n");
}

TEST_F(HostEnvironment, ServesWorkerDoesNotLoadTheRequestsLdPreloadButTheCommandGetsIt) {
  PI_SANDBOX_REQUIRE(::access("/usr/bin/cc", X_OK) == 0, "no C compiler to build the library");
  const fs::path source = scratch_.root / "hook.c";
  write_file(source,
             "#include <fcntl.h>\n#include <stdlib.h>\n#include <unistd.h>\n"
             "__attribute__((constructor)) static void hook(void) {\n"
             "  if (getenv(\"PI_SANDBOX\") == NULL)\n"
             "    close(open(\"" +
                 marker_.string() + "\", O_WRONLY | O_CREAT, 0644));\n}\n");
  const fs::path library = scratch_.ws / ".cache" / "libhook.so";
  fs::create_directories(library.parent_path());
  const RunResult built =
      run_process({"/usr/bin/cc", "-shared", "-fPIC", "-o", library.string(), source.string()});
  ASSERT_EQ(built.exit_code, 0) << built.err;

  int in = -1, out = -1;
  const pid_t serve = spawn_piped({sandbox_binary(), "serve"}, scratch_.env(), in, out);
  const json exec = {{"type", "exec"},
                     {"id", "c1"},
                     {"cwd", scratch_.ws.string()},
                     {"command", "echo \"inside $LD_PRELOAD\""},
                     {"env",
                      {{"HOME", scratch_.home.string()},
                       {"PATH", "/usr/bin:/bin"},
                       {"LD_PRELOAD", library.string()}}}};
  const std::string line = exec.dump() + "\n";
  ASSERT_EQ(::write(in, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  // Events until the command's `exit`; then serve is told to end (end of its stdin).
  std::string events, output;
  json exit;
  char chunk[4096];
  for (ssize_t n; exit.is_null() && (n = ::read(out, chunk, sizeof chunk)) > 0;) {
    events.append(chunk, static_cast<std::size_t>(n));
    std::istringstream stream(events);
    output.clear();
    for (std::string event; std::getline(stream, event) && !stream.eof();) {
      const json e = json::parse(event);
      if (e["type"] == "output" && e["stream"] == "stdout") output += e.value("data", "");
      if (e["type"] == "exit") exit = e;
    }
  }
  ::close(in);
  ::close(out);
  EXPECT_EQ(wait_process(serve), 0);
  EXPECT_FALSE(fs::exists(marker_));
  EXPECT_EQ(output, "inside " + library.string() + "\n") << events;
  EXPECT_EQ(exit.value("exit_code", -1), 0) << events;
}

}  // namespace
}  // namespace pisandbox::testing
