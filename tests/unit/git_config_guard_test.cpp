// The git configuration guard's keys (policy/git_config_guard.hpp): git's configuration syntax
// as config.c parses it, every dangerous key pattern, added_dangerous() and without_findings().
#include "policy/git_config_guard.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace pisandbox::policy;

/// A finding as the tests compare it: key, value, implicit, lines, the rule's pattern.
struct Seen {
  std::string key;
  std::string value;
  bool implicit = false;
  std::size_t first_line = 0;
  std::size_t last_line = 0;
  std::string pattern;
  friend bool operator==(const Seen&, const Seen&) = default;
};

void PrintTo(const Seen& s, std::ostream* os) {
  *os << "{" << s.key << " = \"" << s.value << "\"" << (s.implicit ? " implicit" : "") << " lines "
      << s.first_line << "-" << s.last_line << " rule " << s.pattern << "}";
}

std::vector<Seen> seen(const GitConfigScan& scan) {
  std::vector<Seen> out;
  for (const auto& f : scan.findings)
    out.push_back({f.key, f.value, f.implicit, f.first_line, f.last_line,
                   f.rule ? std::string(f.rule->pattern) : "<none>"});
  return out;
}

/// The findings of a well-formed text.
std::vector<Seen> findings(std::string_view text) {
  const auto scan = scan_git_config(text);
  EXPECT_FALSE(scan.malformed) << scan.malformed_reason;
  return seen(scan);
}

/// One-entry text `[header]\n<line>` and the key, value and rule it must give.
struct Dangerous {
  std::string_view text;
  std::string_view key;
  std::string_view value;
  std::string_view pattern;
};

