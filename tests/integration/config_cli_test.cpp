// The trusted configuration seen from the command line and from inside the sandbox
// (docs/configuration.md).
#include "harness.hpp"

namespace pisandbox::testing {
namespace {

fs::path current_config(const Scratch& s) {
  return s.home / ".pi/agent/extensions/pi-sandbox/config.json";
}

TEST(ConfigCli, CheckPrintsTheEffectiveConfigurationWithDefaults) {
  Scratch s;
  write_file(current_config(s),
             R"({"hostIPC": {"mode": "ask", "preflightCommandPrefixes": [" tmux ", "tmux"]}})");
  const RunResult r = run_process({sandbox_binary(), "config", "check"}, s.env());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"preflightCommandPrefixes\": [\n      \"tmux\"\n    ]"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"reviewerTimeoutSeconds\": 90"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "pi-sandbox: configuration " + current_config(s).string() + " is valid\n");
}

TEST(ConfigCli, AnInvalidFileExits2WithTheMessage) {
  Scratch s;
  const fs::path file = s.root / "bad.json";
  write_file(file, R"({"hostIPC": {"retryOnUnixSocketError": "true"}})");
  const RunResult r = run_process({sandbox_binary(), "config", "check", file.string()}, s.env());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "pi-sandbox: invalid pi-sandbox configuration: "
            "hostIPC.retryOnUnixSocketError must be a boolean\n");
}

TEST(ConfigCli, RunRefusesAnInvalidConfigurationBeforeLaunchingAnything) {
  Scratch s;
  write_file(current_config(s), "[]");
  const RunResult r = s.run("touch launched");
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_EQ(r.err, "pi-sandbox: invalid pi-sandbox configuration: root must be an object\n");
  EXPECT_FALSE(fs::exists(s.ws / "launched"));
}

TEST(ConfigCli, RunRefusesAConfigurationInsideTheWorkspace) {
  Scratch s;
  write_file(s.ws / "my-config.json", "{}");
  const RunResult r = s.run("true", {"--config", (s.ws / "my-config.json").string()});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find("it lies inside the workspace"), std::string::npos) << r.err;
}

TEST(ConfigCli, CheckRefusesAFileInsideTheWorkspaceAsRunWould) {
  Scratch s;
  const fs::path inside = s.ws / "my-config.json";
  write_file(inside, "{}");
  const RunResult refused = run_process(
      {sandbox_binary(), "config", "check", inside.string(), "--cwd", s.ws.string()}, s.env());
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(refused.err, "pi-sandbox: refusing the configuration " + inside.string() +
                             ": it lies inside the workspace, where sandboxed commands can write\n"
                             "hint: keep it outside the workspace, e.g. in "
                             "~/.pi/agent/extensions/pi-sandbox/config.json\n");
  EXPECT_EQ(refused.out, "");
  // The same file checked for another workspace is fine.
  const fs::path elsewhere = s.root / "elsewhere";
  fs::create_directory(elsewhere);
  const RunResult other = run_process(
      {sandbox_binary(), "config", "check", inside.string(), "--cwd", elsewhere.string()}, s.env());
  EXPECT_EQ(other.exit_code, 0) << other.err;
}

// A hard link in the workspace to a configuration outside it: the path outside says nothing of
// the name inside, through which an earlier command could have rewritten the file. Refused by
// config check and by run alike; the same file with one name is fine.
TEST(ConfigCli, AConfigurationWithAHardLinkIsRefused) {
  Scratch s;
  const fs::path outside = s.root / "config.json";
  write_file(outside, "{}");
  fs::create_hard_link(outside, s.ws / "config-in-ws.json");
  const std::string refusal =
      "pi-sandbox: refusing the configuration " + outside.string() +
      ": it has 2 hard links, and another of its names may lie inside the workspace, where "
      "sandboxed commands can write\nhint: keep the configuration as a file of its own (a copy or "
      "a symbolic link, not a hard link)\n";
  const RunResult checked = run_process(
      {sandbox_binary(), "config", "check", outside.string(), "--cwd", s.ws.string()}, s.env());
  EXPECT_EQ(checked.exit_code, 2);
  EXPECT_EQ(checked.err, refusal);
  const RunResult run = s.run("touch launched", {"--config", outside.string()});
  EXPECT_EQ(run.exit_code, 125);
  EXPECT_EQ(run.err, refusal);
  EXPECT_FALSE(fs::exists(s.ws / "launched"));
  fs::remove(s.ws / "config-in-ws.json");
  const RunResult alone = run_process(
      {sandbox_binary(), "config", "check", outside.string(), "--cwd", s.ws.string()}, s.env());
  EXPECT_EQ(alone.exit_code, 0) << alone.err;
}