// At least one example per rule; RulesTable.EveryRuleHasAnExample checks that.
const std::vector<Dangerous> kDangerous = {
    {"[core]\nhooksPath = .githooks", "core.hookspath", ".githooks", "core.hooksPath"},
    {"[hook \"lint\"]\ncommand = ./lint", "hook.lint.command", "./lint", "hook.*.command"},
    {"[include]\npath = ../x.cfg", "include.path", "../x.cfg", "include.path"},
    {"[includeIf \"gitdir:~/w/\"]\npath = x", "includeif.gitdir:~/w/.path", "x",
     "includeIf.*.path"},
    {"[extensions]\nworktreeConfig = true", "extensions.worktreeconfig", "true",
     "extensions.worktreeConfig"},
    {"[core]\nworktree = /home/u", "core.worktree", "/home/u", "core.worktree"},
    {"[submodule \"m\"]\ngitdir = /tmp/g", "submodule.m.gitdir", "/tmp/g", "submodule.*.gitdir"},
    {"[init]\ntemplateDir = /tmp/t", "init.templatedir", "/tmp/t", "init.templateDir"},
    {"[core]\nfsmonitor = touch /tmp/pwned", "core.fsmonitor", "touch /tmp/pwned",
     "core.fsmonitor"},
    {"[core]\neditor = vim", "core.editor", "vim", "core.editor"},
    {"[sequence]\neditor = x", "sequence.editor", "x", "sequence.editor"},
    {"[core]\npager = less", "core.pager", "less", "core.pager"},
    {"[pager]\nlog = sh -c x", "pager.log", "sh -c x", "pager.*"},
    {"[alias]\nst = !sh -c x", "alias.st", "!sh -c x", "alias.*"},
    {"[alias]\nup = rebase --exec x", "alias.up", "rebase --exec x", "alias.*"},
    {"[alias \"hämta\"]\ncommand = fetch", "alias.hämta.command", "fetch", "alias.*"},
    {"[core]\nalternateRefsCommand = x", "core.alternaterefscommand", "x",
     "core.alternateRefsCommand"},
    {"[gc]\nrecentObjectsHook = x", "gc.recentobjectshook", "x", "gc.recentObjectsHook"},
    {"[interactive]\ndiffFilter = x", "interactive.difffilter", "x", "interactive.diffFilter"},
    {"[trailer \"s\"]\ncommand = x", "trailer.s.command", "x", "trailer.*.command"},
    {"[trailer \"s\"]\ncmd = x", "trailer.s.cmd", "x", "trailer.*.cmd"},
    {"[filter \"lfs\"]\nclean = x", "filter.lfs.clean", "x", "filter.*.clean"},
    {"[filter \"lfs\"]\nsmudge = x", "filter.lfs.smudge", "x", "filter.*.smudge"},
    {"[filter \"lfs\"]\nprocess = x", "filter.lfs.process", "x", "filter.*.process"},
    {"[diff]\nexternal = x", "diff.external", "x", "diff.external"},
    {"[diff \"d\"]\ncommand = x", "diff.d.command", "x", "diff.*.command"},
    {"[diff \"d\"]\ntextconv = x", "diff.d.textconv", "x", "diff.*.textconv"},
    {"[merge \"m\"]\ndriver = x", "merge.m.driver", "x", "merge.*.driver"},
    {"[difftool \"t\"]\ncmd = x", "difftool.t.cmd", "x", "difftool.*.cmd"},
    {"[difftool \"meld\"]\npath = x", "difftool.meld.path", "x", "difftool.*.path"},
    {"[mergetool \"t\"]\ncmd = x", "mergetool.t.cmd", "x", "mergetool.*.cmd"},
    {"[mergetool \"meld\"]\npath = x", "mergetool.meld.path", "x", "mergetool.*.path"},
    {"[core]\nsshCommand = x", "core.sshcommand", "x", "core.sshCommand"},
    {"[core]\ngitProxy = x for example.com", "core.gitproxy", "x for example.com", "core.gitProxy"},
    {"[remote \"origin\"]\nuploadpack = x", "remote.origin.uploadpack", "x", "remote.*.uploadpack"},
    {"[remote \"origin\"]\nreceivepack = x", "remote.origin.receivepack", "x",
     "remote.*.receivepack"},
    {"[remote \"origin\"]\nvcs = ext", "remote.origin.vcs", "ext", "remote.*.vcs"},
    {"[remote \"origin\"]\nurl = ext::sh -c x", "remote.origin.url", "ext::sh -c x",
     "remote.*.url"},
    {"[remote \"origin\"]\npushurl = fd::3", "remote.origin.pushurl", "fd::3", "remote.*.pushurl"},
    {"[submodule \"m\"]\nurl = EXT::x", "submodule.m.url", "EXT::x", "submodule.*.url"},
    {"[url \"ext::sh -c x\"]\ninsteadOf = https://github.com/", "url.ext::sh -c x.insteadof",
     "https://github.com/", "url.*.insteadOf"},
    {"[url \"fd::7\"]\npushInsteadOf = git@", "url.fd::7.pushinsteadof", "git@",
     "url.*.pushInsteadOf"},
    {"[protocol]\nallow = always", "protocol.allow", "always", "protocol.allow"},
    {"[protocol \"ext\"]\nallow = user", "protocol.ext.allow", "user", "protocol.*.allow"},
    {"[submodule \"m\"]\nupdate = !x", "submodule.m.update", "!x", "submodule.*.update"},
    {"[uploadpack]\npackObjectsHook = x", "uploadpack.packobjectshook", "x",
     "uploadpack.packObjectsHook"},
    {"[core]\naskPass = x", "core.askpass", "x", "core.askPass"},
    {"[credential]\nhelper = store", "credential.helper", "store", "credential.helper"},
    {"[credential \"https://example.com\"]\nhelper = !x", "credential.https://example.com.helper",
     "!x", "credential.*.helper"},
    {"[gpg]\nprogram = x", "gpg.program", "x", "gpg.program"},
    {"[gpg \"x509\"]\nprogram = x", "gpg.x509.program", "x", "gpg.*.program"},
    {"[gpg \"ssh\"]\ndefaultKeyCommand = x", "gpg.ssh.defaultkeycommand", "x",
     "gpg.ssh.defaultKeyCommand"},
    {"[gpg \"ssh\"]\nallowedSignersFile = x", "gpg.ssh.allowedsignersfile", "x",
     "gpg.ssh.allowedSignersFile"},
    {"[gpg \"ssh\"]\nrevocationFile = x", "gpg.ssh.revocationfile", "x", "gpg.ssh.revocationFile"},
    {"[browser \"b\"]\ncmd = x", "browser.b.cmd", "x", "browser.*.cmd"},
    {"[browser \"firefox\"]\npath = x", "browser.firefox.path", "x", "browser.*.path"},
    {"[man \"m\"]\ncmd = x", "man.m.cmd", "x", "man.*.cmd"},
    {"[man \"woman\"]\npath = x", "man.woman.path", "x", "man.*.path"},
    {"[guitool \"t\"]\ncmd = x", "guitool.t.cmd", "x", "guitool.*.cmd"},
    {"[instaweb]\nhttpd = x", "instaweb.httpd", "x", "instaweb.httpd"},
    {"[instaweb]\nmodulePath = /tmp/m", "instaweb.modulepath", "/tmp/m", "instaweb.modulePath"},
    {"[tar \"tar.xz\"]\ncommand = x", "tar.tar.xz.command", "x", "tar.*.command"},
    {"[imap]\ntunnel = x", "imap.tunnel", "x", "imap.tunnel"},
    {"[sendemail]\nsendmailCmd = x", "sendemail.sendmailcmd", "x", "sendemail[.*].sendmailCmd"},
    {"[sendemail \"work\"]\nsendmailCmd = x", "sendemail.work.sendmailcmd", "x",
     "sendemail[.*].sendmailCmd"},
    {"[sendemail]\ntoCmd = x", "sendemail.tocmd", "x", "sendemail[.*].toCmd"},
    {"[sendemail]\nccCmd = x", "sendemail.cccmd", "x", "sendemail[.*].ccCmd"},
    {"[sendemail]\nheaderCmd = x", "sendemail.headercmd", "x", "sendemail[.*].headerCmd"},
    {"[sendemail]\nsmtpServer = /tmp/x", "sendemail.smtpserver", "/tmp/x",
     "sendemail[.*].smtpServer"},
    {"[sendemail \"w\"]\nsmtpServer = ~/x", "sendemail.w.smtpserver", "~/x",
     "sendemail[.*].smtpServer"},
    {"[svn]\nauthorsProg = x", "svn.authorsprog", "x", "svn.authorsProg"},
    {"[svn-remote \"svn\"]\nauthorsProg = x", "svn-remote.svn.authorsprog", "x",
     "svn-remote.*.authorsProg"},
    {"[http]\ncookieFile = ~/.bashrc", "http.cookiefile", "~/.bashrc", "http[.*].cookieFile"},
    {"[http \"https://x/\"]\ncookieFile = y", "http.https://x/.cookiefile", "y",
     "http[.*].cookieFile"},
};

TEST(GitConfigGuard, EveryPatternIsFound) {
  for (const auto& d : kDangerous) {
    SCOPED_TRACE(d.text);
    EXPECT_EQ(findings(d.text), (std::vector<Seen>{{std::string(d.key), std::string(d.value), false,
                                                    1, 1, std::string(d.pattern)}}));
  }
}

TEST(GitConfigGuard, EveryRuleHasAnExample) {
  std::set<std::string_view> covered;
  for (const auto& d : kDangerous) covered.insert(d.pattern);
  for (const auto& rule : dangerous_git_config_rules()) {
    EXPECT_TRUE(covered.contains(rule.pattern)) << rule.pattern;
    EXPECT_FALSE(rule.reason.empty()) << rule.pattern;
  }
}

TEST(GitConfigGuard, HarmlessKeysAndValues) {
  const std::vector<std::string_view> harmless = {
      "",
      "[core]\nbare = false\nrepositoryformatversion = 0\nfilemode = true",
      "[core]\nfsmonitor = true",
      "[core]\nfsmonitor = false",
      "[core]\nfsmonitor",  // the implicit true: git's built-in daemon
      "[core]\nfsmonitor = 0",
      "[core]\nfsmonitor =",
      "[core \"x\"]\nfsmonitor = evil",  // core.x.fsmonitor is not core.fsmonitor
      "[core]\nattributesFile = ~/.gitattributes\nexcludesFile = x",
      "[commit]\ntemplate = x",
      "[diff]\ntool = meld",
      "[merge]\ntool = x\nguitool = y",
      "[web]\nbrowser = firefox",
      "[man]\nviewer = woman",
      "[pager]\nbranch = false\nlog = on",
      "[extensions]\nworktreeConfig = false",
      "[protocol \"ext\"]\nallow = never",
      "[protocol]\nallow = never",
      "[submodule \"m\"]\nupdate = checkout\nurl = https://example.com/m.git",
      "[remote \"origin\"]\nurl = git@github.com:o/r.git\nfetch = +refs/heads/*:refs/remotes/o/*",
      "[url \"https://mirror/\"]\ninsteadOf = https://github.com/",
      "[sendemail]\nsmtpServer = smtp.example.com",
      "[filter \"lfs\"]\nrequired = true",
      "[diff \"d\"]\nbinary = true\nxfuncname = x",
      "[gc]\nauto = 0",
      "[ssh]\nvariant = ssh",
      "[branch \"main\"]\nremote = origin\nmerge = refs/heads/main",
      "[user]\nname = x\nemail = y",
      "# core.fsmonitor = x\n; [alias] st = !x",
      "fsmonitor = x",  // no section: "fsmonitor", not core.fsmonitor
      "[hooks]\npath = x",
      "[include \"x\"]\npath = y",  // include.x.path is not include.path
  };
  for (auto text : harmless) EXPECT_EQ(findings(text), std::vector<Seen>{}) << text;
}