// The default location is protected by its path inside every sandbox; another name of the same
// file in the workspace is not, so it is refused there too (escape attempt 143).
TEST(ConfigCli, ADefaultConfigurationWithAHardLinkIsRefused) {
  Scratch s;
  const fs::path config = current_config(s);
  write_file(config, "{}");
  fs::create_hard_link(config, s.ws / "config-in-ws.json");
  const std::string refusal =
      "pi-sandbox: refusing the configuration " + config.string() +
      ": it has 2 hard links, and another of its names may lie inside the workspace, where "
      "sandboxed commands can write\nhint: keep the configuration as a file of its own (a copy or "
      "a symbolic link, not a hard link)\n";
  const RunResult checked =
      run_process({sandbox_binary(), "config", "check", "--cwd", s.ws.string()}, s.env());
  EXPECT_EQ(checked.exit_code, 2);
  EXPECT_EQ(checked.err, refusal);
  const RunResult run = s.run("echo '{}' > config-in-ws.json; touch launched");
  EXPECT_EQ(run.exit_code, 125);
  EXPECT_EQ(run.err, refusal);
  // doctor: one line per check, the hint as the fix.
  const RunResult doctor = run_process({sandbox_binary(), "doctor"}, s.env());
  EXPECT_EQ(doctor.exit_code, 1);
  const std::string reason = "refusing the configuration " + config.string() +
                             ": it has 2 hard links, and another of its names may lie inside the "
                             "workspace, where sandboxed commands can write";
  const std::string fix =
      "         fix: keep the configuration as a file of its own (a copy or a symbolic link, not "
      "a hard link)\n";
  EXPECT_TRUE(doctor.out.contains(
      "weaker   $PATH entries inside the hidden home: not checked: " + reason + "\n" + fix))
      << doctor.out;
  EXPECT_TRUE(doctor.out.contains("MISSING  a sandboxed /bin/true: " + reason + "\n" + fix))
      << doctor.out;
  EXPECT_FALSE(fs::exists(s.ws / "launched"));
  fs::remove(s.ws / "config-in-ws.json");
  const RunResult alone =
      run_process({sandbox_binary(), "config", "check", "--cwd", s.ws.string()}, s.env());
  EXPECT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_EQ(s.run("touch launched").exit_code, 0);
}

TEST(ConfigCli, AdditionalReadPathsInsideTheHomeAreReadableAndReadOnly) {
  Scratch s;
  write_file(s.home / ".local/bin/tool", "#!/bin/sh\necho tool\n");
  write_file(s.home / "private.txt", "secret\n");
  write_file(current_config(s), "{\"filesystem\": {\"additionalAllowRead\": [\"" +
                                    (s.home / ".local/bin/tool").string() + "\"]}}");
  const RunResult r =
      s.run("cat ~/.local/bin/tool; cat ~/private.txt; echo x >> ~/.local/bin/tool");
  EXPECT_EQ(r.out, "#!/bin/sh\necho tool\n");
  EXPECT_NE(r.err.find("private.txt: No such file or directory"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tool: Read-only file system"), std::string::npos) << r.err;
}

TEST(ConfigCli, ASandboxedCommandCannotModifyOrCreateEitherConfigurationFile) {
  Scratch s;
  write_file(current_config(s), "{}");
  // With the workspace = the home, both locations are inside the writable workspace.
  for (const fs::path& file : {current_config(s), s.home / ".pi/agent/pi-sandbox.json"}) {
    const RunResult r = s.run("echo '{\"hostIPC\":{\"mode\":\"ask\"}}' > " + file.string() +
                                  " || mv -f /dev/null " + file.string() + " || true; cat " +
                                  file.string() + " 2>/dev/null; echo done",
                              {}, s.home);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.find("mode"), std::string::npos) << file << ": " << r.out;
  }
  EXPECT_EQ(read_file(current_config(s)), "{}");
  EXPECT_FALSE(fs::exists(s.home / ".pi/agent/pi-sandbox.json"));
  // And from a workspace elsewhere, where the home is hidden, the sandbox's home layer
  // cannot hold a forged configuration either.
  const RunResult hidden = s.run(
      "mkdir -p ~/.pi/agent/extensions/pi-sandbox 2>&1; echo '{}' > ~/.pi/agent/pi-sandbox.json "
      "2>&1; ls -la ~/.pi/agent 2>&1 | grep -c pi-sandbox.json");
  EXPECT_NE(hidden.out.find("Read-only file system"), std::string::npos) << hidden.out;
}

}  // namespace
}  // namespace pisandbox::testing

namespace pisandbox::testing {
namespace {

TEST(HomeDirectory, AMissingHomeHasNothingToHide) {
  Scratch s;
  auto env = s.env();
  env["HOME"] = (s.root / "no-such-home").string();
  const RunResult r = run_process(
      {sandbox_binary(), "run", "--cwd", s.ws.string(), "-c", "echo ok; ls ~ 2>&1 | wc -l"}, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ok\n1\n");
}

}  // namespace
}  // namespace pisandbox::testing