TEST(GitConfigGuard, SectionAndVariableAreCaseInsensitive) {
  EXPECT_EQ(findings("[CORE]\n\tFSMonitor = x\n[Core]\n\tfsMONITOR = y\n[ALIAS]\n\tSt = !z\n"),
            (std::vector<Seen>{{"core.fsmonitor", "x", false, 1, 1, "core.fsmonitor"},
                               {"core.fsmonitor", "y", false, 3, 3, "core.fsmonitor"},
                               {"alias.st", "!z", false, 5, 5, "alias.*"}}));
}

TEST(GitConfigGuard, SubsectionKeepsItsCaseAndEscapes) {
  EXPECT_EQ(
      findings("[Remote \"Origin\"]\n\tUploadPack = x"),
      (std::vector<Seen>{{"remote.Origin.uploadpack", "x", false, 1, 1, "remote.*.uploadpack"}}));
  // `\"` and `\\` escape; any other `\c` is `c` (get_extended_base_var).
  EXPECT_EQ(findings(R"([filter "a\"b\\c\d"] clean = x)"),
            (std::vector<Seen>{{R"(filter.a"b\cd.clean)", "x", false, 0, 0, "filter.*.clean"}}));
  // Spaces between the section and the quoted subsection; a subsection may hold dots.
  EXPECT_EQ(findings("[diff \t \"x.y\"]\ntextconv = t"),
            (std::vector<Seen>{{"diff.x.y.textconv", "t", false, 1, 1, "diff.*.textconv"}}));
  // The special subsection names compare case-insensitively (git: exactly; this flags more).
  EXPECT_EQ(findings("[gpg \"SSH\"]\ndefaultKeyCommand = x"),
            (std::vector<Seen>{
                {"gpg.SSH.defaultkeycommand", "x", false, 1, 1, "gpg.ssh.defaultKeyCommand"}}));
}

TEST(GitConfigGuard, DeprecatedDottedSectionLowercasesTheSubsection) {
  EXPECT_EQ(findings("[Filter.LFS]\nProcess = x\n[alias.St]\ncommand = !y"),
            (std::vector<Seen>{{"filter.lfs.process", "x", false, 1, 1, "filter.*.process"},
                               {"alias.st.command", "!y", false, 3, 3, "alias.*"}}));
  // `[a.b "c"]`: the subsection is "b.c" (parse_config_key splits at the first and last dot).
  EXPECT_EQ(
      findings("[includeIf.onbranch \"main\"]\npath = z"),
      (std::vector<Seen>{{"includeif.onbranch.main.path", "z", false, 1, 1, "includeIf.*.path"}}));
}

TEST(GitConfigGuard, ValuesAreUnquotedAndUnescaped) {
  auto value_of = [](std::string_view text) {
    const auto scan = scan_git_config(text);
    EXPECT_FALSE(scan.malformed) << text << ": " << scan.malformed_reason;
    EXPECT_EQ(scan.findings.size(), 1u) << text;
    return scan.findings.empty() ? std::string("<none>") : scan.findings[0].value;
  };
  EXPECT_EQ(value_of("[core]\neditor=vim"), "vim");
  EXPECT_EQ(value_of("[core]\neditor   =   vim  -f   "), "vim  -f");
  EXPECT_EQ(value_of("[core]\neditor = \"  vim  \"  "), "  vim  ");
  EXPECT_EQ(value_of("[core]\neditor = a\"b # c\"d"), "ab # cd");
  EXPECT_EQ(value_of("[core]\neditor = \"a\\\"b\\\\c\\n\\t\\b\""), "a\"b\\c\n\t\b");
  EXPECT_EQ(value_of("[core]\neditor = a\\\"b"), "a\"b");
  EXPECT_EQ(value_of("[core]\neditor = vim # a comment"), "vim");
  EXPECT_EQ(value_of("[core]\neditor = vim ; a comment \\"), "vim");
  EXPECT_EQ(value_of("[core]\neditor = \"vim ; not a comment\""), "vim ; not a comment");
  EXPECT_EQ(value_of("[core]\neditor = a \\\n  b"), "a   b");    // as git: spaces kept
  EXPECT_EQ(value_of("[core]\neditor = \"a \\\n b\""), "a  b");  // continued inside quotes
  EXPECT_EQ(value_of("[core]\neditor = a\\\n"), "a");
  EXPECT_EQ(value_of("[core]\neditor = a\\"), "a");  // a backslash at the end of the text
  EXPECT_EQ(value_of("[core]\neditor = a\tb"), "a\tb");
  // A space before an escaped line end is not trimmed (parse_value resets its trim on `\`).
  EXPECT_EQ(value_of("[core]\neditor = a \\\n# c"), "a ");
  EXPECT_EQ(value_of("[core]\neditor = \"\""), "");
}

TEST(GitConfigGuard, ShellAliasAndUpdateAfterLeadingSpace) {
  EXPECT_EQ(findings("[submodule \"m\"]\nupdate = \"  !x\""),
            (std::vector<Seen>{{"submodule.m.update", "  !x", false, 1, 1, "submodule.*.update"}}));
  EXPECT_EQ(findings("[url \" ext::x\"]\ninsteadOf = y"),
            (std::vector<Seen>{{"url. ext::x.insteadof", "y", false, 1, 1, "url.*.insteadOf"}}));
}

TEST(GitConfigGuard, ImplicitTrue) {
  EXPECT_EQ(findings("[core]\n\thooksPath\n[alias]\n\tx  \t\n"),
            (std::vector<Seen>{{"core.hookspath", "", true, 1, 1, "core.hooksPath"},
                               {"alias.x", "", true, 3, 3, "alias.*"}}));
  // The implicit true is a value of protocol.allow that allows, and not a URL.
  EXPECT_EQ(findings("[protocol]\nallow\n[remote \"o\"]\nurl"),
            (std::vector<Seen>{{"protocol.allow", "", true, 1, 1, "protocol.allow"}}));
}

TEST(GitConfigGuard, HeaderAndEntryOnOneLine) {
  EXPECT_EQ(findings("[core] fsmonitor = x\n[alias]st=!y[z]\n"),
            (std::vector<Seen>{{"core.fsmonitor", "x", false, 0, 0, "core.fsmonitor"},
                               {"alias.st", "!y[z]", false, 1, 1, "alias.*"}}));
}

TEST(GitConfigGuard, LinesCountContinuations) {
  EXPECT_EQ(findings("# c\n[core]\n  editor = a \\\n b \\\n c\n  pager = \"x\\\ny\"\n"),
            (std::vector<Seen>{{"core.editor", "a  b  c", false, 2, 4, "core.editor"},
                               {"core.pager", "xy", false, 5, 6, "core.pager"}}));
}

TEST(GitConfigGuard, ByteOrderMarkAndCrlf) {
  EXPECT_EQ(findings("\xEF\xBB\xBF[core]\r\n\tsshCommand = ssh -v\r\n\tpager = \"a\\\r\nb\"\r\n"),
            (std::vector<Seen>{{"core.sshcommand", "ssh -v", false, 1, 1, "core.sshCommand"},
                               {"core.pager", "ab", false, 2, 3, "core.pager"}}));
  // A lone CR is whitespace: trimmed at the end of a value.
  EXPECT_EQ(findings("[core]\reditor = x\r"),
            (std::vector<Seen>{{"core.editor", "x", false, 0, 0, "core.editor"}}));
}

TEST(GitConfigGuard, Malformed) {
  struct Case {
    std::string_view text;
    std::string_view reason;
  };
  const std::vector<Case> cases = {
      {"[core\nfsmonitor = x", "line 1: bad section header"},
      {"[]", "line 1: bad section header"},
      {"[core ]", "line 1: bad section header"},
      {"[core \"x]", "line 1: bad section header"},
      {"[core \"x\" ]", "line 1: bad section header"},
      {"[co_re]", "line 1: bad section header"},
      {"[core]\n1x = y", "line 2: bad config line"},
      {"[core]\nx_y = z", "line 2: bad config line"},
      {"[core]\nx y", "line 2: bad config line"},
      {"[core]\n\n  editor = \"x", "line 3: unterminated quoted value"},
      {"[core]\neditor = \"x\ny\"", "line 2: unterminated quoted value"},
      {"[core]\neditor = a\\qb", "line 2: invalid escape sequence in value"},
      {"\xEF\xBB[core]", "line 1: a partial UTF-8 byte order mark"},
      {"\xEF", "line 1: a partial UTF-8 byte order mark"},
      {std::string_view("[core]\neditor = a\0b", 19), "line 2: a NUL byte"},
      {std::string_view("[core]\n# \0", 10), "line 2: a NUL byte"},
      {std::string_view("[co\0re]", 7), "line 1: a NUL byte"},
      {"[core]\n\xC3\xA9 = x", "line 2: bad config line"},
      {"[alias]\n\tx   # a comment needs a value first", "line 2: bad config line"},
      {"[includeIf.gitdir:x \"y\"]\npath = z", "line 1: bad section header"},
  };
  for (const auto& c : cases) {
    const auto scan = scan_git_config(c.text);
    EXPECT_TRUE(scan.malformed) << c.text;
    EXPECT_EQ(scan.malformed_reason, c.reason) << c.text;
  }
}

TEST(GitConfigGuard, MalformedKeepsTheFindingsBeforeTheStop) {
  const auto scan = scan_git_config("[core]\nfsmonitor = x\n[bad\npager = y\n");
  EXPECT_TRUE(scan.malformed);
  EXPECT_EQ(seen(scan),
            (std::vector<Seen>{{"core.fsmonitor", "x", false, 1, 1, "core.fsmonitor"}}));
}

TEST(GitConfigGuard, Limits) {
  const std::string long_header = "[alias \"" + std::string(kMaxGitSectionHeaderBytes, 'a') + "\"]";
  EXPECT_EQ(scan_git_config(long_header).malformed_reason, "line 1: section header too long");
  const std::string fits =
      "[alias \"" + std::string(kMaxGitSectionHeaderBytes - 10, 'a') + "\"]\ncommand = !x";
  EXPECT_EQ(scan_git_config(fits).findings.size(), 1u);

  std::string many = "[alias]\n";
  for (std::size_t i = 0; i <= kMaxGitConfigFindings; ++i) many += "a = !x\n";
  const auto scan = scan_git_config(many);
  EXPECT_TRUE(scan.malformed);
  EXPECT_EQ(scan.malformed_reason,
            "line " + std::to_string(kMaxGitConfigFindings + 2) + ": too many dangerous entries");
  EXPECT_EQ(scan.findings.size(), kMaxGitConfigFindings);
  EXPECT_EQ(without_findings(many, scan.findings), "[alias]\n");
}

TEST(GitConfigGuard, OneMebibyteIsLinear) {
  // 1 MiB of entries under a 4 KiB header, none dangerous: git's strbuf discipline (cut the
  // name back to the header) keeps this linear; a copy of the header per entry would not be.
  std::string text = "[user \"" + std::string(4000, 'u') + "\"]\n";
  while (text.size() < (1u << 20)) text += "k\n";
  EXPECT_EQ(findings(text), std::vector<Seen>{});
  // One 1 MiB value, and one 1 MiB comment.
  EXPECT_EQ(scan_git_config("[core]\neditor = " + std::string(1u << 20, 'x')).findings.size(), 1u);
  EXPECT_EQ(findings("# " + std::string(1u << 20, '\\')), std::vector<Seen>{});
}

TEST(GitConfigGuard, AddedDangerous) {
  const auto before = scan_git_config(
      "[core]\n\tfsmonitor = a\n[alias]\n\tst = !x\n\tco = checkout\n[remote \"o\"]\n\turl = u\n");
  // Unchanged dangerous entries, moved and reformatted, and a harmless change: nothing added.
  const auto same = scan_git_config(
      "[remote \"o\"]\n\turl = v\n[alias]\n\tco = \"checkout\"\n\tst = !x\n[CORE] FSMONITOR=a\n");
  EXPECT_EQ(seen({added_dangerous(before, same), false, ""}), std::vector<Seen>{});
  // A changed value, a new key, and a true that became implicit.
  const auto changed = scan_git_config(
      "[core]\n\tfsmonitor = b\n[alias]\n\tst = !x\n\tco = checkout\n\tlg = log\n"
      "[include]\n\tpath\n");
  EXPECT_EQ(seen({added_dangerous(before, changed), false, ""}),
            (std::vector<Seen>{{"core.fsmonitor", "b", false, 1, 1, "core.fsmonitor"},
                               {"alias.lg", "log", false, 5, 5, "alias.*"},
                               {"include.path", "", true, 7, 7, "include.path"}}));
  const auto empty_value = scan_git_config("[include]\n\tpath =\n");
  EXPECT_EQ(added_dangerous(empty_value, changed).size(), 5u);  // "" is not the implicit true
  // From nothing: everything is added.
  EXPECT_EQ(added_dangerous(scan_git_config(""), before).size(), 3u);
}

TEST(GitConfigGuard, WithoutFindingsRemovesWholeLines) {
  const std::string text =
      "[core]\n"
      "\tbare = false\n"
      "\tfsmonitor = \"touch x\" # no\n"
      "\tpager = a \\\n"
      "  b\n"
      "\tfilemode = true\n"
      "[alias]\n"
      "\tst = !x\n";
  EXPECT_EQ(without_findings(text, scan_git_config(text).findings),
            "[core]\n"
            "\tbare = false\n"
            "\tfilemode = true\n"
            "[alias]\n");
}

TEST(GitConfigGuard, WithoutFindingsKeepsAHeaderOnTheSameLine) {
  const std::string text = "[alias]\n[core] fsmonitor = evil\nst = !x\n";
  // Removing the whole second line would move `st = !x` into [alias]: only the entry goes.
  EXPECT_EQ(without_findings(text, scan_git_config(text).findings), "[alias]\n[core]\nst = !x\n");
  EXPECT_EQ(findings("[alias]\n[core]\nst = !x\n"), std::vector<Seen>{});
  const std::string spaced = "[core]  \t editor = x  # c\n\tbare\n";
  EXPECT_EQ(without_findings(spaced, scan_git_config(spaced).findings), "[core]\n\tbare\n");
}

TEST(GitConfigGuard, WithoutFindingsCrlfBomAndLastLine) {
  const std::string text = "\xEF\xBB\xBF[core]\r\n  editor = x\r\n  bare = true\r\n  pager = p";
  EXPECT_EQ(without_findings(text, scan_git_config(text).findings),
            "\xEF\xBB\xBF[core]\r\n  bare = true\r\n");
  const std::string same_line = "[core]editor=x\r\nbare=true\r\n";
  EXPECT_EQ(without_findings(same_line, scan_git_config(same_line).findings),
            "[core]\r\nbare=true\r\n");
}

TEST(GitConfigGuard, WithoutFindingsRemovesOnlyThoseGiven) {
  const std::string text = "[core]\neditor = a\npager = b\n";
  auto scan = scan_git_config(text);
  ASSERT_EQ(scan.findings.size(), 2u);
  scan.findings.erase(scan.findings.begin());
  EXPECT_EQ(without_findings(text, scan.findings), "[core]\neditor = a\n");
  EXPECT_EQ(without_findings(text, {}), text);
}

TEST(GitConfigGuard, WithoutFindingsOfMalformedKeepsTheWellFormedPart) {
  // Cut at the start of the line where parsing stopped; the dangerous entries before it go too.
  const std::string text =
      "[user]\n\tname = u\n[core]\n\teditor = x\n\tbare = false\n[alias] st = \"!y\n[x]\nk=v\n";
  const auto scan = scan_git_config(text);
  ASSERT_TRUE(scan.malformed);
  EXPECT_EQ(scan.malformed_reason, "line 6: unterminated quoted value");
  EXPECT_EQ(without_findings(text, scan.findings), "[user]\n\tname = u\n[core]\n\tbare = false\n");
  // Even when the caller passes no findings.
  EXPECT_EQ(without_findings(text, {}), "[user]\n\tname = u\n[core]\n\tbare = false\n");
  EXPECT_EQ(without_findings("\xEF\xBB", {}), "");
  EXPECT_EQ(without_findings(std::string_view("[core]\nbare = a\0b\n", 17), {}), "[core]\n");
}

TEST(GitConfigGuard, PatternLines) {
  const auto& lines = dangerous_git_config_patterns();
  ASSERT_EQ(lines.size(), dangerous_git_config_rules().size());
  const std::set<std::string_view> set(lines.begin(), lines.end());
  EXPECT_EQ(set.size(), lines.size());
  for (std::string_view line :
       {"core.hooksPath", "core.fsmonitor (unless a boolean)", "alias.*",
        "submodule.*.update (a value starting with !)", "protocol.*.allow (unless never)",
        "url.*.insteadOf (<base> an ext:: or fd:: URL)", "remote.*.url (an ext:: or fd:: URL)",
        "extensions.worktreeConfig (unless false)", "sendemail[.*].smtpServer (a path)"})
    EXPECT_TRUE(set.contains(line)) << line;
}

}  // namespace
